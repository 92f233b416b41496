package io.vkspark.spark.agg;

import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.DeviceExpr;
import io.vkspark.spark.cache.ReadCacheColumns;
import io.vkspark.spark.cache.VkCacheColumnsExec;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.shim.Scala;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.IntStream;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.FilterExec;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.RowToColumnarTransition;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * A {@code WHERE} on cached columns that a fused aggregate reduced on the GPU evaluates on the device
 * (issue 35): Spark plans it as a {@code Filter} between the GPU node and the scan of the cached
 * relation ({@code HashAggregate <- [Project] <- VkGpuEval <- Filter <- InMemoryTableScan}), which
 * reads every filtered column on the host and turns the kept rows back into columns for the GPU. When
 * every conjunct translates to a {@link DeviceExpr} ({@code col OP literal} for int, bigint, float,
 * double, date, timestamp and boolean columns, {@code IS [NOT] NULL}, {@code AND}/{@code OR}/{@code NOT},
 * {@code BETWEEN}, {@code IN (literals)}, and a GPU UDF's boolean result, computed by a GPU node under
 * the filter: see {@link DeviceExprs}) and the scan is of vkspark's cache, the GPU node reads the scan
 * itself and the reduction drops the rows on the device ({@code ColumnReduction.filtered}); the host
 * never reads the filtered columns. A batch that is not reduced on the GPU gets the same condition on
 * the host, with Spark's own predicate, before its calls run ({@code exec.HostFilter}).
 *
 * @param condition the filter's condition bound to the GPU node's new child's columns
 * @param columns the child columns it reads, ascending
 * @param types each one's type as the device reads it ({@link DeviceExpr.Input})
 * @param text the condition as EXPLAIN shows it
 */
public record DeviceFilter(Expression condition, List<Integer> columns, List<SqlType> types, String text)
    implements Serializable {
  private static final long serialVersionUID = 1L;

  public DeviceFilter {
    columns = List.copyOf(columns);
    types = List.copyOf(types);
  }

  /** The filter over runner inputs: {@code inputs.get(i)} holds column {@code columns.get(i)}; empty if it does not translate. */
  Optional<DeviceExpr> onDevice(List<Integer> inputs) {
    return DeviceExprs.translate(condition, o -> {
      int i = columns.indexOf(o);
      return i < 0 ? null : new DeviceExpr.Input(inputs.get(i), types.get(i));
    });
  }

  /** The type a filter reads a column of Spark type {@code t} as, null for a type it does not read. */
  static SqlType source(DataType t) {
    return t.equals(DataTypes.IntegerType) ? SqlType.INT : t.equals(DataTypes.LongType) ? SqlType.BIGINT
        : t.equals(DataTypes.FloatType) ? SqlType.FLOAT : t.equals(DataTypes.DoubleType) ? SqlType.DOUBLE
        : t.equals(DataTypes.BooleanType) ? SqlType.BOOLEAN : t.equals(DataTypes.DateType) ? SqlType.DATE
        : t.equals(DataTypes.TimestampType) ? SqlType.TIMESTAMP : null;
  }

  /**
   * A {@code Filter} found between a GPU node and its columnar source.
   *
   * @param eval the GPU node over the filter's source (the filter gone); null when not absorbable
   * @param filter the filter over {@code eval}'s child; null when not absorbable
   * @param why why the filter stays in Spark's plan (EXPLAIN); null when absorbable
   * @param links the logical links to set when the filter is absorbed ({@link #relink})
   */
  record Found(VkGpuEvalExec eval, DeviceFilter filter, String why, List<Link> links) {
    static Found stays(Expression condition, String why) {
      return new Found(null, null, "Spark's Filter " + condition + " stays on the host: " + why, List.of());
    }

    boolean absorbable() {
      return eval != null;
    }

    /** Links the plan nodes under the absorbed filter to the logical plan under it (see {@link DeviceFilter#under}). */
    void relink() {
      links.forEach(l -> {
        if (l.link() == null) {
          l.node().unsetTagValue(SparkPlan.LOGICAL_PLAN_INHERITED_TAG());
        } else {
          l.node().setLogicalLink(l.link());
        }
      });
    }
  }

  /** A plan node's new logical link (null: its inherited link dropped). */
  record Link(SparkPlan node, LogicalPlan link) {}

  /**
   * The filter between {@code eval} and a scan of vkspark's cache, if there is one: before Spark's
   * columnar transitions {@code VkGpuEval <- [Project] <- Filter <- S}, after them
   * {@code VkGpuEval <- RowToColumnar <- [Project] <- Filter <- ColumnarToRow <- S}, where the project
   * only passes columns on and {@code S} is the scan, or a GPU node computing a UDF the condition
   * reads over it (how {@code InsertGpuEval} plans {@code WHERE f(x)}). Null when {@code eval}'s child
   * is no filter.
   *
   * <p>Adaptive execution maps a query stage back to the logical plan through the first physical node
   * carrying its logical link; the scan inherits the link of the logical node its strategy planned (the
   * {@code Project} or {@code Filter} above it), so without the physical {@code Filter} the stage would
   * stand for the logical {@code Filter} and re-planning would lose the condition. The nodes of
   * {@code S} that only inherit a link are linked instead to the logical node under the logical
   * {@code Filter} that outputs their columns (the cached relation); vkspark's GPU nodes just lose it.
   */
  static Found under(VkGpuEvalExec eval) {
    SparkPlan c = eval.child();
    if (c instanceof RowToColumnarTransition) {
      c = c.children().apply(0);
    }
    ProjectExec project = c instanceof ProjectExec p ? p : null;
    if (project != null) {
      c = project.child();
    }
    if (!(c instanceof FilterExec filter)) {
      return null;
    }
    Expression condition = filter.condition();
    SparkPlan source = filter.child() instanceof ColumnarToRowExec c2r ? c2r.child() : filter.child();
    SparkPlan scan = source instanceof VkGpuEvalExec inner ? inner.child() : source;
    if (!ReadCacheColumns.readsVkCacheColumns(scan instanceof VkCacheColumnsExec w ? w.child() : scan)) {
      return Found.stays(condition, "it does not filter a scan of vkspark's cache");
    }
    if (!condition.deterministic()) {
      return Found.stays(condition, "its condition is not deterministic");
    }
    List<Attribute> output = Scala.list(source.output());
    if (project != null) {
      List<NamedExpression> passed = Scala.list(project.projectList());
      for (int i = 0; i < passed.size(); i++) {
        if (!(passed.get(i) instanceof Attribute a) || i >= output.size() || !a.exprId().equals(output.get(i).exprId())) {
          return Found.stays(condition, "the projection above it computes or reorders columns");
        }
      }
    }
    Expression bound = bind(condition, output);
    if (bound == null) {
      return Found.stays(condition, "it reads a column its source does not output");
    }
    List<Integer> columns = new ArrayList<>(new TreeSet<>(ordinals(bound)));
    List<SqlType> types = new ArrayList<>();
    for (int o : columns) {
      SqlType t = source(output.get(o).dataType());
      if (t == null) {
        return Found.stays(condition, "it reads " + output.get(o) + ", a " + output.get(o).dataType().simpleString()
            + " column the device does not filter on");
      }
      types.add(t);
    }
    if (columns.size() > 32) {
      return Found.stays(condition, "it reads more than 32 columns");
    }
    DeviceFilter f = new DeviceFilter(bound, columns, types, condition.toString());
    List<Integer> inputs = IntStream.range(0, columns.size()).boxed().toList();
    if (f.onDevice(inputs).isEmpty()) {
      for (Expression conjunct : conjuncts(bound)) {
        DeviceFilter one = new DeviceFilter(conjunct, columns, types, "");
        if (one.onDevice(inputs).isEmpty()) {
          return Found.stays(condition, unbind(conjunct, output) + " is not evaluable on the device");
        }
      }
      return Found.stays(condition, "it is not evaluable on the device");
    }
    List<Link> links = links(project != null ? project : filter, filter, source);
    if (links == null) {
      return Found.stays(condition, "its source cannot be linked to the logical plan under it");
    }
    return new Found(new VkGpuEvalExec(Scala.seq(eval.calls()), eval.vkConf(), source), f, null, links);
  }

  /** The conjuncts of {@code e}, as Spark's {@code splitConjunctivePredicates} finds them. */
  private static List<Expression> conjuncts(Expression e) {
    if (e instanceof And a) {
      List<Expression> out = new ArrayList<>(conjuncts(a.left()));
      out.addAll(conjuncts(a.right()));
      return out;
    }
    return List.of(e);
  }

  /**
   * The new links of {@code source}'s nodes (see {@link #under}), or null when one has no logical node
   * to stand for; empty when the dropped nodes carry no logical link (nothing maps back through them).
   */
  private static List<Link> links(SparkPlan top, FilterExec filter, SparkPlan source) {
    LogicalPlan start = filter.logicalLink().isDefined() ? filter.logicalLink().get()
        : top.logicalLink().isDefined() ? top.logicalLink().get() : null;
    if (start == null) {
      return List.of();
    }
    LogicalPlan logicalFilter = firstFilter(start);
    if (logicalFilter == null) {
      return null;
    }
    List<Link> out = new ArrayList<>();
    return collect(source, logicalFilter, out) ? out : null;
  }

  /** The shallowest logical {@code Filter} at or under {@code top}, or null. */
  private static LogicalPlan firstFilter(LogicalPlan top) {
    List<LogicalPlan> level = List.of(top);
    while (!level.isEmpty()) {
      List<LogicalPlan> next = new ArrayList<>();
      for (LogicalPlan l : level) {
        if (l instanceof Filter) {
          return l;
        }
        next.addAll(Scala.list(l.children()));
      }
      level = next;
    }
    return null;
  }

  private static boolean collect(SparkPlan p, LogicalPlan logicalFilter, List<Link> out) {
    if (p.getTagValue(SparkPlan.LOGICAL_PLAN_TAG()).isDefined()) {
      return true; // a link of its own (a query stage planned again): it already stands for its own logical node
    }
    if (p instanceof VkGpuEvalExec || p instanceof ColumnarToRowExec || p instanceof VkCacheColumnsExec) {
      out.add(new Link(p, null));
      for (SparkPlan c : Scala.list(p.children())) {
        if (!collect(c, logicalFilter, out)) {
          return false;
        }
      }
      return true;
    }
    LogicalPlan link = shallowestCovering(logicalFilter, p);
    if (link == null) {
      return false;
    }
    out.add(new Link(p, link));
    return true;
  }

  /** The shallowest logical node strictly under {@code top} whose output holds every column of {@code p}, or null. */
  private static LogicalPlan shallowestCovering(LogicalPlan top, SparkPlan p) {
    List<LogicalPlan> level = new ArrayList<>(Scala.list(top.children()));
    while (!level.isEmpty()) {
      List<LogicalPlan> next = new ArrayList<>();
      for (LogicalPlan l : level) {
        if (p.outputSet().subsetOf(l.outputSet())) {
          return l;
        }
        next.addAll(Scala.list(l.children()));
      }
      level = next;
    }
    return null;
  }

  /** {@code e} with each column replaced by its ordinal in {@code output}; null when one is not there. */
  private static Expression bind(Expression e, List<Attribute> output) {
    boolean[] missing = {false};
    Expression out = e.transformUp(new AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof Attribute;
      }

      @Override
      public Expression apply(Expression x) {
        Attribute a = (Attribute) x;
        for (int i = 0; i < output.size(); i++) {
          if (output.get(i).exprId().equals(a.exprId())) {
            return new BoundReference(i, a.dataType(), true);
          }
        }
        missing[0] = true;
        return x;
      }
    });
    return missing[0] ? null : out;
  }

  /** {@code bound} with its columns named again, as EXPLAIN shows them. */
  private static Expression unbind(Expression bound, List<Attribute> output) {
    return bound.transformUp(new AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof BoundReference;
      }

      @Override
      public Expression apply(Expression x) {
        return output.get(((BoundReference) x).ordinal());
      }
    });
  }

  private static List<Integer> ordinals(Expression bound) {
    List<Integer> out = new ArrayList<>();
    bound.foreach(x -> {
      if (x instanceof BoundReference b) {
        out.add(b.ordinal());
      }
      return BoxedUnit.UNIT;
    });
    return out;
  }
}
