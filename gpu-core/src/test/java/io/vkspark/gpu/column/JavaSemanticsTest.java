package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BinaryOperator;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Java-semantics helpers against Java itself on lavapipe (exact), and the check that refuses or warns. */
final class JavaSemanticsTest {
  private static final int[] INTS = {0, 1, -1, 2, -2, 3, -3, 7, -7, 31, 32, 33, -31, -32, -33, 63, 64, 65, 100, -100,
      Integer.MIN_VALUE, Integer.MAX_VALUE, Integer.MIN_VALUE + 1, Integer.MAX_VALUE - 1};
  private static final long[] LONGS = {0, 1, -1, 2, -2, 7, -7, 31, 32, 63, 64, 65, -63, -64, -65, 1L << 40, -(1L << 40),
      Integer.MIN_VALUE, Integer.MAX_VALUE, Long.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE + 1, Long.MAX_VALUE - 1};
  private static final float[] FLOATS = {0f, -0f, 1f, -1f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, Float.NaN,
      Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MAX_VALUE, -Float.MAX_VALUE, 2.1e9f, -2.1e9f,
      2147483648f, -2147483648f, 3e9f, -3e9f, 9.2e18f, -9.2e18f, 9.3e18f, -9.3e18f, 1e20f, -1e20f,
      Float.intBitsToFloat(0x7fc00001), Float.MIN_NORMAL, Math.nextDown(0x1p31f), Math.nextUp(-0x1p31f),
      Math.nextDown(0x1p63f), -0x1p63f, Math.nextUp(-0x1p63f), Float.MIN_VALUE, -Float.MIN_VALUE};
  private static final double[] DOUBLES = {0d, -0d, 1d, -1d, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, Double.NaN,
      Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MAX_VALUE, -Double.MAX_VALUE, 2147483647.5,
      -2147483648.5, 2147483648d, -2147483649d, 3e9, -3e9, 9.223372036854775807E18, -9.223372036854775808E18,
      9.3e18, -9.3e18, 1e300, -1e300, 123456789.987, -123456789.987, Double.MIN_NORMAL,
      Double.longBitsToDouble(0x7ff8000000000001L), Math.nextDown(0x1p63), Math.nextUp(-0x1p63), -0x1p63,
      Math.nextDown(0x1p31), Math.nextUp(-0x1p31 - 1), 0x1p53 + 1, Double.MIN_VALUE, -Double.MIN_VALUE};
  private static GpuRows gpu;

  @BeforeAll
  static void open() {
    gpu = new GpuRows();
  }

  @AfterAll
  static void close() {
    gpu.close();
  }

  private static ColumnKernel kernel(String name, SqlType result, SqlType in, int args, String body) {
    List<KernelSignature.Arg> a = new ArrayList<>();
    for (int i = 0; i < args; i++) {
      a.add(arg(i == 0 ? "a" : "b", in));
    }
    return ColumnKernel.compile(KernelSignature.of(name, result, a.toArray(KernelSignature.Arg[]::new)), body);
  }

  /** Columns a and b holding every ordered pair of {@code values}. */
  private static Object[][] everyPair(Object[] values) {
    int n = values.length * values.length;
    Object[][] ab = new Object[2][n];
    for (int i = 0; i < n; i++) {
      ab[0][i] = values[i / values.length];
      ab[1][i] = values[i % values.length];
    }
    return ab;
  }

  /** Every pair of {@code values} through {@code body} on the GPU and through {@code java}; exact. */
  private static <T> void pairs(String name, SqlType type, T[] values, String body, BinaryOperator<T> java) {
    Object[][] ab = everyPair(values);
    Object[] a = ab[0];
    Object[] b = ab[1];
    int n = a.length;
    ColumnKernel k = kernel(name, type, type, 2, body);
    assertEquals(List.of(), k.warnings(), name);
    List<Object> got = gpu.run(k, a, b);
    int checked = 0;
    for (int i = 0; i < n; i++) {
      @SuppressWarnings("unchecked")
      Object want = java.apply((T) a[i], (T) b[i]);
      assertEquals(key(want), key(got.get(i)), name + "(" + a[i] + ", " + b[i] + ")");
      checked++;
    }
    assertEquals(n, checked);
  }

  private static <T> void unary(String name, SqlType in, SqlType out, T[] values, String body, Function<T, Object> java) {
    ColumnKernel k = kernel(name, out, in, 1, body);
    List<Object> got = gpu.run(k, (Object[]) values);
    for (int i = 0; i < values.length; i++) {
      assertEquals(key(java.apply(values[i])), key(got.get(i)), name + "(" + values[i] + ")");
    }
  }

  /** Exact identity: floats by their bits (every NaN alike, -0.0 apart from 0.0). */
  private static Object key(Object v) {
    return v instanceof Float f ? (Object) Float.floatToIntBits(f) : v instanceof Double d ? (Object) Double.doubleToLongBits(d) : v;
  }

  private static Integer[] ints() {
    return java.util.Arrays.stream(INTS).boxed().toArray(Integer[]::new);
  }

  private static Long[] longs() {
    return java.util.Arrays.stream(LONGS).boxed().toArray(Long[]::new);
  }

  private static Float[] floats() {
    Float[] f = new Float[FLOATS.length];
    for (int i = 0; i < f.length; i++) {
      f[i] = FLOATS[i];
    }
    return f;
  }

  private static Double[] doubles() {
    return java.util.Arrays.stream(DOUBLES).boxed().toArray(Double[]::new);
  }

  @Test
  void intHelpers_matchJava() {
    pairs("irem", SqlType.INT, ints(), "jrem(a, b)", (x, y) -> y == 0 ? 0 : x % y);
    pairs("idiv", SqlType.INT, ints(), "jdiv(a, b)", (x, y) -> y == 0 ? 0 : x / y);
    pairs("ishl", SqlType.INT, ints(), "jshl(a, b)", (x, y) -> x << y);
    pairs("ishr", SqlType.INT, ints(), "jshr(a, b)", (x, y) -> x >> y);
    pairs("iushr", SqlType.INT, ints(), "jushr(a, b)", (x, y) -> x >>> y);
    pairs("imin", SqlType.INT, ints(), "jmin(a, b)", Math::min);
    pairs("imax", SqlType.INT, ints(), "jmax(a, b)", Math::max);
  }

  @Test
  void longHelpers_matchJava() {
    pairs("lrem", SqlType.BIGINT, longs(), "jrem(a, b)", (x, y) -> y == 0 ? 0 : x % y);
    pairs("ldiv", SqlType.BIGINT, longs(), "jdiv(a, b)", (x, y) -> y == 0 ? 0 : x / y);
    pairs("lshl", SqlType.BIGINT, longs(), "jshl(a, b)", (x, y) -> x << y);
    pairs("lshr", SqlType.BIGINT, longs(), "jshr(a, b)", (x, y) -> x >> y);
    pairs("lushr", SqlType.BIGINT, longs(), "jushr(a, b)", (x, y) -> x >>> y);
    pairs("lshli", SqlType.BIGINT, longs(), "jshl(a, int(b))", (x, y) -> x << (int) (long) y);
    pairs("lmin", SqlType.BIGINT, longs(), "jmin(a, b)", Math::min);
    pairs("lmax", SqlType.BIGINT, longs(), "jmax(a, b)", Math::max);
  }

  /**
   * Subnormal results and operands as Java computes them, bit for bit, on every device: kept by the
   * device where it can (generated kernels ask it to), computed from the bits where it flushes them
   * (the H200's 32-bit floats; FloatSubnormalsTest simulates that device on lavapipe).
   */
  @Test
  void subnormalFloats_javasBitsOnEveryDevice() {
    Float[] fl = {1e-20f, -1e-20f, 3e-20f, 1e-25f, Float.MIN_NORMAL, Float.MIN_VALUE, 0.5f, 2f, 1e-39f, -3e-42f, 0f, -0f};
    Double[] db = {1e-160, -1e-160, 3e-160, 1e-170, Double.MIN_NORMAL, Double.MIN_VALUE, 0.5, 2d, 1e-310, -3e-320, 0d, -0d};
    int subnormal = 0;
    subnormal += subnormals("fmul", SqlType.FLOAT, fl, "a * b", (x, y) -> x * y);
    subnormal += subnormals("fsub", SqlType.FLOAT, fl, "a - b", (x, y) -> x - y);
    subnormal += subnormals("dmul", SqlType.DOUBLE, db, "a * b", (x, y) -> x * y);
    subnormal += subnormals("dsub", SqlType.DOUBLE, db, "a - b", (x, y) -> x - y);
    assertTrue(subnormal > 40, "the values give subnormal results: " + subnormal);
  }

  /** Every pair through {@code body}: Java's value, bit for bit. Returns how many of Java's results were subnormal. */
  private static <T extends Number> int subnormals(String name, SqlType type, T[] values, String body,
                                                   BinaryOperator<T> java) {
    Object[][] ab = everyPair(values);
    Object[] a = ab[0];
    Object[] b = ab[1];
    int n = a.length;
    List<Object> got = gpu.run(kernel(name, type, type, 2, body), a, b);
    int subnormal = 0;
    for (int i = 0; i < n; i++) {
      @SuppressWarnings("unchecked")
      T x = (T) a[i];
      @SuppressWarnings("unchecked")
      T y = (T) b[i];
      T want = java.apply(x, y);
      subnormal += isSubnormal(want) ? 1 : 0;
      String row = name + "(" + x + ", " + y + ") gave " + got.get(i);
      assertEquals(key(want), key(got.get(i)), row);
    }
    return subnormal;
  }

  private static boolean isSubnormal(Number v) {
    double min = v instanceof Float ? Float.MIN_NORMAL : Double.MIN_NORMAL;
    return v.doubleValue() != 0 && Math.abs(v.doubleValue()) < min;
  }

  /** A device that cannot keep subnormals gets the kernel without the request, not a driver error. */
  @Test
  void denormPreserve_droppedForADeviceWithoutIt() {
    io.vkspark.gpu.Program p = kernel("dpres", SqlType.DOUBLE, SqlType.DOUBLE, 2, "a * b").program(64);
    byte[] spirv = p.spirvCode().orElseThrow();
    assertEquals(1, denormModes(spirv), "the generated kernel asks to keep 32-bit subnormals");
    io.vkspark.gpu.DeviceFeatures has = gpu.device().info().features();
    io.vkspark.gpu.DeviceFeatures none = new io.vkspark.gpu.DeviceFeatures(has.shaderInt64(), has.shaderFloat64(),
        has.storage8Bit(), has.storage16Bit(), has.robustBufferAccess(), has.hostQueryReset(), false, false);
    byte[] stripped = io.vkspark.gpu.internal.SpirvSeal.forDevice(p, spirv, none);
    assertEquals(0, denormModes(stripped));
    io.vkspark.gpu.internal.SpirvSeal.check(p, stripped, true); // still a sealed, well-formed module
    assertFalse(capabilities(stripped).contains(4464), "DenormPreserve capability dropped with its last mode");
    io.vkspark.gpu.DeviceFeatures only32 = new io.vkspark.gpu.DeviceFeatures(has.shaderInt64(), has.shaderFloat64(),
        has.storage8Bit(), has.storage16Bit(), has.robustBufferAccess(), has.hostQueryReset(), true, false);
    assertSame(spirv, io.vkspark.gpu.internal.SpirvSeal.forDevice(p, spirv, only32));
    io.vkspark.gpu.DeviceFeatures all = new io.vkspark.gpu.DeviceFeatures(has.shaderInt64(), has.shaderFloat64(),
        has.storage8Bit(), has.storage16Bit(), has.robustBufferAccess(), has.hostQueryReset(), true, true);
    assertSame(spirv, io.vkspark.gpu.internal.SpirvSeal.forDevice(p, spirv, all));
  }

  private static long denormModes(byte[] spirv) {
    io.vkspark.gpu.internal.SpirvModule m = io.vkspark.gpu.internal.SpirvModule.parse("t", spirv);
    return m.instructions().stream().filter(in -> in.opcode() == 16 && m.operand(in, 1) == 4459).count();
  }

  private static List<Integer> capabilities(byte[] spirv) {
    io.vkspark.gpu.internal.SpirvModule m = io.vkspark.gpu.internal.SpirvModule.parse("t", spirv);
    return m.instructions().stream().filter(in -> in.opcode() == 17).map(in -> m.operand(in, 0)).toList();
  }

  @Test
  void floatHelpers_matchJava() {
    pairs("fmin", SqlType.FLOAT, floats(), "jmin(a, b)", Math::min);
    pairs("fmax", SqlType.FLOAT, floats(), "jmax(a, b)", Math::max);
    unary("fint", SqlType.FLOAT, SqlType.INT, floats(), "jint(a)", x -> (int) (float) x);
    unary("flong", SqlType.FLOAT, SqlType.BIGINT, floats(), "jlong(a)", x -> (long) (float) x);
  }

  @Test
  void doubleHelpers_matchJava() {
    pairs("dmin", SqlType.DOUBLE, doubles(), "jmin(a, b)", Math::min);
    pairs("dmax", SqlType.DOUBLE, doubles(), "jmax(a, b)", Math::max);
    unary("dint", SqlType.DOUBLE, SqlType.INT, doubles(), "jint(a)", x -> (int) (double) x);
    unary("dlong", SqlType.DOUBLE, SqlType.BIGINT, doubles(), "jlong(a)", x -> (long) (double) x);
  }

  /** jint and jlong of integers are Java's casts, not a detour through float (which rounded 16777217). */
  @Test
  void integerCasts_matchJava() {
    unary("iint", SqlType.INT, SqlType.INT, ints(), "jint(a)", x -> x);
    unary("ilong", SqlType.INT, SqlType.BIGINT, ints(), "jlong(a)", x -> (long) (int) x);
    unary("lint", SqlType.BIGINT, SqlType.INT, longs(), "jint(a)", x -> (int) (long) x);
    unary("llong", SqlType.BIGINT, SqlType.BIGINT, longs(), "jlong(a)", x -> x);
    unary("lintd", SqlType.BIGINT, SqlType.DOUBLE, longs(), "double(jint(a)) + jmin(1.0lf, 2.0lf)",
        x -> (double) (int) (long) x + 1.0);
    unary("big", SqlType.INT, SqlType.INT, new Integer[] {16777217, -16777217, Integer.MAX_VALUE - 1},
        "jint(a)", x -> x);
  }

  /** Java's int << long is an int shift (count masked to 5 bits); GLSL picked the int64 overload (1 << 33L gave 2^33). */
  @Test
  void intShiftedByLong_isAnIntShift() {
    for (String[] op : new String[][] {{"jshl", "<<"}, {"jshr", ">>"}, {"jushr", ">>>"}}) {
      ColumnKernel k = ColumnKernel.compile(KernelSignature.of("mixed_" + op[0], SqlType.BIGINT,
          arg("a", SqlType.INT), arg("b", SqlType.BIGINT)), op[0] + "(a, b)");
      Integer[] as = {1, -1, 7, Integer.MIN_VALUE, Integer.MAX_VALUE, -8};
      Long[] bs = {33L, 63L, 64L, -1L, 31L, 1L << 40};
      List<Object> got = gpu.run(k, as, bs);
      for (int i = 0; i < as.length; i++) {
        long b = bs[i];
        long want = switch (op[1]) {
          case "<<" -> as[i] << b;
          case ">>" -> as[i] >> b;
          default -> as[i] >>> b;
        };
        assertEquals(want, got.get(i), op[0] + "(" + as[i] + ", " + b + ")");
      }
    }
  }

  @Test
  void prelude_isPastedOnlyWhenABodyCallsAHelper() {
    ColumnKernel plain = kernel("plain", SqlType.INT, SqlType.INT, 2, "a + b");
    assertFalse(plain.source().contains("jrem"), "no helpers without a call");
    ColumnKernel ints = kernel("ints", SqlType.INT, SqlType.INT, 2, "jrem(a, b)");
    assertTrue(ints.source().contains("int jrem(int a, int b)"));
    assertFalse(ints.source().contains("int64_t jrem"), "int64 helpers only for int64 kernels");
    assertFalse(ints.source().contains("double jmin"), "double helpers only for double kernels");
  }

  @Test
  void remainder_isRefusedNamingTheLineAndJrem() {
    GpuException e = assertThrows(GpuException.class,
        () -> kernel("rem", SqlType.BIGINT, SqlType.BIGINT, 2, "a % b"));
    assertEquals(GpuException.Code.COMPILE, e.code());
    assertTrue(e.getMessage().contains("GPU UDF 'rem' uses % at line 1 of its body [a % b]"), e.getMessage());
    assertTrue(e.getMessage().contains("Fix: write jrem(a, b)"), e.getMessage());
    GpuException f = assertThrows(GpuException.class, () -> kernel("rem2", SqlType.INT, SqlType.INT, 2, """
        int q = a + 1;
        // a comment
        q %= b;
        return q;
        """));
    assertTrue(f.getMessage().contains("line 3 of its body [q %= b;]"), f.getMessage());
    // folded by glslang before any SPIR-V exists (and x % 0 folds to x): refused from the text
    GpuException c = assertThrows(GpuException.class,
        () -> kernel("rem3", SqlType.INT, SqlType.INT, 1, "// 5 % 2 in a comment is fine\nconst int k = -7 % 3;\nreturn k + a;"));
    assertTrue(c.getMessage().contains("GPU UDF 'rem3' uses % at line 2 of its body [const int k = -7 % 3;]"), c.getMessage());
    assertTrue(c.getMessage().contains("Fix: write jrem(a, b)"), c.getMessage());
    assertThrows(GpuException.class, () -> kernel("rem4", SqlType.INT, SqlType.INT, 1, "a + 5 % 0"));
  }

  @Test
  void undefinedOperations_warnNamingTheHelper() {
    assertWarns("div", SqlType.INT, SqlType.INT, 2, "a / b", "line 1 of its body [a / b]", "jdiv(a, b)");
    assertWarns("divz", SqlType.INT, SqlType.INT, 1, "int z = 0;\nreturn a / z;", "line 2", "jdiv(a, b)");
    assertWarns("divcr", SqlType.INT, SqlType.INT, 2, "int q = a; // a bare CR ends this comment\rreturn q / b;", "line 2",
        "jdiv(a, b)");
    assertWarns("fmin", SqlType.FLOAT, SqlType.FLOAT, 2, "min(a, b)", "NaN", "jmin(a, b)");
    assertWarns("dmax", SqlType.DOUBLE, SqlType.DOUBLE, 2, "max(a, b)", "NaN", "jmax(a, b)");
    assertWarns("clamp", SqlType.FLOAT, SqlType.FLOAT, 1, "clamp(a, 0.0, 1.0)", "clamp", "jmin(jmax(x, lo), hi)");
    assertWarns("f2i", SqlType.INT, SqlType.FLOAT, 1, "int(a * 2.0)", "float-to-integer", "jint(x) or jlong(x)");
    assertWarns("d2l", SqlType.BIGINT, SqlType.DOUBLE, 1, "int64_t(a)", "float-to-integer", "jint(x) or jlong(x)");
    assertWarns("shl", SqlType.INT, SqlType.INT, 2, "a << b", "non-constant count", "jshl(a, n)");
    assertWarns("shlw", SqlType.BIGINT, SqlType.BIGINT, 1, "a << 64", "shift by 64", "jshl(a, n)");
    assertWarns("shr", SqlType.INT, SqlType.INT, 2, "a >> b", "shift", "jshr(a, n)");
    assertWarns("ushr", SqlType.INT, SqlType.INT, 2, "int(uint(a) >> b)", "shift", "jushr(a, n)");
    // Vulkan's robustness covers buffers, not a body's own arrays: an index out of range is undefined there
    assertWarns("idx", SqlType.INT, SqlType.INT, 2, "int t[4] = int[](1, 2, 3, 4);\nreturn t[a];", "line 2",
        "clamp(i, 0, n - 1)");
    assertWarns("idxw", SqlType.FLOAT, SqlType.INT, 2, "float t[4];\nt[b] = 1.0;\nreturn t[0];", "line 2",
        "clamp(i, 0, n - 1)");
    assertWarns("vidx", SqlType.FLOAT, SqlType.INT, 2, "vec4 v = vec4(a);\nreturn v[b];", "line 2", "clamp(i, 0, n - 1)");
  }

  @Test
  void definedOperations_doNotWarn() {
    for (String body : new String[] {"a / 2", "a << 3", "a >> 31", "min(a, b)", "max(a, b) + clamp(a, 0, 9)",
        "jdiv(a, b) + jshl(a, b) + jint(float(a) * 0.5)", "int t[4] = int[](1, 2, 3, 4); return t[clamp(a, 0, 3)];",
        "int t[4] = int[](1, 2, 3, 4); return t[a & 3] + t[2];", "ivec2 v = ivec2(a, b); return v[min(uint(b), 1u)];"}) {
      assertEquals(List.of(), kernel("ok", SqlType.INT, SqlType.INT, 2, body).warnings(), body);
    }
    assertEquals(List.of(), kernel("ok", SqlType.FLOAT, SqlType.FLOAT, 2, "a / b + jmin(a, b)").warnings());
  }

  @Test
  void analysis_isCachedOnDisk(@TempDir Path dir) throws Exception {
    KernelSignature sig = KernelSignature.of("cached", SqlType.INT, arg("a", SqlType.INT), arg("b", SqlType.INT));
    String body = "a / b + " + System.nanoTime() % 1000;
    ColumnKernel first = ColumnKernel.compile(sig, body, dir);
    try (var files = Files.list(dir.resolve("spirv"))) {
      assertEquals(2, files.count(), "the run module and the analysis module");
    }
    ColumnKernel second = ColumnKernel.compile(sig, body, dir);
    assertEquals(first.warnings(), second.warnings());
    assertEquals(1, first.warnings().size(), first.warnings().toString());
  }

  private static void assertWarns(String name, SqlType result, SqlType in, int args, String body, String text, String helper) {
    List<String> w = kernel(name, result, in, args, body).warnings();
    assertEquals(1, w.size(), body + ": " + w);
    assertTrue(w.get(0).startsWith("GPU UDF '" + name + "' at "), w.get(0));
    assertTrue(w.get(0).contains(text), w.get(0));
    assertTrue(w.get(0).contains("Fix: use " + helper), w.get(0));
  }
}
