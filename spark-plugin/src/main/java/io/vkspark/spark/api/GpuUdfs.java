package io.vkspark.spark.api;

import io.vkspark.spark.kernel.CompiledKernels;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.conf.VkConf;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
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
import org.apache.spark.sql.types.DataType;

/**
 * Registering GPU UDFs from Java or Scala code: {@link #register} checks the UDF's arity and
 * compiles its kernel before Spark registers it, so a body that does not compile fails at the
 * registration, naming its line. SQL users list classes in {@code spark.vkspark.functions} or
 * define GLSL-only UDFs instead (README).
 */
public final class GpuUdfs {
  private GpuUdfs() {}

  /**
   * Registers {@code udf} under {@code name} with the result type of its kernel. The body is compiled
   * now, so a body that does not compile fails here, naming the line: a {@link VkAnalysisException}
   * (VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE, or VKSPARK_GPU_UDF_INVALID_IMPLEMENTATION for a UDF
   * that does not implement the UDFn of its kernel's arity).
   */
  @SuppressWarnings({"rawtypes"})
  public static void register(SparkSession spark, String name, GpuUdf udf) {
    DataType type = SparkTypes.result(udf.kernel().signature());
    int arity = udf.kernel().argNames().size();
    checkArity(name, udf, arity);
    VkConf conf = VkConf.of(spark);
    if (conf.enabled()) { // a body that does not compile fails here, naming the line
      VkAnalysisException.compiling(name, () -> CompiledKernels.compile(udf.kernel().spec(name), conf));
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

  public static int checkArity(String name, GpuUdf udf, int arity) {
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
}
