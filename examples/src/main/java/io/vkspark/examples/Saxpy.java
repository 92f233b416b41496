package io.vkspark.examples;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.Tolerance;
import org.apache.spark.sql.api.java.UDF3;

/**
 * BLAS's saxpy per row, in single precision: {@code saxpy(a, x, y) = a * x + y}, usually with a
 * literal {@code a} ({@code saxpy(CAST(2.5 AS FLOAT), x, y)}).
 *
 * <p>Why the GPU: it is not; this is the cheapest UDF there is (one multiply-add over 8 bytes of
 * input), the floor of issue 24's benchmark matrix, where a GPU only wins when moving the columns
 * costs less than Spark's own scan and arithmetic.
 *
 * <p>Java rounds the product and the sum apart; a GPU driver may fuse them into one rounding, so
 * the results agree within an ulp or two of {@code |a x| + |y|}, not always bit for bit. Null in,
 * null out.
 */
public final class Saxpy implements UDF3<Float, Float, Float, Float>, GpuUdf {
  private static final long serialVersionUID = 1L;

  @Override
  public Float call(Float a, Float x, Float y) {
    return a == null || x == null || y == null ? null : eval(a, x, y);
  }

  /** The CPU reference. */
  public static float eval(float a, float x, float y) {
    return a * x + y;
  }

  /**
   * For spark.vkspark.verify: a fused multiply-add differs by an ulp of the terms' magnitude, not
   * of the result (which can cancel): 2 ulps of 2e5 covers {@code |a x| + |y| <= 2e5}.
   */
  @Override
  public Tolerance tolerance() {
    return new Tolerance(2, 0, 2 * Math.ulp(2e5f));
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("float").arg("a", "float").arg("x", "float").arg("y", "float").body("a * x + y");
  }
}
