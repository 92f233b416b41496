package io.vkspark.spark.plan;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.api.VkAnalysisException;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.kernel.CompiledKernels;
import java.util.ArrayList;
import java.util.List;

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
      GpuUdf udf = load(className, l);
      String name = udf.name();
      if (org.apache.spark.sql.catalyst.analysis.FunctionRegistry$.MODULE$.builtin()
          .functionExists(new org.apache.spark.sql.catalyst.FunctionIdentifier(name))) {
        throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_SHADOWS_BUILTIN, name,
            GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF class " + className + " in " + VkConf.FUNCTIONS
                + " is named '" + name + "', which would replace Spark's built-in function " + name + ".",
                "override name() in " + className + " to return another SQL name."));
      }
      GpuUdfs.checkArity(name, udf, udf.kernel().argNames().size());
      VkAnalysisException.compiling(name, () -> CompiledKernels.compile(udf.kernel().spec(name), conf)); // fails here, naming the line
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
