package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.Program;
import io.vkspark.gpu.internal.HardDoubles;
import io.vkspark.gpu.internal.KernelPasses;
import io.vkspark.gpu.internal.SpirvModule;
import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.DoubleBinaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Java's bits whoever writes the arithmetic: every float operation of a loaded kernel is
 * {@code NoContraction} (so no driver fuses {@code a * b + c}; none added with fast math), no
 * divisor of a loaded kernel is a constant a driver could fold into a reciprocal, and shaderc's
 * optimizer folds nothing before that. Checked on the SPIR-V each device would load, so lavapipe
 * (which fuses nothing) catches what the H200's compiler would do with it, and on lavapipe's results.
 */
final class ExactArithmeticTest {
  private static final int OP_TYPE_FLOAT = 22;
  private static final int OP_TYPE_VECTOR = 23;
  private static final int OP_CONSTANT = 43;
  private static final int OP_CONSTANT_COMPOSITE = 44;
  private static final int OP_SPEC_CONSTANT = 50;
  private static final int OP_SPEC_CONSTANT_OP = 52;
  private static final int OP_DECORATE = 71;
  private static final int OP_FDIV = 136;
  private static final int OP_FMUL = 133;
  private static final Set<Integer> ARITHMETIC = Set.of(127, 129, 131, 133, 136, 140, 141, 142, 143, 144, 145, 146, 147, 148);
  private static GpuRows gpu;

  @BeforeAll
  static void open() {
    gpu = new GpuRows();
  }

  @AfterAll
  static void close() {
    gpu.close();
  }

  /** The SPIR-V {@code k} runs as on this session's device (lavapipe), after every load-time pass. */
  static SpirvModule loaded(ColumnKernel k) {
    Program p = k.program(64);
    var features = gpu.device().info().features();
    return SpirvModule.parse("loaded", KernelPasses.forDevice(p, p.spirvCode().orElseThrow(), features,
        gpu.device().doubleRounding(), KernelPasses.Float32Mode.NATIVE));
  }

  static SpirvModule compiled(ColumnKernel k) {
    return SpirvModule.parse("compiled", k.program(64).spirvCode().orElseThrow());
  }

  /** Float arithmetic result ids of {@code m}: [all, decorated NoContraction]. */
  private static List<Set<Integer>> arithmetic(SpirvModule m) {
    Set<Integer> floats = new HashSet<>();
    Set<Integer> precise = new HashSet<>();
    Set<Integer> all = new HashSet<>();
    for (Insn in : m.instructions()) {
      if (in.opcode() == OP_TYPE_FLOAT) {
        floats.add(m.operand(in, 0));
      } else if ((in.opcode() == OP_TYPE_VECTOR || in.opcode() == 24) && floats.contains(m.operand(in, 1))) {
        floats.add(m.operand(in, 0));
      } else if (in.opcode() == OP_DECORATE && m.operand(in, 1) == 42) {
        precise.add(m.operand(in, 0));
      } else if (ARITHMETIC.contains(in.opcode()) && floats.contains(m.operand(in, 0))) {
        all.add(m.operand(in, 1));
      }
    }
    precise.retainAll(all);
    return List.of(all, precise);
  }

  private static ColumnKernel kernel(String name, String body) {
    return ColumnKernel.compile(KernelSignature.of(name, SqlType.DOUBLE, arg("x", SqlType.DOUBLE), arg("y", SqlType.DOUBLE)),
        body);
  }

  @Test
  void everyFloatOperationIsNoContraction_fastMathAddsNone() {
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("nocontract", SqlType.DOUBLE, arg("x", SqlType.DOUBLE),
        arg("f", SqlType.FLOAT)), """
        float g = f * f + 1.5 * f;
        vec2 v = vec2(f, g) * 3.0 + vec2(1.0);
        double e = exp(x) / 3.0lf;
        return 1.0lf + x * (2.0lf + x) + double(g) - e * x + double(dot(v, v)) - (-x);""");
    List<Set<Integer>> exact = arithmetic(loaded(k));
    assertTrue(exact.get(0).size() > 20, "float operations: " + exact.get(0).size());
    assertEquals(exact.get(0), exact.get(1), "operations without NoContraction");

    ColumnKernel fast = k.withFastMath(true);
    assertNotEquals(k.id(), fast.id());
    assertTrue(fast.program(64).fastMath());
    List<Set<Integer>> asCompiled = arithmetic(compiled(fast));
    List<Set<Integer>> loadedFast = arithmetic(loaded(fast));
    SpirvModule fastModule = loaded(fast);
    assertEquals(asCompiled.get(1), loadedFast.get(1).stream().filter(id -> !isDivisorProduct(fastModule, id)).collect(
        java.util.stream.Collectors.toSet()), "fast math adds no NoContraction (but to a divisor's exact product): vkmath's own");
    assertTrue(loadedFast.get(0).size() - loadedFast.get(1).size() > 10, loadedFast.toString());
  }

  /** Whether {@code id} is the product of a divisor and the run-time 1.0 (the only decoration fast math keeps). */
  private static boolean isDivisorProduct(SpirvModule m, int id) {
    for (Insn in : m.instructions()) {
      if (in.opcode() == OP_FDIV && m.operand(in, 3) == id) {
        return true;
      }
    }
    return false;
  }

  /** Division results and divisors by definition: the opcode defining each id. */
  private static Map<Integer, Integer> definitions(SpirvModule m) {
    Map<Integer, Integer> def = new HashMap<>();
    for (Insn in : m.instructions()) {
      if (in.operands() >= 2 && in.opcode() >= OP_CONSTANT && in.opcode() <= OP_SPEC_CONSTANT_OP) {
        def.put(m.operand(in, 1), in.opcode());
      } else if (in.operands() >= 2 && in.opcode() != OP_DECORATE) {
        def.putIfAbsent(m.operand(in, 1), in.opcode());
      }
    }
    return def;
  }

  private static List<Double> doubleConstants(SpirvModule m) {
    int f64 = -1;
    List<Double> out = new ArrayList<>();
    for (Insn in : m.instructions()) {
      if (in.opcode() == OP_TYPE_FLOAT && m.operand(in, 1) == 64) {
        f64 = m.operand(in, 0);
      } else if (in.opcode() == OP_CONSTANT && m.operand(in, 0) == f64) {
        out.add(Double.longBitsToDouble((m.operand(in, 2) & 0xffffffffL) | ((long) m.operand(in, 3) << 32)));
      }
    }
    return out;
  }

  private static final String DIVISORS = """
      const double c = 3.0lf;
      double k = 7.0lf;
      double q = x / c + x / (2.0lf * 5.0lf) + (x * 3.0lf) * 5.0lf + x / k + x / 100.0lf + y / 49.0lf;
      q += ratio(x, 0.1lf);
      q /= 10000.0lf;
      return q;""";

  private static double divisors(double x, double y) {
    final double c = 3.0;
    double k = 7.0;
    double q = x / c + x / (2.0 * 5.0) + (x * 3.0) * 5.0 + x / k + x / 100.0 + y / 49.0;
    q += x / 0.1;
    q /= 10000.0;
    return q;
  }

  private static ColumnKernel divisorsKernel() {
    return ColumnKernel.compile(new KernelSpec(KernelSignature.of("cdiv", SqlType.DOUBLE, arg("x", SqlType.DOUBLE),
        arg("y", SqlType.DOUBLE)), DIVISORS, "double ratio(double a, double b) { return a / b; }"));
  }

  @Test
  void noDivisorIsAConstant_andTheOptimizerFoldsNothing() {
    ColumnKernel k = divisorsKernel();
    SpirvModule before = compiled(k);
    long divisions = before.instructions().stream().filter(in -> in.opcode() == OP_FDIV).count();
    assertEquals(7, divisions, "every division written is one (none folded into a product)");
    List<Double> constants = doubleConstants(before);
    for (double folded : new double[] {1 / 3.0, 1 / 7.0, 0.01, 1 / 49.0, 15.0, 1e-4}) {
      assertFalse(constants.contains(folded), folded + " in " + constants);
    }
    SpirvModule after = loaded(k);
    Map<Integer, Integer> def = definitions(after);
    int seen = 0;
    for (Insn in : after.instructions()) {
      if (in.opcode() == OP_FDIV) {
        int divisorDef = def.getOrDefault(after.operand(in, 3), -1);
        assertEquals(OP_FMUL, divisorDef, "division " + after.operand(in, 1) + "'s divisor is defined by opcode " + divisorDef);
        seen++;
      }
    }
    assertTrue(seen >= 7, "divisions: " + seen);
  }

  /** {@code body} over hard pairs against {@code java}, bit for bit. */
  private static void exact(ColumnKernel k, DoubleBinaryOperator java, int pairs) {
    double[] xy = HardDoubles.pairs(pairs, k.signature().name().hashCode());
    Object[] x = new Object[pairs];
    Object[] y = new Object[pairs];
    for (int i = 0; i < pairs; i++) {
      x[i] = xy[2 * i];
      y[i] = xy[2 * i + 1];
    }
    x[0] = 123456789.0;
    x[1] = -0.0;
    y[1] = 0.0;
    List<Object> got = gpu.run(k, x, y);
    for (int i = 0; i < pairs; i++) {
      double want = java.applyAsDouble((Double) x[i], (Double) y[i]);
      assertEquals(Double.doubleToLongBits(want), Double.doubleToLongBits((Double) got.get(i)),
          k.signature().name() + "(" + x[i] + ", " + y[i] + ") = " + got.get(i) + ", Java " + want);
    }
  }

  @Test
  void constantDivisorsAndContractibleFormsAreJavasBits() {
    exact(divisorsKernel(), ExactArithmeticTest::divisors, 20_000);
    exact(kernel("poly", "1.0lf + x * (2.0lf + x)"), (x, y) -> 1.0 + x * (2.0 + x), 20_000);
    exact(kernel("madd", "x * y + x"), (x, y) -> x * y + x, 20_000);
    exact(kernel("twoproducts", "x * y - y * 0.3lf"), (x, y) -> x * y - y * 0.3, 20_000);
  }

  /** A serializable UDF of one double, as Spark's UDF1 is. */
  public interface F1 extends java.io.Serializable {
    Double call(Double x);
  }

  /** The unseen UDF that returned 0.0 for -0.0 on lavapipe. */
  public static final class CheckedSqrt implements F1 {
    @Override
    public Double call(Double x) {
      if (x < 0) {
        throw new IllegalArgumentException("negative: " + x);
      }
      return Math.sqrt(x);
    }
  }

  @Test
  void sqrtOfMinusZeroIsMinusZero_nativeRefinedTranslatedAndHandWritten() {
    Object[] x = {-0.0, 0.0, 4.0, 2.0, Double.MIN_VALUE, Double.POSITIVE_INFINITY, -0.0};
    List<Double> want = java.util.Arrays.stream(x).map(v -> Math.sqrt((Double) v)).toList();
    var t = io.vkspark.gpu.translate.JavaTranslator.translate(new CheckedSqrt());
    var tr = assertInstanceOf(io.vkspark.gpu.translate.Translation.Translated.class, t, () -> String.valueOf(t));
    ColumnKernel translated = ColumnKernel.compile(tr.spec("checked_sqrt"));
    ColumnKernel written = ColumnKernel.compile(KernelSignature.of("hsqrt", SqlType.DOUBLE, arg("x", SqlType.DOUBLE)),
        "sqrt(x)");
    ColumnKernel guarded = ColumnKernel.compile(KernelSignature.of("gsqrt", SqlType.DOUBLE, arg("x", SqlType.DOUBLE)),
        "if (x < 0.0lf) { jthrow(); } return sqrt(x);");
    for (ColumnKernel k : List.of(translated, written, guarded)) {
      assertEquals(bits(want), bits(gpu.run(k, x)), k.signature().name() + " on this device");
    }
    String before = System.getProperty(io.vkspark.gpu.DoubleRounding.PROPERTY);
    System.setProperty(io.vkspark.gpu.DoubleRounding.PROPERTY, "refine");
    try (GpuRows refined = new GpuRows()) {
      assertTrue(refined.device().doubleRounding().refineSqrt());
      for (ColumnKernel k : List.of(translated, written, guarded)) {
        assertEquals(bits(want), bits(refined.run(k, x)), k.signature().name() + " refined");
      }
    } finally {
      if (before == null) {
        System.clearProperty(io.vkspark.gpu.DoubleRounding.PROPERTY);
      } else {
        System.setProperty(io.vkspark.gpu.DoubleRounding.PROPERTY, before);
      }
    }
  }

  private static List<Long> bits(List<?> values) {
    return values.stream().map(v -> Double.doubleToRawLongBits((Double) v)).toList();
  }
}
