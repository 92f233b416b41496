package io.vkspark.examples;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import org.apache.spark.sql.api.java.UDF1;

/**
 * The number of Collatz steps from {@code n} to 1 ({@code n / 2} when even, {@code 3 n + 1}
 * when odd): {@code collatz_steps(n)}, a bigint in, an int out; {@code -1} when {@code n < 1},
 * when {@code 3 n + 1} would overflow a bigint, or when 1 is not reached within
 * {@value #MAX_STEPS} steps.
 *
 * <p>Why the GPU: a data-dependent integer loop (108 steps on average for {@code n <= 100,000},
 * at most 350) over 8 bytes of input, with no floating point at all: 64-bit integer arithmetic and
 * branches, which Spark's built-in SQL can only write as a higher-order function over an array.
 *
 * <p>Exact on both halves: the same loop in 64-bit integers. Null in, null out.
 */
public final class CollatzSteps implements UDF1<Long, Integer>, GpuUdf {
  private static final long serialVersionUID = 1L;
  /** The most steps counted; a longer path gives -1 (every n below 10^6 reaches 1 within 524 steps). */
  public static final int MAX_STEPS = 1000;
  /** The largest n whose {@code 3 n + 1} fits a bigint. */
  static final long MAX_ODD = (Long.MAX_VALUE - 1) / 3;

  @Override
  public Integer call(Long n) {
    return n == null ? null : steps(n);
  }

  /** The CPU reference, the same loop as the kernel. */
  public static int steps(long n) {
    if (n < 1) {
      return -1;
    }
    long m = n;
    for (int i = 0; i < MAX_STEPS; i++) {
      if (m == 1) {
        return i;
      }
      if ((m & 1) == 0) {
        m >>= 1;
      } else if (m > MAX_ODD) {
        return -1;
      } else {
        m = 3 * m + 1;
      }
    }
    return m == 1 ? MAX_STEPS : -1;
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("int").arg("n", "bigint").body("""
        if (n < 1l) {
          return -1;
        }
        int64_t m = n;
        for (int i = 0; i < %1$d; i++) {
          if (m == 1l) {
            return i;
          }
          if ((m & 1l) == 0l) {
            m = m >> 1;
          } else if (m > %2$dl) {
            return -1;
          } else {
            m = 3l * m + 1l;
          }
        }
        return m == 1l ? %1$d : -1;
        """.formatted(MAX_STEPS, MAX_ODD));
  }
}
