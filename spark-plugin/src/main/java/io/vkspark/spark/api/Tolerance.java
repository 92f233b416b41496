package io.vkspark.spark.api;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;

/**
 * How far a GPU UDF's GPU result may be from its {@code call()} and still count as the same
 * answer, for {@code spark.vkspark.verify}. Integers, booleans, dates and timestamps must match
 * exactly. A GPU may fuse {@code a * b + c} into one rounding where Java rounds twice, and its
 * transcendental functions are within a few ulps of Java's, so floating-point results agree when
 * {@code |gpu - cpu| <= max(ulps * ulp(cpu), relative * |cpu|, absolute)} (NaN agrees with NaN,
 * an infinity only with itself). A UDF whose result can cancel ({@code x * y - z} near zero) needs
 * an absolute part: override {@link GpuUdf#tolerance()}.
 *
 * @param ulps units in the last place of the CPU value (of the result type: float or double)
 * @param relative fraction of the CPU value's magnitude
 * @param absolute plain difference
 */
public record Tolerance(long ulps, double relative, double absolute) implements Serializable {
  /** Default for float results: 4 ulps or 1e-5 relative (FMA contraction, float functions). */
  public static final Tolerance FLOAT_DEFAULT = new Tolerance(4, 1e-5, 0);
  /** Default for double results: 4 ulps or 1e-12 relative (FMA contraction, vkspark's double functions). */
  public static final Tolerance DOUBLE_DEFAULT = new Tolerance(4, 1e-12, 0);
  /** Bit-for-bit: the default for integer, boolean, date and timestamp results. */
  public static final Tolerance EXACT = new Tolerance(0, 0, 0);

  public Tolerance {
    if (ulps < 0 || !(relative >= 0) || !(absolute >= 0)) {
      throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
          "a tolerance of " + ulps + " ulps, relative " + relative + ", absolute " + absolute + " has a negative part.",
          "give each part as 0 or more.");
    }
  }

  /** Within {@code n} ulps of the CPU value. */
  public static Tolerance ulps(long n) {
    return new Tolerance(n, 0, 0);
  }

  /** The default for a result type. */
  public static Tolerance defaultFor(SqlType result) {
    return switch (result) {
      case FLOAT -> FLOAT_DEFAULT;
      case DOUBLE -> DOUBLE_DEFAULT;
      default -> EXACT;
    };
  }

  /** Whether {@code gpu} agrees with {@code cpu}; {@code single} when the result type is float. */
  public boolean agrees(double cpu, double gpu, boolean single) {
    if (cpu == gpu || (Double.isNaN(cpu) && Double.isNaN(gpu))) {
      return true;
    }
    if (Double.isNaN(cpu) || Double.isNaN(gpu) || Double.isInfinite(cpu) || Double.isInfinite(gpu)) {
      return false;
    }
    double ulp = single ? Math.ulp((float) cpu) : Math.ulp(cpu);
    double allowed = Math.max(ulps * ulp, Math.max(relative * Math.abs(cpu), absolute));
    return Math.abs(gpu - cpu) <= allowed;
  }

  @Override
  public String toString() {
    return ulps + " ulps, relative " + relative + ", absolute " + absolute;
  }
}
