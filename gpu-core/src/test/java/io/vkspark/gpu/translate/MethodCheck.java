package io.vkspark.gpu.translate;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.translate.MethodGenerator.P;
import io.vkspark.gpu.translate.MethodGenerator.Tolerance;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * One Java static method against its translation on the GPU: translate, compile the kernel, run it
 * over edge and random rows, and compare each row with the method invoked by reflection. Rows on
 * which Java throws (any runtime exception: the generated methods' ArithmeticException, a Scala
 * MatchError, ...) or returns null (a Scala {@code None}) are run apart: each such batch must fail with RECOMPUTE, and
 * the batch of the other rows must not.
 */
final class MethodCheck {
  /** Ordered-bits distance allowed for a transcendental double result. */
  static final long TRANSCENDENTAL_ULPS = Long.getLong("vkspark.translate.ulps", 16);
  private static final Object THROWS = new Object() {
    @Override
    public String toString() {
      return "<throws>";
    }
  };

  enum Kind { PASSED, REFUSED, FAILED }

  static {
    // the tests run as module io.vkspark.gpu, which does not read java.sql (java.sql.Timestamp rows) by itself
    ModuleLayer.boot().findModule("java.sql").ifPresent(m -> MethodCheck.class.getModule().addReads(m));
  }

  /** What became of one method: the refusal reason or the failure's full description. */
  record Outcome(Kind kind, String category, String detail, long translateNanos, long compileNanos, long runNanos) {}

  private final ColumnRuntime runtime;
  private final BufferAllocator allocator;
  private final Function<Method, Translation> translator;

  MethodCheck(ColumnRuntime runtime, BufferAllocator allocator, Function<Method, Translation> translator) {
    this.runtime = runtime;
    this.allocator = allocator;
    this.translator = translator;
  }

  /** The method's translation, compiled; or the outcome that ends its check. */
  record Prepared(Method method, Translation.Translated translated, ColumnKernel kernel, Outcome early,
                  long translateNanos, long compileNanos) {}

  Prepared prepare(Method m, List<P> params, P result, String source) {
    long t0 = System.nanoTime();
    Translation t;
    try {
      t = translator.apply(m);
    } catch (RuntimeException | Error e) {
      return new Prepared(m, null, null, fail("translate threw " + e.getClass().getSimpleName(), source,
          "JavaTranslator.translate threw " + stack(e)), System.nanoTime() - t0, 0);
    }
    long t1 = System.nanoTime();
    if (t instanceof Translation.Refused ref) {
      return new Prepared(m, null, null, new Outcome(Kind.REFUSED, ref.reason(), source, t1 - t0, 0, 0), t1 - t0, 0);
    }
    Translation.Translated tr = (Translation.Translated) t;
    List<SqlType> want = params.stream().map(p -> p.sql).toList();
    if (!tr.args().equals(want) || tr.result() != result.sql) {
      return new Prepared(m, tr, null, fail("wrong signature", source, "translated as " + tr.args() + " -> " + tr.result()
          + ", want " + want + " -> " + result.sql), t1 - t0, 0);
    }
    ColumnKernel k;
    try {
      k = ColumnKernel.compile(tr.spec((m.getDeclaringClass().getSimpleName() + "_" + m.getName()).toLowerCase()));
    } catch (RuntimeException e) {
      return new Prepared(m, tr, null, fail("kernel does not compile", source, e.getMessage() + "\n--- functions:\n"
          + tr.functions() + "\n--- body:\n" + tr.body()), t1 - t0, System.nanoTime() - t1);
    }
    return new Prepared(m, tr, k, null, t1 - t0, System.nanoTime() - t1);
  }

  private static String stack(Throwable e) {
    java.io.StringWriter w = new java.io.StringWriter();
    e.printStackTrace(new java.io.PrintWriter(w));
    String s = w.toString();
    return s.length() > 3000 ? s.substring(0, 3000) + " ..." : s;
  }

  private static Outcome fail(String category, String source, String detail) {
    return new Outcome(Kind.FAILED, category, "--- method:\n" + source + "--- " + detail, 0, 0, 0);
  }

  /** Runs a prepared method over {@code rows} rows drawn from {@code r}. */
  Outcome run(Prepared p, List<P> params, P result, Tolerance tol, String source, int rows, Random r) {
    if (p.early() != null) {
      return p.early();
    }
    long t0 = System.nanoTime();
    Object[][] cols = new Object[params.size()][rows];
    for (int c = 0; c < params.size(); c++) {
      for (int i = 0; i < rows; i++) {
        cols[c][i] = Values.value(params.get(c), r, i, c);
      }
    }
    Object[] java = new Object[rows];
    List<Integer> fine = new ArrayList<>();
    List<Integer> throwing = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      Object[] args = row(cols, i);
      try {
        try {
          java[i] = device(option(p.method().invoke(null, args)));
        } catch (ArithmeticException e) {
          java[i] = THROWS; // a date or timestamp Spark cannot hold: Spark's conversion throws too
        }
      } catch (InvocationTargetException e) {
        if (!(e.getCause() instanceof RuntimeException)) {
          throw new AssertionError("generated method " + p.method() + " threw " + e.getCause() + " on "
              + Arrays.toString(args) + ":\n" + source, e.getCause());
        }
        java[i] = THROWS;
      } catch (IllegalAccessException e) {
        throw new AssertionError(e);
      }
      (java[i] == null || java[i] == THROWS ? throwing : fine).add(i);
    }
    Outcome o = runRows(p, params, result, tol, source, cols, java, fine, throwing);
    long t1 = System.nanoTime();
    return o != null ? new Outcome(o.kind(), o.category(), o.detail(), p.translateNanos(), p.compileNanos(), t1 - t0)
        : new Outcome(Kind.PASSED, "", "", p.translateNanos(), p.compileNanos(), t1 - t0);
  }

  /**
   * A date or timestamp as Spark keeps it (days, microseconds); other values as they are. Java
   * results are compared in this form.
   */
  static Object device(Object v) {
    if (v instanceof java.time.LocalDate d) {
      return Math.toIntExact(d.toEpochDay());
    }
    if (v instanceof java.time.Instant i) {
      return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1000);
    }
    if (v instanceof java.sql.Timestamp ts) { // Spark's fromJavaTimestampNoRebase
      return Math.addExact(Math.multiplyExact(ts.getTime(), 1000L), (ts.getNanos() / 1000) % 1000);
    }
    return v;
  }

  /** A Scala {@code Option} result as Spark reads it: {@code Some(x)} is x, {@code None} null; other values as they are. */
  static Object option(Object v) {
    if (v != null && v.getClass().getName().equals("scala.Some")) {
      try {
        return v.getClass().getMethod("get").invoke(v);
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
    }
    return v != null && v.getClass().getName().equals("scala.None$") ? null : v;
  }

  private static Object[] row(Object[][] cols, int i) {
    Object[] args = new Object[cols.length];
    for (int c = 0; c < cols.length; c++) {
      args[c] = cols[c][i];
    }
    return args;
  }

  private Outcome runRows(Prepared p, List<P> params, P result, Tolerance tol, String source, Object[][] cols,
                          Object[] java, List<Integer> fine, List<Integer> throwing) {
    String body = "--- translation:\n" + p.translated().functions() + "\n" + p.translated().body() + "\n";
    if (!fine.isEmpty()) {
      Object gpu;
      try {
        gpu = gpu(p.kernel(), params, result, cols, fine);
      } catch (GpuException e) {
        if (e.code() != GpuException.Code.RECOMPUTE) {
          return fail("batch failed " + e.code(), source, e.getMessage() + "\n" + body);
        }
        // which row: chunks of 16, then one by one
        for (int from = 0; from < fine.size(); from += 16) {
          List<Integer> chunk = fine.subList(from, Math.min(fine.size(), from + 16));
          if (recomputes(p, params, result, cols, chunk)) {
            for (int i : chunk) {
              if (recomputes(p, params, result, cols, List.of(i))) {
                return fail("RECOMPUTE where Java does not throw", source, "row " + Arrays.toString(row(cols, i))
                    + ": Java " + show(java[i]) + ", GPU RECOMPUTE\n" + body);
              }
            }
          }
        }
        return fail("RECOMPUTE where Java does not throw", source, "the batch of " + fine.size()
            + " rows, no row alone\n" + body);
      }
      @SuppressWarnings("unchecked")
      List<Object> got = (List<Object>) gpu;
      int first = -1;
      int wrong = 0;
      StringBuilder more = new StringBuilder();
      for (int j = 0; j < fine.size(); j++) {
        int i = fine.get(j);
        if (!same(result, tol, java[i], got.get(j))) {
          if (wrong++ == 0) {
            first = j;
          } else if (wrong <= 4) {
            more.append("\n    also row ").append(Arrays.toString(row(cols, i))).append(": Java ").append(show(java[i]))
                .append(", GPU ").append(show(got.get(j)));
          }
        }
      }
      if (wrong > 0) {
        int i = fine.get(first);
        return fail("wrong result" + (tol == Tolerance.EXACT ? "" : " (" + tol + ")"), source, "row "
            + Arrays.toString(row(cols, i)) + " " + types(params) + ": Java " + show(java[i]) + ", GPU "
            + show(got.get(first)) + " (" + wrong + " of " + fine.size() + " rows differ)" + more + "\n" + body);
      }
    }
    if (!throwing.isEmpty()) {
      List<List<Integer>> batches = new ArrayList<>();
      batches.add(throwing);
      throwing.stream().limit(4).forEach(i -> batches.add(List.of(i)));
      for (List<Integer> b : batches) {
        Object gpu;
        try {
          gpu = gpu(p.kernel(), params, result, cols, b);
        } catch (GpuException e) {
          if (e.code() == GpuException.Code.RECOMPUTE) {
            continue;
          }
          return fail("batch failed " + e.code(), source, e.getMessage() + "\n" + body);
        }
        int i = b.get(0);
        return fail("no RECOMPUTE where Java throws", source, "row " + Arrays.toString(row(cols, i)) + " "
            + types(params) + ": Java " + show(java[i]) + ", GPU " + show(((List<?>) gpu).get(0))
            + (b.size() > 1 ? " (a batch of " + b.size() + " such rows)" : "") + "\n" + body);
      }
    }
    return null;
  }

  private boolean recomputes(Prepared p, List<P> params, P result, Object[][] cols, List<Integer> rows) {
    try {
      gpu(p.kernel(), params, result, cols, rows);
      return false;
    } catch (GpuException e) {
      return e.code() == GpuException.Code.RECOMPUTE;
    }
  }

  private static String types(List<P> params) {
    return params.stream().map(t -> t.java).toList().toString();
  }

  static String show(Object v) {
    if (v instanceof Double d) {
      return d + " (0x" + Long.toHexString(Double.doubleToRawLongBits(d)) + ")";
    }
    if (v instanceof Float f) {
      return f + "f (0x" + Integer.toHexString(Float.floatToRawIntBits(f)) + ")";
    }
    return v == null ? "null" : v + (v instanceof Long ? "L" : "");
  }

  /** Whether the GPU's {@code actual} is Java's {@code expected} under {@code tol}. */
  static boolean same(P type, Tolerance tol, Object expected, Object actual) {
    if (actual == null) {
      return false;
    }
    switch (type) {
      case FLOAT -> {
        float e = ((Number) expected).floatValue();
        float a = (Float) actual;
        long ulps = tol == Tolerance.FLOAT_DIVISION ? 3 : tol == Tolerance.TRANSCENDENTAL ? 4 : 0;
        // EXACT is bit for bit: ordered() puts -0.0 and 0.0 both at 0, so a distance of 0 would take one for the other
        return Float.floatToIntBits(e) == Float.floatToIntBits(a)
            || (ulps > 0 && !Float.isNaN(e) && !Float.isNaN(a) && distance(ordered(e), ordered(a)) <= ulps);
      }
      case DOUBLE -> {
        double e = ((Number) expected).doubleValue();
        double a = (Double) actual;
        long ulps = tol == Tolerance.TRANSCENDENTAL ? TRANSCENDENTAL_ULPS : 0;
        return Double.doubleToLongBits(e) == Double.doubleToLongBits(a)
            || (ulps > 0 && !Double.isNaN(e) && !Double.isNaN(a) && distance(ordered(e), ordered(a)) <= ulps);
      }
      default -> {
        return expected.equals(actual);
      }
    }
  }

  private static long ordered(double d) {
    long b = Double.doubleToRawLongBits(d);
    return b < 0 ? Long.MIN_VALUE - b : b;
  }

  private static long ordered(float f) {
    int b = Float.floatToRawIntBits(f);
    return b < 0 ? Integer.MIN_VALUE - (long) b : b;
  }

  private static long distance(long a, long b) {
    try {
      return Math.abs(Math.subtractExact(a, b));
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  /** The kernel's results for {@code rows} of {@code cols}, in one batch. */
  private List<Object> gpu(ColumnKernel k, List<P> params, P result, Object[][] cols, List<Integer> rows) {
    List<SqlType> types = params.stream().map(t -> t.sql).toList();
    List<FieldVector> vectors = new ArrayList<>();
    try {
      List<InputColumn> inputs = new ArrayList<>();
      for (int c = 0; c < cols.length; c++) {
        FieldVector v = vector(params.get(c), cols[c], rows);
        vectors.add(v);
        inputs.add(ArrowInputs.of(v, types.get(c)));
      }
      int[] ordinals = IntStream.range(0, cols.length).toArray();
      try (BatchRunner runner = runtime.runner(List.of(new KernelCall(k, ordinals)), types, Math.max(64, rows.size()),
          allocator)) {
        FieldVector out = runner.run(inputs, rows.size()).get(0);
        List<Object> got = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
          got.add(out.isNull(i) ? null : out instanceof BitVector b ? (Object) (b.get(i) != 0) : out.getObject(i));
        }
        return got;
      }
    } finally {
      vectors.forEach(FieldVector::close);
    }
  }

  private FieldVector vector(P t, Object[] values, List<Integer> rows) {
    FieldVector v = new Field("c", FieldType.nullable(t.sql.arrowType()), null).createVector(allocator);
    v.setInitialCapacity(rows.size());
    v.allocateNew();
    for (int j = 0; j < rows.size(); j++) {
      Object x = values[rows.get(j)];
      switch (t) {
        case BOOLEAN -> ((BitVector) v).set(j, (Boolean) x ? 1 : 0);
        case BYTE -> ((TinyIntVector) v).set(j, (Byte) x);
        case SHORT -> ((SmallIntVector) v).set(j, (Short) x);
        case INT -> ((IntVector) v).set(j, (Integer) x);
        case LONG -> ((BigIntVector) v).set(j, (Long) x);
        case FLOAT -> ((Float4Vector) v).set(j, (Float) x);
        case DOUBLE -> ((Float8Vector) v).set(j, (Double) x);
        case LOCALDATE, INSTANT, SQLTIMESTAMP -> {
          Object n = device(x);
          if (v instanceof org.apache.arrow.vector.DateDayVector d) {
            d.set(j, (Integer) n);
          } else {
            ((org.apache.arrow.vector.TimeStampMicroTZVector) v).set(j, (Long) n);
          }
        }
      }
    }
    v.setValueCount(rows.size());
    return v;
  }
}
