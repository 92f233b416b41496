package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.ArgOps.Step;
import io.vkspark.gpu.column.reduce.DeviceExpr.ArithOp;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Arguments computed on the device from their column and literals ({@link ArgOps}): equal to Java
 * bit for bit for awkward doubles, literal values outside the kernel's identity (one kernel, one
 * pipeline, one buffer set for every value), nulls passed through, and what is refused.
 */
final class ArgOpsKernelTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  private static final KernelSignature SIG = KernelSignature.of("pair", SqlType.DOUBLE,
      arg("x", SqlType.DOUBLE), arg("y", SqlType.DOUBLE));
  /** x: {@code (x * l0) + l1}; y: {@code l2 - y}. */
  private static final List<ArgOps> OPS = List.of(
      ArgOps.of(new Step(ArithOp.MULTIPLY, false), new Step(ArithOp.ADD, false)),
      ArgOps.of(new Step(ArithOp.SUBTRACT, true)));
  private static final double EPS = 0x1p-27;
  /** x * (1 - 2^-27) - 1 is 0 in two roundings but -2^-54 when fused into one fma. */
  private static final double[] XS = {1 + EPS, Double.NaN, -0.0, 0.0, Double.MAX_VALUE, -Double.MAX_VALUE, Double.MIN_VALUE,
      -Double.MIN_VALUE, Double.MIN_NORMAL, 0x1p-1060, 1e-310, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 3.0,
      1 / 3.0, 1e16 + 1, -7.25};

  @Test
  void computedArgument_equalsJavaBitForBit_forAwkwardDoubles() {
    ColumnKernel k = ColumnKernel.compile(new KernelSpec(SIG, "x").withArgOps(OPS));
    assertTrue(k.source().contains("precise double v0 = x * packDouble2x32(uvec2(vk_lit[0], vk_lit[1]));"), k.source());
    assertTrue(k.source().contains("precise double v1 = v0 + packDouble2x32(uvec2(vk_lit[2], vk_lit[3]));"), k.source());
    double[][] literalSets = {{1 - EPS, -1.0}, {-0.0, 0.0}, {Double.MAX_VALUE, Double.MIN_VALUE}, {0x1p-1022, -0x1p-1074},
        {Double.NaN, 1.0}, {1.1, 0.01}};
    for (double[] lits : literalSets) {
      double[] got = run(k, XS, XS, lits[0], lits[1], 2.0);
      for (int i = 0; i < XS.length; i++) {
        double want = OPS.get(0).apply(XS[i], lits[0], lits[1]);
        assertEquals(Double.doubleToLongBits(want), Double.doubleToLongBits(got[i]),
            "(" + XS[i] + " * " + lits[0] + ") + " + lits[1] + ": Java " + want + ", GPU " + got[i]);
      }
    }
    // the fused value would be -2^-54; two rounded operations give exactly 0
    assertEquals(0.0, run(k, new double[] {1 + EPS}, new double[] {1.0}, 1 - EPS, -1.0, 2.0)[0]);
  }

  @Test
  void literalFirstSubtraction_equalsJava() {
    ColumnKernel k = ColumnKernel.compile(new KernelSpec(SIG, "y").withArgOps(OPS));
    double[] got = run(k, XS, XS, 1.0, 0.0, -0.0);
    for (int i = 0; i < XS.length; i++) {
      double want = OPS.get(1).apply(XS[i], -0.0);
      assertEquals(Double.doubleToLongBits(want), Double.doubleToLongBits(got[i]), "-0.0 - " + XS[i]);
    }
  }

  @Test
  void literalValues_areNotPartOfTheKernel_oneKernelOnePipelineOneBufferSet() {
    ColumnKernel a = ColumnKernel.compile(new KernelSpec(SIG, "x + y").withArgOps(OPS));
    ColumnKernel b = ColumnKernel.compile(new KernelSpec(SIG, "x + y").withArgOps(OPS));
    ColumnKernel other = ColumnKernel.compile(new KernelSpec(SIG, "x + y")
        .withArgOps(List.of(ArgOps.of(new Step(ArithOp.ADD, false)), ArgOps.NONE)));
    assertEquals(a.id(), b.id(), "the same shape is the same kernel");
    assertNotEquals(a.id(), other.id(), "another shape is another kernel");
    assertFalse(a.source().contains("7.0625"), "no literal value in the source");
    double[] x = {1.0, 2.0, 3.0};
    double[] y = {10.0, 20.0, 30.0};
    double[] first = run(a, x, y, 7.0625, 0.5, 100.0);
    long kernels = GPU.device().counters().kernelsLive();
    long setsCreated = GPU.runtime().bufferSetsCreated();
    for (double shift = 0.01; shift < 0.2; shift += 0.01) { // a sweep: every scenario replays the same kernel and set
      double[] got = run(b, x, y, 1.1, shift, 100.0);
      for (int i = 0; i < x.length; i++) {
        assertEquals(x[i] * 1.1 + shift + (100.0 - y[i]), got[i], "scenario " + shift + " row " + i);
      }
    }
    assertEquals(kernels, GPU.device().counters().kernelsLive(), "no pipeline per literal value");
    assertEquals(setsCreated, GPU.runtime().bufferSetsCreated(), "no buffer set per literal value");
    assertEquals(1.0 * 7.0625 + 0.5 + 90.0, first[0]);
  }

  @Test
  void nullColumnValue_givesANullResult() {
    ColumnKernel k = ColumnKernel.compile(new KernelSpec(SIG, "x + y").withArgOps(OPS));
    try (Float8Vector x = vector(new double[] {1.0, 2.0}); Float8Vector y = vector(new double[] {1.0, 2.0});
         BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1}, new double[] {2.0, 0.5, 3.0})),
             List.of(SqlType.DOUBLE, SqlType.DOUBLE), 2, GPU.allocator())) {
      x.setNull(1);
      FieldVector out = runner.run(List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(y, SqlType.DOUBLE)), 2).get(0);
      assertEquals(1.0 * 2.0 + 0.5 + (3.0 - 1.0), out.getObject(0));
      assertTrue(out.isNull(1), "null x: null argument, null result");
    }
  }

  @Test
  void refused_floatArgument_andWrongLiteralCount() {
    KernelSignature f = KernelSignature.of("f", SqlType.FLOAT, arg("x", SqlType.FLOAT));
    GpuException e = assertThrows(GpuException.class,
        () -> new KernelSpec(f, "x").withArgOps(List.of(ArgOps.of(new Step(ArithOp.ADD, false)))));
    assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("only a DOUBLE argument"), e.getMessage());
    ColumnKernel k = ColumnKernel.compile(new KernelSpec(SIG, "x").withArgOps(OPS));
    GpuException n = assertThrows(GpuException.class, () -> new KernelCall(k, new int[] {0, 1}, new double[] {1.0}));
    assertTrue(n.getMessage().contains("from 3 literals but 1 were given"), n.getMessage());
    assertEquals(new KernelSpec(SIG, "x"), new KernelSpec(SIG, "x").withArgOps(List.of(ArgOps.NONE, ArgOps.NONE)),
        "no computed argument is the plain spec");
  }

  /**
   * A constant argument ({@link ArgOps#CONSTANT}) of every fixed-width type reaches the kernel bit
   * for bit from its literal slot, with no column: extreme values, -0.0, and a bigint whose bits
   * are a signalling NaN's; one kernel for every value; a null in the column argument still gives null.
   */
  @Test
  void constantArgument_everyFixedWidthType_exactBits_noColumn() {
    Object[][] cases = {
        {SqlType.INT, new Object[] {Integer.MIN_VALUE, -1, 7, Integer.MAX_VALUE}},
        {SqlType.BIGINT, new Object[] {Long.MIN_VALUE, 0x7FF0000000000001L, -1L, Long.MAX_VALUE}},
        {SqlType.FLOAT, new Object[] {-0.0f, 2.5f, Float.MAX_VALUE, Float.NEGATIVE_INFINITY}},
        {SqlType.DOUBLE, new Object[] {-0.0, 0.1, Double.MIN_VALUE, Double.MAX_VALUE}},
        {SqlType.BOOLEAN, new Object[] {true, false}},
        {SqlType.DATE, new Object[] {-719162, 0, 19723}},
        {SqlType.TIMESTAMP, new Object[] {-62135596800000000L, 1704067200123456L}},
        {SqlType.TINYINT, new Object[] {(byte) -128, (byte) 127}},
        {SqlType.SMALLINT, new Object[] {(short) -32768, (short) 32767}}};
    for (Object[] c : cases) {
      SqlType t = (SqlType) c[0];
      KernelSignature sig = KernelSignature.of("k_" + t.sqlName(), t, arg("x", SqlType.INT), arg("c", t));
      ColumnKernel k = ColumnKernel.compile(new KernelSpec(sig, "c").withArgOps(List.of(ArgOps.NONE, ArgOps.CONSTANT)));
      assertFalse(k.source().contains("VkIn1"), "no input buffer for the constant: " + k.source());
      for (Object value : (Object[]) c[1]) {
        try (org.apache.arrow.vector.IntVector x = new org.apache.arrow.vector.IntVector("x", GPU.allocator());
             BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, -1},
                 new double[] {ArgOps.constantBits(t, value)})), List.of(SqlType.INT), 3, GPU.allocator())) {
          x.allocateNew(3);
          x.set(0, 1);
          x.setNull(1);
          x.set(2, 3);
          x.setValueCount(3);
          FieldVector out = runner.run(List.of(ArrowInputs.of(x, SqlType.INT)), 3).get(0);
          Object want = t == SqlType.BOOLEAN || t == SqlType.TINYINT || t == SqlType.SMALLINT ? value
              : t == SqlType.DATE ? value : value;
          for (int r : new int[] {0, 2}) {
            Object got = out.getObject(r);
            if (t == SqlType.FLOAT) {
              assertEquals(Float.floatToRawIntBits((Float) want), Float.floatToRawIntBits((Float) got), t + " " + value);
            } else if (t == SqlType.DOUBLE) {
              assertEquals(Double.doubleToRawLongBits((Double) want), Double.doubleToRawLongBits((Double) got), t + " " + value);
            } else if (t == SqlType.DATE) {
              assertEquals(want, ((org.apache.arrow.vector.DateDayVector) out).get(r), t + " " + value);
            } else if (t == SqlType.TIMESTAMP) {
              assertEquals(want, ((org.apache.arrow.vector.TimeStampVector) out).get(r), t + " " + value);
            } else {
              assertEquals(want, got, t + " " + value);
            }
          }
          assertTrue(out.isNull(1), "a null column argument: null result");
        }
      }
    }
  }

  @Test
  void constantArgument_refusedForDecimal_andColumnMustBeMinusOne() {
    KernelSignature sig = KernelSignature.of("kd", SqlType.DOUBLE, arg("x", SqlType.DOUBLE), arg("c", SqlType.DOUBLE));
    ColumnKernel k = ColumnKernel.compile(new KernelSpec(sig, "x + c").withArgOps(List.of(ArgOps.NONE, ArgOps.CONSTANT)));
    GpuException e = assertThrows(GpuException.class, () -> GPU.runtime().runner(
        List.of(new KernelCall(k, new int[] {0, 0}, new double[] {1.0})), List.of(SqlType.DOUBLE), 2, GPU.allocator()));
    assertTrue(e.getMessage().contains("is a constant but reads column 0"), e.getMessage());
    assertFalse(ArgOps.constantType(SqlType.DECIMAL));
    assertThrows(GpuException.class, () -> ArgOps.constantBits(SqlType.STRING, "x"));
  }

  /** The first call's results over columns x and y with literals {@code lits}. */
  private static double[] run(ColumnKernel k, double[] x, double[] y, double... lits) {
    try (Float8Vector vx = vector(x); Float8Vector vy = vector(y);
         BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1}, lits)),
             List.of(SqlType.DOUBLE, SqlType.DOUBLE), x.length, GPU.allocator())) {
      FieldVector out = runner.run(List.of(ArrowInputs.of(vx, SqlType.DOUBLE), ArrowInputs.of(vy, SqlType.DOUBLE)), x.length).get(0);
      double[] r = new double[x.length];
      for (int i = 0; i < r.length; i++) {
        r[i] = ((Float8Vector) out).get(i);
      }
      return r;
    }
  }

  private static Float8Vector vector(double[] values) {
    Float8Vector v = (Float8Vector) new Field("c", FieldType.nullable(SqlType.DOUBLE.arrowType()), null).createVector(GPU.allocator());
    v.allocateNew(values.length);
    for (int i = 0; i < values.length; i++) {
      v.set(i, values[i]);
    }
    v.setValueCount(values.length);
    return v;
  }
}
