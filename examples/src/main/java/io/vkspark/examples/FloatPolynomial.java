package io.vkspark.examples;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.Tolerance;
import org.apache.spark.sql.api.java.UDF2;

/**
 * A cubic in single precision, saxpy-style: {@code float_polynomial(x, y) = 0.5 x^3 - 2 x + y}.
 *
 * <p>Why the GPU: float arithmetic is what every GPU is fastest at (consumer GPUs run doubles at
 * 1/32 to 1/64 of the float rate), and 4-byte columns halve the transfer of doubles.
 *
 * <p>Both halves round every operation to float in the same order (Java's float arithmetic is
 * IEEE single precision). A GPU driver may fuse a multiply and an add into one rounding, so the
 * results agree within a few ulps of the largest term, {@code |0.5 x^3| + |2 x| + |y|}, not
 * always bit for bit. Null in, null out.
 */
public final class FloatPolynomial implements UDF2<Float, Float, Float>, GpuUdf {
  private static final long serialVersionUID = 1L;

  @Override
  public Float call(Float x, Float y) {
    return x == null || y == null ? null : eval(x, y);
  }

  /** The CPU reference. */
  public static float eval(float x, float y) {
    return 0.5f * x * x * x - 2.0f * x + y;
  }

  /**
   * For spark.vkspark.verify: a GPU may fuse the multiply-adds, so the result is within a few ulps
   * of the terms' magnitude, not of the result (which can cancel): 4 ulps of 6e5 covers the
   * example's data (|x| <= 100, |y| <= 1e5).
   */
  @Override
  public Tolerance tolerance() {
    return new Tolerance(4, 0, 4 * Math.ulp(6e5f));
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("float").arg("x", "float").arg("y", "float").body("0.5 * x * x * x - 2.0 * x + y");
  }
}
