package io.vkspark.spark.plan;

import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.udf.TranslatedUdf;
import io.vkspark.spark.kernel.CompiledKernels;
import io.vkspark.spark.udf.ScalaUdfs;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.api.SparkTypes;
import io.vkspark.spark.api.VkAnalysisException;
import io.vkspark.spark.conf.VkConf;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.SqlType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.AnsiTypeCoercion$;
import org.apache.spark.sql.catalyst.analysis.TypeCoercion$;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructType;
import scala.Function1;
import scala.Option;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * Argument types of GPU UDF calls, checked at analysis: a Java UDF carries no input types, but a
 * GPU UDF's kernel does. Arguments Spark can cast implicitly (as for its own typed functions,
 * following the session's ANSI setting) are cast; anything else is an analysis-time error that
 * names the UDF, the argument and the cast to write.
 */
public final class ArgumentTypes {
  private ArgumentTypes() {}

  /** Resolution rule: inserts implicit casts to the kernel's argument types. */
  public static final class CastArguments extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      return plan.transformAllExpressions(new AbstractPartialFunction<Expression, Expression>() {
        @Override
        public boolean isDefinedAt(Expression e) {
          return kernelToCastFor(e).isPresent();
        }

        /** One look at the UDF per call: Spark's transform calls this, not isDefinedAt then apply. */
        @Override
        public <A1 extends Expression, B1> B1 applyOrElse(A1 e, Function1<A1, B1> otherwise) {
          Optional<GpuKernel> k = kernelToCastFor(e);
          @SuppressWarnings("unchecked")
          B1 out = k.isPresent() ? (B1) cast((ScalaUDF) e, k.get()) : otherwise.apply(e);
          return out;
        }

        @Override
        public Expression apply(Expression e) {
          return cast((ScalaUDF) e, kernelToCastFor(e).orElseThrow());
        }
      });
    }

    /** The kernel of the hand-written GPU UDF {@code e} calls, if an argument of the call needs an implicit cast to it. */
    private static Optional<GpuKernel> kernelToCastFor(Expression e) {
      return e instanceof ScalaUDF u && u.childrenResolved()
          ? handWritten(u).map(GpuUdf::kernel).filter(k -> needsCast(u, k)) : Optional.empty();
    }

    private static Expression cast(ScalaUDF u, GpuKernel k) {
      List<Expression> args = Scala.list(u.children());
      List<Expression> cast = new ArrayList<>();
      for (int i = 0; i < args.size(); i++) {
        DataType want = SparkTypes.of(k.args().get(i));
        Expression a = args.get(i);
        cast.add(SparkTypes.accepts(k.args().get(i), a.dataType()) ? a : implicitCast(a, want).orElse(a));
      }
      return u.withNewChildren(Scala.seq(cast));
    }

    private static boolean needsCast(ScalaUDF u, GpuKernel k) {
      List<Expression> args = Scala.list(u.children());
      if (args.size() != k.argTypes().size()) {
        return false;
      }
      for (int i = 0; i < args.size(); i++) {
        DataType want = SparkTypes.of(k.args().get(i));
        if (!SparkTypes.accepts(k.args().get(i), args.get(i).dataType()) && implicitCast(args.get(i), want).isPresent()) {
          return true;
        }
      }
      return false;
    }
  }

  /**
   * The GPU UDF {@code u} calls if it is written as one (not a plain Java UDF translated to the GPU:
   * Spark neither casts its arguments nor checks them at analysis, and its planning decides where
   * it runs; see {@code GpuPlanner#misfit}).
   */
  static Optional<GpuUdf> handWritten(ScalaUDF u) {
    return ScalaUdfs.of(u).filter(udf -> !(udf instanceof TranslatedUdf));
  }

  static Optional<Expression> implicitCast(Expression e, DataType want) {
    Option<Expression> cast = SQLConf.get().ansiEnabled()
        ? AnsiTypeCoercion$.MODULE$.implicitCast(e, want)
        : TypeCoercion$.MODULE$.implicitCast(e, want);
    return cast.isDefined() ? Optional.of(cast.get()) : Optional.empty();
  }

  /**
   * Resolution rule, after {@link CastArguments}: once the whole plan is resolved (so every implicit
   * cast is in), every GPU UDF call has the kernel's argument count and types, and (while vkspark is
   * enabled) a body that compiles. Problems are {@link VkAnalysisException}s, as Spark reports its
   * own. This runs in the analyzer rather than as a check rule because Spark re-wraps errors of check
   * rules in an exception that keeps the condition but loses a SQLSTATE that Spark's own table lacks.
   */
  public static final class CheckCalls extends Rule<LogicalPlan> {
    private final SparkSession session;

    public CheckCalls(SparkSession session) {
      this.session = session;
    }

    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      if (plan.resolved()) {
        validate(plan, session);
      }
      return plan;
    }
  }

  /** Check rule: {@link CheckCalls} again on the analyzed plan (a backstop; it finds nothing new). */
  public static final class Check extends AbstractFunction1<LogicalPlan, BoxedUnit> {
    private final SparkSession session;

    public Check(SparkSession session) {
      this.session = session;
    }

    @Override
    public BoxedUnit apply(LogicalPlan plan) {
      validate(plan, session);
      return BoxedUnit.UNIT;
    }
  }

  static void validate(LogicalPlan plan, SparkSession session) {
    VkConf[] conf = {null};
    plan.foreach(node -> {
      for (Expression e : Scala.list(node.expressions())) {
        e.foreach(x -> {
          if (x instanceof ScalaUDF u && u.childrenResolved()) {
            handWritten(u).ifPresent(udf -> {
              check(u, udf.kernel());
              if (conf[0] == null) {
                conf[0] = VkConf.of(session);
              }
              if (conf[0].enabled()) {
                VkAnalysisException.compiling(GpuPlanner.name(u), () -> CompiledKernels.compile(udf.kernel().spec(GpuPlanner.name(u)), conf[0]));
              }
            });
          }
          return BoxedUnit.UNIT;
        });
      }
      return BoxedUnit.UNIT;
    });
  }

  private static void check(ScalaUDF u, GpuKernel k) {
    String name = GpuPlanner.name(u);
    List<Expression> args = Scala.list(u.children());
    if (args.size() != k.argTypes().size()) {
      throw ScalaUdfs.wrongArgumentCount(name, k, args.size());
    }
    for (int i = 0; i < args.size(); i++) {
      DataType want = SparkTypes.of(k.args().get(i));
      Expression a = args.get(i);
      if (!SparkTypes.accepts(k.args().get(i), a.dataType())) {
        throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_ARGUMENT_TYPE, name,
            GpuException.of(Code.INVALID_ARGUMENT, "argument " + (i + 1) + " (" + k.argNames().get(i) + ") of GPU UDF '"
            + name + "' must be " + SparkTypes.describe(want, a.dataType()) + " but " + a.sql() + " is "
            + SparkTypes.describe(a.dataType(), want) + ", which Spark cannot cast implicitly.",
            typeFix(a, want, k.args().get(i).sqlName())));
      }
    }
  }

  /**
   * The Fix of an argument of the wrong type: the CAST to write where Spark can cast it, else what
   * to pass instead (an element of an array, a field of a struct, a value of a map: no CAST turns
   * those into a scalar), or an array where the UDF takes one.
   */
  static String typeFix(Expression a, DataType want, String wantSql) {
    DataType got = a.dataType();
    String column = "pass a " + wantSql + " column";
    if (Cast.canCast(got, want)) {
      return "write CAST(" + a.sql() + " AS " + want.sql() + ") in the query, or " + column + ".";
    }
    if (got instanceof ArrayType at && !(want instanceof ArrayType)) {
      String element = a.sql() + "[0]";
      if (!at.elementType().equals(want) && Cast.canCast(at.elementType(), want)) {
        element = "CAST(" + element + " AS " + want.sql() + ")";
      }
      boolean arrayOfWant = at.elementType().equals(want)
          && Arrays.stream(SqlType.values()).anyMatch(t -> t.sqlName().equals("array<" + wantSql + ">"));
      return "pass one element, e.g. " + element + (arrayOfWant ? ", or declare the argument as array<" + wantSql
          + "> and loop over it in the body." : ".");
    }
    if (got instanceof StructType st && st.fields().length > 0) {
      return "pass one field, e.g. " + a.sql() + "." + st.fields()[0].name() + ", or " + column + ".";
    }
    if (got instanceof MapType) {
      return "pass one value, e.g. element_at(" + a.sql() + ", key), or " + column + ".";
    }
    if (want instanceof ArrayType && !(got instanceof ArrayType)) {
      return "pass an array, e.g. array(" + a.sql() + "), or declare the argument as " + got.simpleString() + ".";
    }
    return column + " (Spark cannot cast " + got.simpleString() + " to " + want.simpleString() + ").";
  }
}
