package io.vkspark.gpu.internal;

import java.util.SplittableRandom;

/**
 * Double operands that are hard to divide and take the square root of correctly: the probe's own
 * cases, any bits, subnormals, quotients around the subnormal range (ties included), exact and
 * decimal quotients, significands of all ones, overflowing and underflowing quotients, perfect
 * squares and their neighbours.
 */
public final class HardDoubles {
  private HardDoubles() {}

  /** {@code pairs} operand pairs {a0, b0, a1, b1, ...} of the kinds that are hard to round, from {@code seed}. */
  public static double[] pairs(int pairs, long seed) {
    double[] out = new double[2 * pairs];
    double[] fixed = DoubleRoundingProbe.cases();
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < out.length; i += 2) {
      switch (r.nextInt(8)) {
        case 0 -> { // the probe's own cases, shuffled in
          int k = 2 * r.nextInt(fixed.length / 2);
          out[i] = fixed[k];
          out[i + 1] = fixed[k + 1];
        }
        case 1 -> {
          out[i] = Double.longBitsToDouble(r.nextLong());
          out[i + 1] = Double.longBitsToDouble(r.nextLong());
        }
        case 2 -> { // subnormal operands
          out[i] = Double.longBitsToDouble(r.nextLong() & 0x800FFFFFFFFFFFFFL);
          out[i + 1] = r.nextBoolean() ? Double.longBitsToDouble(r.nextLong() & 0x800FFFFFFFFFFFFFL) : r.nextDouble(-4, 4);
        }
        case 3 -> { // quotients around the subnormal range, ties included
          double b = (1 + r.nextDouble()) * Math.scalb(1.0, r.nextInt(-60, 60));
          out[i] = b * Math.scalb(r.nextInt(1, 1 << 20) + (r.nextBoolean() ? 0.5 : 0), -1074 - r.nextInt(0, 3));
          out[i + 1] = b;
        }
        case 4 -> { // exact quotients and decimal scalings
          long q = r.nextLong(-1L << 40, 1L << 40);
          double b = new double[] {10, 100, 1000, 10000, 3, 7, 49, 0.1, 0.01}[r.nextInt(9)];
          out[i] = r.nextBoolean() ? q * b : q;
          out[i + 1] = b;
        }
        case 5 -> { // significands of all ones and near powers of two
          long ma = r.nextBoolean() ? 0xFFFFFFFFFFFFFL - r.nextInt(16) : r.nextInt(16);
          long mb = r.nextBoolean() ? 0xFFFFFFFFFFFFFL - r.nextInt(16) : r.nextInt(16);
          out[i] = Double.longBitsToDouble(((long) r.nextInt(1, 2047) << 52) | ma);
          out[i + 1] = Double.longBitsToDouble(((long) r.nextInt(1, 2047) << 52) | mb);
        }
        case 6 -> { // overflow and underflow of the quotient
          out[i] = (1 + r.nextDouble()) * Math.scalb(1.0, r.nextInt(900, 1024)) * (r.nextBoolean() ? 1 : -1);
          out[i + 1] = (1 + r.nextDouble()) * Math.scalb(1.0, r.nextInt(-1074, -900));
          if (r.nextBoolean()) {
            double t = out[i];
            out[i] = out[i + 1];
            out[i + 1] = t;
          }
        }
        default -> { // perfect squares and their neighbours for sqrt
          long s = r.nextLong(1, 1L << 26);
          out[i] = Math.nextAfter((double) (s * s), r.nextBoolean() ? 0 : Double.MAX_VALUE) * (r.nextBoolean() ? 1 : 0.25);
          out[i + 1] = r.nextDouble(0.5, 2);
        }
      }
    }
    return out;
  }
}
