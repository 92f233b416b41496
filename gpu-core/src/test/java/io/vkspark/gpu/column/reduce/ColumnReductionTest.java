package io.vkspark.gpu.column.reduce;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.TransferMode;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.ColumnGpu;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction.Aggregate;
import io.vkspark.gpu.column.reduce.ColumnReduction.Function;
import io.vkspark.gpu.column.reduce.ColumnReduction.Value;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Aggregates reduced on the device (lavapipe, validation on) against an exact sequential CPU
 * reference in Spark's semantics: integers, counts and MIN/MAX bit for bit (NaN, -0.0 vs 0.0 and
 * the first of equal values included); double sums within {@link #RELATIVE} of the sum of
 * magnitudes (summation order only).
 */
final class ColumnReductionTest {
  /** Double sums: |gpu - cpu| <= RELATIVE * sum(|x|) (a pairwise tree against a sequential sum). */
  static final double RELATIVE = 1e-12;
  static final SqlType[] TYPES = {SqlType.DOUBLE, SqlType.FLOAT, SqlType.INT, SqlType.BIGINT};
  static final double[] SPECIAL = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1.0, -1.0};

  private static ColumnKernel identity(SqlType t, String name) {
    return ColumnKernel.compile(KernelSignature.of(name, t, arg("x", t)), "x");
  }

  /** Every function over every type (a call per type reading its own column), plus COUNT(*). */
  private static List<Aggregate> aggregates() {
    List<Aggregate> out = new ArrayList<>();
    for (int c = 0; c < TYPES.length; c++) {
      for (Function f : Function.values()) {
        out.add(new Aggregate(f, c));
      }
    }
    out.add(new Aggregate(Function.COUNT, -1));
    return out;
  }

  private static List<KernelCall> calls() {
    List<KernelCall> calls = new ArrayList<>();
    for (int c = 0; c < TYPES.length; c++) {
      calls.add(new KernelCall(identity(TYPES[c], "id_" + TYPES[c].sqlName()), new int[] {c}));
    }
    return calls;
  }

  /** One batch's columns: values drawn finite, or with the special ones, nulls at {@code nullRate}. */
  private record Batch(int rows, Object[][] values) {}

  private static Batch batch(Random r, int rows, double nullRate, boolean specials) {
    return batch(r, rows, nullRate, specials, false);
  }

  /** {@code zeros}: every double and float is -0.0 or 0.0, so MIN and MAX are decided by which comes first. */
  private static Batch batch(Random r, int rows, double nullRate, boolean specials, boolean zeros) {
    Object[][] v = new Object[TYPES.length][rows];
    for (int i = 0; i < rows; i++) {
      boolean special = specials && r.nextInt(4) == 0;
      double d = zeros ? (r.nextBoolean() ? -0.0 : 0.0) : special ? SPECIAL[r.nextInt(SPECIAL.length)]
          : (r.nextDouble() - 0.3) * Math.pow(10, r.nextInt(7) - 3);
      v[0][i] = r.nextDouble() < nullRate ? null : d;
      v[1][i] = r.nextDouble() < nullRate ? null : (float) d;
      v[2][i] = r.nextDouble() < nullRate ? null : special ? (r.nextBoolean() ? Integer.MAX_VALUE : Integer.MIN_VALUE) : r.nextInt();
      v[3][i] = r.nextDouble() < nullRate ? null : special ? (r.nextBoolean() ? Long.MAX_VALUE : Long.MIN_VALUE) : r.nextLong();
    }
    return new Batch(rows, v);
  }

  private static List<FieldVector> vectors(Batch b, BufferAllocator a) {
    Float8Vector d = new Float8Vector("d", a);
    Float4Vector f = new Float4Vector("f", a);
    IntVector i = new IntVector("i", a);
    BigIntVector l = new BigIntVector("l", a);
    d.allocateNew(b.rows());
    f.allocateNew(b.rows());
    i.allocateNew(b.rows());
    l.allocateNew(b.rows());
    for (int r = 0; r < b.rows(); r++) {
      if (b.values()[0][r] != null) d.set(r, (Double) b.values()[0][r]);
      if (b.values()[1][r] != null) f.set(r, (Float) b.values()[1][r]);
      if (b.values()[2][r] != null) i.set(r, (Integer) b.values()[2][r]);
      if (b.values()[3][r] != null) l.set(r, (Long) b.values()[3][r]);
    }
    List<FieldVector> out = List.of(d, f, i, l);
    out.forEach(v -> v.setValueCount(b.rows()));
    return out;
  }

  /** Spark's partial aggregate of one function, sequentially in row order. */
  private static Value reference(Aggregate a, Batch b) {
    return SparkFold.of(a.function(), a.call() < 0 ? null : TYPES[a.call()], a.call() < 0
        ? java.util.Collections.nCopies(b.rows(), Boolean.TRUE) : java.util.Arrays.asList(b.values()[a.call()]));
  }

  private static double magnitude(Aggregate a, Batch b) {
    double m = 0;
    for (Object x : b.values()[a.call()]) {
      m += x == null ? 0 : Math.abs(((Number) x).doubleValue());
    }
    return m;
  }

  private static void check(List<Aggregate> aggs, Batch b, ColumnReduction.Result got) {
    assertEquals(b.rows(), got.rows());
    for (int i = 0; i < aggs.size(); i++) {
      Aggregate a = aggs.get(i);
      Value want = reference(a, b);
      Value v = got.values().get(i);
      String what = a + " of " + (a.call() < 0 ? "*" : TYPES[a.call()].sqlName()) + " over " + b.rows() + " rows";
      assertEquals(want.count(), v.count(), what + ": count");
      if (a.function() == Function.COUNT || v.isNull()) {
        continue;
      }
      assertEquals(want.integral(), v.integral(), what + ": integral value");
      boolean sum = a.function() == Function.SUM || a.function() == Function.AVG;
      if (sum && Double.isFinite(want.floating())) {
        double tol = RELATIVE * magnitude(a, b);
        assertEquals(want.floating(), v.floating(), tol, what + ": sum within " + tol);
      } else if (sum) {
        assertEquals(want.floating(), v.floating(), what + ": non-finite sum"); // NaN equals NaN here
      } else {
        assertEquals(Double.doubleToLongBits(want.floating()), Double.doubleToLongBits(v.floating()),
            what + ": " + want.floating() + " vs " + v.floating() + " bit for bit (-0.0 is not 0.0)");
      }
    }
  }

  private static void run(BatchRunner runner, List<Aggregate> aggs, Batch b, BufferAllocator a) {
    List<FieldVector> v = vectors(b, a);
    try {
      List<InputColumn> in = new ArrayList<>();
      for (int c = 0; c < TYPES.length; c++) {
        in.add(ArrowInputs.of(v.get(c), TYPES[c]));
      }
      check(aggs, b, runner.runReduced(in, b.rows()));
    } finally {
      v.forEach(FieldVector::close);
    }
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void everyFunction_matchesSequentialReference_onBothTransferPaths(TransferMode mode) throws Exception {
    List<Aggregate> aggs = aggregates();
    int[] sizes = {0, 1, 7, 63, 64, 255, 256, 257, 511, 512, 513, 1000, 1537, 2048};
    ColumnGpu.onDevice(mode, (d, rt, a) -> {
      ColumnReduction red = ColumnReduction.of(aggs, List.of(TYPES));
      assertTrue(red.unsupportedOn(d.info()).isEmpty(), "lavapipe has float64 and int64");
      Random r = new Random(42);
      try (BatchRunner runner = rt.runner(calls(), List.of(TYPES), 512, a, red)) { // batches over 512 rows: several dispatches
        for (int size : sizes) {
          run(runner, aggs, batch(r, size, 0.0, false), a);
          run(runner, aggs, batch(r, size, 0.2, false), a);
          run(runner, aggs, batch(r, size, 0.3, true), a);
          run(runner, aggs, batch(r, size, 0.5, false, true), a);
        }
      }
      assertEquals(0, a.getAllocatedMemory(), "Arrow memory leaked");
    });
  }

  @Test
  void allNullAndEmpty_giveNullSumsMinMaxAndZeroCounts() throws Exception {
    List<Aggregate> aggs = aggregates();
    ColumnGpu.onDevice(TransferMode.AUTO, (d, rt, a) -> {
      try (BatchRunner runner = rt.runner(calls(), List.of(TYPES), 4096, a, ColumnReduction.of(aggs, List.of(TYPES)))) {
        for (int rows : new int[] {0, 1, 300}) {
          Batch b = batch(new Random(1), rows, 1.0, false);
          List<FieldVector> v = vectors(b, a);
          try {
            List<InputColumn> in = new ArrayList<>();
            for (int c = 0; c < TYPES.length; c++) {
              in.add(ArrowInputs.of(v.get(c), TYPES[c]));
            }
            ColumnReduction.Result got = runner.runReduced(in, rows);
            for (int i = 0; i < aggs.size() - 1; i++) {
              assertTrue(got.values().get(i).isNull(), aggs.get(i) + " over " + rows + " null rows");
            }
            assertEquals(rows, got.values().get(aggs.size() - 1).count(), "COUNT(*) counts null rows too");
          } finally {
            v.forEach(FieldVector::close);
          }
        }
      }
    });
  }

  @Test
  void perRowResults_neverComeBack_onlyThePartials() throws Exception {
    List<Aggregate> aggs = List.of(new Aggregate(Function.SUM, 0), new Aggregate(Function.MAX, 0));
    List<SqlType> types = List.of(SqlType.DOUBLE);
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("twice", SqlType.DOUBLE, arg("x", SqlType.DOUBLE)), "2.0 * x");
    int rows = 200_000;
    ColumnGpu.onDevice(TransferMode.AUTO, (d, rt, a) -> {
      try (BatchRunner runner = rt.runner(List.of(new KernelCall(k, new int[] {0})), types, rows, a,
               ColumnReduction.of(aggs, types));
           Float8Vector x = new Float8Vector("x", a)) {
        x.allocateNew(rows);
        double sum = 0;
        for (int r = 0; r < rows; r++) {
          x.set(r, r * 0.5);
          sum += 2.0 * (r * 0.5);
        }
        x.setValueCount(rows);
        ColumnReduction.Result got = runner.runReduced(List.of(ArrowInputs.of(x, SqlType.DOUBLE)), rows);
        assertEquals(sum, got.values().get(0).floating(), RELATIVE * sum);
        assertEquals(2.0 * (rows - 1) * 0.5, got.values().get(1).floating());
        long groups = (rows + ColumnKernel.workgroupSize(d.info()) - 1) / ColumnKernel.workgroupSize(d.info());
        assertEquals(groups * 2 * HostFold.PARTIAL_BYTES, runner.stats().bytesRead(),
            "only the partials (16 bytes per aggregate and workgroup) are read back, not " + 8L * rows + " bytes of rows");
        GpuException e = assertThrows(GpuException.class, runner::results);
        assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("never leave the device"), e.getMessage());
      }
    });
  }

  @Test
  void reductionShader_touchingAnUndeclaredBuffer_isNotSealed() {
    List<SqlType> types = List.of(SqlType.DOUBLE);
    ColumnReduction red = ColumnReduction.of(List.of(new Aggregate(Function.SUM, 0)), types);
    String escaped = red.source().replace("void main() {", "layout(std430, set = 0, binding = 9) buffer VkEscape "
        + "{ uint vk_x[]; };\nvoid main() {\n  vk_x[0] = 1u;");
    GpuException e = assertThrows(GpuException.class, () -> ReductionPasses.compile("vkspark-reduce.comp", escaped,
        "[SUM(0)]", spv -> red.passes().program(spv, 64)));
    assertEquals(GpuException.Code.COMPILE, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains("the GPU reduction [SUM(0)] compiles to a shader that is not sealed"),
        e.getMessage());
    assertTrue(e.getMessage().contains("Fix: "), e.getMessage());
  }

  @Test
  void of_refusesBooleanResultsAndMissingCalls() {
    GpuException e = assertThrows(GpuException.class,
        () -> ColumnReduction.of(List.of(new Aggregate(Function.SUM, 0)), List.of(SqlType.BOOLEAN)));
    assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
    e = assertThrows(GpuException.class,
        () -> ColumnReduction.of(List.of(new Aggregate(Function.MIN, 2)), List.of(SqlType.DOUBLE)));
    assertTrue(e.getMessage().contains("reads call 2 of 1"), e.getMessage());
    assertThrows(GpuException.class, () -> new Aggregate(Function.SUM, -1));
  }
}
