package io.vkspark.gpu;

/**
 * Checked size arithmetic. Every byte count in vkspark goes through here: an overflow is a
 * {@link GpuException} with code SIZE, never a silently wrapped number.
 */
public final class Sizes {
  private Sizes() {}

  public static long multiply(long a, long b, String what) {
    try {
      return Math.multiplyExact(a, b);
    } catch (ArithmeticException e) {
      throw overflow(what, a + " * " + b);
    }
  }

  public static long add(long a, long b, String what) {
    try {
      return Math.addExact(a, b);
    } catch (ArithmeticException e) {
      throw overflow(what, a + " + " + b);
    }
  }

  /** {@code ceil(a / b)} for non-negative a and positive b. */
  public static long divideRoundingUp(long a, long b) {
    if (a < 0 || b <= 0) {
      throw new IllegalArgumentException("divideRoundingUp(" + a + ", " + b + ")");
    }
    return a / b + (a % b == 0 ? 0 : 1);
  }

  /** Rounds {@code value} up to a multiple of {@code alignment} (a power of two). */
  public static long alignUp(long value, long alignment, String what) {
    if (Long.bitCount(alignment) != 1) {
      throw new IllegalArgumentException("alignment " + alignment + " is not a power of two");
    }
    return add(value, alignment - 1, what) & -alignment;
  }

  /** Narrows to int, failing with a message that names the quantity. */
  public static int toInt(long value, String what) {
    if (value < 0 || value > Integer.MAX_VALUE) {
      throw GpuException.of(GpuException.Code.SIZE,
          what + " is " + value + ", outside 0.." + Integer.MAX_VALUE + ".",
          "split the work into smaller batches.");
    }
    return (int) value;
  }

  private static GpuException overflow(String what, String expression) {
    return GpuException.of(GpuException.Code.SIZE,
        what + " overflowed 64-bit arithmetic (" + expression + ").",
        "split the work into smaller batches; silent wrap-around would corrupt memory.");
  }
}
