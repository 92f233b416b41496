package io.vkspark.spark.agg;

import io.vkspark.spark.conf.VkConf;

import io.vkspark.spark.plan.CallSites;
import io.vkspark.spark.plan.GpuPlanner;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.shim.SparkShim;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.PlanExpression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.rules.Rule;
import scala.PartialFunction;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * Moves GPU UDF calls that feed aggregate functions (and grouping keys) into a projection under
 * the aggregate, where the physical rule can put them on the GPU: {@code SUM(f(a))} becomes
 * {@code SUM(x)} over {@code SELECT f(a) AS x}. Spark does the same for Python UDFs
 * ({@code ExtractPythonUDFFromAggregate}); it runs after operator optimization, so the projection
 * is not collapsed back into the aggregate.
 */
public final class ExtractGpuUdfFromAggregate extends Rule<LogicalPlan> {
  private final SparkSession session;

  public ExtractGpuUdfFromAggregate(SparkSession session) {
    this.session = session;
  }

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    if (!VkConf.of(session).enabled()) {
      return plan;
    }
    return plan.transformUp(new AbstractPartialFunction<LogicalPlan, LogicalPlan>() {
      @Override
      public boolean isDefinedAt(LogicalPlan p) {
        return p instanceof Aggregate a && !candidates(a).isEmpty();
      }

      @Override
      public LogicalPlan apply(LogicalPlan p) {
        return rewrite((Aggregate) p);
      }
    });
  }

  /**
   * The outermost GPU UDF calls over the aggregate's input, under aggregate functions or in
   * grouping keys, that may be computed for every input row: always evaluated, or over plain
   * deterministic arguments with a guard (not in a lambda). A guarded call moves as
   * {@code IF(guard, call, NULL)}, so no path evaluates it, or its arguments, for rows the aggregate
   * would skip.
   * Calls nested in them move with them: the physical rule stacks their nodes.
   */
  private static Map<Expression, ScalaUDF> candidates(Aggregate a) {
    var input = a.child().outputSet();
    List<ScalaUDF> found = new ArrayList<>();
    List<Expression> roots = roots(a);
    Map<Expression, Expression> guards = CallSites.guards(roots);
    Map<Expression, CallSites.Site> sites = CallSites.sites(roots);
    for (Expression root : roots) {
      CallSites.of(root).forEach((u, s) -> {
        Expression guard = guards.get(u.canonicalized());
        CallSites.Site site = sites.get(u.canonicalized());
        boolean safe = site == CallSites.Site.ALWAYS
            || (site == CallSites.Site.CONDITIONAL && CallSites.guardableArguments(u) && guard != null && guard.deterministic()
                && guard.references().subsetOf(input)
                && guard.find(x -> x instanceof PlanExpression<?>).isEmpty());
        if (safe && u.references().subsetOf(input)) {
          found.add(u);
        }
      });
    }
    Map<Expression, ScalaUDF> outermost = new LinkedHashMap<>();
    for (ScalaUDF u : found) {
      boolean nested = found.stream().anyMatch(v -> v != u && v.find(x -> x == u).isDefined());
      if (!nested) {
        outermost.putIfAbsent(u.canonicalized(), u);
      }
    }
    return outermost;
  }

  /** The expressions an aggregate evaluates per input row: grouping keys and aggregate expressions. */
  private static List<Expression> roots(Aggregate a) {
    List<Expression> roots = new ArrayList<>(Scala.list(a.groupingExpressions()));
    for (NamedExpression ne : Scala.list(a.aggregateExpressions())) {
      ((Expression) ne).foreach(node -> {
        if (node instanceof AggregateExpression agg) {
          roots.add(agg);
        }
        return BoxedUnit.UNIT;
      });
    }
    return roots;
  }

  private static LogicalPlan rewrite(Aggregate a) {
    Map<Expression, ScalaUDF> calls = candidates(a);
    Map<Expression, Expression> guards = CallSites.guards(roots(a));
    Map<Expression, Attribute> columns = new LinkedHashMap<>();
    List<NamedExpression> projectList = new ArrayList<>(Scala.list(a.child().output()));
    int i = 0;
    for (Map.Entry<Expression, ScalaUDF> e : calls.entrySet()) {
      // A conditional call keeps its condition: IF(guard, f(a), NULL) is evaluated where Spark would evaluate f(a).
      Expression guard = guards.get(e.getKey());
      Expression value = guard == null ? e.getValue()
          : new If(guard, e.getValue(),
              Literal.create(null, e.getValue().dataType()));
      Alias alias = CallSites.alias(value, GpuPlanner.name(e.getValue()) + "_" + i++);
      projectList.add(alias);
      columns.put(e.getKey(), alias.toAttribute());
    }
    Project project = new Project(Scala.seq(projectList), a.child());
    PartialFunction<Expression, Expression> replace = CallSites.replaceCalls(columns);
    List<Expression> grouping = Scala.list(a.groupingExpressions()).stream().map(g -> g.transformDown(replace)).toList();
    List<NamedExpression> aggregates = new ArrayList<>();
    for (NamedExpression ne : Scala.list(a.aggregateExpressions())) {
      aggregates.add((NamedExpression) ((Expression) ne).transformDown(new AbstractPartialFunction<Expression, Expression>() {
        @Override
        public boolean isDefinedAt(Expression x) {
          return x instanceof AggregateExpression || (x instanceof ScalaUDF && isGroupingKey(x, grouping, columns));
        }

        @Override
        public Expression apply(Expression x) {
          return x instanceof AggregateExpression ? x.transformDown(replace) : columns.get(x.canonicalized());
        }
      }));
    }
    return SparkShim.aggregate(grouping, aggregates, project, a);
  }

  private static boolean isGroupingKey(Expression x, List<Expression> grouping, Map<Expression, Attribute> columns) {
    Attribute col = columns.get(x.canonicalized());
    return col != null && grouping.stream().anyMatch(g -> g.semanticEquals(col));
  }
}
