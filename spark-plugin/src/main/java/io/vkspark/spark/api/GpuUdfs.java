package io.vkspark.spark.api;

import io.vkspark.spark.plan.GpuPlanner;
import io.vkspark.spark.plan.OutsideNodeCalls;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.shim.SparkShim;
import io.vkspark.spark.conf.VkConf;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF10;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.api.java.UDF3;
import org.apache.spark.sql.api.java.UDF4;
import org.apache.spark.sql.api.java.UDF5;
import org.apache.spark.sql.api.java.UDF6;
import org.apache.spark.sql.api.java.UDF7;
import org.apache.spark.sql.api.java.UDF8;
import org.apache.spark.sql.api.java.UDF9;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.sql.types.DataType;
import scala.Option;

/**
 * Registering GPU UDFs, and recognizing them in plans. A Java UDF registered with
 * {@code spark.udf().register} reaches the plan as a {@link ScalaUDF} whose function is a Scala
 * closure capturing the Java UDF; {@link #of(ScalaUDF)} finds it through the closure's
 * serialized form, as spark-rapids does.
 */
public final class GpuUdfs {
  private static final Map<Class<?>, Optional<Method>> WRITE_REPLACE = new ConcurrentHashMap<>();

  private GpuUdfs() {}

  /**
   * Registers {@code udf} under {@code name} with the result type of its kernel. The body is compiled
   * now, so a body that does not compile fails here, naming the line.
   *
   * @throws VkAnalysisException VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE or
   *     VKSPARK_GPU_UDF_INVALID_IMPLEMENTATION
   */
  @SuppressWarnings({"rawtypes"})
  public static void register(SparkSession spark, String name, GpuUdf udf) {
    DataType type = SparkTypes.result(udf.kernel().signature());
    int arity = udf.kernel().argNames().size();
    checkArity(name, udf, arity);
    VkConf conf = GpuPlanner.conf(spark);
    if (conf.enabled()) {
      compile(name, udf.kernel(), conf);
    }
    switch (arity) {
      case 1 -> spark.udf().register(name, (UDF1) udf, type);
      case 2 -> spark.udf().register(name, (UDF2) udf, type);
      case 3 -> spark.udf().register(name, (UDF3) udf, type);
      case 4 -> spark.udf().register(name, (UDF4) udf, type);
      case 5 -> spark.udf().register(name, (UDF5) udf, type);
      case 6 -> spark.udf().register(name, (UDF6) udf, type);
      case 7 -> spark.udf().register(name, (UDF7) udf, type);
      case 8 -> spark.udf().register(name, (UDF8) udf, type);
      case 9 -> spark.udf().register(name, (UDF9) udf, type);
      case 10 -> spark.udf().register(name, (UDF10) udf, type);
      default -> throw new IllegalStateException("arity " + arity);
    }
  }

  /** The Scala function Spark uses for a Java UDF of the kernel's arity (the same as registration makes). */
  public static Object scalaFunction(String name, GpuUdf udf) {
    return SparkShim.javaUdfFunction(udf, checkArity(name, udf, udf.kernel().argNames().size()));
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

  private static int checkArity(String name, GpuUdf udf, int arity) {
    boolean ok = switch (arity) {
      case 1 -> udf instanceof UDF1;
      case 2 -> udf instanceof UDF2;
      case 3 -> udf instanceof UDF3;
      case 4 -> udf instanceof UDF4;
      case 5 -> udf instanceof UDF5;
      case 6 -> udf instanceof UDF6;
      case 7 -> udf instanceof UDF7;
      case 8 -> udf instanceof UDF8;
      case 9 -> udf instanceof UDF9;
      case 10 -> udf instanceof UDF10;
      default -> false;
    };
    if (!ok) {
      throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_INVALID_IMPLEMENTATION, name,
          GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + name + "' (" + udf.getClass().getName() + ") declares "
              + arity + " kernel arguments but does not implement UDF" + arity + ".",
              "implement org.apache.spark.sql.api.java.UDF" + arity + " (1 to 10 arguments), whose call() is the CPU reference."));
    }
    return arity;
  }

  /** The analysis error for a call of {@code name} with {@code given} arguments. */
  public static RuntimeException wrongArgumentCount(String name, GpuKernel k, int given) {
    int n = k.argNames().size();
    throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_WRONG_NUM_ARGS, name,
        GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + name + "' takes " + n + " arguments " + k
            + " but was called with " + given + ".", "call " + name + " with " + n + " arguments."));
  }

  /**
   * Compiles the kernel of GPU UDF {@code name} (once per JVM, see {@link GpuPlanner#compile}), as
   * an analysis-time check: a body that does not compile (or not within
   * {@code spark.vkspark.compileTimeout}), or that vkspark refuses, is a {@link VkAnalysisException}
   * whose cause names the line. A cancelled wait (CANCELLED) is thrown as it is.
   */
  public static void compile(String name, GpuKernel k, VkConf conf) {
    try {
      GpuPlanner.compile(name, k, conf);
    } catch (GpuException e) {
      if (e.code() == Code.TIMEOUT) { // past spark.vkspark.compileTimeout: the body does not compile in time
        throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE, name,
            new GpuException(Code.TIMEOUT, "GPU UDF '" + name + "': " + e.getMessage(), e));
      }
      VkAnalysisException.Condition c = switch (e.code()) {
        case COMPILE, INVALID_ARGUMENT -> VkAnalysisException.Condition.VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE;
        case UNSUPPORTED -> VkAnalysisException.Condition.VKSPARK_GPU_UDF_UNSUPPORTED;
        default -> null;
      };
      if (c == null) {
        throw e;
      }
      throw VkAnalysisException.raise(c, name, e);
    }
  }

  /** The GPU UDF behind a ScalaUDF, if it is one. */
  public static Optional<GpuUdf> of(ScalaUDF udf) {
    return of(udf.function());
  }

  static Optional<GpuUdf> of(Object function) {
    if (function instanceof GpuUdf g) {
      return Optional.of(g);
    }
    if (function instanceof OutsideNodeCalls.Counted c) {
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

  /**
   * The GPU UDFs of {@code spark.vkspark.functions}, loaded and checked: each class is on the
   * classpath, a GpuUdf of a Spark UDFn, not named like a built-in function, and its body compiles.
   * The driver plugin calls this when the application starts, so a bad list fails the SparkContext
   * (which then stops) instead of every later session that reuses it.
   */
  public static List<GpuUdf> configured(VkConf conf, ClassLoader loader) {
    ClassLoader l = loader == null ? GpuUdfs.class.getClassLoader() : loader;
    List<GpuUdf> out = new ArrayList<>();
    for (String className : conf.functions()) {
      GpuUdf udf = load(className, l);
      String name = udf.name();
      if (org.apache.spark.sql.catalyst.analysis.FunctionRegistry$.MODULE$.builtin()
          .functionExists(new org.apache.spark.sql.catalyst.FunctionIdentifier(name))) {
        throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_SHADOWS_BUILTIN, name,
            GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF class " + className + " in " + VkConf.FUNCTIONS
                + " is named '" + name + "', which would replace Spark's built-in function " + name + ".",
                "override name() in " + className + " to return another SQL name."));
      }
      checkArity(name, udf, udf.kernel().argNames().size());
      compile(name, udf.kernel(), conf); // a body that does not compile fails here, naming the line
      out.add(udf);
    }
    return out;
  }

  /** Instantiates a GPU UDF class by name (for {@code spark.vkspark.functions}). */
  static GpuUdf load(String className, ClassLoader loader) {
    try {
      Class<?> c = Class.forName(className.trim(), true, loader);
      if (!GpuUdf.class.isAssignableFrom(c)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, VkConf.FUNCTIONS + " lists '" + className + "', which is not a GpuUdf.",
            "list classes that implement io.vkspark.spark.api.GpuUdf and a Spark UDFn, or remove it from " + VkConf.FUNCTIONS + ".");
      }
      return (GpuUdf) c.getConstructor().newInstance();
    } catch (ClassNotFoundException e) {
      throw new GpuException(Code.INVALID_ARGUMENT, VkConf.FUNCTIONS + " lists '" + className + "', which is not a class"
          + " on the classpath. Fix: correct the name in " + VkConf.FUNCTIONS + " (a fully qualified class name), or add"
          + " its jar with --jars.", e);
    } catch (ReflectiveOperationException e) {
      throw new GpuException(Code.INVALID_ARGUMENT, VkConf.FUNCTIONS + " lists '" + className + "', which cannot be "
          + "instantiated: " + e + ". Fix: give " + className + " a public no-argument constructor (a public static"
          + " nested or top-level class).", e);
    }
  }
}
