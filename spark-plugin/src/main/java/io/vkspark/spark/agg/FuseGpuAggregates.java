package io.vkspark.spark.agg;

import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.exec.VkGpuEvalExec;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.PlanExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction;
import org.apache.spark.sql.catalyst.expressions.aggregate.Average;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.Partial$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.aggregate.HashAggregateExec;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.Function1;
import scala.Option;
import scala.runtime.AbstractPartialFunction;

/**
 * The physical rule that fuses a partial aggregation into the {@link VkGpuEvalExec} under it:
 * {@code HashAggregate(partial) <- [Project] <- [ColumnarToRow] <- VkGpuEval} becomes
 * {@code VkGpuAggregate <- VkGpuEval}, with the partial aggregate's output, so the final
 * aggregation above the exchange is unchanged. It runs as an adaptive query-stage rule (after
 * {@code InsertGpuEval}, before Spark's columnar transitions) and after the transitions (plans
 * without adaptive execution; and to drop the {@code ColumnarToRow} Spark puts under a node fused
 * earlier).
 *
 * <p>It fuses only when every part is one it reproduces exactly: at most one grouping key, a
 * column of type int, bigint or date; every function {@code SUM}, {@code MIN}, {@code MAX} or
 * {@code AVG} of one int, bigint, float or double column, or {@code COUNT} of columns and non-null
 * literals; no DISTINCT, no FILTER; the aggregate's output exactly Spark's buffer layout for them
 * (so decimal sums, whose buffer differs, are left alone); keys and arguments that are not
 * columns of the GPU node are deterministic expressions over them, computed by the fused node
 * (with Spark's own generated projection) as the projection or aggregate would have. Anything else stays Spark's.
 *
 * <p>{@code spark.vkspark.fuseAggregates} has three states ({@link ReducePlacement.Mode}). Unset, the
 * default, it fuses exactly the ungrouped aggregates the GPU will reduce in the UDFs' own submission
 * ({@link GpuReduction}, {@link ReducePlacement#fusing}): on an H200 those beat Spark's partial aggregate (a
 * Black-Scholes sum over 50 M cached rows 0.117 s against 0.162 s) and read back megabytes of
 * partials instead of the per-row results, while a host fold is not yet measured against Spark's
 * generated code. {@code true} fuses whatever the node reproduces, grouped aggregates too, folding
 * on the host where the GPU cannot reduce; {@code false} never fuses.
 */
public final class FuseGpuAggregates extends Rule<SparkPlan> {
  private final SparkSession session;
  /** After Spark's columnar transitions: the transition Spark put under a fused node goes. */
  private final boolean afterTransitions;

  /**
   * @param afterTransitions true for the rule after Spark's columnar transitions (every plan), false
   *     for the adaptive query-stage rule (before them: EXPLAIN of an adaptive plan shows the node
   *     before the query runs)
   */
  public FuseGpuAggregates(SparkSession session, boolean afterTransitions) {
    this.session = session;
    this.afterTransitions = afterTransitions;
  }

  @Override
  public SparkPlan apply(SparkPlan plan) {
    ReducePlacement.Mode mode = ReducePlacement.Mode.of(session);
    if (!VkConf.of(session).enabled() || mode == ReducePlacement.Mode.NEVER) {
      return plan;
    }
    boolean ansi = ansi(session);
    Placer placer = (s, e, f) -> ReducePlacement.fusing(session, mode, s, e, f);
    SparkPlan fusedPlan = plan.transformUp(new AbstractPartialFunction<SparkPlan, SparkPlan>() {
      @Override
      public boolean isDefinedAt(SparkPlan p) {
        return (p instanceof HashAggregateExec a && fuse(a, ansi, placer).isPresent()) || planned(p);
      }

      /** Decides each aggregate once (isDefinedAt then apply would plan its reduction twice). */
      @Override
      public <A1 extends SparkPlan, B1> B1 applyOrElse(A1 p, Function1<A1, B1> otherwise) {
        if (p instanceof HashAggregateExec a) {
          Optional<SparkPlan> fused = fuse(a, ansi, placer);
          return fused.isPresent() ? (B1) fused.get() : otherwise.apply(p);
        }
        return planned(p) ? (B1) apply(p) : otherwise.apply(p);
      }

      @Override
      public SparkPlan apply(SparkPlan p) {
        if (p instanceof VkGpuAggregateExec g) {
          // planned before the transitions: the node reads its GPU node's batches itself
          return g.withNewChildInternal(((ColumnarToRowExec) g.child()).child());
        }
        return fuse((HashAggregateExec) p, ansi, placer).orElseThrow();
      }

      private boolean planned(SparkPlan p) {
        return afterTransitions && p instanceof VkGpuAggregateExec g && g.child() instanceof ColumnarToRowExec;
      }
    });
    return VkDriverAggregateExec.plan(session, fusedPlan);
  }

  /** Spark's ANSI mode, under which an integral SUM fails on overflow (a shim point: the conf API moved). */
  static boolean ansi(SparkSession session) {
    return session.sessionState().conf().ansiEnabled();
  }

  /** Where a fused aggregate reduces, or empty when the conf keeps Spark's partial aggregate ({@link ReducePlacement#fusing}). */
  @FunctionalInterface
  interface Placer {
    /** @param filter a filter the reduction would evaluate on the device; null for none */
    Optional<ReducePlacement> place(VkGpuAggregateExec.Spec spec, VkGpuEvalExec eval, DeviceFilter filter);
  }

  /** The fused node for {@code agg}, when it qualifies and {@code placer} (the conf's mode) places it. */
  static Optional<SparkPlan> fuse(HashAggregateExec agg, boolean ansi, Placer placer) {
    SparkPlan below = agg.child();
    ProjectExec project = below instanceof ProjectExec pe ? pe : null;
    if (project != null) {
      below = project.child();
    }
    if (below instanceof ColumnarToRowExec c2r) {
      below = c2r.child();
    }
    if (!(below instanceof VkGpuEvalExec eval)) {
      return Optional.empty();
    }
    DeviceFilter.Found filter = DeviceFilter.under(eval);
    if (filter != null && filter.absorbable()) {
      Optional<SparkPlan> absorbed = fuse(agg, project, filter.eval(), ansi, placer, filter);
      if (absorbed.isPresent()) {
        return absorbed;
      }
    }
    String note = filter == null ? null : filter.absorbable()
        ? "Spark's Filter " + filter.filter().text() + " stays on the host: the aggregate is not reduced on the GPU"
        : filter.why();
    return fuse(agg, project, eval, ansi, placer, null).map(p -> p instanceof VkGpuAggregateExec g && note != null
        ? g.withPlacement(g.placement().withFilterNote(note)) : p);
  }

  /**
   * The fused node for {@code agg} over {@code eval} (reached through {@code project}, or null), when
   * it qualifies and {@code placer} places it; {@code absorbing} a filter (null: none), only when the
   * GPU reduces it, the filter's source linked to its logical plan.
   */
  private static Optional<SparkPlan> fuse(HashAggregateExec agg, ProjectExec project, VkGpuEvalExec eval, boolean ansi,
                                          Placer placer, DeviceFilter.Found absorbing) {
    List<Attribute> evalOut = Scala.list(eval.output());
    Columns columns = new Columns(evalOut, project);
    List<NamedExpression> grouping = Scala.list(agg.groupingExpressions());
    if (grouping.size() > 1) {
      return Optional.empty();
    }
    int keyOrdinal = -1;
    DataType keyType = null;
    String keyText = "";
    List<DataType> expected = new ArrayList<>();
    if (grouping.size() == 1) {
      NamedExpression g = grouping.get(0);
      Integer o = columns.of((Expression) g);
      DataType t = ((Expression) g).dataType();
      if (o == null || !(t.equals(DataTypes.IntegerType) || t.equals(DataTypes.LongType) || t.equals(DataTypes.DateType))) {
        return Optional.empty();
      }
      keyOrdinal = o;
      keyType = t;
      keyText = g.toString();
      expected.add(t);
    }
    List<FusedAggregate> fused = new ArrayList<>();
    List<ExprId> bufferIds = new ArrayList<>();
    grouping.forEach(g -> bufferIds.add(g.exprId()));
    for (AggregateExpression ae : Scala.list(agg.aggregateExpressions())) {
      if (!ae.mode().equals(Partial$.MODULE$) || ae.isDistinct() || ae.filter().isDefined()) {
        return Optional.empty();
      }
      AggregateFunction fn = ae.aggregateFunction();
      Optional<FusedAggregate> f = function(fn, columns, ansi);
      if (f.isEmpty()) {
        return Optional.empty();
      }
      List<? extends Attribute> buffer = Scala.list(fn.inputAggBufferAttributes());
      DataType[] types = f.get().bufferTypes();
      if (buffer.size() != types.length) {
        return Optional.empty();
      }
      for (int i = 0; i < types.length; i++) {
        if (!buffer.get(i).dataType().equals(types[i])) {
          return Optional.empty();
        }
        expected.add(types[i]);
        bufferIds.add(buffer.get(i).exprId());
      }
      fused.add(f.get());
    }
    List<Attribute> out = Scala.list(agg.output());
    if (out.size() != bufferIds.size()) {
      return Optional.empty();
    }
    for (int i = 0; i < out.size(); i++) {
      if (!out.get(i).exprId().equals(bufferIds.get(i)) || !out.get(i).dataType().equals(expected.get(i))) {
        return Optional.empty();
      }
    }
    VkGpuAggregateExec.Spec spec = new VkGpuAggregateExec.Spec(keyOrdinal, keyType, keyText, fused, columns.computed);
    Optional<ReducePlacement> placement = placer.place(spec, eval, absorbing == null ? null : absorbing.filter());
    if (placement.isEmpty() || (absorbing != null && !placement.get().onGpu())) {
      return Optional.empty();
    }
    if (absorbing != null) {
      absorbing.relink(); // before relinkBelow: the source's nodes then have links of their own
      placement = Optional.of(placement.get().withFilterNote("the filter " + absorbing.filter().text()
          + " evaluated on the device"));
    }
    // last check, and the only change to the plan's nodes: their links only get more precise, so it
    // is harmless that isDefinedAt makes it too (or that adaptive execution keeps the unfused plan)
    if (project != null && !relinkBelow(project, eval)) {
      return Optional.empty();
    }
    return Optional.of(new VkGpuAggregateExec(spec, placement.get(), Scala.seq(Scala.list(agg.output())),
        agg.outputPartitioning(), eval));
  }

  /**
   * Gives the nodes under {@code eval} that only inherit the logical link of {@code project} (which
   * the fused node absorbs) a link of their own, false when one cannot be found (then the rule does
   * not fuse). Why: Spark's planner links a whole strategy's subtree to its top logical node; for
   * a cached table, {@code Project <- Filter <- InMemoryTableScan} all point at the logical
   * {@code Project}. Adaptive execution maps the cache's query stage back to the first physical node
   * with that link; with the {@code ProjectExec} gone that is the {@code Filter}, so the logical
   * {@code Project} (the GPU UDF's column) would be replaced by the Filter's subtree and re-planning
   * would put Spark's partial aggregate straight over the Filter, unable to bind the UDF's column.
   * Each such node is linked instead to the shallowest logical node under the {@code Project}
   * that outputs all its columns (for the example, the logical {@code Filter}).
   */
  private static boolean relinkBelow(ProjectExec project, SparkPlan eval) {
    Option<LogicalPlan> own = project.getTagValue(SparkPlan.LOGICAL_PLAN_TAG());
    if (own.isEmpty()) {
      return true;
    }
    LogicalPlan dropped = own.get();
    List<SparkPlan> stale = new ArrayList<>();
    List<SparkPlan> ours = new ArrayList<>();
    collectStale(eval, dropped, stale, ours);
    List<LogicalPlan> links = new ArrayList<>();
    for (SparkPlan n : stale) {
      LogicalPlan link = shallowestCovering(dropped, n);
      if (link == null) {
        return false;
      }
      links.add(link);
    }
    ours.forEach(n -> n.unsetTagValue(SparkPlan.LOGICAL_PLAN_INHERITED_TAG()));
    for (int i = 0; i < stale.size(); i++) {
      stale.get(i).setLogicalLink(links.get(i)); // its descendants inherit the new link
    }
    return true;
  }

  /** The topmost nodes under {@code p} that inherit {@code dropped}; vkspark's GPU nodes and transitions just lose it. */
  private static void collectStale(SparkPlan p, LogicalPlan dropped, List<SparkPlan> stale, List<SparkPlan> ours) {
    if (p.getTagValue(SparkPlan.LOGICAL_PLAN_TAG()).isDefined()) {
      return;
    }
    Option<LogicalPlan> inherited = p.getTagValue(SparkPlan.LOGICAL_PLAN_INHERITED_TAG());
    if (inherited.isDefined() && inherited.get() == dropped) {
      if (!(p instanceof VkGpuEvalExec || p instanceof ColumnarToRowExec)) {
        stale.add(p);
        return;
      }
      ours.add(p);
    }
    for (SparkPlan c : Scala.list(p.children())) {
      collectStale(c, dropped, stale, ours);
    }
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

  /** {@code fn} as a fused function over the GPU node's columns, if it is one vkspark reproduces. */
  private static Optional<FusedAggregate> function(AggregateFunction fn, Columns columns, boolean ansi) {
    List<Expression> args = Scala.list(fn.children());
    Class<?> c = fn.getClass();
    if (c == Count.class) {
      List<Integer> cols = new ArrayList<>();
      for (Expression a : args) {
        if (a instanceof Literal l && l.value() != null) {
          continue; // never null: counts every row
        }
        Integer o = columns.of(a);
        if (o == null) {
          return Optional.empty();
        }
        cols.add(o);
      }
      return Optional.of(new FusedAggregate(FusedAggregate.Kind.COUNT, cols.stream().mapToInt(Integer::intValue).toArray(),
          DataTypes.LongType, ansi, fn.toString()));
    }
    FusedAggregate.Kind kind = c == Sum.class ? FusedAggregate.Kind.SUM : c == Min.class ? FusedAggregate.Kind.MIN
        : c == Max.class ? FusedAggregate.Kind.MAX : c == Average.class ? FusedAggregate.Kind.AVG : null;
    if (kind == null || args.size() != 1 || !FusedAggregate.supportedInput(args.get(0).dataType())) {
      return Optional.empty();
    }
    Integer o = columns.of(args.get(0));
    if (o == null) {
      return Optional.empty();
    }
    return Optional.of(new FusedAggregate(kind, new int[] {o}, args.get(0).dataType(), ansi, fn.toString()));
  }

  /**
   * The columns the fused node reads: the GPU node's output, then expressions over it that the
   * aggregate (or a projection between them) computes per row, evaluated by the fused node as
   * Spark would (keys such as {@code id % 10}, arguments such as {@code 2 * f(x)}): deterministic
   * ones without subqueries only.
   */
  private static final class Columns {
    private final List<Attribute> input;
    private final Map<ExprId, Expression> projected = new HashMap<>();
    final List<Expression> computed = new ArrayList<>();

    Columns(List<Attribute> input, ProjectExec project) {
      this.input = input;
      if (project != null) {
        for (NamedExpression ne : Scala.list(project.projectList())) {
          projected.put(ne.exprId(), ne instanceof Alias al ? al.child() : (Expression) ne);
        }
      }
    }

    /** The column holding {@code e}'s value per row, or null when the fused node cannot compute it. */
    Integer of(Expression e) {
      Expression over = projected.isEmpty() ? e : e.transformUp(new AbstractPartialFunction<Expression, Expression>() {
        @Override
        public boolean isDefinedAt(Expression x) {
          return x instanceof Attribute a && projected.containsKey(a.exprId());
        }

        @Override
        public Expression apply(Expression x) {
          return projected.get(((Attribute) x).exprId());
        }
      });
      if (over instanceof Attribute a) {
        int i = indexOf(a);
        return i < 0 ? null : i;
      }
      if (!over.deterministic()
          || over.find(x -> x instanceof PlanExpression<?>
              || x instanceof AggregateFunction || (x instanceof Attribute a && indexOf(a) < 0)).isDefined()) {
        return null;
      }
      Expression bound = over.transformUp(new AbstractPartialFunction<Expression, Expression>() {
        @Override
        public boolean isDefinedAt(Expression x) {
          return x instanceof Attribute;
        }

        @Override
        public Expression apply(Expression x) {
          Attribute a = (Attribute) x;
          return new BoundReference(indexOf(a), a.dataType(), a.nullable());
        }
      });
      for (int i = 0; i < computed.size(); i++) {
        if (computed.get(i).semanticEquals(bound)) {
          return input.size() + i;
        }
      }
      computed.add(bound);
      return input.size() + computed.size() - 1;
    }

    private int indexOf(Attribute a) {
      for (int i = 0; i < input.size(); i++) {
        if (input.get(i).exprId().equals(a.exprId())) {
          return i;
        }
      }
      return -1;
    }
  }
}
