package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.DoubleRounding;
import io.vkspark.gpu.internal.HardDoubles;
import java.util.List;
import java.util.function.DoubleBinaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * GPU UDF bodies that divide doubles and take square roots give Java's bits on a device that
 * refines them (forced here with {@code vkspark.doubleRounding=refine}, since lavapipe's own are
 * exact; on an NVIDIA H200 it is the probe's choice anyway), through the whole column path.
 */
final class DoubleDivisionBodyTest {
  private static GpuRows refined;

  @BeforeAll
  static void open() {
    String before = System.getProperty(DoubleRounding.PROPERTY);
    System.setProperty(DoubleRounding.PROPERTY, "refine");
    try {
      refined = new GpuRows();
    } finally {
      if (before == null) {
        System.clearProperty(DoubleRounding.PROPERTY);
      } else {
        System.setProperty(DoubleRounding.PROPERTY, before);
      }
    }
    assertTrue(refined.device().doubleRounding().refineDivide(), refined.device().doubleRounding().toString());
  }

  @AfterAll
  static void close() {
    refined.close();
  }

  private static ColumnKernel kernel(String name, String body) {
    return ColumnKernel.compile(KernelSignature.of(name, SqlType.DOUBLE, arg("a", SqlType.DOUBLE), arg("b", SqlType.DOUBLE)),
        body);
  }

  /** {@code body} over {@code pairs} hard operand pairs against {@code java}, bit for bit. */
  private static void exact(GpuRows gpu, String name, String body, DoubleBinaryOperator java, int pairs) {
    double[] ab = HardDoubles.pairs(pairs, name.hashCode());
    Object[] a = new Object[pairs];
    Object[] b = new Object[pairs];
    for (int i = 0; i < pairs; i++) {
      a[i] = ab[2 * i];
      b[i] = ab[2 * i + 1];
    }
    List<Object> got = gpu.run(kernel(name, body), a, b);
    int misses = 0;
    String first = "";
    for (int i = 0; i < pairs; i++) {
      double want = java.applyAsDouble((Double) a[i], (Double) b[i]);
      if (Double.doubleToLongBits(want) != Double.doubleToLongBits((Double) got.get(i))) {
        if (misses++ == 0) {
          first = name + "(" + a[i] + ", " + b[i] + ") = " + got.get(i) + ", Java " + want;
        }
      }
    }
    assertEquals(0, misses, first);
  }

  /**
   * Bodies dividing by a constant, on this device's own choice (no forced refinement): the H200
   * divides two run-time operands exactly but compiles {@code a / 100.0lf} as a product with the
   * reciprocal, off by one bit ({@code 123456789 / 100} gave 1234567.8900000001); the probe's
   * constant divisors find that and the device refines every double division.
   */
  @Test
  void constantDivisorsOnTheDevicesOwnChoiceAreJavasBits() {
    try (GpuRows own = new GpuRows()) {
      // what the compilers make of a literal divisor left to them, logged (a device is free to fold it)
      System.setProperty(io.vkspark.gpu.internal.KernelPasses.CONSTANT_DIVISORS_PROPERTY, "native");
      try {
        double[] ab = HardDoubles.pairs(50_000, 100);
        Object[] a = new Object[50_000];
        for (int i = 0; i < a.length; i++) {
          a[i] = ab[2 * i];
        }
        List<Object> got = own.run(kernel("qcnative", "a / 100.0lf"), a, a);
        long misses = java.util.stream.IntStream.range(0, a.length)
            .filter(i -> Double.doubleToLongBits((Double) a[i] / 100.0) != Double.doubleToLongBits((Double) got.get(i))).count();
        System.out.println("[double-division] " + own.device().info().name() + ": a / 100.0lf left to the compilers: "
            + misses + " of " + a.length + " rows differ from Java");
      } finally {
        System.clearProperty(io.vkspark.gpu.internal.KernelPasses.CONSTANT_DIVISORS_PROPERTY);
      }
      assertEquals(List.of(123456789.0 / 100.0, 100.0 / 49.0), own.run(kernel("qc100", "a / 100.0lf + b / 49.0lf"),
          new Object[] {123456789.0, 0.0}, new Object[] {0.0, 100.0}));
      exact(own, "qc10000", "a / 10000.0lf", (a, b) -> a / 10000.0, 50_000);
      exact(own, "qc49", "a / 49.0lf - b / 3.0lf", (a, b) -> a / 49.0 - b / 3.0, 50_000);
      exact(own, "qc07", "(a / 7.0lf) * (b / 0.1lf)", (a, b) -> (a / 7.0) * (b / 0.1), 50_000);
    }
  }

  @Test
  void bodyDivisionIsJavasBits() {
    exact(refined, "qdiv", "a / b", (a, b) -> a / b, 200_000);
  }

  @Test
  void statementsWithDivisionsSqrtAndCompoundAssignmentAreJavasBits() {
    exact(refined, "qmix", """
        double q = a / b;
        q /= 3.0lf;
        double s = sqrt(abs(a)) / sqrt(abs(b));
        return q + s;""", (a, b) -> {
          double q = a / b;
          q /= 3.0;
          return q + Math.sqrt(Math.abs(a)) / Math.sqrt(Math.abs(b));
        }, 100_000);
  }

  /** vkmath's divisions are precise and left to the device; a body's own precise ones are refined. */
  @Test
  void preciseDivisionsOfTheBodyAreRefinedToo() {
    assertFalse(kernel("qp", "precise double q = a / b; return q;").program(64).nativePreciseDivisions());
    assertTrue(kernel("qn", "a / b").program(64).nativePreciseDivisions());
    exact(refined, "qprecise", "precise double q = a / b; return q;", (a, b) -> a / b, 100_000);
  }

  @Test
  void theH200sMissesAreJavasBits() {
    List<Object> got = refined.run(kernel("qdec", "a / 100.0lf"), new Object[] {123456789.0, 100.0 * 49}, new Object[] {0.0, 0.0});
    assertEquals(List.of(1234567.89, 49.0), got);
  }

  /**
   * SPIR-V leaves {@code OpFDiv} by zero undefined: lavapipe returned whatever was in a register
   * (0.0, 1.99E9, ...) for {@code x / 0.0lf} before vkspark turned such divisions into {@code x * inf}
   * on every device, refining or not.
   */
  @Test
  void divisionByAConstantZeroIsJavasOnEveryDevice() {
    Object[] a = {1.0, -2.0, 0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY};
    Object[] b = new Object[a.length];
    java.util.Arrays.fill(b, 0.0);
    List<Object> plus = List.of(Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN, Double.NaN, Double.NaN,
        Double.POSITIVE_INFINITY);
    List<Object> minus = List.of(Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, Double.NaN, Double.NaN, Double.NaN,
        Double.NEGATIVE_INFINITY);
    try (GpuRows plain = new GpuRows()) {
      for (GpuRows gpu : List.of(plain, refined)) {
        assertEquals(plus, gpu.run(kernel("qz1", "a / 0.0lf"), a, b));
        assertEquals(minus, gpu.run(kernel("qz2", "a / -0.0lf"), a, b));
        assertEquals(plus, gpu.run(kernel("qz3", "double z = 0.0lf; return a / z;"), a, b));
        assertEquals(plus, gpu.run(kernel("qz4", "a / b"), a, b));
        ColumnKernel f = ColumnKernel.compile(KernelSignature.of("qzf", SqlType.FLOAT, arg("x", SqlType.FLOAT)), "x / 0.0");
        assertEquals(List.of(Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN),
            gpu.run(f, new Object[] {1f, -2f, 0f}));
      }
    }
  }
}
