package io.vkspark.spark.plan;

import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.udf.ScalaUdfs;
import io.vkspark.spark.shim.Scala;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.AtLeastNNonNulls;
import org.apache.spark.sql.catalyst.expressions.CaseWhen;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.ConditionalExpression;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.IsNaN;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.LambdaFunction;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NaNvl;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.NamedLambdaVariable;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.PlanExpression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.sql.catalyst.expressions.TryEval;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.types.DataTypes;
import scala.Option;
import scala.PartialFunction;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * Where GPU UDF calls sit in an expression, and under which condition Spark evaluates them (their
 * guard). A call in a branch of CASE, IF, COALESCE, NaNvl, the list of IN, on the right of AND/OR,
 * past the n-th input of AtLeastNNonNulls or under an aggregate's FILTER runs only for the rows its condition lets through; the node that
 * computes it must not run its {@code call()} for the others. A call inside a lambda
 * ({@code transform(arr, x -> f(x))}) sees lambda variables, not columns; a call inside
 * {@code try_eval} must not fail where Spark would catch its error: both stay where they are.
 *
 * <p>A guard is built from the conditions themselves with AND, OR, NOT, COALESCE and IS [NOT]
 * NULL, all of which Spark evaluates lazily left to right: evaluating a guard evaluates a
 * condition only for the rows Spark evaluates it for, so a guard cannot fail where the query would
 * not.
 */
public final class CallSites {
  /** How a call is reached. */
  public enum Site {
    /** Evaluated whenever the expression is. */
    ALWAYS,
    /** Evaluated for the rows a condition selects (its guard). */
    CONDITIONAL,
    /** Inside a lambda function, or inside an expression that evaluates it in a way vkspark cannot guard. */
    LAMBDA
  }

  /** One occurrence of a call: its site and, when conditional, the condition Spark evaluates it under. */
  private record Occurrence(ScalaUDF call, Site site, Expression guard) {}

  private CallSites() {}

  /** Every GPU UDF call of {@code e} with its site (the least safe one, if it occurs twice). */
  public static Map<ScalaUDF, Site> of(Expression e) {
    Map<ScalaUDF, Site> out = new IdentityHashMap<>();
    for (Occurrence o : occurrences(e)) {
      out.merge(o.call(), o.site(), (a, b) -> a.ordinal() >= b.ordinal() ? a : b);
    }
    return out;
  }

  /**
   * The site of each GPU UDF call of {@code exprs} by canonical form, over all its occurrences:
   * ALWAYS if Spark evaluates it for every row somewhere (one column serves them all); otherwise
   * LAMBDA if any occurrence is in a lambda (a guarded column would be null where the lambda reads
   * it); otherwise CONDITIONAL.
   */
  public static Map<Expression, Site> sites(List<Expression> exprs) {
    Map<Expression, Site> sites = new HashMap<>();
    for (Expression e : exprs) {
      for (Occurrence o : occurrences(e)) {
        sites.merge(o.call().canonicalized(), o.site(),
            (a, b) -> a == Site.ALWAYS || b == Site.ALWAYS ? Site.ALWAYS : a.ordinal() >= b.ordinal() ? a : b);
      }
    }
    return sites;
  }

  /**
   * For each GPU UDF call of {@code exprs} (by canonical form) that is not in a lambda: the
   * condition under which Spark evaluates it at least once, or null when it always does.
   * Evaluated over the same row, the guard is true exactly when some occurrence of the call is
   * evaluated; null and false both mean "not evaluated".
   */
  public static Map<Expression, Expression> guards(List<Expression> exprs) {
    Map<Expression, List<Expression>> conditions = new HashMap<>();
    Set<Expression> always = Collections.newSetFromMap(new HashMap<>());
    for (Expression e : exprs) {
      for (Occurrence o : occurrences(e)) {
        Expression key = o.call().canonicalized();
        if (o.site() == Site.ALWAYS) {
          always.add(key);
        } else if (o.site() == Site.CONDITIONAL) {
          conditions.computeIfAbsent(key, k -> new ArrayList<>()).add(o.guard());
        }
      }
    }
    Map<Expression, Expression> out = new HashMap<>();
    for (Expression key : always) {
      out.put(key, null);
    }
    conditions.forEach((key, gs) -> {
      if (!always.contains(key)) {
        Expression g = gs.get(0);
        for (int i = 1; i < gs.size(); i++) {
          g = new Or(g, gs.get(i));
        }
        out.put(key, g);
      }
    });
    return out;
  }

  private static List<Occurrence> occurrences(Expression e) {
    List<Occurrence> out = new ArrayList<>();
    walk(e, Site.ALWAYS, null, out);
    return out;
  }

  private static void walk(Expression e, Site site, Expression guard, List<Occurrence> out) {
    if (e instanceof LambdaFunction || e instanceof TryEval) {
      site = Site.LAMBDA;
    }
    if (e instanceof ScalaUDF u && ScalaUdfs.of(u).isPresent()) {
      Site s = site != Site.LAMBDA && usesLambdaVariable(u) ? Site.LAMBDA : site;
      out.add(new Occurrence(u, s, s == Site.CONDITIONAL ? guard : null));
    }
    if (site == Site.LAMBDA) {
      for (Expression c : Scala.list(e.children())) {
        walk(c, site, null, out);
      }
      return;
    }
    if (e instanceof If i) {
      Expression p = isTrue(i.predicate());
      walk(i.predicate(), site, guard, out);
      walkUnder(i.trueValue(), guard, p, out);
      walkUnder(i.falseValue(), guard, new Not(p), out);
    } else if (e instanceof CaseWhen c) {
      Expression none = null; // no earlier condition was true
      for (var branch : Scala.list(c.branches())) {
        Expression cond = branch._1();
        if (none == null) {
          walk(cond, site, guard, out);
        } else {
          walkUnder(cond, guard, none, out);
        }
        Expression taken = isTrue(cond);
        walkUnder(branch._2(), guard, none == null ? taken : new And(none, taken), out);
        none = none == null ? new Not(taken) : new And(none, new Not(taken));
      }
      if (c.elseValue().isDefined()) {
        walkUnder(c.elseValue().get(), guard, none, out);
      }
    } else if (e instanceof Coalesce c) {
      Expression allNull = null;
      for (Expression child : Scala.list(c.children())) {
        if (allNull == null) {
          walk(child, site, guard, out);
        } else {
          walkUnder(child, guard, allNull, out);
        }
        allNull = allNull == null ? new IsNull(child) : new And(allNull, new IsNull(child));
      }
    } else if (e instanceof NaNvl n) {
      walk(n.left(), site, guard, out);
      walkUnder(n.right(), guard, new IsNaN(n.left()), out);
    } else if (e instanceof And a) {
      walk(a.left(), site, guard, out);
      walkUnder(a.right(), guard, coalesce(a.left(), true), out);
    } else if (e instanceof Or o) {
      walk(o.left(), site, guard, out);
      walkUnder(o.right(), guard, new Not(isTrue(o.left())), out);
    } else if (e instanceof In in) {
      // IN evaluates its list only for a non-null value, and stops at the first match.
      walk(in.value(), site, guard, out);
      Expression noMatch = new IsNotNull(in.value());
      for (Expression item : Scala.list(in.list())) {
        walkUnder(item, guard, noMatch, out);
        noMatch = new And(noMatch, new Not(isTrue(new EqualTo(in.value(), item))));
      }
    } else if (e instanceof AtLeastNNonNulls at) {
      // Stops at the n-th non-null (non-NaN) input: input j runs while fewer than n of those before it are.
      List<Expression> inputs = Scala.list(at.children());
      for (int j = 0; j < inputs.size(); j++) {
        if (j < at.n()) {
          walk(inputs.get(j), site, guard, out);
        } else {
          walkUnder(inputs.get(j), guard, new Not(new AtLeastNNonNulls(at.n(), Scala.seq(inputs.subList(0, j)))), out);
        }
      }
    } else if (e instanceof AggregateExpression agg && agg.filter().isDefined()) {
      walk(agg.filter().get(), site, guard, out);
      walkUnder(agg.aggregateFunction(), guard, isTrue(agg.filter().get()), out);
    } else if (e instanceof ConditionalExpression c) {
      // A conditional vkspark does not know: only its always-evaluated inputs are safe.
      Set<Expression> alwaysIn = Collections.newSetFromMap(new IdentityHashMap<>());
      alwaysIn.addAll(Scala.list(c.alwaysEvaluatedInputs()));
      for (Expression child : Scala.list(e.children())) {
        walk(child, alwaysIn.contains(child) ? site : Site.LAMBDA, guard, out);
      }
    } else {
      for (Expression c : Scala.list(e.children())) {
        walk(c, site, guard, out);
      }
    }
  }

  /** Walks {@code e}, evaluated where {@code outer} and {@code cond} hold. */
  private static void walkUnder(Expression e, Expression outer, Expression cond, List<Occurrence> out) {
    walk(e, Site.CONDITIONAL, outer == null ? cond : new And(outer, cond), out);
  }

  /** {@code p} is true (null counts as false), evaluating {@code p} once. */
  private static Expression isTrue(Expression p) {
    return coalesce(p, false);
  }

  private static Expression coalesce(Expression p, boolean ifNull) {
    return new Coalesce(Scala.seq(List.of(p, Literal.create(ifNull, DataTypes.BooleanType))));
  }

  /**
   * Whether {@code e} reads a lambda variable bound outside it: then it can only be evaluated inside
   * that lambda. A variable bound by a lambda within {@code e} does not count: the argument of
   * {@code asum(transform(v, x -> x * 2))} is computed by a projection like any other.
   */
  static boolean usesLambdaVariable(Expression e) {
    Set<Object> bound = new HashSet<>();
    e.foreach(x -> {
      if (x instanceof LambdaFunction f) {
        for (Object a : Scala.list(f.arguments())) {
          if (a instanceof NamedLambdaVariable v) {
            bound.add(v.exprId());
          }
        }
      }
      return BoxedUnit.UNIT;
    });
    return e.find(x -> x instanceof NamedLambdaVariable v && !bound.contains(v.exprId())).isDefined();
  }

  /**
   * Whether the arguments of a conditional call may be computed again under its guard
   * ({@code IF(guard, arg, NULL)}) and give what Spark would: deterministic, with no subquery.
   */
  public static boolean guardableArguments(ScalaUDF u) {
    return Scala.list(u.children()).stream().allMatch(a -> a.deterministic()
        && a.find(x -> x instanceof PlanExpression<?>).isEmpty());
  }

  /** Replaces each GPU UDF call whose canonical form is a key of {@code columns} by its column. */
  public static PartialFunction<Expression, Expression> replaceCalls(Map<Expression, ? extends Expression> columns) {
    return new AbstractPartialFunction<>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof ScalaUDF && columns.containsKey(x.canonicalized());
      }

      @Override
      public Expression apply(Expression x) {
        return columns.get(x.canonicalized());
      }
    };
  }

  /** {@code e AS name} with a fresh expression id. */
  public static Alias alias(Expression e, String name) {
    return new Alias(e, name,
        NamedExpression$.MODULE$.newExprId(), Scala.seq(List.of()),
        Option.empty(), Scala.seq(List.of()));
  }

  /** Where a call that a lambda or a condition keeps in Spark's projection or filter runs: left to Spark. */
  public static Placement placement(Site site) {
    return Placement.cpu(site == Site.LAMBDA ? Placement.Cause.LAMBDA : Placement.Cause.CONDITIONAL,
        Placement.DecidedBy.LEFTOVERS);
  }
}
