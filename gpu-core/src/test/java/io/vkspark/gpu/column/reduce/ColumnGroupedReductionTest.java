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
import io.vkspark.gpu.column.reduce.ColumnReduction.Group;
import io.vkspark.gpu.column.reduce.ColumnReduction.Grouped;
import io.vkspark.gpu.column.reduce.ColumnReduction.Value;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
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
 * Aggregates reduced per key on the device (lavapipe, validation on) against a sequential CPU
 * reference per key in Spark's semantics: integers, counts and MIN/MAX bit for bit (NaN, -0.0 vs
 * 0.0 and the first of equal values included); double sums within {@link #RELATIVE} of the sum of
 * magnitudes. The key is an input column no call reads (column 4), or one a call reads too.
 */
final class ColumnGroupedReductionTest {
  static final double RELATIVE = 1e-12;
  static final SqlType[] TYPES = {SqlType.DOUBLE, SqlType.FLOAT, SqlType.INT, SqlType.BIGINT};
  static final double[] SPECIAL = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1.0, -1.0};

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
      ColumnKernel k = ColumnKernel.compile(KernelSignature.of("id_" + TYPES[c].sqlName(), TYPES[c], arg("x", TYPES[c])), "x");
      calls.add(new KernelCall(k, new int[] {c}));
    }
    return calls;
  }

  /** Values per type, and the key per row (null: a null key). */
  private record Batch(int rows, Object[][] values, Long[] keys) {}

  /** Keys drawn from {@code [lo, lo + span)} (nulls at {@code keyNulls}); values as ColumnReductionTest's. */
  private static Batch batch(Random r, int rows, long lo, long span, double keyNulls, double nullRate, boolean specials,
                             boolean zeros) {
    Object[][] v = new Object[TYPES.length][rows];
    Long[] keys = new Long[rows];
    for (int i = 0; i < rows; i++) {
      boolean special = specials && r.nextInt(4) == 0;
      double d = zeros ? (r.nextBoolean() ? -0.0 : 0.0) : special ? SPECIAL[r.nextInt(SPECIAL.length)]
          : (r.nextDouble() - 0.3) * Math.pow(10, r.nextInt(7) - 3);
      v[0][i] = r.nextDouble() < nullRate ? null : d;
      v[1][i] = r.nextDouble() < nullRate ? null : (float) d;
      v[2][i] = r.nextDouble() < nullRate ? null : special ? (r.nextBoolean() ? Integer.MAX_VALUE : Integer.MIN_VALUE) : r.nextInt();
      v[3][i] = r.nextDouble() < nullRate ? null : special ? (r.nextBoolean() ? Long.MAX_VALUE : Long.MIN_VALUE) : r.nextLong();
      keys[i] = r.nextDouble() < keyNulls ? null : lo + (long) (r.nextDouble() * span);
    }
    return new Batch(rows, v, keys);
  }

  private static List<FieldVector> vectors(Batch b, SqlType keyType, BufferAllocator a) {
    Float8Vector d = new Float8Vector("d", a);
    Float4Vector f = new Float4Vector("f", a);
    IntVector i = new IntVector("i", a);
    BigIntVector l = new BigIntVector("l", a);
    FieldVector k = keyType == SqlType.BIGINT ? new BigIntVector("k", a) : new IntVector("k", a);
    d.allocateNew(b.rows());
    f.allocateNew(b.rows());
    i.allocateNew(b.rows());
    l.allocateNew(b.rows());
    k.setInitialCapacity(b.rows());
    k.allocateNew();
    for (int r = 0; r < b.rows(); r++) {
      if (b.values()[0][r] != null) d.set(r, (Double) b.values()[0][r]);
      if (b.values()[1][r] != null) f.set(r, (Float) b.values()[1][r]);
      if (b.values()[2][r] != null) i.set(r, (Integer) b.values()[2][r]);
      if (b.values()[3][r] != null) l.set(r, (Long) b.values()[3][r]);
      if (b.keys()[r] != null) {
        if (k instanceof BigIntVector bk) {
          bk.set(r, b.keys()[r]);
        } else {
          ((IntVector) k).set(r, (int) (long) b.keys()[r]);
        }
      }
    }
    List<FieldVector> out = List.of(d, f, i, l, k);
    out.forEach(v -> v.setValueCount(b.rows()));
    return out;
  }

  /** Spark's partial aggregate of one function over the rows with key {@code key}, sequentially. */
  private static Value reference(Aggregate a, Batch b, Long key) {
    List<Object> xs = new ArrayList<>();
    for (int r = 0; r < b.rows(); r++) {
      if (java.util.Objects.equals(b.keys()[r], key)) {
        xs.add(a.call() < 0 ? Boolean.TRUE : b.values()[a.call()][r]);
      }
    }
    return SparkFold.of(a.function(), a.call() < 0 ? null : TYPES[a.call()], xs);
  }

  private static void check(List<Aggregate> aggs, Batch b, Grouped got) {
    assertEquals(b.rows(), got.rows());
    TreeMap<Long, Long> want = new TreeMap<>();
    long nullRows = 0;
    for (Long k : b.keys()) {
      if (k == null) {
        nullRows++;
      } else {
        want.merge(k, 1L, Long::sum);
      }
    }
    List<Long> wantKeys = new ArrayList<>(want.keySet());
    if (nullRows > 0) {
      wantKeys.add(null);
    }
    List<Long> gotKeys = got.groups().stream().map(g -> g.nullKey() ? null : g.key()).toList();
    assertEquals(wantKeys, gotKeys, "keys ascending, the null key last, over " + b.rows() + " rows");
    for (Group g : got.groups()) {
      Long key = g.nullKey() ? null : g.key();
      assertEquals(key == null ? nullRows : want.get(key), g.rows(), "rows of key " + key);
      for (int i = 0; i < aggs.size(); i++) {
        Aggregate a = aggs.get(i);
        Value w = reference(a, b, key);
        Value v = g.values().get(i);
        String what = a + " of " + (a.call() < 0 ? "*" : TYPES[a.call()].sqlName()) + " for key " + key + " over "
            + b.rows() + " rows";
        assertEquals(w.count(), v.count(), what + ": count");
        if (a.function() == Function.COUNT || v.isNull()) {
          continue;
        }
        assertEquals(w.integral(), v.integral(), what + ": integral value");
        boolean sum = a.function() == Function.SUM || a.function() == Function.AVG;
        if (sum && Double.isFinite(w.floating())) {
          double m = 0;
          for (int r = 0; r < b.rows(); r++) {
            Object x = b.values()[a.call()][r];
            m += x == null || !java.util.Objects.equals(b.keys()[r], key) ? 0 : Math.abs(((Number) x).doubleValue());
          }
          assertEquals(w.floating(), v.floating(), RELATIVE * m, what + ": sum");
        } else if (sum) {
          assertEquals(w.floating(), v.floating(), what + ": non-finite sum");
        } else {
          assertEquals(Double.doubleToLongBits(w.floating()), Double.doubleToLongBits(v.floating()),
              what + ": " + w.floating() + " vs " + v.floating() + " bit for bit");
        }
      }
    }
  }

  private static List<InputColumn> inputs(List<FieldVector> v, SqlType keyType) {
    List<InputColumn> in = new ArrayList<>();
    for (int c = 0; c < TYPES.length; c++) {
      in.add(ArrowInputs.of(v.get(c), TYPES[c]));
    }
    in.add(ArrowInputs.of(v.get(4), keyType));
    return in;
  }

  /** Runs {@code b}; checks it against the reference when it fits, returns whether it did. */
  private static boolean run(BatchRunner runner, List<Aggregate> aggs, Batch b, SqlType keyType, BufferAllocator a) {
    List<FieldVector> v = vectors(b, keyType, a);
    try {
      Optional<Grouped> got = runner.runGrouped(inputs(v, keyType), b.rows());
      got.ifPresent(g -> check(aggs, b, g));
      return got.isPresent();
    } finally {
      v.forEach(FieldVector::close);
    }
  }

  private static List<SqlType> inputTypes(SqlType keyType) {
    List<SqlType> t = new ArrayList<>(List.of(TYPES));
    t.add(keyType);
    return t;
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void everyFunctionPerKey_matchesSequentialReference_onBothTransferPaths(TransferMode mode) throws Exception {
    List<Aggregate> aggs = aggregates();
    int[] sizes = {0, 1, 7, 63, 255, 256, 257, 1000, 1537, 2048, 5003};
    ColumnGpu.onDevice(mode, (d, rt, a) -> {
      ColumnReduction red = ColumnReduction.grouped(aggs, List.of(TYPES), 4, SqlType.INT, ColumnReduction.DEFAULT_SLOTS);
      assertTrue(red.unsupportedOn(d.info()).isEmpty(), "lavapipe has float64 and int64");
      Random r = new Random(7);
      // batches over 1,024 rows: several dispatches, each folded per key in order
      try (BatchRunner runner = rt.runner(calls(), inputTypes(SqlType.INT), 1024, a, red)) {
        for (int size : sizes) {
          assertTrue(run(runner, aggs, batch(r, size, -20, 40, 0.1, 0.2, false, false), SqlType.INT, a));
          assertTrue(run(runner, aggs, batch(r, size, -5, 7, 0.0, 0.3, true, false), SqlType.INT, a));
          assertTrue(run(runner, aggs, batch(r, size, 3, 4, 0.3, 0.5, false, true), SqlType.INT, a), "-0.0 and 0.0 only");
          assertTrue(run(runner, aggs, batch(r, size, 11, 1, 0.0, 0.1, true, false), SqlType.INT, a), "a single key");
          assertTrue(run(runner, aggs, batch(r, size, 0, 0, 1.0, 0.1, false, false), SqlType.INT, a), "only null keys");
        }
        assertEquals(0, runner.wideBatches());
      }
      assertEquals(0, a.getAllocatedMemory(), "Arrow memory leaked");
    });
  }

  @Test
  void rangeOfExactlyTheSlots_reducesAndOneMore_isLeftToTheCaller() throws Exception {
    List<Aggregate> aggs = aggregates();
    int k = 16;
    ColumnGpu.onDevice(TransferMode.AUTO, (d, rt, a) -> {
      try (BatchRunner runner = rt.runner(calls(), inputTypes(SqlType.BIGINT), 4096, a,
               ColumnReduction.grouped(aggs, List.of(TYPES), 4, SqlType.BIGINT, k))) {
        long lo = Long.MIN_VALUE + 3;
        Batch full = batch(new Random(1), 3000, lo, k, 0.0, 0.1, true, false);
        full.keys()[0] = lo;
        full.keys()[1] = lo + k - 1; // k values, no null: exactly the slots
        assertTrue(run(runner, aggs, full, SqlType.BIGINT, a), "k values fit k slots");
        Batch withNull = batch(new Random(2), 3000, 100, k - 1, 0.05, 0.1, false, false);
        withNull.keys()[0] = 100L;
        withNull.keys()[1] = 100L + k - 2;
        withNull.keys()[2] = null; // k - 1 values and null: exactly the slots
        assertTrue(run(runner, aggs, withNull, SqlType.BIGINT, a), "k - 1 values and null fit k slots");
        long readBefore = runner.stats().bytesRead();
        Batch over = batch(new Random(3), 3000, -50, k, 0.0, 0.1, false, false);
        over.keys()[0] = -50L;
        over.keys()[1] = -50L + k; // k + 1 values
        assertFalse(run(runner, aggs, over, SqlType.BIGINT, a), "k + 1 values do not fit");
        Batch overNull = batch(new Random(4), 3000, -50, k, 0.0, 0.1, false, false);
        overNull.keys()[0] = -50L;
        overNull.keys()[1] = -50L + k - 1;
        overNull.keys()[2] = null; // k values and null
        assertFalse(run(runner, aggs, overNull, SqlType.BIGINT, a), "k values and null do not fit");
        Batch far = batch(new Random(5), 100, 0, 2, 0.0, 0.1, false, false);
        far.keys()[0] = Long.MIN_VALUE;
        far.keys()[1] = Long.MAX_VALUE; // the span overflows a long
        assertFalse(run(runner, aggs, far, SqlType.BIGINT, a));
        assertEquals(3, runner.wideBatches());
        assertEquals(readBefore, runner.stats().bytesRead(), "a batch left to the caller dispatches nothing");
        assertTrue(run(runner, aggs, batch(new Random(6), 500, 7, 3, 0.2, 0.2, false, false), SqlType.BIGINT, a),
            "the runner goes on after wide batches");
      }
    });
  }

  @Test
  void keyReadByACall_severalChunksPerWorkgroup_andOnlyPerKeyPartialsComeBack() throws Exception {
    // the key (an int column) is also the argument of the second call
    ColumnKernel twice = ColumnKernel.compile(KernelSignature.of("twice", SqlType.DOUBLE, arg("x", SqlType.DOUBLE)), "2.0 * x");
    ColumnKernel sq = ColumnKernel.compile(KernelSignature.of("sq", SqlType.BIGINT, arg("k", SqlType.INT)), "int64_t(k) * k");
    List<KernelCall> calls = List.of(new KernelCall(twice, new int[] {0}), new KernelCall(sq, new int[] {1}));
    List<SqlType> callTypes = List.of(SqlType.DOUBLE, SqlType.BIGINT);
    List<Aggregate> aggs = List.of(new Aggregate(Function.SUM, 0), new Aggregate(Function.MAX, 0),
        new Aggregate(Function.SUM, 1), new Aggregate(Function.COUNT, -1));
    int rows = 300_001; // over 1,024 workgroups' rows: each first-pass workgroup reduces two chunks
    int slots = ColumnReduction.DEFAULT_SLOTS;
    ColumnGpu.onDevice(TransferMode.AUTO, (d, rt, a) -> {
      try (BatchRunner runner = rt.runner(calls, List.of(SqlType.DOUBLE, SqlType.INT), rows, a,
               ColumnReduction.grouped(aggs, callTypes, 1, SqlType.INT, slots));
           Float8Vector x = new Float8Vector("x", a); IntVector k = new IntVector("k", a)) {
        x.allocateNew(rows);
        k.allocateNew(rows);
        double[] sum = new double[10];
        double[] max = new double[10];
        long[] n = new long[10];
        for (int r = 0; r < rows; r++) {
          x.set(r, r * 0.5);
          int key = r % 10 - 5;
          if (r % 7 == 0) {
            k.setNull(r);
          } else {
            k.set(r, key);
            sum[key + 5] += 2.0 * (r * 0.5);
            max[key + 5] = 2.0 * (r * 0.5);
            n[key + 5]++;
          }
        }
        x.setValueCount(rows);
        k.setValueCount(rows);
        Grouped got = runner.runGrouped(List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(k, SqlType.INT)), rows)
            .orElseThrow();
        assertEquals(11, got.groups().size(), "keys -5..4 and null");
        assertEquals(2, runner.reduction().passes().chunks(runner.currentCapacity(), ColumnKernel.workgroupSize(d.info()), d.loopLimit()),
            "two chunks per first-pass workgroup");
        for (int i = 0; i < 10; i++) {
          Group g = got.groups().get(i);
          assertEquals(i - 5, g.key());
          assertEquals(n[i], g.rows());
          assertEquals(sum[i], g.values().get(0).floating(), RELATIVE * sum[i]);
          assertEquals(max[i], g.values().get(1).floating());
          assertEquals(n[i] * (i - 5L) * (i - 5L), g.values().get(2).integral(), "sq(k) summed: the key read by a call");
          assertEquals(n[i], g.values().get(3).count());
        }
        Group nulls = got.groups().get(10);
        assertTrue(nulls.nullKey());
        assertTrue(nulls.values().get(2).isNull(), "sq(null) is null");
        assertEquals((rows + 6) / 7, nulls.values().get(3).count());
        assertEquals(11L * (aggs.size() + 1) * HostFold.PARTIAL_BYTES, runner.stats().bytesRead(),
            "one partial per aggregate and key slot in use (10 keys and null) comes back, not " + 16L * rows + " bytes of rows");
        assertThrows(GpuException.class, () -> runner.runReduced(List.of(ArrowInputs.of(x, SqlType.DOUBLE),
            ArrowInputs.of(k, SqlType.INT)), rows));
        // staging outside runGrouped would dispatch with the previous batch's key range
        assertThrows(GpuException.class, () -> runner.append(List.of(ArrowInputs.of(x, SqlType.DOUBLE),
            ArrowInputs.of(k, SqlType.INT)), rows));
        assertThrows(GpuException.class, runner::dispatch);
      }
    });
  }

  @Test
  void grouped_refusesBadKeysAndSlots() throws Exception {
    List<Aggregate> aggs = List.of(new Aggregate(Function.SUM, 0));
    List<SqlType> types = List.of(SqlType.DOUBLE);
    assertThrows(GpuException.class, () -> ColumnReduction.grouped(aggs, types, 1, SqlType.DOUBLE, 64));
    assertThrows(GpuException.class, () -> ColumnReduction.grouped(aggs, types, -1, SqlType.INT, 64));
    assertThrows(GpuException.class, () -> ColumnReduction.grouped(aggs, types, 1, SqlType.INT, 0));
    assertThrows(GpuException.class, () -> ColumnReduction.grouped(aggs, types, 1, SqlType.INT, ColumnReduction.MAX_SLOTS + 1));
    ColumnKernel id = ColumnKernel.compile(KernelSignature.of("id", SqlType.DOUBLE, arg("x", SqlType.DOUBLE)), "x");
    ColumnGpu.onDevice(TransferMode.AUTO, (d, rt, a) -> {
      GpuException e = assertThrows(GpuException.class, () -> rt.runner(List.of(new KernelCall(id, new int[] {0})),
          List.of(SqlType.DOUBLE, SqlType.BIGINT), 1024, a, ColumnReduction.grouped(aggs, types, 1, SqlType.INT, 64)));
      assertTrue(e.getMessage().contains("groups by input column 1"), e.getMessage());
    });
  }
}
