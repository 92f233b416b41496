package io.vkspark.spark.api;

import java.io.Serializable;
import java.util.Locale;

/**
 * Marks a Spark Java UDF ({@code UDF1} .. {@code UDF10}) as a GPU UDF: its {@code call()} is the
 * CPU reference and fallback, and {@link #kernel()} is the same function in GLSL, run on the
 * executor's Vulkan device.
 *
 * <pre>{@code
 * public final class Intrinsic implements UDF2<Double, Double, Double>, GpuUdf {
 *   public Double call(Double s, Double k) { return s == null || k == null ? null : Math.max(s - k, 0); }
 *   public GpuKernel kernel() {
 *     return GpuKernel.returns("double").arg("s", "double").arg("k", "double").body("max(s - k, 0.0)");
 *   }
 * }
 * spark.udf().register("intrinsic", new Intrinsic(), DataTypes.DoubleType);
 * }</pre>
 *
 * <p>GPU UDFs are strict: a row with any null argument gets a null result without running the
 * kernel, so {@code call()} should return null for null arguments too.
 */
public interface GpuUdf extends Serializable {
  /** The kernel: argument names and types, result type, GLSL body. */
  GpuKernel kernel();

  /**
   * How far the GPU result may be from {@code call()}'s for {@code spark.vkspark.verify} to count
   * them as equal: exact for integer, boolean, date and timestamp results; a few ulps or a small
   * relative difference for float and double ({@link Tolerance#defaultFor}). Override it when the
   * result can cancel or the body approximates.
   */
  default Tolerance tolerance() {
    return Tolerance.defaultFor(kernel().result());
  }

  /**
   * The SQL name used when the class is listed in {@code spark.vkspark.functions}: by default the
   * class's simple name in snake case ({@code BlackScholes} becomes {@code black_scholes}).
   */
  default String name() {
    return snakeCase(getClass().getSimpleName());
  }

  /** {@code BlackScholes} to {@code black_scholes}, {@code HTTPStatus} to {@code http_status}. */
  static String snakeCase(String className) {
    String s = className.replaceAll("([a-z0-9])([A-Z])", "$1_$2").replaceAll("([A-Z]+)([A-Z][a-z])", "$1_$2");
    return s.toLowerCase(Locale.ROOT);
  }
}
