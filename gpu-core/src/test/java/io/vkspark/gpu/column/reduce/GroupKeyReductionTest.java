package io.vkspark.gpu.column.reduce;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.ArrowInputs;
import io.vkspark.gpu.column.BatchRunner;
import io.vkspark.gpu.column.ColumnGpu;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction.Aggregate;
import io.vkspark.gpu.column.reduce.ColumnReduction.Function;
import io.vkspark.gpu.column.reduce.ColumnReduction.Group;
import io.vkspark.gpu.column.reduce.ColumnReduction.Grouped;
import io.vkspark.gpu.column.reduce.DeviceExpr.ArithOp;
import io.vkspark.gpu.column.reduce.DeviceExpr.Arithmetic;
import io.vkspark.gpu.column.reduce.DeviceExpr.Cast;
import io.vkspark.gpu.column.reduce.DeviceExpr.Floor;
import io.vkspark.gpu.column.reduce.DeviceExpr.KeySource;
import io.vkspark.gpu.column.reduce.DeviceExpr.Literal;
import io.vkspark.gpu.column.reduce.DeviceExpr.Remainder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Grouping keys the device computes ({@link GroupKey}) against Java's own arithmetic per row: Java's
 * {@code %} (the sign of the dividend, {@code MIN % -1}), Spark's {@code pmod}, {@code + - *} by
 * literals, narrowing casts, {@code floor} of a double and a key over a call's result; null keys as
 * their own group. The aggregates (a double sum, a bigint sum and max, COUNT(*)) per key exactly (the
 * integers) or within summation order (the double). Bounded keys reduce without reading a value on
 * the host, even over sources spanning every long.
 */
final class GroupKeyReductionTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  private static final KeySource LONG = new KeySource(SqlType.BIGINT);
  private static final List<Aggregate> AGGS = List.of(new Aggregate(Function.SUM, 0), new Aggregate(Function.SUM, 1),
      new Aggregate(Function.MAX, 1), new Aggregate(Function.COUNT, -1));
  private static final List<SqlType> CALL_TYPES = List.of(SqlType.DOUBLE, SqlType.BIGINT);

  private static List<KernelCall> calls() {
    ColumnKernel d = ColumnKernel.compile(KernelSignature.of("half", SqlType.DOUBLE, arg("x", SqlType.DOUBLE)), "x * 0.5");
    ColumnKernel l = ColumnKernel.compile(KernelSignature.of("idl", SqlType.BIGINT, arg("k", SqlType.BIGINT)), "k");
    return List.of(new KernelCall(d, new int[] {0}), new KernelCall(l, new int[] {1}));
  }

  /** Java's value of a key expression over one source value (null: null). */
  static Long java(DeviceExpr e, Object source) {
    Object v = eval(e, source);
    return v == null ? null : ((Number) v).longValue();
  }

  private static Object eval(DeviceExpr e, Object src) {
    if (e instanceof KeySource) {
      return src;
    }
    if (e instanceof Literal l) {
      return l.value();
    }
    if (e instanceof Remainder r) {
      Object x = eval(r.child(), src);
      if (x == null) {
        return null;
      }
      if (x instanceof Integer i) {
        int c = (int) r.divisor();
        int m = i % c;
        return r.positive() && m < 0 ? (m + c) % c : m;
      }
      long c = r.divisor();
      long m = (Long) x % c;
      return r.positive() && m < 0 ? (m + c) % c : m;
    }
    if (e instanceof DeviceExpr.Negate n) {
      Object x = eval(n.child(), src);
      return x == null ? null : x instanceof Integer i ? (Object) (-i) : x instanceof Long l ? (Object) (-l) : (Object) (-(Double) x);
    }
    if (e instanceof Floor f) {
      Object x = eval(f.child(), src);
      return x == null ? null : Math.floor((Double) x);
    }
    if (e instanceof Arithmetic a) {
      Object x = eval(a.left(), src);
      Object y = eval(a.right(), src);
      if (x == null || y == null) {
        return null;
      }
      if (x instanceof Double dx) {
        double dy = (Double) y;
        return a.op() == ArithOp.ADD ? dx + dy : a.op() == ArithOp.SUBTRACT ? dx - dy : dx * dy;
      }
      if (x instanceof Integer ix) {
        int iy = (Integer) y;
        return a.op() == ArithOp.ADD ? ix + iy : a.op() == ArithOp.SUBTRACT ? ix - iy : ix * iy;
      }
      long lx = (Long) x;
      long ly = (Long) y;
      return a.op() == ArithOp.ADD ? lx + ly : a.op() == ArithOp.SUBTRACT ? lx - ly : lx * ly;
    }
    if (e instanceof Cast c) {
      Object x = eval(c.child(), src);
      if (x == null) {
        return null;
      }
      return switch (c.to()) {
        case INT -> x instanceof Double d ? (Object) (int) (double) d : (Object) ((Number) x).intValue();
        case BIGINT -> x instanceof Double d ? (Object) (long) (double) d : (Object) ((Number) x).longValue();
        case DOUBLE -> ((Number) x).doubleValue();
        default -> throw new IllegalArgumentException(c.toString());
      };
    }
    throw new IllegalArgumentException(e.toString());
  }

  /** Runs {@code keyExpr} over source column 2 (bigint {@code keys}, or doubles) and checks every group. */
  private static void check(BatchRunner runner, GroupKey key, Object[] sources, SqlType sourceType, BufferAllocator a) {
    int rows = sources.length;
    Random r = new Random(rows);
    Double[] x = new Double[rows];
    Long[] v = new Long[rows];
    for (int i = 0; i < rows; i++) {
      x[i] = r.nextInt(9) == 0 ? null : (r.nextDouble() - 0.5) * 1000;
      v[i] = r.nextInt(11) == 0 ? null : r.nextInt(5) == 0 ? (r.nextBoolean() ? Long.MAX_VALUE : Long.MIN_VALUE) : r.nextLong();
    }
    try (Float8Vector xv = new Float8Vector("x", a); BigIntVector vv = new BigIntVector("v", a);
         Float8Vector dk = new Float8Vector("dk", a); BigIntVector lk = new BigIntVector("lk", a)) {
      xv.allocateNew(rows);
      vv.allocateNew(rows);
      dk.allocateNew(rows);
      lk.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        if (x[i] != null) xv.set(i, x[i]);
        if (v[i] != null) vv.set(i, v[i]);
        if (sources[i] instanceof Double d) dk.set(i, d);
        if (sources[i] instanceof Long l) lk.set(i, l);
      }
      for (var vec : List.of(xv, vv, dk, lk)) {
        vec.setValueCount(rows);
      }
      var keyVector = sourceType == SqlType.DOUBLE ? dk : lk;
      Grouped got = runner.runGrouped(List.of(ArrowInputs.of(xv, SqlType.DOUBLE), ArrowInputs.of(vv, SqlType.BIGINT),
          ArrowInputs.of(keyVector, sourceType)), rows).orElseThrow(() -> new AssertionError(key + " was not admitted"));
      // the reference: Java's key per row, then Spark's fold of each group's rows in row order
      Map<Long, List<Integer>> byKey = new TreeMap<>();
      List<Integer> nullRows = new ArrayList<>();
      for (int i = 0; i < rows; i++) {
        Long k = java(key.expr(), sources[i]);
        (k == null ? nullRows : byKey.computeIfAbsent(k, z -> new ArrayList<>())).add(i);
      }
      List<Long> wantKeys = new ArrayList<>(byKey.keySet());
      if (!nullRows.isEmpty()) {
        wantKeys.add(null);
      }
      assertEquals(wantKeys, got.groups().stream().map(g -> g.nullKey() ? null : g.key()).toList(), key + ": the keys");
      for (Group g : got.groups()) {
        List<Integer> in = g.nullKey() ? nullRows : byKey.get(g.key());
        assertEquals(in.size(), g.rows(), key + ": rows of " + g.key());
        List<Object> xs = in.stream().map(i -> (Object) (x[i] == null ? null : x[i] * 0.5)).toList();
        List<Object> vs = in.stream().map(i -> (Object) v[i]).toList();
        double magnitude = xs.stream().filter(Objects::nonNull).mapToDouble(o -> Math.abs((Double) o)).sum();
        assertEquals(SparkFold.of(Function.SUM, SqlType.DOUBLE, xs).floating(), g.values().get(0).floating(),
            1e-12 * magnitude, key + ": sum of doubles for " + g.key());
        assertEquals(SparkFold.of(Function.SUM, SqlType.BIGINT, vs), g.values().get(1), key + ": sum of bigints");
        assertEquals(SparkFold.of(Function.MAX, SqlType.BIGINT, vs), g.values().get(2), key + ": max");
        assertEquals(in.size(), g.values().get(3).count(), key + ": COUNT(*)");
      }
    }
  }

  private static BatchRunner runner(GroupKey key, SqlType sourceType, int capacity) {
    return GPU.runtime().runner(calls(), List.of(SqlType.DOUBLE, SqlType.BIGINT, sourceType), capacity, GPU.allocator(),
        ColumnReduction.grouped(AGGS, CALL_TYPES, key, ColumnReduction.DEFAULT_SLOTS));
  }

  /** Sources spanning every long (so only a key the expression bounds reduces), nulls among them. */
  private static Object[] wideLongs(int rows, long seed) {
    Random r = new Random(seed);
    Object[] out = new Object[rows];
    for (int i = 0; i < rows; i++) {
      out[i] = r.nextInt(13) == 0 ? null : r.nextInt(7) == 0 ? (Object) (r.nextBoolean() ? Long.MIN_VALUE : Long.MAX_VALUE)
          : (Object) (r.nextLong() >> r.nextInt(60));
    }
    return out;
  }

  @Test
  void boundedKeys_overEveryLong_matchJavaPerRow() throws Exception {
    List<GroupKey> keys = List.of(
        GroupKey.ofInput(2, SqlType.BIGINT, new Remainder(new Cast(LONG, SqlType.INT), 9, false)),
        GroupKey.ofInput(2, SqlType.BIGINT, new Cast(new Remainder(new Cast(LONG, SqlType.INT), 9, false), SqlType.BIGINT)),
        GroupKey.ofInput(2, SqlType.BIGINT, new Remainder(LONG, 7, false)),
        GroupKey.ofInput(2, SqlType.BIGINT, new Remainder(LONG, -16, false)),
        GroupKey.ofInput(2, SqlType.BIGINT, new Remainder(LONG, 5, true)),
        GroupKey.ofInput(2, SqlType.BIGINT, new Remainder(LONG, -6, true)),
        GroupKey.ofInput(2, SqlType.BIGINT, new Cast(new Remainder(LONG, 16, false), SqlType.INT)),
        GroupKey.ofInput(2, SqlType.BIGINT, new Remainder(new Cast(LONG, SqlType.INT), 9, true)),
        GroupKey.ofInput(2, SqlType.BIGINT, new Arithmetic(ArithOp.ADD, new Remainder(LONG, 4, true),
            new Literal(SqlType.BIGINT, 100L))));
    for (GroupKey key : keys) {
      assertTrue(key.staticRange().values() <= 31, key + " is bounded by its expression");
      // 2,051 rows in dispatches of 1,024: each dispatch folded into the batch's groups
      try (BatchRunner runner = runner(key, SqlType.BIGINT, 1024)) {
        for (int rows : new int[] {0, 1, 63, 2051}) {
          check(runner, key, wideLongs(rows, rows), SqlType.BIGINT, GPU.allocator());
        }
        assertEquals(0, runner.wideBatches(), key + ": no batch left to the caller");
      }
    }
  }

  @Test
  void unboundedKeys_rangeFromTheSourceValues_andTooWideLeftToTheCaller() throws Exception {
    GroupKey shifted = GroupKey.ofInput(2, SqlType.BIGINT, new Arithmetic(ArithOp.MULTIPLY,
        new Arithmetic(ArithOp.SUBTRACT, LONG, new Literal(SqlType.BIGINT, 3L)), new Literal(SqlType.BIGINT, -2L)));
    Object[] narrow = new Object[3000];
    Random r = new Random(5);
    for (int i = 0; i < narrow.length; i++) {
      narrow[i] = r.nextInt(10) == 0 ? null : (Object) (1_000_000_000_000L + r.nextInt(25));
    }
    try (BatchRunner runner = runner(shifted, SqlType.BIGINT, 4096)) {
      check(runner, shifted, narrow, SqlType.BIGINT, GPU.allocator());
      try (BigIntVector k = new BigIntVector("k", GPU.allocator()); Float8Vector x = new Float8Vector("x", GPU.allocator());
           BigIntVector v = new BigIntVector("v", GPU.allocator())) {
        k.allocateNew(100);
        x.allocateNew(100);
        v.allocateNew(100);
        for (int i = 0; i < 100; i++) {
          k.set(i, i * 1000L); // (k - 3) * -2 spans 200,000 values
        }
        k.setValueCount(100);
        x.setValueCount(100);
        v.setValueCount(100);
        Optional<Grouped> wide = runner.runGrouped(List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(v, SqlType.BIGINT),
            ArrowInputs.of(k, SqlType.BIGINT)), 100);
        assertTrue(wide.isEmpty(), "a range wider than the slots is left to the caller");
        assertEquals(1, runner.wideBatches());
      }
    }
    // floor of a double: CAST(floor(d * 0.25) AS BIGINT), NaN and -0.0 too (NaN is Java's (long) 0)
    GroupKey floor = GroupKey.ofInput(2, SqlType.DOUBLE, new Cast(new Floor(new Arithmetic(ArithOp.MULTIPLY,
        new KeySource(SqlType.DOUBLE), new Literal(SqlType.DOUBLE, 0.25))), SqlType.BIGINT));
    Object[] doubles = new Object[1500];
    for (int i = 0; i < doubles.length; i++) {
      int c = r.nextInt(40);
      doubles[i] = c == 0 ? null : c == 1 ? (Object) Double.NaN : c == 2 ? (Object) (-0.0) : (Object) ((r.nextDouble() - 0.5) * 80);
    }
    try (BatchRunner runner = runner(floor, SqlType.DOUBLE, 4096)) {
      check(runner, floor, doubles, SqlType.DOUBLE, GPU.allocator());
    }
  }

  @Test
  void keyOverACallResult_boundedByItsRemainder() throws Exception {
    // key pmod(idl(v), 6): computed from the second call's result on the device; null where v is
    ColumnReduction red = ColumnReduction.grouped(AGGS, CALL_TYPES,
        GroupKey.ofCall(1, SqlType.BIGINT, new Remainder(LONG, 6, true)), ColumnReduction.DEFAULT_SLOTS);
    try (BatchRunner runner = GPU.runtime().runner(calls(), List.of(SqlType.DOUBLE, SqlType.BIGINT), 1024, GPU.allocator(), red);
         Float8Vector x = new Float8Vector("x", GPU.allocator()); BigIntVector v = new BigIntVector("v", GPU.allocator())) {
      int rows = 3001;
      Random r = new Random(11);
      Long[] vs = new Long[rows];
      x.allocateNew(rows);
      v.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        x.set(i, i);
        vs[i] = r.nextInt(8) == 0 ? null : r.nextLong();
        if (vs[i] != null) {
          v.set(i, vs[i]);
        }
      }
      x.setValueCount(rows);
      v.setValueCount(rows);
      Grouped got = runner.runGrouped(List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(v, SqlType.BIGINT)), rows)
          .orElseThrow();
      Map<Long, long[]> want = new TreeMap<>(); // key -> rows, sum of v
      long nullRows = 0;
      for (int i = 0; i < rows; i++) {
        if (vs[i] == null) {
          nullRows++;
          continue;
        }
        long k = java(new Remainder(LONG, 6, true), vs[i]);
        long[] w = want.computeIfAbsent(k, z -> new long[2]);
        w[0]++;
        w[1] += vs[i];
      }
      assertEquals(want.size() + 1, got.groups().size(), "keys 0..5 and null");
      for (Group g : got.groups()) {
        if (g.nullKey()) {
          assertEquals(nullRows, g.rows());
          assertTrue(g.values().get(1).isNull(), "idl(null) is null");
        } else {
          assertEquals(want.get(g.key())[0], g.rows());
          assertEquals(want.get(g.key())[1], g.values().get(1).integral());
        }
      }
    }
  }

  /** {@code in}, knowing its bounds ({@code null}: not), counting the reads of its values. */
  private record Counted(io.vkspark.gpu.column.InputColumn in, KeyRange bounds, int[] reads) implements BoundedColumn {
    @Override
    public SqlType type() {
      return in.type();
    }

    @Override
    public int rows() {
      return in.rows();
    }

    @Override
    public void copyValues(int start, int count, long dst) {
      reads[0]++;
      in.copyValues(start, count, dst);
    }

    @Override
    public boolean hasNulls() {
      return in.hasNulls();
    }

    @Override
    public void andValidity(long dst, int rows) {
      in.andValidity(dst, rows);
    }
  }

  @Test
  void aSourceThatKnowsItsBounds_isNotReadOnTheHost_toRangeTheKey() throws Exception {
    GroupKey key = GroupKey.column(2, SqlType.BIGINT); // not bounded by an expression: ranged per batch
    int rows = 2000;
    try (BatchRunner runner = runner(key, SqlType.BIGINT, 4096);
         Float8Vector x = new Float8Vector("x", GPU.allocator()); BigIntVector v = new BigIntVector("v", GPU.allocator());
         BigIntVector k = new BigIntVector("k", GPU.allocator())) {
      x.allocateNew(rows);
      v.allocateNew(rows);
      k.allocateNew(rows);
      long[] sums = new long[10];
      for (int i = 0; i < rows; i++) {
        x.set(i, i);
        v.set(i, i);
        k.set(i, 5_000_000_000L + i % 10);
        sums[i % 10] += i;
      }
      x.setValueCount(rows);
      v.setValueCount(rows);
      k.setValueCount(rows);
      for (KeyRange bounds : new KeyRange[] {KeyRange.ofLongs(5_000_000_000L, 5_000_000_009L), null}) {
        int[] reads = {0};
        Grouped got = runner.runGrouped(List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(v, SqlType.BIGINT),
            new Counted(ArrowInputs.of(k, SqlType.BIGINT), bounds, reads)), rows).orElseThrow();
        assertEquals(bounds != null ? 1 : 2, reads[0], "the upload reads the key; ranging it reads it again unless bounded");
        assertEquals(10, got.groups().size());
        for (Group g : got.groups()) {
          assertEquals(sums[(int) (g.key() - 5_000_000_000L)], g.values().get(1).integral());
        }
      }
    }
  }

  @Test
  void keysTheDeviceCannotCompute_areRefused() {
    assertThrows(GpuException.class, () -> new Remainder(LONG, 0, false));
    assertThrows(GpuException.class, () -> ColumnReduction.grouped(AGGS, CALL_TYPES,
        GroupKey.ofInput(2, SqlType.BIGINT, new DeviceExpr.IsNull(LONG, false)), 64), "a boolean key");
    assertThrows(GpuException.class, () -> ColumnReduction.grouped(AGGS, CALL_TYPES,
        GroupKey.ofInput(2, SqlType.BIGINT, new Arithmetic(ArithOp.ADD, LONG, DeviceExpr.Literal.nullOf(SqlType.BIGINT))), 64),
        "a null literal would make non-null keys null");
    assertThrows(GpuException.class, () -> ColumnReduction.grouped(AGGS, CALL_TYPES,
        GroupKey.ofInput(2, SqlType.INT, LONG), 64), "a source read as another type");
    assertThrows(GpuException.class, () -> ColumnReduction.grouped(AGGS, CALL_TYPES,
        GroupKey.ofCall(0, SqlType.DOUBLE, new Floor(new KeySource(SqlType.DOUBLE))), 64), "a double key");
    assertThrows(GpuException.class, () -> ColumnReduction.grouped(AGGS, CALL_TYPES,
        GroupKey.ofCall(1, SqlType.INT, new Remainder(new KeySource(SqlType.INT), 3, false)), 64), "a call of another type");
  }
}
