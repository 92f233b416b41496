package io.vkspark.gpu.column.reduce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.DeviceExpr.ArithOp;
import io.vkspark.gpu.column.reduce.DeviceExpr.Arithmetic;
import io.vkspark.gpu.column.reduce.DeviceExpr.Cast;
import io.vkspark.gpu.column.reduce.DeviceExpr.Floor;
import io.vkspark.gpu.column.reduce.DeviceExpr.KeySource;
import io.vkspark.gpu.column.reduce.DeviceExpr.Literal;
import io.vkspark.gpu.column.reduce.DeviceExpr.Negate;
import io.vkspark.gpu.column.reduce.DeviceExpr.Remainder;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A key's bounds ({@link KeyRange}) hold every value Java computes for sources in the range (checked
 * on random and extreme sources), are tight where the expression allows, and widen to the type's
 * range wherever an operation may wrap. No device.
 */
final class KeyRangeTest {
  private static final KeySource LONG = new KeySource(SqlType.BIGINT);
  private static final KeySource DOUBLE = new KeySource(SqlType.DOUBLE);

  private static Literal l(long v) {
    return new Literal(SqlType.BIGINT, v);
  }

  private static void assertRange(long lo, long hi, KeyRange r) {
    assertRange(lo, hi, r, "");
  }

  private static void assertRange(long lo, long hi, KeyRange r, String why) {
    assertEquals(lo, r.lo(), why + " " + r);
    assertEquals(hi, r.hi(), why + " " + r);
  }

  @Test
  void remainderAndPmod_boundedByTheDivisor_tightWhenTheSourceIsKnown() {
    KeyRange all = KeyRange.full(SqlType.BIGINT);
    assertRange(-15, 15, KeyRange.of(new Remainder(LONG, 16, false), all));
    assertEquals(31, KeyRange.of(new Remainder(LONG, 16, false), all).values());
    assertRange(0, 15, KeyRange.of(new Remainder(LONG, 16, false), KeyRange.ofLongs(0, 1_000_000)));
    assertRange(3, 9, KeyRange.of(new Remainder(LONG, 16, false), KeyRange.ofLongs(3, 9)));
    assertRange(-15, 0, KeyRange.of(new Remainder(LONG, -16, false), KeyRange.ofLongs(-100, -1)));
    assertRange(0, 4, KeyRange.of(new Remainder(LONG, 5, true), all));
    assertRange(-5, 5, KeyRange.of(new Remainder(LONG, -6, true), all));
    assertRange(-Long.MAX_VALUE, 0, KeyRange.of(new Remainder(LONG, Long.MIN_VALUE, false),
        KeyRange.ofLongs(Long.MIN_VALUE, -1)));
    assertRange(0, 0, KeyRange.of(new Remainder(LONG, 7, false), KeyRange.ofLongs(0, 0)));
    assertTrue(KeyRange.of(new Remainder(LONG, 7, false), KeyRange.ofLongs(0, -1)).empty(), "only nulls: no value");
  }

  @Test
  void arithmeticAndCasts_shiftTheRange_orWidenWhereTheyMayWrap() {
    DeviceExpr shifted = new Arithmetic(ArithOp.MULTIPLY, new Arithmetic(ArithOp.ADD, LONG, l(3)), l(-2));
    assertRange(-46, -26, KeyRange.of(shifted, KeyRange.ofLongs(10, 20)));
    assertEquals(Long.MAX_VALUE, KeyRange.of(shifted, KeyRange.full(SqlType.BIGINT)).values(), "may wrap: every long");
    assertRange(Long.MIN_VALUE, Long.MAX_VALUE, KeyRange.of(new Negate(LONG), KeyRange.ofLongs(Long.MIN_VALUE, 0)));
    assertRange(-9, 4, KeyRange.of(new Negate(LONG), KeyRange.ofLongs(-4, 9)));
    DeviceExpr narrow = new Cast(LONG, SqlType.INT);
    assertRange(-5, 5, KeyRange.of(narrow, KeyRange.ofLongs(-5, 5)));
    assertRange(Integer.MIN_VALUE, Integer.MAX_VALUE, KeyRange.of(narrow, KeyRange.ofLongs(0, 1L << 40)));
    DeviceExpr intAdd = new Arithmetic(ArithOp.ADD, narrow, new Literal(SqlType.INT, 1));
    assertRange(Integer.MIN_VALUE, Integer.MAX_VALUE, KeyRange.of(intAdd, KeyRange.ofLongs(0, Integer.MAX_VALUE)));
    assertRange(-15, 15, KeyRange.of(new Cast(new Remainder(LONG, 16, false), SqlType.INT), KeyRange.full(SqlType.BIGINT)));
  }

  @Test
  void floorOfADouble_javasLongOfIt_nanIsZero() {
    DeviceExpr key = new Cast(new Floor(new Arithmetic(ArithOp.MULTIPLY, DOUBLE, new Literal(SqlType.DOUBLE, 0.25))),
        SqlType.BIGINT);
    assertRange(-3, 2, KeyRange.of(key, KeyRange.ofDoubles(-10, 10, false)));
    assertRange(0, 0, KeyRange.of(key, KeyRange.ofDoubles(1, 0, true)), "only NaN: (long) NaN is 0");
    assertRange(0, 7, KeyRange.of(key, KeyRange.ofDoubles(4, 31.9, true)), "NaN adds 0");
    assertRange(Long.MIN_VALUE, Long.MAX_VALUE, KeyRange.of(key, KeyRange.full(SqlType.DOUBLE)));
  }

  /** Every value Java computes for sources in a range lies in the key's bounds. */
  @Test
  void bounds_holdJavasValues_forRandomAndExtremeSources() {
    Random r = new Random(3);
    DeviceExpr[] keys = {new Remainder(LONG, 7, false), new Remainder(LONG, -9, true),
        new Arithmetic(ArithOp.SUBTRACT, new Remainder(LONG, 10, true), l(4)), new Cast(new Remainder(LONG, 1000, false),
        SqlType.INT), new Arithmetic(ArithOp.MULTIPLY, LONG, l(3)), new Negate(new Remainder(LONG, 5, false))};
    for (int trial = 0; trial < 200; trial++) {
      long a = trial % 10 == 0 ? Long.MIN_VALUE : r.nextLong() >> r.nextInt(63);
      long b = trial % 7 == 0 ? Long.MAX_VALUE : a + (r.nextLong() >>> r.nextInt(1, 64));
      long lo = Math.min(a, b);
      long hi = Math.max(a, b);
      for (DeviceExpr k : keys) {
        KeyRange bounds = KeyRange.of(k, KeyRange.ofLongs(lo, hi));
        for (long x : new long[] {lo, hi, lo + (hi - lo) / 2, lo + 1, hi - 1}) {
          if (x < lo || x > hi) {
            continue;
          }
          long v = GroupKeyReductionTest.java(k, x);
          assertTrue(v >= bounds.lo() && v <= bounds.hi(), k + " of " + x + " = " + v + " outside " + bounds);
        }
      }
    }
  }
}
