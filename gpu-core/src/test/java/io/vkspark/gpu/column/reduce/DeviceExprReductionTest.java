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
import io.vkspark.gpu.column.ArithOp;
import io.vkspark.gpu.column.reduce.DeviceExpr.Arithmetic;
import io.vkspark.gpu.column.reduce.DeviceExpr.Call;
import io.vkspark.gpu.column.reduce.DeviceExpr.Cast;
import io.vkspark.gpu.column.reduce.DeviceExpr.Coalesce;
import io.vkspark.gpu.column.reduce.DeviceExpr.Compare;
import io.vkspark.gpu.column.reduce.DeviceExpr.CompareOp;
import io.vkspark.gpu.column.reduce.DeviceExpr.If;
import io.vkspark.gpu.column.reduce.DeviceExpr.IsNaN;
import io.vkspark.gpu.column.reduce.DeviceExpr.IsNull;
import io.vkspark.gpu.column.reduce.DeviceExpr.Literal;
import io.vkspark.gpu.column.reduce.DeviceExpr.Logic;
import io.vkspark.gpu.column.reduce.DeviceExpr.NaNvl;
import io.vkspark.gpu.column.reduce.DeviceExpr.Negate;
import io.vkspark.gpu.column.reduce.DeviceExpr.Not;
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

/**
 * Aggregates of {@link DeviceExpr}s over kernel results, reduced on the device (lavapipe,
 * validation on), against a sequential CPU reference that evaluates each expression in Java with
 * Spark's semantics (nulls three-valued, NaN ordered above everything and equal to itself,
 * {@code -0.0 = 0.0}, wrapping integers, Java's casts): counts, integer results and MIN/MAX bit for
 * bit, double sums within summation order.
 */
final class DeviceExprReductionTest {
  static final SqlType[] TYPES = {SqlType.DOUBLE, SqlType.FLOAT, SqlType.INT, SqlType.BIGINT};
  static final double[] SPECIAL = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 1.0,
      -1.0, 0.5, 3e9, -3e9, 1e19, -1e19, 2147483647.9, -2147483648.7};
  /**
   * Floats at and below the smallest normal (a device that flushes float32 subnormals would read
   * them as zeros), zeros of both signs, infinities and NaN: sums of them in double are exact.
   */
  static final float[] FLOAT_EDGES = {Float.MIN_VALUE, -Float.MIN_VALUE, 3 * Float.MIN_VALUE, Float.MIN_NORMAL,
      Float.intBitsToFloat(0x007fffff), -Float.intBitsToFloat(0x00400001), -Float.MIN_NORMAL, -0.0f, 0.0f,
      Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN};
  static final DeviceExpr D = new Call(0);
  static final DeviceExpr F = new Call(1);
  static final DeviceExpr I = new Call(2);
  static final DeviceExpr L = new Call(3);

  private static Literal d(double v) {
    return new Literal(SqlType.DOUBLE, v);
  }

  private static Literal i(int v) {
    return new Literal(SqlType.INT, v);
  }

  private static Literal l(long v) {
    return new Literal(SqlType.BIGINT, v);
  }

  private static Literal b(Boolean v) {
    return new Literal(SqlType.BOOLEAN, v);
  }

  private static DeviceExpr cmp(CompareOp op, DeviceExpr a, DeviceExpr b) {
    return new Compare(op, a, b);
  }

  private static DeviceExpr cast(DeviceExpr e, SqlType to) {
    return new Cast(e, to);
  }

  /** Boolean expressions: each aggregated as COUNT (non-null) and SUM(CAST(b AS INT)) (true). */
  private static List<DeviceExpr> booleans() {
    DeviceExpr fd = cast(F, SqlType.DOUBLE);
    List<DeviceExpr> out = new ArrayList<>();
    out.add(new If(cmp(CompareOp.EQ, new IsNaN(D), b(false)), b(null), new IsNaN(D))); // count_if's nullif
    out.add(new IsNaN(F));
    for (CompareOp op : CompareOp.values()) {
      out.add(cmp(op, D, fd)); // NaN = NaN, -0.0 = 0.0, nulls
      out.add(cmp(op, F, new Literal(SqlType.FLOAT, 0.5f)));
      out.add(cmp(op, I, i(0)));
      out.add(cmp(op, L, cast(I, SqlType.BIGINT)));
      out.add(cmp(op, new IsNaN(D), cmp(CompareOp.GT, I, i(0)))); // booleans: false < true
      out.add(cmp(op, D, d(Double.NaN)));
      out.add(cmp(op, D, d(0.0)));
      out.add(cmp(op, d(-0.0), D));
    }
    DeviceExpr p = cmp(CompareOp.LT, D, d(0.5));
    DeviceExpr q = cmp(CompareOp.GT, L, l(0));
    out.add(new Logic(false, p, q));
    out.add(new Logic(true, p, q));
    out.add(new Not(new Logic(false, p, new IsNull(I, true))));
    out.add(new Logic(true, new IsNull(F, false), b(null)));
    out.add(new Logic(false, b(null), q));
    out.add(cast(D, SqlType.BOOLEAN));
    out.add(cast(F, SqlType.BOOLEAN));
    out.add(cast(I, SqlType.BOOLEAN));
    out.add(cast(L, SqlType.BOOLEAN));
    return out;
  }

  /** Numeric expressions, each aggregated by every function. */
  private static List<DeviceExpr> numbers() {
    List<DeviceExpr> out = new ArrayList<>();
    out.add(new If(new IsNaN(D), d(0.0), D)); // the implied-volatility query's argument
    out.add(new Arithmetic(ArithOp.ADD, new Arithmetic(ArithOp.MULTIPLY, D, d(2.0)), d(1.0)));
    out.add(new Arithmetic(ArithOp.SUBTRACT, D, cast(F, SqlType.DOUBLE)));
    out.add(new Coalesce(List.of(D, d(-0.0))));
    out.add(new Coalesce(List.of(new Literal(SqlType.INT, null), I, i(7))));
    out.add(new NaNvl(D, d(-1.0)));
    out.add(new NaNvl(F, new Literal(SqlType.FLOAT, null)));
    out.add(new Negate(D));
    out.add(new Negate(I));
    out.add(new Negate(L));
    out.add(new Arithmetic(ArithOp.MULTIPLY, I, I)); // wraps
    out.add(new Arithmetic(ArithOp.ADD, new Arithmetic(ArithOp.MULTIPLY, cast(I, SqlType.BIGINT), L), L));
    out.add(new Arithmetic(ArithOp.SUBTRACT, i(Integer.MIN_VALUE), I));
    out.add(cast(L, SqlType.INT));
    out.add(cast(D, SqlType.INT));
    out.add(cast(D, SqlType.BIGINT));
    out.add(cast(F, SqlType.INT));
    out.add(cast(F, SqlType.BIGINT));
    out.add(cast(I, SqlType.FLOAT));
    out.add(cast(L, SqlType.FLOAT));
    out.add(cast(L, SqlType.DOUBLE));
    out.add(cast(cmp(CompareOp.GE, D, d(0.0)), SqlType.DOUBLE));
    out.add(cast(new IsNaN(D), SqlType.BIGINT));
    out.add(new If(cmp(CompareOp.LT, I, i(0)), L, new Literal(SqlType.BIGINT, null)));
    out.add(new If(b(null), F, new Literal(SqlType.FLOAT, 2.5f)));
    return out;
  }

  private static List<Aggregate> aggregates() {
    List<Aggregate> out = new ArrayList<>();
    for (DeviceExpr e : booleans()) {
      out.add(new Aggregate(Function.COUNT, e));
      out.add(new Aggregate(Function.SUM, cast(e, SqlType.INT)));
    }
    for (DeviceExpr e : numbers()) {
      for (Function f : Function.values()) {
        out.add(new Aggregate(f, e));
      }
    }
    return out;
  }

  // ---- the CPU reference: Spark's semantics in Java -------------------------------------------

  /** {@code e}'s value on a row (the calls' results, boxed; null for null). */
  static Object eval(DeviceExpr e, Object[] row) {
    if (e instanceof Call c) {
      return row[c.call()];
    } else if (e instanceof Literal x) {
      return x.value();
    } else if (e instanceof IsNaN n) {
      Object v = eval(n.child(), row);
      return v instanceof Double x ? x.isNaN() : v instanceof Float y && y.isNaN();
    } else if (e instanceof IsNull n) {
      return (eval(n.child(), row) == null) != n.negated();
    } else if (e instanceof Not n) {
      Object v = eval(n.child(), row);
      return v == null ? null : !(Boolean) v;
    } else if (e instanceof Logic g) {
      Boolean a = (Boolean) eval(g.left(), row);
      Boolean b = (Boolean) eval(g.right(), row);
      Boolean decide = g.or();
      if (decide.equals(a) || decide.equals(b)) {
        return decide;
      }
      return a == null || b == null ? null : !decide;
    } else if (e instanceof If f) {
      return Boolean.TRUE.equals(eval(f.condition(), row)) ? eval(f.then(), row) : eval(f.otherwise(), row);
    } else if (e instanceof Coalesce c) {
      for (DeviceExpr x : c.values()) {
        Object v = eval(x, row);
        if (v != null) {
          return v;
        }
      }
      return null;
    } else if (e instanceof NaNvl n) {
      Object v = eval(n.left(), row);
      boolean nan = v instanceof Double x ? x.isNaN() : v instanceof Float y && y.isNaN();
      return v == null ? null : nan ? eval(n.right(), row) : v;
    } else if (e instanceof Compare c) {
      Object a = eval(c.left(), row);
      Object b = eval(c.right(), row);
      if (c.op() == CompareOp.EQ_NULL_SAFE) {
        return a == null || b == null ? a == b : compare(a, b) == 0;
      }
      if (a == null || b == null) {
        return null;
      }
      int r = compare(a, b);
      return switch (c.op()) {
        case EQ, EQ_NULL_SAFE -> r == 0;
        case LT -> r < 0;
        case LE -> r <= 0;
        case GT -> r > 0;
        case GE -> r >= 0;
      };
    } else if (e instanceof Arithmetic r) {
      Object a = eval(r.left(), row);
      Object b = eval(r.right(), row);
      if (a == null || b == null) {
        return null;
      }
      if (a instanceof Integer x) {
        int y = (Integer) b;
        return switch (r.op()) { case ADD -> x + y; case SUBTRACT -> x - y; case MULTIPLY -> x * y; };
      } else if (a instanceof Long x) {
        long y = (Long) b;
        return switch (r.op()) { case ADD -> x + y; case SUBTRACT -> x - y; case MULTIPLY -> x * y; };
      }
      double x = (Double) a;
      double y = (Double) b;
      return switch (r.op()) { case ADD -> x + y; case SUBTRACT -> x - y; case MULTIPLY -> x * y; };
    } else if (e instanceof Negate n) {
      Object v = eval(n.child(), row);
      return v == null ? null : v instanceof Integer x ? (Object) (-x) : v instanceof Long y ? (Object) (-y)
          : v instanceof Float f ? (Object) (-f) : (Object) (-(Double) v);
    } else if (e instanceof Cast c) {
      Object v = eval(c.child(), row);
      return v == null ? null : cast(v, c.to());
    }
    throw new IllegalArgumentException(String.valueOf(e));
  }

  /** Spark's SQLOrderingUtil order (for doubles: {@code x == y ? 0 : Double.compare(x, y)}). */
  private static int compare(Object a, Object b) {
    if (a instanceof Double x) {
      double y = (Double) b;
      return x == y ? 0 : Double.compare(x, y);
    } else if (a instanceof Float x) {
      float y = (Float) b;
      return x == y ? 0 : Float.compare(x, y);
    } else if (a instanceof Boolean x) {
      return Boolean.compare(x, (Boolean) b);
    } else if (a instanceof Integer x) {
      return Integer.compare(x, (Integer) b);
    }
    return Long.compare((Long) a, (Long) b);
  }

  /** Spark's non-ANSI cast, which is Java's for these types. */
  private static Object cast(Object v, SqlType to) {
    if (v instanceof Boolean x) {
      int one = x ? 1 : 0;
      return switch (to) {
        case INT -> one; case BIGINT -> (long) one; case FLOAT -> (float) one; case DOUBLE -> (double) one;
        default -> x;
      };
    }
    Number n = (Number) v;
    return switch (to) {
      case BOOLEAN -> n instanceof Double d ? d != 0 : n instanceof Float f ? f != 0 : n.longValue() != 0;
      case INT -> n instanceof Double d ? (int) (double) d : n instanceof Float f ? (int) (float) f : n.intValue();
      case BIGINT -> n instanceof Double d ? (long) (double) d : n instanceof Float f ? (long) (float) f : n.longValue();
      case FLOAT -> n instanceof Long x ? (float) (long) x : n.floatValue();
      case DOUBLE -> n.doubleValue();
      default -> throw new IllegalArgumentException(String.valueOf(to));
    };
  }

  /** Spark's partial aggregate of one function over {@code xs} (null for null), in order. */
  private static Value reference(Function f, SqlType t, Object[] xs) {
    return SparkFold.of(f, t, java.util.Arrays.asList(xs));
  }

  // ---- batches ---------------------------------------------------------------------------------

  private static Object[][] batch(Random r, int rows, double nullRate) {
    Object[][] v = new Object[TYPES.length][rows];
    for (int i = 0; i < rows; i++) {
      boolean special = r.nextInt(3) == 0;
      double d = special ? SPECIAL[r.nextInt(SPECIAL.length)] : (r.nextDouble() - 0.3) * Math.pow(10, r.nextInt(7) - 3);
      v[0][i] = r.nextDouble() < nullRate ? null : d;
      v[1][i] = r.nextDouble() < nullRate ? null : r.nextInt(8) == 0 ? 0.5f
          : r.nextInt(8) == 0 ? FLOAT_EDGES[r.nextInt(FLOAT_EDGES.length)]
          : r.nextInt(4) == 0 ? (float) SPECIAL[r.nextInt(SPECIAL.length)] : (float) d;
      v[2][i] = r.nextDouble() < nullRate ? null : special ? (r.nextBoolean() ? Integer.MAX_VALUE : Integer.MIN_VALUE)
          : r.nextInt(5) == 0 ? r.nextInt(3) - 1 : r.nextInt();
      v[3][i] = r.nextDouble() < nullRate ? null : special ? (r.nextBoolean() ? Long.MAX_VALUE : Long.MIN_VALUE)
          : r.nextInt(5) == 0 ? (long) (Integer) (v[2][i] == null ? 0 : v[2][i]) : r.nextLong();
    }
    return v;
  }

  private static List<FieldVector> vectors(Object[][] v, int rows, BufferAllocator a) {
    Float8Vector d = new Float8Vector("d", a);
    Float4Vector f = new Float4Vector("f", a);
    IntVector i = new IntVector("i", a);
    BigIntVector l = new BigIntVector("l", a);
    d.allocateNew(rows);
    f.allocateNew(rows);
    i.allocateNew(rows);
    l.allocateNew(rows);
    for (int r = 0; r < rows; r++) {
      if (v[0][r] != null) d.set(r, (Double) v[0][r]);
      if (v[1][r] != null) f.set(r, (Float) v[1][r]);
      if (v[2][r] != null) i.set(r, (Integer) v[2][r]);
      if (v[3][r] != null) l.set(r, (Long) v[3][r]);
    }
    List<FieldVector> out = List.of(d, f, i, l);
    out.forEach(x -> x.setValueCount(rows));
    return out;
  }

  private static List<KernelCall> calls() {
    List<KernelCall> calls = new ArrayList<>();
    for (int c = 0; c < TYPES.length; c++) {
      KernelSignature sig = KernelSignature.of("id_" + TYPES[c].sqlName(), TYPES[c], arg("x", TYPES[c]));
      calls.add(new KernelCall(ColumnKernel.compile(sig, "x"), new int[] {c}));
    }
    return calls;
  }

  private static void check(List<Aggregate> aggs, Object[][] cols, int rows, ColumnReduction.Result got) {
    assertEquals(rows, got.rows());
    List<SqlType> types = List.of(TYPES);
    for (int k = 0; k < aggs.size(); k++) {
      Aggregate a = aggs.get(k);
      Object[] xs = new Object[rows];
      double magnitude = 0;
      for (int r = 0; r < rows; r++) {
        Object[] row = {cols[0][r], cols[1][r], cols[2][r], cols[3][r]};
        xs[r] = eval(a.argument(), row);
        magnitude += xs[r] instanceof Number n ? Math.abs(n.doubleValue()) : 0;
      }
      SqlType t = a.argument().type(types);
      Value want = reference(a.function(), t, xs);
      Value v = got.values().get(k);
      String what = a.function() + "(" + a.argument() + ") over " + rows + " rows";
      assertEquals(want.count(), v.count(), what + ": count");
      if (a.function() == Function.COUNT || v.isNull()) {
        continue;
      }
      assertEquals(want.integral(), v.integral(), what + ": integral value");
      boolean sum = a.function() == Function.SUM || a.function() == Function.AVG;
      if (sum && Double.isFinite(want.floating())) {
        double tol = ColumnReductionTest.RELATIVE * magnitude;
        assertEquals(want.floating(), v.floating(), tol, what + ": sum within " + tol);
      } else if (sum) {
        assertEquals(want.floating(), v.floating(), what + ": non-finite sum");
      } else {
        assertEquals(Double.doubleToLongBits(want.floating()), Double.doubleToLongBits(v.floating()),
            what + ": " + want.floating() + " vs " + v.floating() + " bit for bit");
      }
    }
  }

  @Test
  void expressions_matchSparkSemanticsReference_nullsNaNZerosInfinitiesAndWrapping() throws Exception {
    List<Aggregate> all = aggregates();
    ColumnGpu.onDevice(TransferMode.AUTO, (dev, rt, a) -> {
      for (int from = 0; from < all.size(); from += 40) { // several reductions: one shader for all would be too long
        List<Aggregate> aggs = all.subList(from, Math.min(all.size(), from + 40));
        ColumnReduction red = ColumnReduction.of(aggs, List.of(TYPES));
        assertTrue(red.unsupportedOn(dev.info()).isEmpty(), "lavapipe has float64 and int64");
        Random r = new Random(7 + from);
        try (BatchRunner runner = rt.runner(calls(), List.of(TYPES), 512, a, red)) {
          for (int rows : new int[] {0, 1, 63, 300, 513, 1500}) {
            for (double nullRate : new double[] {0.0, 0.3}) {
              Object[][] cols = batch(r, rows, nullRate);
              List<FieldVector> v = vectors(cols, rows, a);
              try {
                List<InputColumn> in = new ArrayList<>();
                for (int c = 0; c < TYPES.length; c++) {
                  in.add(ArrowInputs.of(v.get(c), TYPES[c]));
                }
                check(aggs, cols, rows, runner.runReduced(in, rows));
              } finally {
                v.forEach(FieldVector::close);
              }
            }
          }
        }
      }
      assertEquals(0, a.getAllocatedMemory(), "Arrow memory leaked");
    });
  }

  /**
   * Float results as Spark aggregates them: SUM and AVG in double of the widened floats, MIN/MAX,
   * negation, selection and comparison, directly and through expressions, bit for bit. The values
   * are subnormals (a device that widened with a float conversion and flushed them would give
   * zeros), zeros, infinities and NaN: every finite one a multiple of 2^-149 below 2^-125, so the
   * double sum is the same in any order, and the whole result is exact.
   */
  @Test
  void floatSubnormals_widenedExactly_sumsMinMaxBitForBit() throws Exception {
    List<SqlType> types = List.of(TYPES);
    List<Aggregate> aggs = new ArrayList<>();
    Literal minNormal = new Literal(SqlType.FLOAT, Float.MIN_NORMAL);
    for (DeviceExpr e : List.of(F, new Negate(F), cast(new Negate(F), SqlType.DOUBLE), new Coalesce(List.of(F, new Literal(SqlType.FLOAT, -0.0f))),
        new If(new IsNaN(F), new Literal(SqlType.FLOAT, 0f), F), new NaNvl(F, minNormal),
        new If(cmp(CompareOp.GT, F, minNormal), new Negate(F), F))) {
      for (Function f : Function.values()) {
        aggs.add(new Aggregate(f, e));
      }
    }
    aggs.add(new Aggregate(Function.COUNT, cmp(CompareOp.LT, F, new Literal(SqlType.FLOAT, Float.MIN_NORMAL))));
    ColumnGpu.onDevice(TransferMode.AUTO, (dev, rt, a) -> {
      ColumnReduction red = ColumnReduction.of(aggs, types);
      assertTrue(red.source().contains("vk_f2d(vk_v1[vk_row])") && !red.source().contains("double(vk_v1"),
          "a float result is widened from its bits, never by a conversion a flushing device may flush:\n" + red.source());
      Random r = new Random(11);
      try (BatchRunner runner = rt.runner(calls(), types, 512, a, red)) {
        for (int rows : new int[] {1, 77, 1300}) {
          Object[][] cols = batch(r, rows, 0.1);
          for (int i = 0; i < rows; i++) {
            cols[1][i] = cols[1][i] == null ? null : FLOAT_EDGES[r.nextInt(FLOAT_EDGES.length - (rows > 77 ? 3 : 0))];
          }
          List<FieldVector> v = vectors(cols, rows, a);
          try {
            List<InputColumn> in = new ArrayList<>();
            for (int c = 0; c < TYPES.length; c++) {
              in.add(ArrowInputs.of(v.get(c), TYPES[c]));
            }
            ColumnReduction.Result got = runner.runReduced(in, rows);
            check(aggs, cols, rows, got);
            for (int k = 0; k < aggs.size(); k++) {
              Aggregate g = aggs.get(k);
              Object[] xs = new Object[rows];
              for (int i = 0; i < rows; i++) {
                xs[i] = eval(g.argument(), new Object[] {cols[0][i], cols[1][i], cols[2][i], cols[3][i]});
              }
              Value want = reference(g.function(), g.argument().type(types), xs);
              assertEquals(Double.doubleToLongBits(want.floating()), Double.doubleToLongBits(got.values().get(k).floating()),
                  g + " over " + rows + " rows: " + want.floating() + " vs " + got.values().get(k).floating() + " bit for bit");
            }
          } finally {
            v.forEach(FieldVector::close);
          }
        }
      }
      assertEquals(0, a.getAllocatedMemory(), "Arrow memory leaked");
    });
  }

  @Test
  void of_refusesInexactOrIllTypedExpressions() {
    List<SqlType> types = List.of(TYPES);
    List<DeviceExpr> refused = List.of(
        new Arithmetic(ArithOp.ADD, F, F), // float arithmetic: subnormals may flush
        new Arithmetic(ArithOp.MULTIPLY, F, new Literal(SqlType.FLOAT, 2f)),
        new Negate(new IsNaN(F)),
        cast(D, SqlType.FLOAT),
        new Arithmetic(ArithOp.ADD, D, I), // operands of two types
        new IsNaN(I),
        new Call(4), // no such call
        new Not(D));
    for (DeviceExpr e : refused) {
      GpuException x = assertThrows(GpuException.class,
          () -> ColumnReduction.of(List.of(new Aggregate(Function.SUM, e)), types), e.toString());
      assertEquals(GpuException.Code.INVALID_ARGUMENT, x.code());
      assertTrue(x.getMessage().contains("Fix:"), x.getMessage());
    }
    GpuException x = assertThrows(GpuException.class,
        () -> ColumnReduction.of(List.of(new Aggregate(Function.SUM, new IsNaN(D))), types));
    assertTrue(x.getMessage().contains("aggregates a boolean"), x.getMessage());
    assertDoesNotThrow(() -> ColumnReduction.of(List.of(new Aggregate(Function.COUNT, new IsNaN(D))), types));
    assertThrows(GpuException.class, () -> new Literal(SqlType.DOUBLE, 1.0f));
    assertThrows(GpuException.class, () -> new Aggregate(Function.MAX, (DeviceExpr) null));
  }

  @Test
  void cacheKey_tellsLiteralsApart_andCallLeafIsTheOldAggregate() {
    List<SqlType> types = List.of(TYPES);
    ColumnReduction zero = ColumnReduction.of(List.of(new Aggregate(Function.MIN, new Coalesce(List.of(D, d(0.0))))), types);
    ColumnReduction negZero = ColumnReduction.of(List.of(new Aggregate(Function.MIN, new Coalesce(List.of(D, d(-0.0))))), types);
    assertNotSame(zero, negZero);
    assertNotEquals(zero.id(), negZero.id(), "-0.0 and 0.0 literals compile to different shaders");
    assertSame(zero, ColumnReduction.of(List.of(new Aggregate(Function.MIN, new Coalesce(List.of(D, d(0.0))))), types));
    assertEquals(new Aggregate(Function.SUM, 2), new Aggregate(Function.SUM, new Call(2)));
    assertEquals(2, new Aggregate(Function.SUM, 2).call());
    assertEquals(-1, new Aggregate(Function.SUM, new Negate(I)).call(), "an expression reads no call as is");
    assertEquals(-1, new Aggregate(Function.COUNT, -1).call());
    String ints = ColumnReduction.of(List.of(new Aggregate(Function.MAX, new Arithmetic(ArithOp.ADD, I,
        cast(cmp(CompareOp.LT, L, l(0)), SqlType.INT)))), types).source();
    assertFalse(ints.contains("double"), "an integer expression needs no 64-bit floats:\n" + ints);
    assertArrayEquals(new int[] {0, 3}, ColumnReduction.of(List.of(new Aggregate(Function.SUM,
        new If(new IsNaN(D), L, l(1)))), types).passes().reads());
  }
}
