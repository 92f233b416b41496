package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.internal.GlslCompiler;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.DoubleBinaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Accuracy of the double-precision GLSL math library (vkmath.glsl) on the real device: every
 * function is evaluated on edge cases and random arguments in one dispatch and compared with
 * java.lang.StrictMath, or with the double-double references of {@link VkMathReference} where
 * StrictMath has no such function.
 */
class VkMathTest {
  static final String PRELUDE =
      "#version 450\n#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require\n";

  static String library() {
    try (InputStream in = VkMathTest.class.getResourceAsStream("/io/vkspark/gpu/glsl/vkmath.glsl")) {
      assertNotNull(in, "vkmath.glsl is not on the classpath");
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  enum Bound { ULP, REL }

  /** One function: its GLSL call on (x, y), its reference and the error bound. */
  record Fn(String name, String glsl, DoubleBinaryOperator ref, Bound bound, double limit,
      Consumer<Inputs> inputs) {}

  /** Arguments of one function. */
  static final class Inputs {
    final Random rnd;
    final List<double[]> xy = new ArrayList<>();

    Inputs(long seed) {
      rnd = new Random(seed);
    }

    void add(double x) {
      xy.add(new double[] {x, 0});
    }

    void add(double x, double y) {
      xy.add(new double[] {x, y});
    }

    void addBoth(double... xs) {
      for (double x : xs) {
        add(x);
        add(-x);
      }
    }

    double uniform(double lo, double hi) {
      return lo + (hi - lo) * rnd.nextDouble();
    }

    /** +-10^U(lo, hi) */
    double logUniform(double lo, double hi, boolean signed) {
      double v = Math.pow(10, uniform(lo, hi));
      return signed && rnd.nextBoolean() ? -v : v;
    }

    void uniform(int n, double lo, double hi) {
      for (int i = 0; i < n; i++) {
        add(uniform(lo, hi));
      }
    }

    void logUniform(int n, double lo, double hi, boolean signed) {
      for (int i = 0; i < n; i++) {
        add(logUniform(lo, hi, signed));
      }
    }
  }

  static final double NAN = Double.NaN;
  static final double INF = Double.POSITIVE_INFINITY;
  static final double[] SPECIAL = {0.0, -0.0, NAN, INF, -INF, Double.MIN_VALUE, -Double.MIN_VALUE,
      Double.MIN_NORMAL, Double.MAX_VALUE, -Double.MAX_VALUE, 1, -1};

  static void specials(Inputs in) {
    for (double s : SPECIAL) {
      in.add(s);
    }
  }

  static List<Fn> functions() {
    List<Fn> f = new ArrayList<>();
    f.add(new Fn("exp", "exp(x)", (x, y) -> StrictMath.exp(x), Bound.ULP, 2, in -> {
      specials(in);
      for (double v : new double[] {709.782712893384, 709.7827128933841, 709.78, 709.0, -745.1332191019411,
          -745.1332191019412, -745.13, -744.44, -708.3964185322641, -708.4, -720, -740, 1e-300, 0x1p-28,
          0x1p-30, 1e-10, 0.34657359027997264, 0.3465735902799727, 1.0397207708399179, 700, -700, 88.7}) {
        in.add(v);
      }
      in.uniform(40000, -745.2, 709.8);
      in.uniform(5000, -2, 2);
      in.logUniform(5000, -20, 0, true);
    }));
    f.add(new Fn("exp2", "exp2(x)", (x, y) -> StrictMath.pow(2, x), Bound.ULP, 2, in -> {
      specials(in);
      for (int k = -1074; k <= 1023; k += 7) {
        in.add(k);
      }
      in.addBoth(1024, 1023.999, 1075, 1074.5, 0.5, 1e-20);
      in.uniform(15000, -1075, 1024);
      in.uniform(5000, -2, 2);
    }));
    f.add(new Fn("expm1", "expm1(x)", (x, y) -> StrictMath.expm1(x), Bound.ULP, 2, in -> {
      specials(in);
      in.addBoth(0x1p-54, 0x1p-55, 0.34657359027997264, 1.0397207708399179, 38.816242111356935, 709.78, 709.79,
          0.25, 0.3, 20 * 0.6931471805599453, 56 * 0.6931471805599453);
      in.uniform(20000, -40, 709.78);
      in.uniform(15000, -1, 1);
      in.logUniform(10000, -20, -1, true);
    }));
    f.add(new Fn("log", "log(x)", (x, y) -> StrictMath.log(x), Bound.ULP, 2, in -> {
      specials(in);
      for (double v : new double[] {2, 0.5, Math.E, 10, Math.sqrt(2), Math.nextUp(Math.sqrt(2)),
          Math.nextDown(Math.sqrt(2)), Math.nextUp(1.0), Math.nextDown(1.0), 3 * Double.MIN_VALUE,
          0x1p-1060, 0x1.fffffffffffffp-1023, 1e-320, 0.9999, 1.0001}) {
        in.add(v);
      }
      in.logUniform(30000, -307, 308, false);
      in.uniform(10000, 0.5, 2);
      for (int i = 0; i < 5000; i++) {
        in.add(1 + in.logUniform(-16, -1, true));
      }
      for (int i = 0; i < 3000; i++) {
        in.add(Double.MIN_VALUE * Math.floor(in.uniform(1, 0x1p52)));
      }
    }));
    f.add(new Fn("log2", "log2(x)", (x, y) -> VkMathReference.log2(x), Bound.ULP, 2, in -> {
      specials(in);
      for (int k = -1074; k <= 1023; k += 3) {
        in.add(Math.scalb(1.0, k));
      }
      in.logUniform(15000, -307, 308, false);
      in.uniform(5000, 0.5, 2);
      for (int i = 0; i < 1000; i++) {
        in.add(Double.MIN_VALUE * Math.floor(in.uniform(1, 0x1p52)));
      }
    }));
    f.add(new Fn("log10", "log10(x)", (x, y) -> StrictMath.log10(x), Bound.ULP, 2, in -> {
      specials(in);
      for (int k = -300; k <= 300; k++) {
        in.add(Double.parseDouble("1e" + k));
      }
      in.logUniform(15000, -307, 308, false);
      in.uniform(5000, 0.5, 2);
    }));
    f.add(new Fn("log1p", "log1p(x)", (x, y) -> StrictMath.log1p(x), Bound.ULP, 2, in -> {
      specials(in);
      in.add(Math.nextUp(-1.0));
      in.add(-2);
      in.add(-1e-300);
      in.addBoth(0x1p-54, 0x1p-53, 1e-17, 0.4142135623730950, 0.29289321881345254);
      in.uniform(10000, -1, 1);
      in.logUniform(10000, -20, 0, true);
      in.logUniform(5000, 0, 300, false);
    }));
    f.add(new Fn("pow", "pow(x, y)", StrictMath::pow, Bound.REL, 1e-15, in -> {
      double[] xs = {0.0, -0.0, 1, -1, 2, -2, 0.5, -0.5, 3, -3, 10, INF, -INF, NAN, Double.MIN_VALUE, 1e300};
      double[] ys = {0.0, -0.0, 1, -1, 2, -2, 3, -3, 0.5, -0.5, 1.5, INF, -INF, NAN, 1e300, -1e300, 0x1p53,
          0x1p53 + 2, 1075, -1074, 1024};
      for (double x : xs) {
        for (double y : ys) {
          in.add(x, y);
        }
      }
      in.add(3, 20);
      in.add(10, 22);
      in.add(10, -310);
      in.add(2, -1074);
      in.add(2, -1075);
      in.add(2, 1023.9999);
      in.add(0.1, 300);
      in.add(Math.nextUp(1.0), 1e18);
      in.add(Math.nextDown(1.0), -1e18);
      for (int i = 0; i < 30000; i++) {
        double x = in.logUniform(-3, 3, false);
        double y = in.uniform(-100, 100);
        if (Math.abs(y * Math.log10(x)) <= 300) {
          in.add(x, y);
        }
      }
      for (int i = 0; i < 5000; i++) {
        in.add(-in.logUniform(-2, 2, false), Math.rint(in.uniform(-50, 50)));
      }
      for (int i = 0; i < 5000; i++) {
        in.add(in.uniform(0.5, 2), in.uniform(-1000, 1000));
      }
      for (int i = 0; i < 5000; i++) {
        in.add(in.uniform(0, 10), in.uniform(-10, 10));
      }
    }));
    Consumer<Inputs> trig = in -> {
      specials(in);
      in.addBoth(Math.PI / 4, Math.nextUp(Math.PI / 4), Math.nextDown(Math.PI / 4), 0x1p-27, 0x1p-28, 1e-300,
          0x1p30, Math.nextUp(0x1p30), Math.nextDown(0x1p30), 0x1p50, 1e22, 6381956970095103.0 * 0x1p797,
          5.319372648326541e+255, 1.0e9, 0.67434, 0.3);
      for (int k = 1; k <= 2000; k++) {
        in.add(k * (Math.PI / 2));
        in.add(Math.nextUp(k * (Math.PI / 2)));
      }
      in.uniform(15000, -1e6, 1e6);
      in.uniform(15000, -10, 10);
      in.uniform(5000, -Math.PI / 4, Math.PI / 4);
      in.logUniform(3000, -20, 0, true);
      in.logUniform(5000, 6, 9, true);
      in.logUniform(3000, 9, 15, true);
      in.logUniform(3000, 15, 308, true);
    };
    f.add(new Fn("sin", "sin(x)", (x, y) -> StrictMath.sin(x), Bound.ULP, 2, trig));
    f.add(new Fn("cos", "cos(x)", (x, y) -> StrictMath.cos(x), Bound.ULP, 2, trig));
    f.add(new Fn("tan", "tan(x)", (x, y) -> StrictMath.tan(x), Bound.ULP, 2, trig));
    Consumer<Inputs> inverse = in -> {
      specials(in);
      in.addBoth(0.5, Math.nextDown(0.5), 0.975, 0.97499999999999998, 1e-300, 0x1p-27, 0x1p-57, Math.nextUp(1.0),
          Math.nextDown(1.0), 2);
      in.uniform(30000, -1, 1);
      for (int i = 0; i < 5000; i++) {
        double v = 1 - in.logUniform(-16, -1, false);
        in.add(in.rnd.nextBoolean() ? v : -v);
      }
      in.logUniform(5000, -20, 0, true);
    };
    f.add(new Fn("asin", "asin(x)", (x, y) -> StrictMath.asin(x), Bound.ULP, 2, inverse));
    f.add(new Fn("acos", "acos(x)", (x, y) -> StrictMath.acos(x), Bound.ULP, 2, inverse));
    f.add(new Fn("atan", "atan(x)", (x, y) -> StrictMath.atan(x), Bound.ULP, 2, in -> {
      specials(in);
      in.addBoth(0.4375, 0.6875, 1.1875, 2.4375, 0x1p66, 0x1p-27, 1e-300, 1.5, 0.5);
      in.logUniform(25000, -20, 20, true);
      in.uniform(20000, -3, 3);
    }));
    f.add(new Fn("atan2", "atan(x, y)", StrictMath::atan2, Bound.ULP, 2, in -> {
      double[] e = {0.0, -0.0, 1, -1, 2, -2, INF, -INF, NAN, 1e300, -1e300, 1e-300, -1e-300, Double.MIN_VALUE};
      for (double a : e) {
        for (double b : e) {
          in.add(a, b);
        }
      }
      for (int i = 0; i < 20000; i++) {
        in.add(in.logUniform(-10, 10, true), in.logUniform(-10, 10, true));
      }
      for (int i = 0; i < 15000; i++) {
        in.add(in.uniform(-5, 5), in.uniform(-5, 5));
      }
    }));
    f.add(new Fn("atan2 alias", "atan2(x, y)", StrictMath::atan2, Bound.ULP, 2, in -> {
      for (int i = 0; i < 2000; i++) {
        in.add(in.uniform(-5, 5), in.uniform(-5, 5));
      }
    }));
    Consumer<Inputs> hyper = in -> {
      specials(in);
      in.addBoth(22, Math.nextDown(22.0), 709.78, 710.4758600739439, 710.476, 0x1p-28, 0x1p-55, 0.34657359027997264,
          1e-300);
      in.uniform(10000, -720, 720);
      in.uniform(10000, -25, 25);
      in.uniform(5000, -1, 1);
      in.logUniform(3000, -20, 0, true);
    };
    f.add(new Fn("sinh", "sinh(x)", (x, y) -> StrictMath.sinh(x), Bound.ULP, 2, hyper));
    f.add(new Fn("cosh", "cosh(x)", (x, y) -> StrictMath.cosh(x), Bound.ULP, 2, hyper));
    f.add(new Fn("tanh", "tanh(x)", (x, y) -> StrictMath.tanh(x), Bound.ULP, 2, hyper));
    f.add(new Fn("erf", "erf(x)", (x, y) -> VkMathReference.erf(x), Bound.REL, 1e-14, in -> {
      specials(in);
      in.addBoth(0.84375, 1.25, 2.857142857142857, 2.8571428571428577, 6, 1e-310, 0x1p-28, 3.5, 5.9);
      in.uniform(30000, -6, 6);
      in.logUniform(5000, -20, 0, true);
    }));
    f.add(new Fn("erfc", "erfc(x)", (x, y) -> VkMathReference.erfc(x), Bound.REL, 1e-14, in -> {
      specials(in);
      in.addBoth(0.84375, 1.25, 0.25, 2.857142857142857, 2.8571428571428577, 6, 26.5, 27, 27.2, 28, 1e-310, 3.5);
      in.uniform(30000, -6, 27.5);
      in.uniform(5000, -1, 1);
      in.logUniform(2000, -20, 0, true);
    }));
    f.add(new Fn("vk_norm_cdf", "vk_norm_cdf(x)", (x, y) -> VkMathReference.normCdf(x), Bound.REL, 1e-14, in -> {
      specials(in);
      in.addBoth(38.4, 37.5, 1.19, 1.7677669529663689, 1.7677669529663687, 1.25, 5, 8.3, 9, 20, 39, 40, 1e-300);
      in.uniform(30000, -38.5, 9);
      in.uniform(10000, -5, 5);
    }));
    f.add(new Fn("vk_norm_pdf", "vk_norm_pdf(x)", (x, y) -> VkMathReference.normPdf(x), Bound.REL, 1e-14, in -> {
      specials(in);
      in.addBoth(38.5, 38.6, 39, 1, 0x1p-30);
      in.uniform(10000, -40, 40);
      in.uniform(5000, -3, 3);
    }));
    // the float built-ins stay callable next to the double overloads
    f.add(new Fn("exp(float) built-in", "double(exp(float(x)))",
        (x, y) -> StrictMath.exp((double) (float) x), Bound.REL, 1e-5, in -> in.uniform(2000, -10, 10)));
    return f;
  }

  static String shader(List<Fn> fns) {
    StringBuilder s = new StringBuilder(PRELUDE).append(library()).append('\n');
    s.append("""
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) readonly buffer Ops { int op[]; };
        layout(std430, set = 0, binding = 1) readonly buffer Xs { double xs[]; };
        layout(std430, set = 0, binding = 2) readonly buffer Ys { double ys[]; };
        layout(std430, set = 0, binding = 3) writeonly buffer Rs { double rs[]; };
        void main() {
          uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x
              + gl_LocalInvocationID.x;
          if (i >= uint(xs.length())) return;
          double x = xs[i];
          double y = ys[i];
          double r = 0.0LF;
          switch (op[i]) {
        """);
    for (int k = 0; k < fns.size(); k++) {
      s.append("    case ").append(k).append(": r = ").append(fns.get(k).glsl()).append("; break;\n");
    }
    s.append("  }\n  rs[i] = r;\n}\n");
    return s.toString();
  }

  /** Error statistics of one function. */
  static final class Stats {
    final Fn fn;
    int count;
    double maxUlp;
    double maxRel;
    double worstX;
    double worstY;
    double worstGot;
    double worstRef;
    int specialMismatches;
    final List<String> mismatchExamples = new ArrayList<>();

    Stats(Fn fn) {
      this.fn = fn;
    }

    void add(double x, double y, double got, double ref) {
      count++;
      boolean special = Double.isNaN(ref) || Double.isInfinite(ref) || ref == 0
          || Double.isNaN(got) || Double.isInfinite(got);
      if (special) {
        boolean same = Double.isNaN(ref) ? Double.isNaN(got)
            : Double.doubleToRawLongBits(got) == Double.doubleToRawLongBits(ref);
        // a result that is 0 only by underflow may come out as a subnormal, and vice versa
        boolean tinyOk = !Double.isNaN(got) && !Double.isInfinite(got) && !Double.isInfinite(ref)
            && !Double.isNaN(ref) && Math.abs(got - ref) <= 2 * Double.MIN_VALUE && (got != 0 || ref != 0);
        if (!same && !tinyOk) {
          specialMismatches++;
          if (mismatchExamples.size() < 8) {
            mismatchExamples.add(String.format(Locale.ROOT, "(%s, %s) -> %s, expected %s", x, y, got, ref));
          }
        }
        return;
      }
      double err = Math.abs(got - ref);
      double ulp = err / Math.ulp(ref);
      double rel;
      if (Math.abs(ref) >= Double.MIN_NORMAL) {
        rel = err / Math.abs(ref);
      } else {
        // subnormal results: judge the error against the subnormal spacing
        rel = err <= 2 * Double.MIN_VALUE ? 0 : err / Double.MIN_NORMAL;
      }
      double score = fn.bound() == Bound.ULP ? ulp : rel;
      double worst = fn.bound() == Bound.ULP ? maxUlp : maxRel;
      if (score > worst || count == 1) {
        worstX = x;
        worstY = y;
        worstGot = got;
        worstRef = ref;
      }
      maxUlp = Math.max(maxUlp, ulp);
      maxRel = Math.max(maxRel, rel);
    }

    boolean ok() {
      double score = fn.bound() == Bound.ULP ? maxUlp : maxRel;
      return specialMismatches == 0 && score <= fn.limit();
    }

    @Override
    public String toString() {
      return String.format(Locale.ROOT,
          "%-20s n=%6d  max ulp %7.3f  max rel %9.3e  (bound %s %s)  special mismatches %d  worst at (%s, %s): got %s ref %s%s",
          fn.name(), count, maxUlp, maxRel, fn.bound(), fn.limit(), specialMismatches, worstX, worstY, worstGot,
          worstRef, mismatchExamples.isEmpty() ? "" : "  e.g. " + mismatchExamples);
    }
  }

  /** Every function's arguments, one row each for {@link #shader}: the function's index and (x, y). */
  record Cases(int[] ops, double[] xs, double[] ys) {
    /** The arguments {@code fns} ask for, function k's drawn with seed {@code seed + 17 k}. */
    static Cases of(List<Fn> fns, long seed) {
      List<Integer> ops = new ArrayList<>();
      List<double[]> args = new ArrayList<>();
      for (int k = 0; k < fns.size(); k++) {
        Inputs in = new Inputs(seed + 17L * k);
        fns.get(k).inputs().accept(in);
        for (double[] xy : in.xy) {
          ops.add(k);
          args.add(xy);
        }
      }
      return new Cases(ops.stream().mapToInt(Integer::intValue).toArray(),
          args.stream().mapToDouble(xy -> xy[0]).toArray(), args.stream().mapToDouble(xy -> xy[1]).toArray());
    }

    int size() {
      return ops.length;
    }

    /** The shader's three inputs: ops, xs, ys. */
    List<ByteBuffer> buffers() {
      ByteBuffer o = ByteBuffer.allocate(4 * size()).order(ByteOrder.LITTLE_ENDIAN);
      ByteBuffer x = ByteBuffer.allocate(8 * size()).order(ByteOrder.LITTLE_ENDIAN);
      ByteBuffer y = ByteBuffer.allocate(8 * size()).order(ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < size(); i++) {
        o.putInt(ops[i]);
        x.putDouble(xs[i]);
        y.putDouble(ys[i]);
      }
      return List.of(o.flip(), x.flip(), y.flip());
    }

    /** {@link #shader} of {@code fns} with its bindings: ops, xs, ys in, one double per row out. */
    Program program(List<Fn> fns) {
      return Program.glsl("vkmath_test", shader(fns)).workgroupSize(64)
          .buffer(BufferDecl.input("op", 0, ElementType.INT32))
          .buffer(BufferDecl.input("x", 1, ElementType.FLOAT64))
          .buffer(BufferDecl.input("y", 2, ElementType.FLOAT64))
          .buffer(BufferDecl.output("r", 3, ElementType.FLOAT64, size())).build();
    }
  }

  @Test
  void accuracyOnDevice() {
    List<Fn> fns = functions();
    Cases cases = Cases.of(fns, 1234);
    int n = cases.size();
    List<Stats> stats = new ArrayList<>();
    try (GpuDevice device = GpuDevices.open(DeviceOptions.defaults().withValidation(true))) {
      long t0 = System.nanoTime();
      ByteBuffer out;
      try (Kernel kernel = device.load(cases.program(fns))) {
        long t1 = System.nanoTime();
        out = kernel.dispatch(cases.buffers(), Groups.covering(n, 64, 65535)).get(0)
            .order(ByteOrder.LITTLE_ENDIAN);
        long t2 = System.nanoTime();
        System.out.printf(Locale.ROOT, "vkmath: %d evaluations of %d functions; compile+load %.0f ms, dispatch %.0f ms%n",
            n, fns.size(), (t1 - t0) / 1e6, (t2 - t1) / 1e6);
      }
      for (Fn fn : fns) {
        stats.add(new Stats(fn));
      }
      for (int i = 0; i < n; i++) {
        Fn fn = fns.get(cases.ops()[i]);
        double x = cases.xs()[i];
        double y = cases.ys()[i];
        stats.get(cases.ops()[i]).add(x, y, out.getDouble(8 * i), fn.ref().applyAsDouble(x, y));
      }
      for (Stats s : stats) {
        System.out.println(s);
      }
      assertEquals(0, device.validationErrors(), device.validationMessages().toString());
    }
    List<String> failures = stats.stream().filter(s -> !s.ok()).map(Stats::toString).toList();
    assertTrue(failures.isEmpty(), String.join("\n", failures));
  }

  /** Compile time that the library adds to a kernel (shaderc removes the functions a kernel does not call). */
  @Test
  void compileTime() {
    String lib = library();
    String none = """
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) buffer D { double d[]; };
        void main() { uint i = gl_GlobalInvocationID.x; d[i] = 2.5LF * d[i] + 1.0LF; }
        """;
    String blackScholes = """
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) buffer D { double d[]; };
        void main() {
          uint i = gl_GlobalInvocationID.x;
          double s = d[i], k = 100.0LF, t = 0.5LF, r = 0.01LF, v = 0.2LF;
          double d1 = (log(s / k) + (r + 0.5LF * v * v) * t) / (v * sqrt(t));
          double d2 = d1 - v * sqrt(t);
          d[i] = s * vk_norm_cdf(d1) - k * exp(-r * t) * vk_norm_cdf(d2);
        }
        """;
    String haversine = """
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) buffer D { double d[]; };
        void main() {
          uint i = gl_GlobalInvocationID.x;
          double lat1 = d[4 * i], lon1 = d[4 * i + 1], lat2 = d[4 * i + 2], lon2 = d[4 * i + 3];
          double a = pow(sin((lat2 - lat1) / 2.0LF), 2.0LF)
              + cos(lat1) * cos(lat2) * pow(sin((lon2 - lon1) / 2.0LF), 2.0LF);
          d[i] = 2.0LF * 6371.0LF * atan(sqrt(a), sqrt(1.0LF - a));
        }
        """;
    StringBuilder all = new StringBuilder("""
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) buffer D { double d[]; };
        void main() {
          uint i = gl_GlobalInvocationID.x;
          double x = d[i];
          d[i] = 0.0LF
        """);
    for (String f : List.of("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
        "acos", "atan", "sinh", "cosh", "tanh", "erf", "erfc", "vk_norm_cdf", "vk_norm_pdf")) {
      all.append("      + ").append(f).append("(x)\n");
    }
    all.append("      + pow(x, x) + atan(x, x);\n}\n");
    GlslCompiler.compile("warmup.comp", PRELUDE + none, null);
    String[][] cases = {
        {"no library", PRELUDE + none},
        {"library, unused", PRELUDE + lib + none},
        {"library, Black-Scholes", PRELUDE + lib + blackScholes},
        {"library, haversine", PRELUDE + lib + haversine},
        {"library, every function", PRELUDE + lib + all},
    };
    for (String[] c : cases) {
      long best = Long.MAX_VALUE;
      int bytes = 0;
      for (int rep = 0; rep < 3; rep++) {
        long t0 = System.nanoTime();
        CompileResult r = GlslCompiler.compile(c[0].replace(' ', '_') + ".comp", c[1], null);
        best = Math.min(best, System.nanoTime() - t0);
        assertTrue(r.ok(), c[0] + ": " + r.log());
        bytes = r.spirv().get().length;
      }
      System.out.printf(Locale.ROOT, "shaderc %-26s %7.1f ms  %7d bytes of SPIR-V%n", c[0], best / 1e6, bytes);
    }
  }
}
