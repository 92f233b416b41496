package io.vkspark.spark.udf;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.api.VkAnalysisException;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.kernel.CompiledKernels;
import io.vkspark.spark.conf.Settings;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/** The GPU UDF classes of {@code spark.vkspark.functions}: SQL functions in every session, no code. */
public final class ConfiguredUdfs {
  private ConfiguredUdfs() {}
  /**
   * The GPU UDFs of {@code spark.vkspark.functions}, loaded and checked: each class is on the
   * classpath, a GpuUdf of a Spark UDFn, not named like a built-in function, and its body compiles.
   * The driver plugin calls this when the application starts, so a bad list fails the SparkContext
   * (which then stops) instead of every later session that reuses it.
   */
  public static List<GpuUdf> configured(VkConf conf, ClassLoader loader) {
    ClassLoader l = loader == null ? ConfiguredUdfs.class.getClassLoader() : loader;
    List<GpuUdf> out = new ArrayList<>();
    for (String className : conf.functions()) {
      if (!(load(className, l) instanceof GpuUdf udf)) {
        continue; // a plain Java UDF class: javaFunctions
      }
      String name = udf.name();
      checkNotBuiltin(name, className, "override name() in " + className + " to return another SQL name.");
      GpuUdfs.checkArity(name, udf, udf.kernel().argNames().size());
      VkAnalysisException.compiling(name, () -> CompiledKernels.compile(udf.kernel().spec(name), conf)); // fails here, naming the line
      out.add(udf);
    }
    return out;
  }

  private static void checkNotBuiltin(String name, String className, String fix) {
    if (FunctionRegistry$.MODULE$.builtin()
        .functionExists(new FunctionIdentifier(name))) {
      throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_SHADOWS_BUILTIN, name,
          GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF class " + className + " in " + Settings.FUNCTIONS.key()
              + " is named '" + name + "', which would replace Spark's built-in function " + name + ".", fix));
    }
  }

  /**
   * A plain Java UDF class of {@code spark.vkspark.functions} (a Spark {@code UDF1} .. {@code UDF10}
   * that is not a GPU UDF): registered under the snake-case name of its class, returning the SQL type
   * of its {@code call()}'s boxed result. Spark runs it; {@code spark.vkspark.translate} puts it on
   * the GPU where its {@code call()} translates.
   */
  public record JavaFunction(String name, Object udf, int arity, DataType result) {}

  /** The plain Java UDF classes of {@code spark.vkspark.functions}, loaded and checked (see {@link JavaFunction}). */
  public static List<JavaFunction> javaFunctions(VkConf conf, ClassLoader loader) {
    ClassLoader l = loader == null ? ConfiguredUdfs.class.getClassLoader() : loader;
    List<JavaFunction> out = new ArrayList<>();
    for (String className : conf.functions()) {
      Object udf = load(className, l);
      if (udf instanceof GpuUdf) {
        continue;
      }
      String name = GpuUdf.snakeCase(udf.getClass().getSimpleName());
      checkNotBuiltin(name, className, "rename " + className + " (its SQL name is its simple name in snake case).");
      Method call = callMethod(udf.getClass());
      DataType result = RESULT_TYPES.get(call.getReturnType());
      int arity = call.getParameterCount();
      if (result == null || arity < 1 || arity > 10) {
        throw GpuException.of(Code.INVALID_ARGUMENT, Settings.FUNCTIONS.key() + " lists '" + className
                + "', whose call() takes " + arity + " arguments and returns " + call.getReturnType().getName() + ".",
            "give it a call() of 1 to 10 arguments returning Double, Float, Long, Integer, Short, Byte or Boolean, "
                + "or register it with spark.udf().register and its result type.");
      }
      out.add(new JavaFunction(name, udf, arity, result));
    }
    return out;
  }

  /** SQL result types of a plain Java UDF class's {@code call()}, by its boxed return type. */
  private static final Map<Class<?>, DataType> RESULT_TYPES = Map.of(
      Double.class, DataTypes.DoubleType, Float.class, DataTypes.FloatType, Long.class, DataTypes.LongType,
      Integer.class, DataTypes.IntegerType, Short.class, DataTypes.ShortType, Byte.class, DataTypes.ByteType,
      Boolean.class, DataTypes.BooleanType);

  /** The one public non-bridge method named call, with the most specific return type. */
  private static Method callMethod(Class<?> c) {
    Method best = null;
    for (Method m : c.getMethods()) {
      if (m.getName().equals("call") && !m.isBridge() && !m.isSynthetic()
          && (best == null || best.getReturnType().isAssignableFrom(m.getReturnType()))) {
        best = m;
      }
    }
    if (best == null) {
      throw GpuException.of(Code.INVALID_ARGUMENT,
          c.getName() + " in " + Settings.FUNCTIONS.key() + " has no public call method.",
          "list classes that implement a Spark UDFn, or remove it from " + Settings.FUNCTIONS.key() + ".");
    }
    return best;
  }

  /** Instantiates a GPU UDF or plain Java UDF class by name (for {@code spark.vkspark.functions}). */
  static Object load(String className, ClassLoader loader) {
    try {
      Class<?> c = Class.forName(className.trim(), true, loader);
      if (!GpuUdf.class.isAssignableFrom(c) && !ScalaUdfs.isJavaUdfClass(c)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, Settings.FUNCTIONS.key() + " lists '" + className
                + "', which is not a GpuUdf (nor a plain Spark Java UDF).",
            "list classes that implement io.vkspark.spark.api.GpuUdf and a Spark UDFn, or a plain Spark UDFn, or "
                + "remove it from " + Settings.FUNCTIONS.key() + ".");
      }
      return c.getConstructor().newInstance();
    } catch (ClassNotFoundException e) {
      throw new GpuException(Code.INVALID_ARGUMENT, Settings.FUNCTIONS.key() + " lists '" + className
          + "', which is not a class on the classpath. Fix: correct the name in " + Settings.FUNCTIONS.key()
          + " (a fully qualified class name), or add its jar with --jars.", e);
    } catch (ReflectiveOperationException e) {
      throw new GpuException(Code.INVALID_ARGUMENT, Settings.FUNCTIONS.key() + " lists '" + className + "', which cannot be "
          + "instantiated: " + e + ". Fix: give " + className + " a public no-argument constructor (a public static"
          + " nested or top-level class).", e);
    }
  }
}
