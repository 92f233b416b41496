package io.vkspark.gpu.column;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.translate.JavaTranslator;
import io.vkspark.gpu.translate.Translation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Java methods translated from their bytecode run on lavapipe with the results of the methods themselves. */
class TranslatedKernelTest {
  private static GpuRows gpu;

  @BeforeAll
  static void open() {
    gpu = new GpuRows();
  }

  @AfterAll
  static void close() {
    gpu.close();
  }

  /** Methods to translate. */
  public static final class Methods {
    static final double HALF = 0.5;

    public static double poly(double x, double y) {
      double r = 0;
      for (int i = 0; i < 5; i++) {
        if (i == 3) {
          continue;
        }
        r = r * x + y / (i + 1);
      }
      return x > 0 ? r : -r * HALF;
    }

    public static int ints(int a, int b) {
      int s = 0;
      switch (a & 3) {
        case 0 -> s = a << b;
        case 1 -> s = a >>> (b + 1);
        default -> s = a * 31 + b;
      }
      while (b > 0 && b < 1000 && s != 0) {
        s ^= s >> 3;
        b -= 7;
      }
      return s + (int) ((long) a * b) + helper(a, b);
    }

    static int helper(int a, int b) {
      return Math.max(a, b) - Math.abs(b) + (int) (a * 0.37);
    }

    public static int divides(int a, int b) {
      return a / b + a % 7;
    }

    public static Double boxed(Double x, Double y) {
      if (x == null || y == null) {
        return null;
      }
      return Math.sqrt(Math.abs(x)) + StrictMath.exp(-y * y) + Math.min(x, y);
    }

    /** Tolerates null arguments, and returns null for some non-null ones. */
    public static Double tolerant(Double x, Integer k) {
      if (x == null) {
        return k == null ? -1.0 : k * 2.0;
      }
      if (k == null || k == 0) {
        return null;
      }
      return x * k;
    }

    public static long longs(long a, int b) {
      long r = 1;
      do {
        r = r * a + b;
        b--;
      } while (b > 0 && b < 10);
      return r + Long.MAX_VALUE / (a == 0 ? 1 : a);
    }
  }

  /** A UDF object: a call method, a final field read as a constant, static helpers and StrictMath. */
  public static final class Pricer implements java.io.Serializable {
    private static final double INV_SQRT2 = 0.7071067811865476;
    private final double scale;

    public Pricer(double scale) {
      this.scale = scale;
    }

    public Double call(Double s, Double k, Double t) {
      if (s == null || k == null || t == null) {
        return null;
      }
      if (!(s > 0 && k > 0 && t >= 0)) {
        return Double.NaN;
      }
      double sd = Math.sqrt(t);
      if (sd == 0) {
        return Math.max(s - k, 0.0) * scale;
      }
      double d1 = StrictMath.log(s / k) / sd + 0.5 * sd;
      return scale * (s * cdf(d1) - k * cdf(d1 - sd));
    }

    static double cdf(double x) {
      double z = x * INV_SQRT2;
      return z < -5 ? 0.0 : z > 5 ? 1.0 : 0.5 + 0.5 * Math.tanh(z * 1.1283791670955126);
    }
  }

  /** A serializable functional interface, as Spark's UDF1 is. */
  public interface F2 extends java.io.Serializable {
    Long call(Long a, Long b);
  }

  /** Spark's {@code UDF1} as {@code functions.udf(UDF1<?, ?>, DataType)} takes it: javac erases the lambda's result to Object. */
  public interface U1<T, R> extends java.io.Serializable {
    R call(T t);
  }

  static U1<?, ?> udf(U1<?, ?> f) {
    return f;
  }

  @Test
  void erasedLambda_resultTypeFromItsReturns() throws Exception {
    U1<?, ?> square = udf((Long x) -> x * x);
    Translation t = JavaTranslator.translate(square);
    Translation.Translated tr = assertInstanceOf(Translation.Translated.class, t, () -> String.valueOf(t));
    assertEquals(io.vkspark.gpu.column.SqlType.BIGINT, tr.result());
    Object[] xs = {0L, 3L, -7L, Long.MAX_VALUE, Long.MIN_VALUE, 3037000500L};
    List<Object> got = gpu.run(ColumnKernel.compile(tr.spec("square")), xs);
    @SuppressWarnings("unchecked")
    U1<Long, Object> f = (U1<Long, Object>) square;
    for (int i = 0; i < xs.length; i++) {
      assertEquals(f.call((Long) xs[i]), got.get(i), "row " + i);
    }
    assertInstanceOf(Translation.Translated.class, JavaTranslator.translate(square, io.vkspark.gpu.column.SqlType.BIGINT));
    Translation.Refused wrong = assertInstanceOf(Translation.Refused.class,
        JavaTranslator.translate(square, io.vkspark.gpu.column.SqlType.DOUBLE));
    assertTrue(wrong.reason().contains("returns a java.lang.Long but is registered to return double"), wrong.reason());
  }

  @Test
  void erasedLambda_registeredTypeWhereReturnsDoNotTell() {
    U1<?, ?> nothing = udf((Long x) -> null);
    Translation.Refused r = assertInstanceOf(Translation.Refused.class, JavaTranslator.translate(nothing));
    assertTrue(r.reason().contains("give the translator the UDF's registered result type"), r.reason());
    Translation.Translated tr = assertInstanceOf(Translation.Translated.class,
        JavaTranslator.translate(nothing, io.vkspark.gpu.column.SqlType.INT));
    assertEquals(io.vkspark.gpu.column.SqlType.INT, tr.result());
    U1<?, ?> mixed = udf((Long x) -> {
      if (x > 0) {
        return x;
      }
      return 1.5;
    });
    Translation.Refused m = assertInstanceOf(Translation.Refused.class,
        JavaTranslator.translate(mixed, io.vkspark.gpu.column.SqlType.BIGINT));
    assertTrue(m.reason().contains("returns a java.lang.Double where the result is a java.lang.Long"), m.reason());
  }

  @Test
  void udfObject_fieldsAndStaticFinalsAreConstants() {
    Translation t = JavaTranslator.translate(new Pricer(2.5));
    Translation.Translated tr = assertInstanceOf(Translation.Translated.class, t, () -> String.valueOf(t));
    assertTrue(tr.strict());
    Random rnd = new Random(6);
    int n = 300;
    Object[] s = new Object[n];
    Object[] k = new Object[n];
    Object[] tt = new Object[n];
    for (int i = 0; i < n; i++) {
      s[i] = 50 + rnd.nextDouble() * 100;
      k[i] = 50 + rnd.nextDouble() * 100;
      tt[i] = i % 17 == 0 ? 0.0 : rnd.nextDouble() * 3;
    }
    List<Object> got = gpu.run(ColumnKernel.compile(tr.spec("pricer")), s, k, tt);
    Pricer p = new Pricer(2.5);
    for (int i = 0; i < n; i++) {
      double want = p.call((Double) s[i], (Double) k[i], (Double) tt[i]);
      double g = (Double) got.get(i);
      assertTrue(Math.abs(want - g) <= 1e-13 * Math.max(1, Math.abs(want)), i + ": " + want + " vs " + g);
    }
    assertTrue(!tr.equals(JavaTranslator.translate(new Pricer(3.0))), "another field value is another translation");
  }

  @Test
  void lambda_capturedValuesAreConstants() {
    long bias = 17;
    F2 f = (a, b) -> a == null || b == null ? null : a * b + bias - Math.floorMod(a, 5L);
    Translation t = JavaTranslator.translate(f);
    Translation.Translated tr = assertInstanceOf(Translation.Translated.class, t, () -> String.valueOf(t));
    assertTrue(tr.strict(), tr.nullStrict().toString());
    Object[] a = {1L, -7L, Long.MAX_VALUE, Long.MIN_VALUE, 0L, 12345678901L};
    Object[] b = {3L, 5L, 2L, -1L, 9L, -3L};
    List<Object> got = gpu.run(ColumnKernel.compile(tr.spec("f")), a, b);
    for (int i = 0; i < a.length; i++) {
      assertEquals(f.call((Long) a[i], (Long) b[i]), got.get(i), "row " + i);
    }
  }

  @Test
  void refusals_nameClassMethodLineAndInstruction() {
    F2 alloc = (a, b) -> Long.valueOf(String.valueOf(a).length() + b);
    Translation t = JavaTranslator.translate(alloc);
    Translation.Refused r = assertInstanceOf(Translation.Refused.class, t);
    assertTrue(r.reason().matches(".*TranslatedKernelTest\\.lambda\\$.* line \\d+: .*\\[.*\\].*"), r.reason());
  }

  private static Method method(String name) {
    for (Method m : Methods.class.getDeclaredMethods()) {
      if (m.getName().equals(name)) {
        return m;
      }
    }
    throw new IllegalArgumentException(name);
  }

  private static Translation.Translated translated(String name) {
    Translation t = JavaTranslator.translate(method(name));
    if (t instanceof Translation.Refused r) {
      throw new AssertionError(r.reason());
    }
    Translation.Translated tr = assertInstanceOf(Translation.Translated.class, t);
    return tr;
  }

  private static void compare(String name, Object[]... columns) throws Exception {
    Translation.Translated t = translated(name);
    ColumnKernel k;
    try {
      k = ColumnKernel.compile(t.spec(name));
    } catch (GpuException e) {
      throw new AssertionError(e.getMessage() + "\n" + t.functions() + "\n" + t.body(), e);
    }
    List<Object> got = gpu.run(k, columns);
    Method m = method(name);
    for (int r = 0; r < columns[0].length; r++) {
      Object[] args = new Object[columns.length];
      for (int c = 0; c < columns.length; c++) {
        args[c] = columns[c][r];
      }
      Object want = m.invoke(null, args);
      assertEquals(want, got.get(r), name + " row " + r + " " + java.util.Arrays.toString(args) + "\n" + t.functions());
    }
  }

  private static Object[] doubles(Random rnd, int n) {
    List<Object> v = new ArrayList<>(List.of(0.0, -0.0, 1.0, -1.0, Double.NaN, Double.POSITIVE_INFINITY,
        Double.NEGATIVE_INFINITY, Double.MIN_VALUE, Double.MAX_VALUE));
    while (v.size() < n) {
      v.add(rnd.nextGaussian() * 100);
    }
    return v.toArray();
  }

  private static Object[] ints(Random rnd, int n, boolean noZero) {
    List<Object> v = new ArrayList<>(List.of(1, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 7, 31));
    if (!noZero) {
      v.add(0);
    }
    while (v.size() < n) {
      int x = rnd.nextInt(200) - 100;
      v.add(noZero && x == 0 ? 3 : x);
    }
    return v.toArray();
  }

  @Test
  void doublesLoopsAndConstants() throws Exception {
    Random rnd = new Random(1);
    compare("poly", doubles(rnd, 200), doubles(rnd, 200));
  }

  @Test
  void intsSwitchWhileAndHelpers() throws Exception {
    Random rnd = new Random(2);
    compare("ints", ints(rnd, 200, false), ints(rnd, 200, false));
  }

  @Test
  void longsDoWhile() throws Exception {
    Random rnd = new Random(3);
    Object[] a = new Object[200];
    Object[] b = new Object[200];
    for (int i = 0; i < 200; i++) {
      a[i] = rnd.nextLong() >> rnd.nextInt(64);
      b[i] = rnd.nextInt(20) - 5;
    }
    compare("longs", a, b);
  }

  @Test
  void boxedWithNullChecks_isStrict() throws Exception {
    assertTrue(translated("boxed").strict());
    assertEquals(List.of("Math.exp"), translated("boxed").approximate(), "StrictMath.exp is vkmath's, within 1 ulp");
    assertTrue(translated("poly").exact(), "+, -, *, / and loops give Java's bits");
    Random rnd = new Random(4);
    Translation.Translated t = translated("boxed");
    List<Object> got = gpu.run(ColumnKernel.compile(t.spec("boxed")), doubles(rnd, 100), doubles(rnd, 100));
    assertEquals(100, got.size());
  }

  /**
   * The null-aware form computes the rows with null arguments and null results on the device. The
   * kernel here makes its own null flags (x below -50 and k below -5 stand for null) and writes a
   * null result as -12345, so that every row compares with the method called with those nulls.
   */
  @Test
  void nullAware_computesNullArgumentsAndNullResults() throws Exception {
    Translation.Translated t = translated("tolerant");
    assertEquals(List.of(false, false), t.nullStrict());
    Translation.NullAware n = t.nullAware();
    assertEquals(List.of(true, true), n.nullable());
    assertTrue(n.nullResult());
    assertEquals("vkt_main(a0, a0_null, a1, a1_null, r_null)", n.exampleBody());
    String body = "bool a0_null = a0 < -50.0LF; bool a1_null = a1 < -5; bool r_null = false; double r = "
        + n.exampleBody() + "; return r_null ? -12345.0LF : r;";
    ColumnKernel k = ColumnKernel.compile(new KernelSpec(t.signature("tolerant"), body, n.functions()));
    Random rnd = new Random(9);
    Object[] x = doubles(rnd, 200);
    Object[] ks = ints(rnd, 200, false);
    List<Object> got = gpu.run(k, x, ks);
    int nulls = 0;
    for (int i = 0; i < x.length; i++) {
      double xv = (Double) x[i];
      int kv = (Integer) ks[i];
      Double want = Methods.tolerant(xv < -50 ? null : xv, kv < -5 ? null : kv);
      nulls += want == null || xv < -50 || kv < -5 ? 1 : 0;
      assertEquals(want == null ? -12345.0 : want, got.get(i), "row " + i + ": " + xv + ", " + kv);
    }
    assertTrue(nulls > 20, "null arguments and results seen: " + nulls); // and no RECOMPUTE: nulls are values
  }

  @Test
  void integerDivisionByZero_flagsTheBatch() throws Exception {
    Random rnd = new Random(5);
    compare("divides", ints(rnd, 100, false), ints(rnd, 100, true));
    ColumnKernel k = ColumnKernel.compile(translated("divides").spec("divides"));
    GpuException e = assertThrows(GpuException.class, () -> gpu.run(k, new Object[] {1, 2, 3}, new Object[] {1, 0, 2}));
    assertEquals(GpuException.Code.RECOMPUTE, e.code());
  }
}
