package io.vkspark.gpu.translate;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.translate.MethodGenerator.P;
import io.vkspark.gpu.translate.MethodGenerator.Tolerance;
import org.junit.jupiter.api.Test;

/** {@link MethodCheck#same}, the comparison of a GPU result with Java's, without a GPU. */
final class MethodCheckTest {
  @Test
  void exactIsBitForBit_signedZerosDiffer() {
    assertFalse(MethodCheck.same(P.FLOAT, Tolerance.EXACT, -0.0f, 0.0f), "Java -0.0f, GPU 0.0f");
    assertFalse(MethodCheck.same(P.FLOAT, Tolerance.EXACT, 0.0f, -0.0f), "Java 0.0f, GPU -0.0f");
    assertFalse(MethodCheck.same(P.DOUBLE, Tolerance.EXACT, -0.0, 0.0), "Java -0.0, GPU 0.0");
    assertFalse(MethodCheck.same(P.DOUBLE, Tolerance.EXACT, 0.0, -0.0), "Java 0.0, GPU -0.0");
    assertFalse(MethodCheck.same(P.FLOAT, Tolerance.EXACT, 1.0f, Math.nextUp(1.0f)));
    assertFalse(MethodCheck.same(P.DOUBLE, Tolerance.EXACT, -Double.MIN_VALUE, -0.0));
    assertTrue(MethodCheck.same(P.FLOAT, Tolerance.EXACT, -0.0f, -0.0f));
    assertTrue(MethodCheck.same(P.FLOAT, Tolerance.EXACT, Float.NaN, Float.intBitsToFloat(0xffc00001)), "NaNs alike");
    assertTrue(MethodCheck.same(P.DOUBLE, Tolerance.EXACT, Double.NaN, Double.longBitsToDouble(0xfff0000000000001L)));
    assertTrue(MethodCheck.same(P.DOUBLE, Tolerance.EXACT, 1e-310, 1e-310));
  }

  @Test
  void tolerancesCountUlps() {
    assertTrue(MethodCheck.same(P.FLOAT, Tolerance.TRANSCENDENTAL, 1.0f, 1.0f + 4 * Math.ulp(1.0f)));
    assertFalse(MethodCheck.same(P.FLOAT, Tolerance.TRANSCENDENTAL, 1.0f, 1.0f + 5 * Math.ulp(1.0f)));
    assertTrue(MethodCheck.same(P.FLOAT, Tolerance.FLOAT_DIVISION, 1.0f, 1.0f + 3 * Math.ulp(1.0f)));
    assertFalse(MethodCheck.same(P.FLOAT, Tolerance.FLOAT_DIVISION, 1.0f, 1.0f + 4 * Math.ulp(1.0f)));
    // a flushed subnormal is far from Java's: 1e-40f is 71,362 float ulps above 0
    assertFalse(MethodCheck.same(P.FLOAT, Tolerance.TRANSCENDENTAL, -1.481454E-39f, -0.0f));
    assertFalse(MethodCheck.same(P.FLOAT, Tolerance.TRANSCENDENTAL, 1e-40f, 0.0f));
    assertFalse(MethodCheck.same(P.FLOAT, Tolerance.TRANSCENDENTAL, Float.NaN, 0.0f));
    assertFalse(MethodCheck.same(P.DOUBLE, Tolerance.TRANSCENDENTAL, 1.0, Double.NaN));
  }
}
