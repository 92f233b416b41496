package io.vkspark.spark.plan;

import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.udf.NullSkipping;
import io.vkspark.spark.udf.ScalaUdfs;
import io.vkspark.spark.udf.TranslatedUdf;
import io.vkspark.spark.shim.Scala;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.KnownNotNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.internal.SQLConf;
import scala.runtime.AbstractPartialFunction;

/**
 * Spark's analyzer wraps a Scala closure with primitive parameters over nullable columns in its own
 * null check, {@code if (isnull(a) OR isnull(b)) null else f(knownnotnull(a), knownnotnull(b))}: the
 * call sits under a condition and reads expressions, not columns, so a GPU node would compute its
 * arguments in a projection first and a fused aggregate would not see it. This optimizer rule moves
 * the check into the function ({@link NullSkipping}) for a closure that translates to the GPU:
 * {@code f'(a, b)}, which Spark evaluates to the same rows (null when a checked argument is null)
 * and vkspark plans as it plans a Java UDF (its strict kernel gives null for those rows). Nothing
 * changes where vkspark or {@code spark.vkspark.translate} is off (the session's settings, read
 * when the rule runs), or for a closure that stays Spark's.
 */
public final class NullCheckedClosures extends Rule<LogicalPlan> {

  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    String enabled = SQLConf.get().getConfString(Settings.ENABLED.key(), null);
    if (!Settings.ENABLED.get(k -> enabled) || !ScalaUdfs.translateOn()) {
      return plan;
    }
    return (LogicalPlan) plan.transformAllExpressions(new AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression e) {
        return e instanceof If i && rewrite(i).isPresent();
      }

      @Override
      public Expression apply(Expression e) {
        return rewrite((If) e).orElseThrow();
      }
    });
  }

  /** {@code i} as one call of a {@link NullSkipping} function, if it is Spark's null check around a translated closure. */
  static Optional<Expression> rewrite(If i) {
    if (!(i.trueValue() instanceof Literal l && l.value() == null && i.falseValue() instanceof ScalaUDF u)
        || u.function() instanceof NullSkipping || u.children().size() > NullSkipping.MAX_ARITY) {
      return Optional.empty();
    }
    List<Expression> checked = new ArrayList<>();
    if (!isNullChecks(i.predicate(), checked)) {
      return Optional.empty();
    }
    List<Expression> children = new ArrayList<>();
    List<Boolean> skips = new ArrayList<>();
    for (Expression c : Scala.list(u.children())) {
      boolean known = c instanceof KnownNotNull;
      Expression arg = known ? ((KnownNotNull) c).child() : c;
      if (known && !checked.removeIf(x -> x.semanticEquals(arg))) {
        return Optional.empty();
      }
      children.add(arg);
      skips.add(known);
    }
    if (!checked.isEmpty() || !skips.contains(true)
        || !(ScalaUdfs.of(u).orElse(null) instanceof TranslatedUdf t && t.language().equals("Scala"))) {
      return Optional.empty();
    }
    return Optional.of(new ScalaUDF(new NullSkipping(u.function(), skips), u.dataType(), Scala.seq(children),
        u.inputEncoders(), u.outputEncoder(), u.udfName(), true, u.udfDeterministic()));
  }

  /** Whether {@code p} is {@code isnull(x) OR isnull(y) ...}; adds the x, y, ... to {@code into}. */
  private static boolean isNullChecks(Expression p, List<Expression> into) {
    if (p instanceof Or o) {
      return isNullChecks(o.left(), into) && isNullChecks(o.right(), into);
    }
    if (p instanceof IsNull n) {
      into.add(n.child());
      return true;
    }
    return false;
  }
}
