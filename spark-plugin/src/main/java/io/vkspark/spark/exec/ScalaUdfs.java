package io.vkspark.spark.exec;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.api.SparkTypes;
import io.vkspark.spark.api.VkAnalysisException;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.shim.SparkShim;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import scala.Option;

/**
 * GPU UDFs as Spark plans hold them. A Java UDF registered with {@code spark.udf().register}
 * reaches the plan as a {@link ScalaUDF} whose function is a Scala closure capturing the Java UDF;
 * {@link #of(ScalaUDF)} finds it through the closure's serialized form, as spark-rapids does. The
 * SQL functions of {@code spark.vkspark.functions} are built here as the same ScalaUDF calls.
 */
public final class ScalaUdfs {
  private static final Map<Class<?>, Optional<Method>> WRITE_REPLACE = new ConcurrentHashMap<>();

  private ScalaUdfs() {}

  /** The GPU UDF behind a ScalaUDF, if it is one. */
  public static Optional<GpuUdf> of(ScalaUDF udf) {
    return of(udf.function());
  }

  /** The GPU UDF behind a Scala function, if it is one (see the class comment). */
  public static Optional<GpuUdf> of(Object function) {
    if (function instanceof GpuUdf g) {
      return Optional.of(g);
    }
    if (function instanceof CountedFunction c) {
      return of(c.inner());
    }
    Optional<Method> writeReplace = WRITE_REPLACE.computeIfAbsent(function.getClass(), c -> {
      try {
        Method m = c.getDeclaredMethod("writeReplace");
        m.setAccessible(true);
        return Optional.of(m);
      } catch (ReflectiveOperationException | RuntimeException e) {
        return Optional.empty();
      }
    });
    if (writeReplace.isEmpty()) {
      return Optional.empty();
    }
    try {
      if (writeReplace.get().invoke(function) instanceof SerializedLambda lambda) {
        for (int i = 0; i < lambda.getCapturedArgCount(); i++) {
          if (lambda.getCapturedArg(i) instanceof GpuUdf g) {
            return Optional.of(g);
          }
        }
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      return Optional.empty();
    }
    return Optional.empty();
  }

  /** The Scala function Spark uses for a Java UDF of the kernel's arity (the same as registration makes). */
  public static Object scalaFunction(String name, GpuUdf udf) {
    return SparkShim.javaUdfFunction(udf, GpuUdfs.checkArity(name, udf, udf.kernel().argNames().size()));
  }

  /**
   * A ScalaUDF call of {@code udf} (whose Scala function is {@code function}, see
   * {@link #scalaFunction}) over {@code children}, as Spark builds for a registered Java UDF.
   */
  public static ScalaUDF call(String name, GpuUdf udf, Object function, List<Expression> children) {
    int n = udf.kernel().argNames().size();
    if (children.size() != n) {
      throw wrongArgumentCount(name, udf.kernel(), children.size());
    }
    List<Option<org.apache.spark.sql.catalyst.encoders.ExpressionEncoder<?>>> encoders = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      encoders.add(Option.empty());
    }
    return new ScalaUDF(function, SparkTypes.result(udf.kernel().signature()),
        Scala.seq(children), Scala.seq(encoders),
        Option.empty(), Option.apply(name), true, true);
  }

  /** The analysis error for a call of {@code name} with {@code given} arguments. */
  public static RuntimeException wrongArgumentCount(String name, GpuKernel k, int given) {
    int n = k.argNames().size();
    throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_WRONG_NUM_ARGS, name,
        GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + name + "' takes " + n + " arguments " + k
            + " but was called with " + given + ".", "call " + name + " with " + n + " arguments."));
  }
}
