package io.vkspark.examples.plain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.examples.BlackScholes;
import io.vkspark.examples.ImpliedVolatility;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The plain Java UDFs of issue 23 ({@link BlackScholesJava}, {@link ImpliedVolatilityJava}) compute
 * exactly what the hand-written examples' {@code call()} computes, bit for bit, on random rows of
 * the benchmark's ranges plus edge cases (t = 0, v = 0, invalid inputs, prices outside the
 * no-arbitrage bounds, infinities, NaN) and nulls. No Spark: plain calls.
 */
final class PlainUdfsTest {
  private static final int ROWS = 5_000;

  @Test
  void blackScholesMatchesTheHandWrittenExampleBitForBit() {
    SplittableRandom rnd = new SplittableRandom(23);
    BlackScholes hand = new BlackScholes();
    BlackScholesJava plain = new BlackScholesJava();
    int finite = 0;
    for (int i = 0; i < ROWS; i++) {
      double s = 20 + rnd.nextDouble() * 180;
      double k = s * (0.5 + rnd.nextDouble());
      double t = i % 97 == 0 ? 0 : (1 + rnd.nextDouble() * 1095) / 365;
      double r = rnd.nextDouble() * 0.09 - 0.01;
      double v = i % 89 == 0 ? 0 : 0.05 + rnd.nextDouble() * 0.9;
      if (i % 211 == 0) {
        s = -s;
      }
      Double[] a = edge(i, new Double[] {s, k, t, r, v});
      Double want = hand.call(a[0], a[1], a[2], a[3], a[4]);
      Double got = plain.call(a[0], a[1], a[2], a[3], a[4]);
      same(want, got, a);
      finite += want != null && Double.isFinite(want) ? 1 : 0;
    }
    assertTrue(finite > ROWS * 3 / 4, "most rows priced: " + finite);
    assertNull(plain.call(null, 100.0, 1.0, 0.01, 0.2));
    assertNull(plain.call(100.0, 100.0, 1.0, 0.01, null));
  }

  @Test
  void impliedVolatilityMatchesTheHandWrittenExampleBitForBit() {
    SplittableRandom rnd = new SplittableRandom(24);
    ImpliedVolatility hand = new ImpliedVolatility();
    ImpliedVolatilityJava plain = new ImpliedVolatilityJava();
    int solved = 0;
    for (int i = 0; i < ROWS; i++) {
      double s = 20 + rnd.nextDouble() * 180;
      double k = s * (0.7 + rnd.nextDouble() * 0.6);
      double t = (1 + rnd.nextDouble() * 730) / 365;
      double r = rnd.nextDouble() * 0.06;
      double v = 0.08 + rnd.nextDouble() * 0.55;
      double price = BlackScholes.price(s, k, t, r, v) * (1 + (rnd.nextDouble() - 0.5) * 0.004);
      if (i % 101 == 0) {
        price = s * 1.01;          // above the upper bound
      } else if (i % 103 == 0) {
        price = 0;                 // not positive
      }
      Double[] a = edge(i, new Double[] {price, s, k, t, r});
      Double want = hand.call(a[0], a[1], a[2], a[3], a[4]);
      Double got = plain.call(a[0], a[1], a[2], a[3], a[4]);
      same(want, got, a);
      solved += want != null && !want.isNaN() ? 1 : 0;
    }
    assertTrue(solved > ROWS / 2, "most rows solved: " + solved);
    assertNull(plain.call(null, 100.0, 100.0, 1.0, 0.01));
    assertNull(plain.call(10.0, 100.0, 100.0, 1.0, null));
  }

  /** Every 50th row: a null, an infinity or a NaN in one argument, by turns. */
  private static Double[] edge(int i, Double[] a) {
    if (i % 50 == 7) {
      int col = (i / 50) % a.length;
      switch ((i / 250) % 4) {
        case 0 -> a[col] = null;
        case 1 -> a[col] = Double.POSITIVE_INFINITY;
        case 2 -> a[col] = Double.NEGATIVE_INFINITY;
        default -> a[col] = Double.NaN;
      }
    }
    return a;
  }

  private static void same(Double want, Double got, Double[] args) {
    if (want == null) {
      assertNull(got, () -> "null expected for " + java.util.Arrays.toString(args));
    } else {
      assertEquals(Double.doubleToRawLongBits(want), Double.doubleToRawLongBits(got),
          () -> want + " vs " + got + " for " + java.util.Arrays.toString(args));
    }
  }
}
