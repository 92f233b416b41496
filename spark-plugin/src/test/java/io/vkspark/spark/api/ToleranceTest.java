package io.vkspark.spark.api;

import io.vkspark.spark.api.Tolerance;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.SqlType;
import org.junit.jupiter.api.Test;

/** Tolerance arithmetic, without Spark. */
final class ToleranceTest {
  @Test
  void defaults_exactForIntegers_ulpsOrRelativeForFloats() {
    assertEquals(Tolerance.EXACT, Tolerance.defaultFor(SqlType.INT));
    assertEquals(Tolerance.EXACT, Tolerance.defaultFor(SqlType.TIMESTAMP));
    Tolerance f = Tolerance.defaultFor(SqlType.FLOAT);
    assertTrue(f.agrees(1f, Math.nextUp(Math.nextUp(1f)), true));
    assertTrue(f.agrees(1000f, 1000f + 8 * Math.ulp(1000f), true), "1e-5 relative is about 80 ulps");
    assertFalse(f.agrees(1f, 1.001f, true));
    Tolerance d = Tolerance.defaultFor(SqlType.DOUBLE);
    assertTrue(d.agrees(1.0, 1.0 + 4 * Math.ulp(1.0), false));
    assertFalse(d.agrees(1.0, 1.0 + 1e-9, false));
  }

  @Test
  void nanAndInfinities_agreeOnlyWithThemselves() {
    Tolerance t = new Tolerance(1000, 0.5, 1);
    assertTrue(t.agrees(Double.NaN, Double.NaN, false));
    assertFalse(t.agrees(Double.NaN, 1, false));
    assertFalse(t.agrees(1, Double.NaN, false));
    assertTrue(t.agrees(Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY, false));
    assertFalse(t.agrees(Double.POSITIVE_INFINITY, Double.MAX_VALUE, false));
    assertFalse(t.agrees(Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, false));
  }

  @Test
  void absolute_coversCancellation() {
    assertFalse(Tolerance.FLOAT_DEFAULT.agrees(1e-7f, 3e-6f, true));
    assertTrue(new Tolerance(4, 1e-5, 1e-5).agrees(1e-7f, 3e-6f, true));
    GpuException e = assertThrows(GpuException.class, () -> new Tolerance(-1, 0, 0));
    assertTrue(e.getMessage().contains("Fix: "), e.getMessage());
  }
}
