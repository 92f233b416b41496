package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.ShaderFeature;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.run.DecimalOverflow;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * tinyint, smallint and decimal(p, s) arguments and results on lavapipe: extremes, nulls, odd
 * batch sizes, decimal overflow under both policies, the scale constants, and that none of it
 * needs an 8- or 16-bit storage feature. Every GPU value is checked against Java's.
 */
final class FixedWidthTypesTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  private static final byte[] BYTES = {Byte.MIN_VALUE, -1, 0, 1, Byte.MAX_VALUE, -100, 77};
  private static final short[] SHORTS = {Short.MIN_VALUE, -1, 0, 1, Short.MAX_VALUE, -12_345, 30_000};

  @Test
  void tinyint_extremes_widenSignedAndNarrowAsJava() {
    // odd sizes: a word of four tinyints is shared by rows of both sides of a batch boundary
    for (int rows : new int[] {0, 1, 3, 5, 4097}) {
      Byte[] a = new Byte[rows];
      for (int i = 0; i < rows; i++) {
        a[i] = i % 9 == 8 ? null : BYTES[i % BYTES.length];
      }
      ColumnKernel neg = compile(KernelSignature.of("neg8", "tinyint", arg("a", "tinyint")), "-a * 3 + 1");
      ColumnKernel wide = compile(KernelSignature.of("wide8", "int", arg("a", "byte")), "a * 1000");
      assertEquals(expected(a, x -> (byte) (-x * 3 + 1)), run(neg, SqlType.TINYINT, a), "rows=" + rows);
      assertEquals(expected(a, x -> x * 1000), run(wide, SqlType.TINYINT, a), "rows=" + rows);
    }
  }

  @Test
  void smallint_extremes_widenSignedAndNarrowAsJava() {
    for (int rows : new int[] {1, 2, 7, 4099}) {
      Short[] a = new Short[rows];
      for (int i = 0; i < rows; i++) {
        a[i] = i % 5 == 4 ? null : SHORTS[i % SHORTS.length];
      }
      ColumnKernel twice = compile(KernelSignature.of("twice16", "smallint", arg("a", "smallint")), "a * 2 + 1");
      ColumnKernel wide = compile(KernelSignature.of("wide16", "int", arg("a", "short")), "a * 70000");
      assertEquals(expected(a, x -> (short) (x * 2 + 1)), run(twice, SqlType.SMALLINT, a), "rows=" + rows);
      assertEquals(expected(a, x -> x * 70000), run(wide, SqlType.SMALLINT, a), "rows=" + rows);
    }
  }

  @Test
  void decimal_maxForItsPrecision_negative_andTheScaleConstants() {
    // decimal(18,3): the largest and smallest values, and the body reads the scale constants
    BigDecimal max = new BigDecimal("999999999999999.999");
    BigDecimal[] a = {max, max.negate(), new BigDecimal("-0.001"), BigDecimal.ZERO.setScale(3), null, new BigDecimal("12.345")};
    ColumnKernel half = compile(KernelSignature.of("half", "decimal(18,3)", arg("a", "decimal(18,3)")),
        "a / 2l + int64_t(a_scale * 0 + result_scale - 3 + a_precision - 18)");
    List<Object> got = run(half, SqlType.DECIMAL, a);
    List<Object> want = new ArrayList<>();
    for (BigDecimal x : a) {
      // int64 division truncates toward zero, as BigDecimal's DOWN rounding does
      want.add(x == null ? null : x.divide(BigDecimal.valueOf(2), java.math.RoundingMode.DOWN));
    }
    assertEquals(want, got);
    ColumnKernel scale = compile(KernelSignature.of("scale_of", "int", arg("p", "numeric(12, 4)")), "p_scale * 100 + p_precision");
    assertEquals(List.of(412), run(scale, SqlType.DECIMAL, new BigDecimal[] {new BigDecimal("1.0000")}));
  }

  @Test
  void decimalResult_thatOverflowsItsPrecision_isNullOrAnOverflowError() {
    // a decimal(5,2) result: 999.99 fits, 1000.00 does not; rows straddle the 64-row words of validity
    ColumnKernel plus = compile(KernelSignature.of("plus", "decimal(5,2)", arg("a", "decimal(5,2)")), "a + 1l");
    int rows = 200;
    BigDecimal[] a = new BigDecimal[rows];
    for (int i = 0; i < rows; i++) {
      a[i] = i % 10 == 3 ? null : i % 7 == 5 ? new BigDecimal("999.99") : i == 130 ? new BigDecimal("-999.99")
          : new BigDecimal("999.98");
    }
    List<Object> got = run(plus, SqlType.DECIMAL, a, DecimalOverflow.NULL);
    int overflows = 0;
    for (int i = 0; i < rows; i++) {
      BigDecimal sum = a[i] == null ? null : a[i].add(new BigDecimal("0.01"));
      boolean fits = sum != null && sum.precision() <= 5;
      overflows += sum != null && !fits ? 1 : 0;
      assertEquals(fits ? sum : null, got.get(i), "row " + i);
    }
    assertTrue(overflows > 20, "overflowing rows seen: " + overflows);
    GpuException e = assertThrows(GpuException.class, () -> run(plus, SqlType.DECIMAL, a, DecimalOverflow.ERROR));
    assertEquals(GpuException.Code.OVERFLOW, e.code());
    assertTrue(e.getMessage().contains("GPU UDF 'plus' returned 1000.00 for row 5 of the batch, which does not fit its "
        + "result type decimal(5,2)"), e.getMessage());
  }

  @Test
  void packedTypes_needNoSmallStorageFeature() {
    ColumnKernel k = compile(KernelSignature.of("mix", "smallint", arg("a", "tinyint"), arg("b", "smallint")), "a + b");
    for (ShaderFeature f : List.of(ShaderFeature.STORAGE_8BIT, ShaderFeature.STORAGE_16BIT, ShaderFeature.INT8,
        ShaderFeature.INT16)) {
      assertFalse(k.requirements().contains(f), f + " in " + k.requirements());
    }
  }

  @Test
  void parse_namesAndSynonyms() {
    assertEquals(SqlType.TINYINT, SqlType.parse("TinyInt"));
    assertEquals(SqlType.TINYINT, SqlType.parse("byte"));
    assertEquals(SqlType.SMALLINT, SqlType.parse("short"));
    assertEquals(SqlType.DECIMAL, SqlType.parse("decimal( 12 , 2 )"));
    assertEquals(new DecimalSpec(12, 2), DecimalSpec.parse("DECIMAL(12,2)").orElseThrow());
    assertEquals(new DecimalSpec(7, 0), DecimalSpec.parse("numeric(7)").orElseThrow());
    assertEquals(new DecimalSpec(10, 0), DecimalSpec.parse("decimal").orElseThrow(), "Spark's default");
    assertTrue(DecimalSpec.parse("double").isEmpty());
    GpuException wide = assertThrows(GpuException.class, () -> SqlType.parse("decimal(19,2)"));
    assertEquals(GpuException.Code.UNSUPPORTED, wide.code());
    assertTrue(wide.getMessage().contains("decimal(19, 2) is not supported by GPU UDFs"), wide.getMessage());
    assertThrows(GpuException.class, () -> DecimalSpec.parse("decimal(5,6)"));
    assertEquals("f(a tinyint, p decimal(12,2)) -> decimal(18,4)",
        KernelSignature.of("f", "decimal(18, 4)", arg("a", "tinyint"), arg("p", "decimal(12,2)")).toString());
  }

  @Test
  void signature_refusesADecimalWithoutPrecision_andArgumentsNamedLikeItsConstants() {
    GpuException bare = assertThrows(GpuException.class, () -> arg("p", SqlType.DECIMAL));
    assertTrue(bare.getMessage().contains("argument 'p' is a decimal without precision and scale"), bare.getMessage());
    GpuException clash = assertThrows(GpuException.class,
        () -> KernelSignature.of("f", "int", arg("p", "decimal(9,2)"), arg("p_scale", "int")));
    assertTrue(clash.getMessage().contains("argument name 'p_scale' of GPU UDF 'f' is the name of a constant"), clash.getMessage());
    assertThrows(GpuException.class, () -> KernelSignature.of("f", SqlType.DECIMAL, arg("x", SqlType.INT)));
  }

  @Test
  void decimalPrecisionAndScale_arePartOfTheSpecAndTheKernel() {
    KernelSpec two = KernelSpec.of(KernelSignature.of("d", "decimal(12,2)", arg("a", "decimal(12,2)")), "a");
    KernelSpec four = KernelSpec.of(KernelSignature.of("d", "decimal(12,4)", arg("a", "decimal(12,4)")), "a");
    assertEquals(two, KernelSpec.of(KernelSignature.of("d", "decimal(12, 2)", arg("a", "DECIMAL(12,2)")), "a"));
    assertNotEquals(two, four, "a kernel cache must not hand a decimal(12,4) UDF the decimal(12,2) kernel");
    assertEquals(new DecimalSpec(12, 2), two.named("e").signature().resultDecimal(), "renaming keeps the result's scale");
    ColumnKernel k2 = ColumnKernel.compile(two);
    ColumnKernel k4 = ColumnKernel.compile(four);
    assertNotEquals(k2.id(), k4.id());
    assertTrue(k4.source().contains("const int a_scale = 4;") && k4.source().contains("const int result_precision = 12;"),
        k4.source());
  }

  private static ColumnKernel compile(KernelSignature sig, String body) {
    return ColumnKernel.compile(sig, body, java.nio.file.Path.of("target", "shader-cache"));
  }

  private static <T> List<Object> expected(T[] in, java.util.function.Function<T, Object> f) {
    List<Object> out = new ArrayList<>();
    for (T x : in) {
      out.add(x == null ? null : f.apply(x));
    }
    return out;
  }

  private List<Object> run(ColumnKernel k, SqlType t, Object[] a) {
    return run(k, t, a, DecimalOverflow.ERROR);
  }

  /** Runs {@code k} over one column, staged in two appends (the second off a 64-row and a 4-byte boundary). */
  private List<Object> run(ColumnKernel k, SqlType t, Object[] a, DecimalOverflow policy) {
    int rows = a.length;
    int first = rows / 3;
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0})), List.of(t), 4096, GPU.allocator());
         FieldVector head = vector(k.signature().args().get(0), java.util.Arrays.copyOfRange(a, 0, first));
         FieldVector tail = vector(k.signature().args().get(0), java.util.Arrays.copyOfRange(a, first, rows))) {
      runner.onDecimalOverflow(policy);
      runner.append(List.of(ArrowInputs.of(head, t)), first);
      runner.append(List.of(ArrowInputs.of(tail, t)), rows - first);
      FieldVector out = runner.results().get(0);
      assertEquals(rows, out.getValueCount());
      List<Object> got = new ArrayList<>();
      long nulls = 0;
      for (int i = 0; i < rows; i++) {
        got.add(out.isNull(i) ? null : out.getObject(i));
        nulls += out.isNull(i) ? 1 : 0;
      }
      assertEquals(nulls, out.getNullCount());
      if (out instanceof TinyIntVector || out instanceof SmallIntVector || out instanceof IntVector || out instanceof DecimalVector) {
        return got;
      }
      throw new AssertionError("unexpected result vector " + out.getClass());
    }
  }

  private FieldVector vector(KernelSignature.Arg arg, Object[] values) {
    FieldVector v = new Field("a", FieldType.nullable(arg.arrowType()), null).createVector(GPU.allocator());
    v.setInitialCapacity(values.length);
    v.allocateNew();
    for (int i = 0; i < values.length; i++) {
      Object x = values[i];
      if (x == null) {
        v.setNull(i);
      } else if (v instanceof TinyIntVector b) {
        b.set(i, (Byte) x);
      } else if (v instanceof SmallIntVector s) {
        s.set(i, (Short) x);
      } else {
        ((DecimalVector) v).set(i, (BigDecimal) x);
      }
    }
    v.setValueCount(values.length);
    return v;
  }
}
