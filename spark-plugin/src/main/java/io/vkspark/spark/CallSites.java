package io.vkspark.spark;

import java.util.IdentityHashMap;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.ConditionalExpression;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.LambdaFunction;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedLambdaVariable;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;

/**
 * Where GPU UDF calls sit in an expression, and so whether they may be computed for every row
 * below the expression: a call in a branch of CASE, IF, COALESCE or on the right of AND/OR runs
 * only for the rows its condition lets through, and a call inside a lambda
 * ({@code transform(arr, x -> f(x))}) sees lambda variables, not columns.
 */
final class CallSites {
  /** How a call is reached. */
  enum Site {
    /** Evaluated whenever the expression is. */
    ALWAYS,
    /** Evaluated for the rows a condition selects. */
    CONDITIONAL,
    /** Inside a lambda function. */
    LAMBDA
  }

  private CallSites() {}

  /** Every GPU UDF call of {@code e} with its site (the least safe one, if it occurs twice). */
  static Map<ScalaUDF, Site> of(Expression e) {
    Map<ScalaUDF, Site> out = new IdentityHashMap<>();
    walk(e, Site.ALWAYS, out);
    return out;
  }

  private static void walk(Expression e, Site site, Map<ScalaUDF, Site> out) {
    if (e instanceof LambdaFunction) {
      site = Site.LAMBDA;
    }
    if (e instanceof ScalaUDF u && GpuUdfs.of(u).isPresent()) {
      Site s = site == Site.ALWAYS && usesLambdaVariable(u) ? Site.LAMBDA : site;
      out.merge(u, s, (a, b) -> a.ordinal() >= b.ordinal() ? a : b);
    }
    if (site != Site.ALWAYS) {
      for (Expression c : Scala.list(e.children())) {
        walk(c, site, out);
      }
      return;
    }
    if (e instanceof ConditionalExpression c) {
      java.util.Set<Expression> always = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
      always.addAll(Scala.list(c.alwaysEvaluatedInputs()));
      for (Expression child : Scala.list(e.children())) {
        walk(child, always.contains(child) ? Site.ALWAYS : Site.CONDITIONAL, out);
      }
    } else if (e instanceof And || e instanceof Or) {
      walk(e.children().apply(0), Site.ALWAYS, out);
      walk(e.children().apply(1), Site.CONDITIONAL, out);
    } else {
      for (Expression c : Scala.list(e.children())) {
        walk(c, Site.ALWAYS, out);
      }
    }
  }

  static boolean usesLambdaVariable(Expression e) {
    return e.find(x -> x instanceof NamedLambdaVariable).isDefined();
  }

  /** Whether every argument is a column or a literal: nothing to compute for rows a condition skips. */
  static boolean plainArguments(ScalaUDF u) {
    return Scala.list(u.children()).stream().allMatch(a -> a instanceof Attribute || a instanceof Literal);
  }

  /** Why a call at {@code site} stays where it is. */
  static String reason(Site site) {
    return site == Site.LAMBDA
        ? "it is inside a lambda function (its arguments are lambda variables, not columns)"
        : "it sits in a branch of CASE, IF, COALESCE, AND or OR with computed arguments, which must not run for "
            + "rows the condition skips";
  }

  /** Replaces each GPU UDF call whose canonical form is a key of {@code columns} by its column. */
  static scala.PartialFunction<Expression, Expression> replaceCalls(java.util.Map<Expression, ? extends Expression> columns) {
    return new scala.runtime.AbstractPartialFunction<>() {
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
  static org.apache.spark.sql.catalyst.expressions.Alias alias(Expression e, String name) {
    return new org.apache.spark.sql.catalyst.expressions.Alias(e, name,
        org.apache.spark.sql.catalyst.expressions.NamedExpression$.MODULE$.newExprId(), Scala.seq(java.util.List.of()),
        scala.Option.empty(), Scala.seq(java.util.List.of()));
  }
}
