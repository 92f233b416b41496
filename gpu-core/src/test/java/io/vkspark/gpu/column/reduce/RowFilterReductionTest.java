package io.vkspark.gpu.column.reduce;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
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
import io.vkspark.gpu.column.reduce.ColumnReduction.Result;
import io.vkspark.gpu.column.reduce.DeviceExpr.CompareOp;
import io.vkspark.gpu.column.reduce.DeviceExpr.Input;
import io.vkspark.gpu.column.reduce.DeviceExpr.Literal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.TreeMap;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A reduction's row filter ({@link ColumnReduction#filtered}) over input columns no call reads,
 * against Java's three-valued evaluation of the same filter per row (Spark's: NaN is the largest
 * double and equal to itself, {@code -0.0 = 0.0}, a null comparison drops the row): the aggregates of
 * the rows kept, exactly (integers) or within summation order (doubles), and the count of rows
 * dropped; ungrouped over batches appended at odd offsets and split over dispatches, and grouped by
 * a key the device computes. Nulls and NaN in every filtered column.
 */
final class RowFilterReductionTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  private static final List<Aggregate> AGGS = List.of(new Aggregate(Function.SUM, 0), new Aggregate(Function.SUM, 1),
      new Aggregate(Function.MAX, 1), new Aggregate(Function.COUNT, -1), new Aggregate(Function.MIN, 0));
  private static final List<SqlType> CALL_TYPES = List.of(SqlType.DOUBLE, SqlType.BIGINT);
  /** Runner inputs: x (double, call 0), v (bigint, call 1), then the filter's t (double), n (int), p (boolean), d (date). */
  private static final List<SqlType> INPUTS = List.of(SqlType.DOUBLE, SqlType.BIGINT, SqlType.DOUBLE, SqlType.INT,
      SqlType.BOOLEAN, SqlType.DATE);
  private static final Input T = new Input(2, SqlType.DOUBLE);
  private static final Input N = new Input(3, SqlType.INT);
  private static final Input P = new Input(4, SqlType.BOOLEAN);
  private static final Input D = new Input(5, SqlType.DATE);

  private static List<KernelCall> calls() {
    ColumnKernel d = ColumnKernel.compile(KernelSignature.of("half", SqlType.DOUBLE, arg("x", SqlType.DOUBLE)), "x * 0.5");
    ColumnKernel l = ColumnKernel.compile(KernelSignature.of("idl", SqlType.BIGINT, arg("k", SqlType.BIGINT)), "k");
    return List.of(new KernelCall(d, new int[] {0}), new KernelCall(l, new int[] {1}));
  }

  private static DeviceExpr cmp(CompareOp op, DeviceExpr a, DeviceExpr b) {
    return new DeviceExpr.Compare(op, a, b);
  }

  private static DeviceExpr and(DeviceExpr a, DeviceExpr b) {
    return new DeviceExpr.Logic(false, a, b);
  }

  private static DeviceExpr or(DeviceExpr a, DeviceExpr b) {
    return new DeviceExpr.Logic(true, a, b);
  }

  /** The filters: comparisons with literals (NaN too), IS NULL, NOT, IN with a null, booleans and dates. */
  private static List<DeviceExpr> filters() {
    DeviceExpr inThreeOrNull = or(cmp(CompareOp.EQ, N, new Literal(SqlType.INT, 3)), cmp(CompareOp.EQ, N, Literal.nullOf(SqlType.INT)));
    return List.of(
        and(cmp(CompareOp.GT, T, new Literal(SqlType.DOUBLE, 0.5)), new DeviceExpr.Not(cmp(CompareOp.EQ, N, new Literal(SqlType.INT, 7)))),
        cmp(CompareOp.EQ, T, new Literal(SqlType.DOUBLE, Double.NaN)),
        cmp(CompareOp.LE, T, new Literal(SqlType.DOUBLE, -0.0)),
        or(new DeviceExpr.Not(P), cmp(CompareOp.GE, D, new Literal(SqlType.INT, 19_000))),
        or(new DeviceExpr.IsNull(N, false), inThreeOrNull),
        new DeviceExpr.Not(inThreeOrNull),
        new DeviceExpr.IsNull(T, true),
        cmp(CompareOp.GT, N, new Literal(SqlType.INT, 100))); // keeps nothing
  }

  /** The rows of one test: x, v (the calls' arguments) and t, n, p, d (the filter's), with nulls, NaN and signed zeros. */
  private record Rows(Double[] x, Long[] v, Double[] t, Integer[] n, Boolean[] p, Integer[] d) {
    static Rows random(int rows, long seed) {
      Random r = new Random(seed);
      Rows out = new Rows(new Double[rows], new Long[rows], new Double[rows], new Integer[rows], new Boolean[rows],
          new Integer[rows]);
      for (int i = 0; i < rows; i++) {
        out.x[i] = r.nextInt(9) == 0 ? null : (r.nextDouble() - 0.5) * 1000;
        out.v[i] = r.nextInt(11) == 0 ? null : r.nextLong() >> r.nextInt(40);
        int c = r.nextInt(20);
        out.t[i] = c == 0 ? null : c == 1 ? Double.NaN : c == 2 ? -0.0 : c == 3 ? 0.0 : (r.nextDouble() - 0.5) * 2;
        out.n[i] = r.nextInt(8) == 0 ? null : r.nextInt(10);
        out.p[i] = r.nextInt(7) == 0 ? null : r.nextBoolean();
        out.d[i] = r.nextInt(6) == 0 ? null : 18_900 + r.nextInt(200);
      }
      return out;
    }

    /** Arrow vectors of rows {@code [from, to)}, in runner input order. */
    List<FieldVector> vectors(int from, int to, BufferAllocator a) {
      int n = to - from;
      Float8Vector xv = new Float8Vector("x", a);
      BigIntVector vv = new BigIntVector("v", a);
      Float8Vector tv = new Float8Vector("t", a);
      IntVector nv = new IntVector("n", a);
      BitVector pv = new BitVector("p", a);
      DateDayVector dv = new DateDayVector("d", a);
      List<FieldVector> all = List.of(xv, vv, tv, nv, pv, dv);
      all.forEach(f -> f.setInitialCapacity(n));
      all.forEach(FieldVector::allocateNew);
      for (int i = 0; i < n; i++) {
        int r = from + i;
        if (x[r] != null) xv.setSafe(i, x[r]);
        if (v[r] != null) vv.setSafe(i, v[r]);
        if (t[r] != null) tv.setSafe(i, t[r]);
        if (this.n[r] != null) nv.setSafe(i, this.n[r]);
        if (p[r] != null) pv.setSafe(i, p[r] ? 1 : 0);
        if (d[r] != null) dv.setSafe(i, d[r]);
      }
      all.forEach(f -> f.setValueCount(n));
      return all;
    }

    /** Java's value of {@code e} in row {@code r} (null: SQL NULL), Spark's semantics. */
    Object eval(DeviceExpr e, int r) {
      if (e instanceof Input in) {
        return switch (in.column()) {
          case 2 -> t[r];
          case 3 -> n[r];
          case 4 -> p[r];
          case 5 -> d[r];
          default -> throw new IllegalArgumentException(e.toString());
        };
      }
      if (e instanceof Literal l) {
        return l.value();
      }
      if (e instanceof DeviceExpr.IsNull i) {
        return (eval(i.child(), r) == null) != i.negated();
      }
      if (e instanceof DeviceExpr.Not no) {
        Object b = eval(no.child(), r);
        return b == null ? null : !(Boolean) b;
      }
      if (e instanceof DeviceExpr.Logic g) {
        Object a = eval(g.left(), r);
        Object b = eval(g.right(), r);
        boolean decides = g.or();
        if (Objects.equals(a, decides) || Objects.equals(b, decides)) {
          return decides;
        }
        return a == null || b == null ? null : !decides;
      }
      if (e instanceof DeviceExpr.Compare c) {
        Object a = eval(c.left(), r);
        Object b = eval(c.right(), r);
        if (a == null || b == null) {
          return null;
        }
        // Spark's SQLOrderingUtil.compareDoubles: x == y (so -0.0 == 0.0), else Double.compare (NaN largest, equal to itself)
        int k = a instanceof Double x ? (x.doubleValue() == (Double) b ? 0 : Double.compare(x, (Double) b))
            : Integer.compare((Integer) a, (Integer) b);
        return switch (c.op()) {
          case EQ, EQ_NULL_SAFE -> k == 0;
          case LT -> k < 0;
          case LE -> k <= 0;
          case GT -> k > 0;
          case GE -> k >= 0;
        };
      }
      throw new IllegalArgumentException(e.toString());
    }

    boolean kept(DeviceExpr filter, int r) {
      return Boolean.TRUE.equals(eval(filter, r));
    }
  }

  /** Checks one batch's values against Spark's fold of the kept rows {@code in}. */
  private static void checkValues(List<ColumnReduction.Value> got, List<Integer> in, Rows rows, String what) {
    List<Object> xs = in.stream().map(i -> (Object) (rows.x()[i] == null ? null : rows.x()[i] * 0.5)).toList();
    List<Object> vs = in.stream().map(i -> (Object) rows.v()[i]).toList();
    double magnitude = xs.stream().filter(Objects::nonNull).mapToDouble(o -> Math.abs((Double) o)).sum();
    assertEquals(SparkFold.of(Function.SUM, SqlType.DOUBLE, xs).count(), got.get(0).count(), what + ": non-null x");
    assertEquals(SparkFold.of(Function.SUM, SqlType.DOUBLE, xs).floating(), got.get(0).floating(), 1e-12 * magnitude,
        what + ": sum of doubles");
    assertEquals(SparkFold.of(Function.SUM, SqlType.BIGINT, vs), got.get(1), what + ": sum of bigints");
    assertEquals(SparkFold.of(Function.MAX, SqlType.BIGINT, vs), got.get(2), what + ": max");
    assertEquals(in.size(), got.get(3).count(), what + ": COUNT(*)");
    assertEquals(SparkFold.of(Function.MIN, SqlType.DOUBLE, xs), got.get(4), what + ": min");
  }

  private static List<InputColumn> inputs(List<FieldVector> vectors) {
    List<InputColumn> out = new ArrayList<>();
    for (int c = 0; c < vectors.size(); c++) {
      out.add(ArrowInputs.of(vectors.get(c), INPUTS.get(c)));
    }
    return out;
  }

  @Test
  void ungrouped_keepsExactlyTheRowsJavaKeeps_overAppendedBatchesAndSeveralDispatches() {
    Rows rows = Rows.random(2051, 7);
    for (DeviceExpr f : filters()) {
      ColumnReduction r = ColumnReduction.of(AGGS, CALL_TYPES).filtered(f);
      assertArrayEquals(DeviceExpr.inputs(f).stream().mapToInt(Integer::intValue).toArray(), r.filterInputs());
      List<FieldVector> first = rows.vectors(0, 100, GPU.allocator());
      List<FieldVector> rest = rows.vectors(100, 2051, GPU.allocator());
      try (BatchRunner runner = GPU.runtime().runner(calls(), INPUTS, 1024, GPU.allocator(), r)) {
        runner.append(inputs(first), 100); // behind it, the rest lands at row 100: off a 64-row boundary
        Result got = runner.runReduced(inputs(rest), 1951);
        List<Integer> kept = new ArrayList<>();
        for (int i = 0; i < 2051; i++) {
          if (rows.kept(f, i)) {
            kept.add(i);
          }
        }
        assertEquals(2051, got.rows());
        assertEquals(2051 - kept.size(), got.filtered(), f + ": rows dropped");
        assertEquals(AGGS.size(), got.values().size());
        checkValues(got.values(), kept, rows, f.toString());
        Result none = runner.runReduced(inputs(rest), 0); // an empty batch: no row kept or dropped
        assertEquals(0, none.rows());
        assertEquals(0, none.filtered());
        assertEquals(0, none.values().get(3).count());
      } finally {
        first.forEach(FieldVector::close);
        rest.forEach(FieldVector::close);
      }
    }
  }

  @Test
  void grouped_keepsEachKeysRows_andTheDroppedRowsFormNoGroup() {
    Rows rows = Rows.random(2051, 11);
    GroupKey key = GroupKey.ofInput(1, SqlType.BIGINT, new DeviceExpr.Remainder(new DeviceExpr.KeySource(SqlType.BIGINT), 5, true));
    for (DeviceExpr f : filters()) {
      ColumnReduction r = ColumnReduction.grouped(AGGS, CALL_TYPES, key, ColumnReduction.DEFAULT_SLOTS).filtered(f);
      List<FieldVector> all = rows.vectors(0, 2051, GPU.allocator());
      try (BatchRunner runner = GPU.runtime().runner(calls(), INPUTS, 1024, GPU.allocator(), r)) {
        Grouped got = runner.runGrouped(inputs(all), 2051).orElseThrow();
        Map<Long, List<Integer>> byKey = new TreeMap<>();
        List<Integer> nullKeys = new ArrayList<>();
        long dropped = 0;
        for (int i = 0; i < 2051; i++) {
          if (!rows.kept(f, i)) {
            dropped++;
          } else if (rows.v()[i] == null) {
            nullKeys.add(i);
          } else {
            byKey.computeIfAbsent(Math.floorMod(rows.v()[i], 5L), k -> new ArrayList<>()).add(i);
          }
        }
        assertEquals(dropped, got.filtered(), f + ": rows dropped");
        List<Long> want = new ArrayList<>(byKey.keySet());
        if (!nullKeys.isEmpty()) {
          want.add(null);
        }
        assertEquals(want, got.groups().stream().map(g -> g.nullKey() ? null : g.key()).toList(), f + ": the keys");
        for (Group g : got.groups()) {
          List<Integer> in = g.nullKey() ? nullKeys : byKey.get(g.key());
          assertEquals(in.size(), g.rows(), f + ": rows of " + g.key());
          checkValues(g.values(), in, rows, f + " key " + g.key());
        }
      } finally {
        all.forEach(FieldVector::close);
      }
    }
  }

  @Test
  void filtered_refusesWhatIsNotABooleanOverInputs() {
    ColumnReduction r = ColumnReduction.of(AGGS, CALL_TYPES);
    GpuException notBoolean = assertThrows(GpuException.class, () -> r.filtered(T));
    assertEquals(GpuException.Code.INVALID_ARGUMENT, notBoolean.code());
    GpuException call = assertThrows(GpuException.class, () -> r.filtered(cmp(CompareOp.GT, new DeviceExpr.Call(0), T)));
    assertTrue(call.getMessage().contains("no call result"), call.getMessage());
    assertThrows(GpuException.class, () -> new Input(0, SqlType.STRING));
  }
}
