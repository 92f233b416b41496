package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.Program;
import io.vkspark.gpu.internal.KernelPasses;
import io.vkspark.gpu.internal.SpirvModule;
import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * 32-bit float arithmetic gives Java's bits, subnormals and signed zeros included, on a device that
 * flushes subnormals (the H200): on lavapipe (which keeps them though it promises nothing) with the
 * exact path forced ({@code vkspark.float32Subnormals=exact}), and with a simulated flushing device
 * ({@code vkspark.float32Subnormals.simulateFlush}: every 32-bit float operation left in a loaded
 * kernel flushes its subnormal operands and results, as the H200 does), and by inspection: a loaded
 * kernel has no 32-bit float operation left that a device could flush.
 */
final class FloatSubnormalsTest {
  private static final float[] SPECIAL = {0f, -0f, Float.MIN_VALUE, -Float.MIN_VALUE, 2 * Float.MIN_VALUE,
      Float.MIN_NORMAL, -Float.MIN_NORMAL, Math.nextDown(Float.MIN_NORMAL), -Math.nextDown(Float.MIN_NORMAL),
      Math.nextUp(Float.MIN_NORMAL), 6.054601E-39f, 5.877472E-39f, 1e-40f, -3e-42f, 1f, -1f, 1.5f, 3f, 0.1f, -7.25f,
      1e-20f, 1e20f, 3.4028235E38f, Float.MAX_VALUE, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN,
      8388608f, 0.5f, 2f, 1.0842022E-19f, 1.1754944E-38f * 0.75f};
  private static GpuRows gpu;
  private static GpuRows flushing;

  @BeforeAll
  static void open() {
    System.setProperty(KernelPasses.FLOAT32_PROPERTY, "exact");
    try {
      gpu = new GpuRows();
      System.setProperty(KernelPasses.SIMULATE_FLUSH_PROPERTY, "true");
      flushing = new GpuRows();
    } finally {
      System.clearProperty(KernelPasses.FLOAT32_PROPERTY);
      System.clearProperty(KernelPasses.SIMULATE_FLUSH_PROPERTY);
    }
  }

  @AfterAll
  static void close() {
    gpu.close();
    flushing.close();
  }

  /** Operand pairs: every special value with every other, then random bits (a third of them subnormal). */
  private static Object[][] pairs() {
    List<Float> a = new ArrayList<>();
    List<Float> b = new ArrayList<>();
    for (float x : SPECIAL) {
      for (float y : SPECIAL) {
        a.add(x);
        b.add(y);
      }
    }
    Random r = new Random(34);
    for (int i = 0; i < 3000; i++) {
      a.add(randomFloat(r));
      b.add(randomFloat(r));
    }
    a.add(1.17549435E-38f); // the H200's measured case: Java 1.1754942E-38, the H200 1.17549435E-38
    b.add(1.4E-45f);
    return new Object[][] {a.toArray(), b.toArray()};
  }

  private static float randomFloat(Random r) {
    return switch (r.nextInt(3)) {
      case 0 -> Float.intBitsToFloat(r.nextInt() & 0x807fffff); // subnormal or zero
      case 1 -> Float.intBitsToFloat(r.nextInt() & 0x80ffffff | 0x00800000); // just above the subnormals
      default -> Float.intBitsToFloat(r.nextInt());
    };
  }

  interface FloatOp {
    float apply(float a, float b);
  }

  private static final Map<String, FloatOp> BODIES = new java.util.LinkedHashMap<>();

  static {
    BODIES.put("a + b", (a, b) -> a + b);
    BODIES.put("a - b", (a, b) -> a - b);
    BODIES.put("a * b", (a, b) -> a * b);
    BODIES.put("a / b", (a, b) -> a / b);
    BODIES.put("a * b + a", (a, b) -> a * b + a);
    BODIES.put("-a - b * 0.5", (a, b) -> -a - b * 0.5f);
    BODIES.put("sqrt(abs(a)) + sqrt(b * b)", (a, b) -> (float) Math.sqrt(Math.abs(a)) + (float) Math.sqrt(b * b));
    BODIES.put("a < b ? 1.0 : (a == b ? a : (a > b ? b : -1.0))", (a, b) -> a < b ? 1f : (a == b ? a : (a > b ? b : -1f)));
    BODIES.put("float(double(a) * double(b) / 3.0lf)", (a, b) -> (float) ((double) a * (double) b / 3.0));
    BODIES.put("float(1.0lf / (1.0lf + double(b) * 1e30lf)) * a", (a, b) -> (float) (1.0 / (1.0 + (double) b * 1e30)) * a);
    BODIES.put("floor(a) + ceil(b) - trunc(a * b)", (a, b) -> (float) Math.floor(a) + (float) Math.ceil(b) - (float) (long) (a * b));
    BODIES.put("sqrt(-0.0 * a)", (a, b) -> (float) Math.sqrt(-0.0f * a));
  }

  private static ColumnKernel kernel(String name, String body) {
    return ColumnKernel.compile(KernelSignature.of(name, SqlType.FLOAT, arg("a", SqlType.FLOAT), arg("b", SqlType.FLOAT)),
        body);
  }

  private static int check(GpuRows device, String body, FloatOp java, boolean assertExact) {
    Object[][] ab = pairs();
    List<Object> got = device.run(kernel("f" + Integer.toHexString(body.hashCode()), body), ab[0], ab[1]);
    int misses = 0;
    String first = "";
    for (int i = 0; i < ab[0].length; i++) {
      float a = (Float) ab[0][i];
      float b = (Float) ab[1][i];
      float want = java.apply(a, b);
      float have = (Float) got.get(i);
      if (body.startsWith("floor") && (Float.isNaN(a * b) || Math.abs(a * b) >= 0x1p62f)) {
        continue; // trunc vs (long): out of range
      }
      if (Float.floatToIntBits(want) != Float.floatToIntBits(have)) {
        if (misses++ == 0) {
          first = body + " for a = " + a + ", b = " + b + ": " + have + ", Java " + want;
        }
      }
    }
    if (assertExact) {
      assertEquals(0, misses, first);
    }
    return misses;
  }

  @Test
  void floatArithmeticIsJavasBits_onLavapipeAndOnAFlushingDevice() {
    assertEquals(KernelPasses.Float32Mode.EXACT, KernelPasses.Float32Mode.of(gpu.device().info().features(), () -> "flushed"),
        "lavapipe promises no float32 DenormPreserve: where it flushed, the exact path would be its default");
    for (Map.Entry<String, FloatOp> e : BODIES.entrySet()) {
      check(gpu, e.getKey(), e.getValue(), true);
      check(flushing, e.getKey(), e.getValue(), true);
    }
  }

  /** The simulated flushing device is one: without the exact path it gives the H200's results. */
  @Test
  void theSimulatedFlushingDeviceFlushes_withoutTheExactPath() {
    System.setProperty(KernelPasses.FLOAT32_PROPERTY, "native");
    System.setProperty(KernelPasses.SIMULATE_FLUSH_PROPERTY, "true");
    try (GpuRows nativeFlushing = new GpuRows()) {
      System.clearProperty(KernelPasses.FLOAT32_PROPERTY);
      System.clearProperty(KernelPasses.SIMULATE_FLUSH_PROPERTY);
      List<Object> got = nativeFlushing.run(kernel("h200", "a - b"), new Object[] {1.17549435E-38f, 6.054601E-39f, 1f},
          new Object[] {1.4E-45f, 0f, 0.5f});
      assertEquals(List.of(1.17549435E-38f, 0f, 0.5f), got, "a device that flushes");
      assertTrue(check(nativeFlushing, "a * b", (a, b) -> a * b, false) > 100);
    } finally {
      System.clearProperty(KernelPasses.FLOAT32_PROPERTY);
      System.clearProperty(KernelPasses.SIMULATE_FLUSH_PROPERTY);
    }
  }

  /** No 32-bit float operation a device could flush is left in a loaded kernel on the exact path. */
  @Test
  void aLoadedKernelHasNoFloat32OperationLeft() {
    for (String body : BODIES.keySet()) {
      ColumnKernel k = kernel("i" + Integer.toHexString(body.hashCode()), body);
      Program p = k.program(64);
      byte[] spirv = KernelPasses.forDevice(p, p.spirvCode().orElseThrow(), gpu.device().info().features(),
          gpu.device().doubleRounding(), KernelPasses.Float32Mode.EXACT);
      assertEquals(List.of(), float32Operations(SpirvModule.parse(body, spirv), true), body);
      assertFalse(float32Operations(SpirvModule.parse(body, p.spirvCode().orElseThrow()), false).isEmpty(), body);
    }
  }

  /** Opcodes of the 32-bit float arithmetic, comparisons and conversions of {@code m} (outside vkspark's own functions). */
  static List<Integer> float32Operations(SpirvModule m, boolean skipWidenNarrow) {
    int f32 = -1;
    Map<Integer, Integer> typeOf = new HashMap<>();
    Set<Integer> f32Types = new java.util.HashSet<>();
    List<Integer> out = new ArrayList<>();
    int functions = 0;
    int functionEnds = 0;
    int total = (int) m.instructions().stream().filter(in -> in.opcode() == 54).count();
    for (Insn in : m.instructions()) {
      int op = in.opcode();
      if (op == 22 && m.operand(in, 1) == 32) {
        f32 = m.operand(in, 0);
        f32Types.add(f32);
      } else if (op == 23 && f32Types.contains(m.operand(in, 1))) {
        f32Types.add(m.operand(in, 0));
      }
      if (op == 54) {
        functions++;
      }
      if (op == 56) {
        functionEnds++;
      }
      boolean vkspark = skipWidenNarrow && functions > total - 2; // the widen and narrow functions, appended last
      if (in.operands() >= 2 && (op >= 54 || op == 12 || (op >= 41 && op <= 52)) && !Set.of(56, 62, 63, 71, 72, 224, 225,
          228, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255).contains(op)) {
        typeOf.put(m.operand(in, 1), m.operand(in, 0));
      }
      if (vkspark || in.operands() < 3) {
        continue;
      }
      boolean f32Result = f32Types.contains(m.operand(in, 0));
      boolean f32Operand = f32Types.contains(typeOf.getOrDefault(m.operand(in, 2), -1));
      if ((Set.of(127, 129, 131, 133, 136, 140, 141, 142).contains(op) && f32Result)
          || (op == 115 && (f32Result || f32Operand)) || (op >= 180 && op <= 191 && f32Operand)
          || (op == 12 && f32Result && Set.of(1, 2, 3, 4, 6, 8, 9, 10, 31, 37, 40, 43, 48, 53, 79, 80, 81)
              .contains(m.operand(in, 3)))) {
        out.add(op);
      }
    }
    assertEquals(functions, functionEnds);
    return out;
  }
}
