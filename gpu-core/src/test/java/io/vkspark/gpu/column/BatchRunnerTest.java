package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.SlotStats;
import io.vkspark.gpu.TransferMode;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.run.ColumnRuntime;
import java.util.List;
import java.util.Random;
import java.util.function.BiFunction;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Arrow batches through GPU kernels on lavapipe, every result checked against the CPU. */
final class BatchRunnerTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  /** A kernel over two columns of one type, with its CPU reference (null in -> null out). */
  record Case(SqlType in, SqlType out, String body, BiFunction<Object, Object, Object> cpu, String inSql, String outSql) {
    Case(SqlType in, SqlType out, String body, BiFunction<Object, Object, Object> cpu) {
      this(in, out, body, cpu, in.sqlName(), out.sqlName());
    }
  }

  static Case caseFor(SqlType t) {
    return switch (t) {
      case INT -> new Case(t, SqlType.INT, "a * 3 + b", (a, b) -> (Integer) a * 3 + (Integer) b);
      case BIGINT -> new Case(t, SqlType.BIGINT, "a * 3l - b", (a, b) -> (Long) a * 3L - (Long) b);
      case FLOAT -> new Case(t, SqlType.FLOAT, "2.5 * a + b", (a, b) -> 2.5f * (Float) a + (Float) b);
      case DOUBLE -> new Case(t, SqlType.DOUBLE, "a * b + sqrt(abs(a))",
          (a, b) -> (Double) a * (Double) b + Math.sqrt(Math.abs((Double) a)));
      case BOOLEAN -> new Case(t, SqlType.BOOLEAN, "a != b", (a, b) -> !a.equals(b));
      case DATE -> new Case(t, SqlType.BOOLEAN, "a < b + 30", (a, b) -> (Integer) a < (Integer) b + 30);
      case TIMESTAMP -> new Case(t, SqlType.TIMESTAMP, "max(a, b) + 3600000000l",
          (a, b) -> Math.max((Long) a, (Long) b) + 3_600_000_000L);
      // narrowed as Java's (byte) and (short) casts do: the sums and products wrap
      case TINYINT -> new Case(t, SqlType.TINYINT, "a * 3 + b", (a, b) -> (byte) ((Byte) a * 3 + (Byte) b));
      case SMALLINT -> new Case(t, SqlType.SMALLINT, "a * b - 7", (a, b) -> (short) ((Short) a * (Short) b - 7));
      // decimal(9,2) * decimal(9,2): the unscaled product is the decimal(18,4) result, as BigDecimal.multiply gives it
      case DECIMAL -> new Case(t, SqlType.DECIMAL, "a * b",
          (a, b) -> ((java.math.BigDecimal) a).multiply((java.math.BigDecimal) b), "decimal(9,2)", "decimal(18,4)");
      default -> throw new IllegalArgumentException(t + ": see VarArgsTest");
    };
  }

  static ColumnKernel kernel(Case c) {
    return ColumnKernel.compile(KernelSignature.of("k_" + c.in().sqlName(), c.outSql(), arg("a", c.inSql()), arg("b", c.inSql())),
        c.body(), java.nio.file.Path.of("target", "shader-cache"));
  }

  Object random(SqlType t, Random r) {
    return switch (t) {
      case INT, DATE -> r.nextInt(2_000_001) - 1_000_000;
      case BIGINT -> r.nextLong() >> 2;
      case TIMESTAMP -> r.nextLong() >> 8;
      case FLOAT -> (r.nextFloat() - 0.5f) * 2000f;
      case DOUBLE -> (r.nextDouble() - 0.5) * 1e6;
      case BOOLEAN -> r.nextBoolean();
      // extremes one time in eight: MIN and MAX, and a decimal(9,2)'s largest values
      case TINYINT -> r.nextInt(8) == 0 ? (r.nextBoolean() ? Byte.MIN_VALUE : Byte.MAX_VALUE) : (byte) r.nextInt();
      case SMALLINT -> r.nextInt(8) == 0 ? (r.nextBoolean() ? Short.MIN_VALUE : Short.MAX_VALUE) : (short) r.nextInt();
      case DECIMAL -> java.math.BigDecimal.valueOf(r.nextInt(8) == 0 ? (r.nextBoolean() ? 999_999_999L : -999_999_999L)
          : r.nextLong() % 1_000_000_000L, 2);
      default -> throw new IllegalArgumentException(t.toString());
    };
  }

  FieldVector vector(SqlType t, Object[] values, String name) {
    return vector(t, t == SqlType.DECIMAL ? "decimal(9,2)" : t.sqlName(), values, name);
  }

  FieldVector vector(SqlType t, String sql, Object[] values, String name) {
    org.apache.arrow.vector.types.pojo.ArrowType arrow = KernelSignature.arg("x", sql).arrowType();
    FieldVector v = new Field(name, FieldType.nullable(arrow), null).createVector(GPU.allocator());
    v.setInitialCapacity(values.length);
    v.allocateNew();
    for (int i = 0; i < values.length; i++) {
      Object x = values[i];
      if (x == null) {
        v.setNull(i);
        continue;
      }
      switch (t) {
        case INT -> ((IntVector) v).set(i, (Integer) x);
        case DATE -> ((DateDayVector) v).set(i, (Integer) x);
        case BIGINT -> ((BigIntVector) v).set(i, (Long) x);
        case TIMESTAMP -> ((TimeStampMicroTZVector) v).set(i, (Long) x);
        case FLOAT -> ((Float4Vector) v).set(i, (Float) x);
        case DOUBLE -> ((Float8Vector) v).set(i, (Double) x);
        case BOOLEAN -> ((BitVector) v).set(i, (Boolean) x ? 1 : 0);
        case TINYINT -> ((org.apache.arrow.vector.TinyIntVector) v).set(i, (Byte) x);
        case SMALLINT -> ((org.apache.arrow.vector.SmallIntVector) v).set(i, (Short) x);
        case DECIMAL -> ((org.apache.arrow.vector.DecimalVector) v).set(i, (java.math.BigDecimal) x);
      }
    }
    v.setValueCount(values.length);
    return v;
  }

  static Object get(FieldVector v, int i) {
    if (v.isNull(i)) {
      return null;
    }
    return v instanceof BitVector b ? (Object) (b.get(i) != 0) : v.getObject(i);
  }

  static void assertClose(SqlType t, Object expected, Object actual, String where) {
    if (expected == null || actual == null) {
      assertEquals(expected, actual, where);
      return;
    }
    switch (t) {
      case FLOAT -> {
        float e = (Float) expected;
        float a = (Float) actual;
        assertTrue(Math.abs(e - a) <= 2 * Math.ulp(e), where + ": " + a + " != " + e);
      }
      case DOUBLE -> {
        double e = (Double) expected;
        double a = (Double) actual;
        assertTrue(Math.abs(e - a) <= 4 * Math.ulp(e), where + ": " + a + " != " + e);
      }
      case DATE -> assertEquals(expected, actual, where);
      default -> assertEquals(expected, actual, where);
    }
  }

  /**
   * One row of a case against its CPU value: FLOAT within 2 ulp of the terms' magnitude (a fused
   * multiply-add, which NVIDIA makes of 2.5 * a + b, rounds once where Java rounds twice, so under
   * cancellation the result's own ulp is too tight), other types by {@link #assertClose}.
   */
  static void assertRowClose(Case c, Object a, Object b, Object expected, Object actual, String where) {
    if (c.out() == SqlType.FLOAT && expected != null && actual != null) {
      float bound = 2 * Math.ulp(Math.abs(2.5f * (Float) a) + Math.abs((Float) b));
      assertTrue(Math.abs((Float) expected - (Float) actual) <= bound, where + ": " + actual + " != " + expected);
    } else {
      assertClose(c.out(), expected, actual, where);
    }
  }

  /** Runs one batch of random data and checks every row against the CPU reference. */
  void runAndCheck(BatchRunner runner, Case c, int rows, double nullFraction, Random r) {
    Object[] a = new Object[rows];
    Object[] b = new Object[rows];
    for (int i = 0; i < rows; i++) {
      a[i] = r.nextDouble() < nullFraction ? null : random(c.in(), r);
      b[i] = r.nextDouble() < nullFraction ? null : random(c.in(), r);
    }
    try (FieldVector va = vector(c.in(), a, "a"); FieldVector vb = vector(c.in(), b, "b")) {
      List<FieldVector> out = runner.run(List.of(ArrowInputs.of(va, c.in()), ArrowInputs.of(vb, c.in())), rows);
      FieldVector result = out.get(0);
      assertEquals(rows, result.getValueCount());
      int nulls = 0;
      for (int i = 0; i < rows; i++) {
        Object expected = a[i] == null || b[i] == null ? null : c.cpu().apply(a[i], b[i]);
        nulls += expected == null ? 1 : 0;
        Object actual = c.out() == SqlType.TIMESTAMP && !result.isNull(i)
            ? ((TimeStampMicroTZVector) result).get(i) : get(result, i);
        assertRowClose(c, a[i], b[i], expected, actual, c.in() + " rows=" + rows + " row " + i);
      }
      assertEquals(nulls, result.getNullCount());
    }
  }

  @ParameterizedTest
  @EnumSource(value = SqlType.class, names = {"INT", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMP"})
  void everyType_withAndWithoutNulls_matchesCpu(SqlType type) {
    Case c = caseFor(type);
    ColumnKernel k = kernel(c);
    Random r = new Random(type.ordinal());
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})), List.of(type, type), 1000, GPU.allocator())) {
      assertEquals(1024, runner.capacity(), "capacity rounds up to a multiple of 64");
      for (double nulls : new double[] {0, 0.1, 1.0}) {
        for (int rows : new int[] {1000, 1, 0, 777, 1024, 1025, 3 * 1024, 2 * 1024 + 63}) {
          runAndCheck(runner, c, rows, nulls, r);
        }
      }
    }
  }

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void randomSizesUpTo3xCapacity_onBothTransferPaths(TransferMode mode) throws Exception {
    ColumnGpu.onDevice(mode, (d, rt, a) -> {
      Random r = new Random(11);
      for (SqlType type : List.of(SqlType.DOUBLE, SqlType.BOOLEAN, SqlType.INT)) {
        Case c = caseFor(type);
        try (BatchRunner runner = rt.runner(List.of(new KernelCall(kernel(c), new int[] {0, 1})), List.of(type, type), 512, GPU.allocator())) {
          for (int i = 0; i < 12; i++) {
            runAndCheck(runner, c, r.nextInt(3 * 512 + 1), r.nextDouble() < 0.5 ? 0 : 0.2, r);
          }
          for (int i = 0; i < 4; i++) { // several odd batches appended into one, across buffer fills
            appendAndCheck(runner, c, new int[] {r.nextInt(700), r.nextInt(70), r.nextInt(700)}, i - 1, 0.2, r);
          }
        }
      }
    });
  }

  @Test
  void outputSlots_areReusedAfterTheFirstBatch() {
    Case c = caseFor(SqlType.DOUBLE);
    Random r = new Random(3);
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(kernel(c), new int[] {0, 1})),
        List.of(SqlType.DOUBLE, SqlType.DOUBLE), 4096, GPU.allocator())) {
      runAndCheck(runner, c, 4096, 0.1, r);
      SlotStats first = runner.stats().slots().slots();
      assertEquals(new SlotStats(2, 0, 0, 2), first, "the first batch appends a validity and a data slot");
      int[] later = {4096, 100, 4000, 1, 0, 4096};
      for (int rows : later) {
        runAndCheck(runner, c, rows, 0.1, r);
      }
      SlotStats after = runner.stats().slots().slots();
      assertEquals(0, after.movedSlots(), "equal or smaller batches never reallocate");
      assertEquals(2, after.appendedSlots());
      assertEquals(2L * later.length, after.reusedSlots(), "every later batch reuses both slots");
      runAndCheck(runner, c, 3 * 4096, 0.1, r); // larger: both slots move to bigger allocations
      assertEquals(2, runner.stats().slots().slots().movedSlots());
      runAndCheck(runner, c, 3 * 4096, 0.1, r); // and are reused from then on
      assertEquals(2, runner.stats().slots().slots().movedSlots());
      assertEquals(2L * later.length + 2, runner.stats().slots().slots().reusedSlots());
    }
  }

  @Test
  void severalKernelsOverOneBatch_shareUploads() {
    ColumnKernel sum = ColumnKernel.compile(KernelSignature.of("sum", SqlType.DOUBLE,
        arg("x", SqlType.DOUBLE), arg("y", SqlType.DOUBLE)), "x + y");
    ColumnKernel pos = ColumnKernel.compile(KernelSignature.of("pos", SqlType.BOOLEAN, arg("x", SqlType.DOUBLE)), "x > 0.0");
    ColumnKernel twice = ColumnKernel.compile(KernelSignature.of("twice", SqlType.INT, arg("n", SqlType.INT)), "2 * n");
    List<SqlType> types = List.of(SqlType.DOUBLE, SqlType.INT, SqlType.DOUBLE);
    List<KernelCall> calls = List.of(new KernelCall(sum, new int[] {0, 2}), new KernelCall(pos, new int[] {2}),
        new KernelCall(twice, new int[] {1}));
    Random r = new Random(5);
    int rows = 5000;
    Object[] x = new Object[rows];
    Object[] n = new Object[rows];
    Object[] y = new Object[rows];
    for (int i = 0; i < rows; i++) {
      x[i] = i % 7 == 0 ? null : r.nextGaussian();
      n[i] = i % 11 == 0 ? null : r.nextInt(1000);
      y[i] = r.nextGaussian();
    }
    long dispatches = GPU.device().counters().dispatchesSubmitted();
    try (BatchRunner runner = GPU.runtime().runner(calls, types, 8192, GPU.allocator());
         FieldVector vx = vector(SqlType.DOUBLE, x, "x"); FieldVector vn = vector(SqlType.INT, n, "n");
         FieldVector vy = vector(SqlType.DOUBLE, y, "y")) {
      List<FieldVector> out = runner.run(List.of(ArrowInputs.of(vx, SqlType.DOUBLE), ArrowInputs.of(vn, SqlType.INT),
          ArrowInputs.of(vy, SqlType.DOUBLE)), rows);
      assertEquals(dispatches + 1, GPU.device().counters().dispatchesSubmitted(), "three kernels, one submission");
      assertEquals((8L + 4 + 8) * rows, runner.stats().bytesUploaded(),
          "each column uploaded once, though column 2 feeds two kernels");
      for (int i = 0; i < rows; i++) {
        assertEquals(x[i] == null ? null : (Double) x[i] + (Double) y[i], get(out.get(0), i), "sum " + i);
        assertEquals((Double) y[i] > 0, get(out.get(1), i), "pos " + i);
        assertEquals(n[i] == null ? null : 2 * (Integer) n[i], get(out.get(2), i), "twice " + i);
      }
    }
  }

  @Test
  void secondRunner_takesThePooledBufferSet_andRecordsNothing() {
    Case c = caseFor(SqlType.FLOAT);
    ColumnKernel k = kernel(c);
    Random r = new Random(9);
    List<KernelCall> calls = List.of(new KernelCall(k, new int[] {0, 1}));
    try (BatchRunner first = GPU.runtime().runner(calls, List.of(SqlType.FLOAT, SqlType.FLOAT), 2048, GPU.allocator())) {
      runAndCheck(first, c, 2000, 0.05, r);
    }
    long recorded = GPU.device().counters().commandBuffersCreated();
    long buffers = GPU.device().counters().buffersCreated();
    long sets = GPU.runtime().bufferSetsCreated();
    try (BatchRunner second = GPU.runtime().runner(calls, List.of(SqlType.FLOAT, SqlType.FLOAT), 2048, GPU.allocator())) {
      for (int i = 0; i < 5; i++) {
        runAndCheck(second, c, r.nextInt(5000), 0.05, r);
      }
    }
    assertEquals(recorded, GPU.device().counters().commandBuffersCreated(), "no new command buffers");
    assertEquals(buffers, GPU.device().counters().buffersCreated(), "no new buffers");
    assertEquals(sets, GPU.runtime().bufferSetsCreated());
    assertTrue(GPU.runtime().bufferSetsReused() > 0);
  }

  @Test
  void idleBufferSets_areCappedLeastRecentlyUsedFirst() {
    Case c = caseFor(SqlType.DOUBLE);
    ColumnKernel k = kernel(c);
    Random r = new Random(13);
    try (ColumnRuntime small = new ColumnRuntime(GPU.device(), 1 << 20)) {
      for (int rows : new int[] {4096, 8192, 16_384, 32_768, 65_536, 4096}) {
        try (BatchRunner runner = small.runner(List.of(new KernelCall(k, new int[] {0, 1})),
            List.of(SqlType.DOUBLE, SqlType.DOUBLE), 1 << 20, GPU.allocator())) {
          runAndCheck(runner, c, rows, 0.1, r);
        }
        assertTrue(small.idleBytes() <= Math.max(1 << 20, small.deviceBytesHeld()), "idle " + small.idleBytes());
        assertTrue(small.deviceBytesHeld() <= (1 << 20) + 3L * 8 * 65_536 + 64,
            "only the newest set may push idle memory over the cap: " + small.deviceBytesHeld());
      }
    }
  }

  /**
   * With {@code keepSets} as many idle sets as were in use at once stay pooled past the byte budget,
   * so the next round of as many concurrent runners records nothing; with one kept, it must record
   * again (what 16 concurrent Spark tasks did on the H200 before the executor kept a set per permit).
   */
  @Test
  void keepSets_keepsAsManyIdleSetsAsWereInUse_pastTheByteBudget() {
    Case c = caseFor(SqlType.DOUBLE);
    ColumnKernel k = kernel(c);
    Random r = new Random(17);
    for (int keep : new int[] {3, 1}) {
      try (ColumnRuntime rt = new ColumnRuntime(GPU.device(), 1, keep)) {
        long[] created = new long[2];
        for (int round = 0; round < 2; round++) {
          List<BatchRunner> runners = new java.util.ArrayList<>();
          try {
            for (int i = 0; i < 3; i++) {
              BatchRunner runner = rt.runner(List.of(new KernelCall(k, new int[] {0, 1})),
                  List.of(SqlType.DOUBLE, SqlType.DOUBLE), 4096, GPU.allocator());
              runners.add(runner);
              runAndCheck(runner, c, 1000, 0.1, r); // holds its set until closed
            }
          } finally {
            runners.forEach(BatchRunner::close);
          }
          created[round] = rt.bufferSetsCreated();
          assertEquals(keep, rt.idleSets(), "idle sets kept past a 1-byte budget");
        }
        assertEquals(3, created[0]);
        assertEquals(keep == 3 ? 3 : 5, created[1], "sets recorded again in round two with keepSets=" + keep);
      }
    }
  }

  /**
   * Appends batches of {@code sizes} rows (each vector closed right after its append), dispatching
   * early after the batch at {@code dispatchAfter} (or never, -1), then checks every row of the
   * results against the CPU. Returns the dispatches it took.
   */
  long appendAndCheck(BatchRunner runner, Case c, int[] sizes, int dispatchAfter, double nullFraction, Random r) {
    List<Object[]> as = new java.util.ArrayList<>();
    List<Object[]> bs = new java.util.ArrayList<>();
    long dispatches = runner.stats().dispatches();
    int total = 0;
    for (int k = 0; k < sizes.length; k++) {
      int rows = sizes[k];
      Object[] a = new Object[rows];
      Object[] b = new Object[rows];
      for (int i = 0; i < rows; i++) {
        a[i] = r.nextDouble() < nullFraction ? null : random(c.in(), r);
        b[i] = r.nextDouble() < nullFraction ? null : random(c.in(), r);
      }
      as.add(a);
      bs.add(b);
      try (FieldVector va = vector(c.in(), a, "a"); FieldVector vb = vector(c.in(), b, "b")) {
        runner.append(List.of(ArrowInputs.of(va, c.in()), ArrowInputs.of(vb, c.in())), rows);
      }
      total += rows;
      assertEquals(total, runner.stagedRows());
      if (k == dispatchAfter) {
        runner.dispatch();
      }
    }
    FieldVector result = runner.results().get(0);
    assertEquals(0, runner.stagedRows(), "results() ends the batch");
    assertEquals(total, result.getValueCount());
    int row = 0;
    int nulls = 0;
    for (int k = 0; k < sizes.length; k++) {
      for (int i = 0; i < sizes[k]; i++, row++) {
        Object a = as.get(k)[i];
        Object b = bs.get(k)[i];
        Object expected = a == null || b == null ? null : c.cpu().apply(a, b);
        nulls += expected == null ? 1 : 0;
        Object actual = c.out() == SqlType.TIMESTAMP && !result.isNull(row)
            ? ((TimeStampMicroTZVector) result).get(row) : get(result, row);
        assertRowClose(c, a, b, expected, actual, c.in() + " batch " + k + " row " + i + " (staged row " + row + ")");
      }
    }
    assertEquals(nulls, result.getNullCount());
    return runner.stats().dispatches() - dispatches;
  }

  @ParameterizedTest
  @EnumSource(value = SqlType.class, names = {"BOOLEAN", "INT", "DOUBLE", "DATE", "TIMESTAMP"})
  void append_oddSizesOverSeveralCalls_matchesCpu(SqlType type) {
    Case c = caseFor(type);
    Random r = new Random(100 + type.ordinal());
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(kernel(c), new int[] {0, 1})), List.of(type, type),
        8192, GPU.allocator())) {
      long batches = runner.stats().batches();
      // Small odd batches: every boundary off a 64-row word, all in one dispatch.
      assertEquals(1, appendAndCheck(runner, c, new int[] {1, 63, 65, 0, 7, 130, 1000, 3}, -1, 0.1, r),
          "small appended batches share one dispatch");
      assertEquals(batches + 1, runner.stats().batches(), "one results() is one batch");
      assertEquals(1 + 63 + 65 + 7 + 130 + 1000 + 3, runner.stats().rows());
      // An early dispatch() in the middle: later rows are read back behind it, off a word boundary.
      assertEquals(2, appendAndCheck(runner, c, new int[] {100, 27, 333, 1}, 1, 0.2, r));
      // Without nulls, then all null.
      appendAndCheck(runner, c, new int[] {5, 77, 1}, -1, 0, r);
      appendAndCheck(runner, c, new int[] {70, 3}, -1, 1.0, r);
      // run() after appends still gives one batch.
      runAndCheck(runner, c, 999, 0.1, r);
    }
  }

  @ParameterizedTest
  @EnumSource(value = SqlType.class, names = {"BOOLEAN", "FLOAT", "BIGINT"})
  void append_moreRowsThanOneBufferHolds_dispatchesAsItFills(SqlType type) {
    Case c = caseFor(type);
    Random r = new Random(200 + type.ordinal());
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(kernel(c), new int[] {0, 1})), List.of(type, type),
        1000, GPU.allocator())) {
      assertEquals(1024, runner.capacity());
      int[] sizes = {700, 1, 513, 1500, 95, 2100, 33};
      int total = java.util.Arrays.stream(sizes).sum();
      long dispatches = appendAndCheck(runner, c, sizes, -1, 0.15, r);
      assertEquals((total + 1023) / 1024, dispatches, "full buffers are dispatched as they fill, the rest once");
      assertTrue(runner.currentCapacity() <= 1024);
      // And again on the same runner: slots and buffers reused, results identical to the CPU.
      appendAndCheck(runner, c, new int[] {1023, 2, 1024, 64, 1}, 2, 0.15, r);
    }
  }

  /**
   * Child batches appended one by one (a coalesced batch that goes straight to the GPU): the first
   * small buffer set does not cap the runner; the buffers grow with the batch (a dispatch per
   * growth), and the next batch of the same size takes one dispatch, not one per child batch.
   */
  @Test
  void append_smallBatchesFirst_buffersGrowToTheCapacity_thenOneDispatchPerBatch() {
    Case c = caseFor(SqlType.INT);
    Random r = new Random(23);
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(kernel(c), new int[] {0, 1})),
        List.of(SqlType.INT, SqlType.INT), 65536, GPU.allocator())) {
      int[] sizes = new int[10];
      java.util.Arrays.fill(sizes, 4096);
      // 4,096 rows, then growth to 8,192, 16,384, 32,768 and 65,536 rows, each dispatching what it held; then the rest
      assertEquals(5, appendAndCheck(runner, c, sizes, -1, 0.1, r), "a dispatch per growth, not per appended batch");
      assertEquals(65536, runner.capacity(), "the first, small set did not lower the ceiling");
      assertEquals(1, appendAndCheck(runner, c, sizes, -1, 0.1, r), "grown: the whole batch in one dispatch");
    }
  }

  @Test
  void append_refusedColumns_leaveTheStagedRowsAsTheyWere() {
    Case c = caseFor(SqlType.INT);
    Random r = new Random(17);
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(kernel(c), new int[] {0, 1})),
        List.of(SqlType.INT, SqlType.INT), 2048, GPU.allocator());
         FieldVector d = vector(SqlType.DOUBLE, new Object[] {1.0}, "d")) {
      appendAndCheck(runner, c, new int[] {10}, 0, 0, r); // a dispatched batch first
      try (FieldVector va = vector(SqlType.INT, new Object[] {1, null, 3}, "a");
           FieldVector vb = vector(SqlType.INT, new Object[] {4, 5, 6}, "b")) {
        runner.append(List.of(ArrowInputs.of(va, SqlType.INT), ArrowInputs.of(vb, SqlType.INT)), 3);
      }
      assertEquals(3, runner.stagedRows());
      assertThrows(GpuException.class, () -> runner.append(List.of(ArrowInputs.of(d, SqlType.DOUBLE)), 1));
      assertEquals(3, runner.stagedRows(), "a refused append changes nothing");
      FieldVector out = runner.results().get(0);
      assertEquals(3, out.getValueCount());
      assertEquals(7, get(out, 0));
      assertNull(get(out, 1));
      assertEquals(15, get(out, 2));
      assertEquals(1, out.getNullCount());
      appendAndCheck(runner, c, new int[] {5, 64}, -1, 0.3, r);
    }
  }

  @Test
  void wrongInputs_areRefusedWithFix() {
    Case c = caseFor(SqlType.INT);
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(kernel(c), new int[] {0, 1})),
        List.of(SqlType.INT, SqlType.INT), 64, GPU.allocator());
         FieldVector d = vector(SqlType.DOUBLE, new Object[] {1.0}, "d")) {
      GpuException e = assertThrows(GpuException.class, () -> runner.run(List.of(ArrowInputs.of(d, SqlType.DOUBLE)), 1));
      assertTrue(e.getMessage().contains("batch has 1 columns but the runner expects 2"), e.getMessage());
      e = assertThrows(GpuException.class, () -> ArrowInputs.of(d, SqlType.INT));
      assertTrue(e.getMessage().contains("has type FloatingPoint(DOUBLE) but the GPU UDF argument is int"), e.getMessage());
    }
  }
}
