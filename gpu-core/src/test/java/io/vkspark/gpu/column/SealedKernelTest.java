package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.CompileResult;
import io.vkspark.gpu.GlslCompiler;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.internal.KernelPasses;
import io.vkspark.gpu.internal.SpirvSeal;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Hostile bodies (each escape seen on 2026-11-30) are refused by the lexical check with the line;
 * the same escapes compiled anyway are refused by the SPIR-V seal before any driver sees them; and
 * corrupt modules are errors, never crashes.
 */
final class SealedKernelTest {
  private static final KernelSignature SIG = KernelSignature.of("evil", SqlType.FLOAT,
      arg("x", SqlType.FLOAT), arg("y", SqlType.FLOAT));
  private static GpuRows gpu;

  @BeforeAll
  static void open() {
    gpu = new GpuRows();
  }

  @AfterAll
  static void close() {
    gpu.close();
  }

  private static void refused(String body, int line, String text) {
    GpuException e = assertThrows(GpuException.class, () -> ColumnKernel.compile(SIG, body), body);
    assertEquals(GpuException.Code.COMPILE, e.code(), e.getMessage());
    assertTrue(e.getMessage().startsWith("GPU UDF 'evil' is not allowed: line " + line + " of its body"), e.getMessage());
    assertTrue(e.getMessage().contains(text), () -> "lacks '" + text + "': " + e.getMessage());
    assertTrue(e.getMessage().contains(". Fix: ") && e.getMessage().endsWith("of the body of 'evil')."), e.getMessage());
  }

  @Test
  void bodiesThatEscapeTheirFunction_areRefusedWithTheLine() {
    refused("return x; }\nlayout(std430, set = 1, binding = 0) buffer Evil { float evil[]; };\nfloat g() { return evil[0];",
        1, "a '}' that closes nothing the body opened");
    refused("x); }\nlayout(push_constant) uniform P { float k; } pc;\nfloat h() { return (pc.k",
        1, "a ')' that closes nothing");
    refused("float a = x;\nreturn a; }\nlayout(std430, set = 0, binding = 1) buffer Alias { float alias[]; };\n"
        + "float g() { alias[0] = 1.0; return 0.0;", 2, "closes nothing");
    refused("return x;\n}\nlayout(std430, set = 0, binding = 9) buffer U { float u[]; };\nfloat g() {\nreturn u[0];",
        2, "closes nothing");
    refused("#extension GL_EXT_buffer_reference : require\nreturn x;", 1, "a preprocessor directive ('#')");
    refused("float a = x;\n#define X 1\nreturn a;", 2, "'#'");
    refused("layout(push_constant) uniform P { float k; } pc;\nreturn x;", 1, "'layout', a storage or interface keyword");
    refused("float a = x; // \\\n}\nreturn a;", 1, "backslash");
    refused("return vk_in0[5];", 1, "'vk_in0', a name reserved");
    refused("x + float(vk_rows)", 1, "'vk_rows'");
    refused("x + float(gl_GlobalInvocationID.x)", 1, "'gl_GlobalInvocationID', a GLSL built-in");
    refused("float a = x;\nbarrier();\nreturn a;", 2, "'barrier', a barrier");
    refused("return x + vkm_inf();", 1, "'vkm_inf'");
    refused("VkIn0 b;\nreturn x;", 1, "'VkIn0', a name reserved for the blocks");
    refused("return x; /* never closed", 1, "'/*' comment that is never closed");
    refused("if (x > 0.0) {\nreturn x;\n", 1, "a '{' that is never closed");
    refused("(x + y", 1, "a '(' that is never closed");
    refused("{ float a = (x; } return a);", 1, "a '}' that closes the '(' of line 1");
    refused("float a = x; // \u0000 hidden\nreturn a;", 1, "the control character U+0000");
  }

  @Test
  void harmlessBodies_withCommentsAndLibraryCalls_compile() {
    ColumnKernel k = ColumnKernel.compile(SIG, """
        // a '#' and a '}' and vk_rows in a comment are fine
        /* so is { this ( */
        if (x > y) { return float(vk_norm_cdf(double(x))); }
        return y;
        """);
    List<Object> got = gpu.run(k, new Object[] {2f, -1f}, new Object[] {1f, 3f});
    assertEquals((float) 0.9772498680518208, (Float) got.get(0), 1e-6f);
    assertEquals(3f, got.get(1));
  }

  /** The generated shader of {@link #SIG} with {@code decl} before vk_udf and {@code expr} as its body. */
  private static byte[] escaped(String header, String decl, String expr) {
    String src = ColumnKernel.generate(SIG, expr).source();
    src = src.replace("#version 450\n", "#version 450\n" + header);
    src = src.replace("float vk_udf(", decl + "\nfloat vk_udf(");
    CompileResult r = GlslCompiler.compile("escaped.comp", src, null);
    assertTrue(r.ok(), r.log() + "\n" + src);
    return r.spirv().get();
  }

  private static void sealRefuses(byte[] spirv, String text) {
    sealRefuses(spirv, text, true);
  }

  /** {@code onLoad}: whether loading it as a hand-written program is refused too (element types are not checked there). */
  private static void sealRefuses(byte[] spirv, String text, boolean onLoad) {
    GpuException e = assertThrows(GpuException.class, () -> ColumnKernel.seal(SIG, spirv));
    assertEquals(GpuException.Code.COMPILE, e.code(), e.getMessage());
    assertTrue(e.getMessage().startsWith("GPU UDF 'evil' compiles to a shader that is not sealed: program 'evil' "),
        e.getMessage());
    assertTrue(e.getMessage().contains(text), () -> "lacks '" + text + "': " + e.getMessage());
    if (!onLoad) {
      return;
    }
    // the device refuses it too, before the driver sees it, and stays clean
    Program p = ColumnKernel.compile(SIG, "x + y").program(64);
    Program hostile = Program.spirv("evil", java.nio.ByteBuffer.wrap(spirv)).workgroupSize(64)
        .buffers(p.buffers()).indirect("params", ColumnKernel.GROUPS_OFFSET).build();
    GpuException d = assertThrows(GpuException.class, () -> gpu.device().load(hostile));
    assertEquals(GpuException.Code.INVALID_ARGUMENT, d.code(), d.getMessage());
    assertTrue(d.getMessage().contains(text), d.getMessage());
  }

  @Test
  void escapedShaders_areRefusedByTheSeal() {
    sealRefuses(escaped("", "layout(std430, set = 1, binding = 0) buffer Evil { float evil[]; };", "evil[0] + x"),
        "declares a buffer at set 1, binding 0, which the program does not declare");
    sealRefuses(escaped("", "layout(std430, set = 0, binding = 1) buffer Alias { float alias[]; };",
        "(alias[0] = 5.0) + x"), "binding 1 ('in0') twice (an alias)");
    sealRefuses(escaped("", "layout(std430, set = 0, binding = 7) buffer Undeclared { float u[]; };", "u[3] + x"),
        "set 0, binding 7, which the program does not declare");
    sealRefuses(escaped("#extension GL_EXT_buffer_reference : require\n#extension GL_EXT_buffer_reference2 : require\n",
        "layout(buffer_reference, std430) buffer Ptr { float v; };", "Ptr p = Ptr(uint64_t(4096));\nreturn p.v + x;"),
        "capability 53");
    sealRefuses(escaped("", "layout(push_constant) uniform Push { float k; } pc;", "pc.k * x"),
        "storage class PushConstant");
    sealRefuses(escaped("", "shared float scratch[64];", "scratch[0] + x"), "workgroup-shared memory");
    sealRefuses(escaped("", "layout(set = 0, binding = 5) uniform sampler2D tex;", "textureLod(tex, vec2(0.0), 0.0).x + x"),
        "storage class UniformConstant");
  }

  @Test
  void generatedDeclarationsChanged_areRefusedByTheSeal() {
    String src = ColumnKernel.generate(SIG, "(vk_in0[0] = 1.0) + x").source().replace("readonly buffer VkIn0", "buffer VkIn0");
    sealRefuses(GlslCompiler.compileOrThrow("w.comp", src, null), "may write 'in0' (set 0, binding 1)");
    String ints = ColumnKernel.generate(SIG, "x + y").source().replace("float vk_in1[]", "int vk_in1[]");
    sealRefuses(GlslCompiler.compileOrThrow("t.comp", ints, null), "'in1' as an array of 32-bit integers", false);
    String params = ColumnKernel.generate(SIG, "x + y").source().replace(") uniform VkParams", ") buffer VkParams");
    sealRefuses(GlslCompiler.compileOrThrow("u.comp", params, null),
        "declares 'params' (set 0, binding 0) as a storage buffer but the program declares it UNIFORM");
  }

  @Test
  void anotherKernelsModule_isRefusedWhenItWritesAnInput() {
    KernelSignature one = KernelSignature.of("one", SqlType.FLOAT, arg("x", SqlType.FLOAT));
    byte[] other = ColumnKernel.compile(one, "x * 2.0").program(64).spirvCode().orElseThrow();
    GpuException e = assertThrows(GpuException.class, () -> ColumnKernel.seal(SIG, other));
    assertTrue(e.getMessage().contains("may write 'in1'"), e.getMessage());
  }

  /** {@code good} with operand {@code operand} of its first instruction of {@code opcode} set to {@code value}. */
  private static byte[] patched(byte[] good, int opcode, int operand, int value) {
    io.vkspark.gpu.internal.SpirvModule m = io.vkspark.gpu.internal.SpirvModule.parse("test", good);
    var in = m.instructions().stream().filter(i -> i.opcode() == opcode).findFirst().orElseThrow();
    byte[] out = good.clone();
    java.nio.ByteBuffer.wrap(out).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(4 * (in.start() + 1 + operand), value);
    return out;
  }

  @Test
  void handPatchedModules_areRefused() {
    byte[] good = ColumnKernel.compile(SIG, "x * y + 1.0").program(64).spirvCode().orElseThrow();
    sealRefuses(patched(good, 14, 0, 5348), "addressing model 5348 (only Logical addressing is allowed)");
    sealRefuses(patched(good, 17, 0, 6), "capability 6, which vkspark kernels may not use");
    sealRefuses(patched(good, 17, 0, 5347), "capability 5347");
    sealRefuses(patched(good, 15, 0, 0), "execution model 0 (only a GLCompute entry point named main is allowed)");
    sealRefuses(patched(good, 15, 2, 0x6e69616d ^ 0x20), "only a GLCompute entry point named main");
  }

  @Test
  void truncatedModules_areRefusedAtEveryLength() {
    byte[] good = ColumnKernel.compile(SIG, "x * y + 1.0").program(64).spirvCode().orElseThrow();
    ColumnKernel.seal(SIG, good);
    for (int len = 0; len < good.length; len++) {
      byte[] cut = Arrays.copyOf(good, len);
      GpuException e = assertThrows(GpuException.class, () -> ColumnKernel.seal(SIG, cut), "length " + len);
      assertTrue(e.getMessage().contains("Fix: "), e.getMessage());
    }
  }

  @Test
  void garbageAndFlippedBits_areErrorsNeverCrashes() {
    byte[] good = ColumnKernel.compile(SIG, "x * y + 1.0").program(64).spirvCode().orElseThrow();
    Random r = new Random(10);
    int refused = 0;
    for (int i = 0; i < 500; i++) {
      byte[] junk = new byte[r.nextInt(400)];
      r.nextBytes(junk);
      if (i % 2 == 0 && junk.length >= 20) {
        System.arraycopy(good, 0, junk, 0, 20); // a valid header, garbage after it
      }
      assertThrows(GpuException.class, () -> SpirvSeal.check(ColumnKernel.compile(SIG, "x * y + 1.0").program(64), junk));
      refused++;
    }
    assertEquals(500, refused);
    for (int i = 0; i < 3000; i++) {
      byte[] flipped = good.clone();
      int bit = r.nextInt(flipped.length * 8);
      flipped[bit / 8] ^= (byte) (1 << (bit % 8));
      try {
        ColumnKernel.seal(SIG, flipped);
      } catch (GpuException expected) {
        assertTrue(expected.getMessage().contains("Fix: "), expected.getMessage());
      }
    }
  }

  /**
   * A body of 20,000 additions: once an OutOfMemoryError (LWJGL's 64 KiB stack held the source),
   * and a chain of 1,500 killed the JVM with SIGSEGV (glslang recursed off an 8 MiB native stack).
   * Now compiled on a thread with room, and the result matches Java.
   */
  @Test
  void longAndDeepBodies_compileWithoutCrashingTheJvm() {
    ColumnKernel k = ColumnKernel.compile(SIG, "x" + " + y".repeat(20_000));
    if (((io.vkspark.gpu.internal.VulkanDevice) gpu.device()).float32Mode() == KernelPasses.Float32Mode.EXACT) {
      // a device that flushes float32 subnormals: each float operation is computed from its bits, and
      // 20,000 of them are refused before the driver compiles them (FlushFreeFloats.MAX_OPERATIONS)
      GpuException refused = assertThrows(GpuException.class, () -> gpu.run(k, new Object[] {1f}, new Object[] {0.5f}));
      assertEquals(GpuException.Code.COMPILE, refused.code());
      assertTrue(refused.getMessage().contains("has 20000 32-bit float operations"), refused.getMessage());
      assertTrue(refused.getMessage().contains("Fix: compute in double"), refused.getMessage());
      return;
    }
    List<Object> got = gpu.run(k, new Object[] {1f, -3f}, new Object[] {0.5f, 0.25f});
    float want0 = 1f;
    float want1 = -3f;
    for (int i = 0; i < 20_000; i++) {
      want0 += 0.5f;
      want1 += 0.25f;
    }
    assertEquals(List.of(want0, want1), got);
    // from a thread with a small stack, as executor threads may have
    Thread t = new Thread(null, () -> ColumnKernel.compile(SIG, "x" + "*y+x".repeat(3_000)), "small", 256 * 1024);
    Throwable[] failed = new Throwable[1];
    t.setUncaughtExceptionHandler((th, e) -> failed[0] = e);
    t.start();
    assertDoesNotThrow(() -> t.join());
    assertNull(failed[0]);
    GpuException e = assertThrows(GpuException.class, () -> ColumnKernel.compile(SIG, "x" + " + y".repeat(70_000)));
    assertEquals(GpuException.Code.COMPILE, e.code());
    assertTrue(e.getMessage().contains("more than vkspark compiles"), e.getMessage());
  }

  /** Comments in expression bodies: a trailing // once swallowed the generated ");", a "return" in a comment made it a function body. */
  @Test
  void expressionBodies_withComments_compile() {
    for (String body : new String[] {"2.0 * x + y // doubled", "2.0 * x + y; // doubled", "2.0 * x /* return */ + y",
        "// return\n2.0 * x + y", "2.0 * x\n + y; /* ; */", "2.0 * x\r + y // CR only", "2.0 * x\r\n + y;\r\n// CRLF"}) {
      ColumnKernel k = ColumnKernel.compile(SIG, body);
      assertEquals(List.of(5f, -1f), gpu.run(k, new Object[] {2f, 0f}, new Object[] {1f, -1f}), body);
    }
  }

  /** A bare CR ends a line for glslang and for the check: the body's lines stay the lines reported. */
  @Test
  void bareCarriageReturns_countAsLines() {
    GpuException e = assertThrows(GpuException.class, () -> ColumnKernel.compile(SIG, "float a = x;\rfloat b = a +;\rreturn b;"));
    assertTrue(e.getMessage().contains("line 2 of its body"), e.getMessage());
    assertTrue(e.getMessage().contains("[float b = a +;]"), e.getMessage());
  }

  /**
   * Structured mutations of real modules (optimized and debug, float, double, int64 and boolean
   * kernels): header fields, word counts of 0, 1, too many and 0xffff, ids at and past the bound,
   * operands of every instruction, duplicated and dropped instructions. The seal, the feature check
   * and the semantics scan answer each with a GpuException or accept it; nothing else escapes.
   */
  @Test
  void structuredMutations_areErrorsNeverCrashes() {
    KernelSignature dsig = KernelSignature.of("d", SqlType.DOUBLE, arg("a", SqlType.DOUBLE), arg("b", SqlType.BIGINT));
    KernelSignature bsig = KernelSignature.of("b", SqlType.BOOLEAN, arg("a", SqlType.INT), arg("c", SqlType.BOOLEAN));
    Object[][] kernels = {{SIG, "float t[4] = float[](x, y, 1.0, 2.0); return t[int(x) & 3] / y;"},
        {dsig, "jmin(a, double(jdiv(b, 3l))) + vk_norm_cdf(a)"}, {bsig, "c && jrem(a, 7) > 2"}};
    Random r = new Random(11);
    int mutants = 0;
    int accepted = 0;
    for (Object[] kb : kernels) {
      KernelSignature sig = (KernelSignature) kb[0];
      String body = (String) kb[1];
      ColumnKernel k = ColumnKernel.compile(sig, body);
      ColumnKernel.Generated g = ColumnKernel.generate(sig, body);
      byte[] debug = GlslCompiler.compile("dbg.comp", g.source(), null, GlslCompiler.Flavor.DEBUG, s -> { }).spirv().orElseThrow();
      for (byte[] good : List.of(k.program(64).spirvCode().orElseThrow(), debug)) {
        int[] w = new int[good.length / 4];
        java.nio.ByteBuffer.wrap(good).order(java.nio.ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(w);
        List<Integer> starts = new java.util.ArrayList<>();
        for (int i = 5; i < w.length; i += w[i] >>> 16) {
          starts.add(i);
        }
        int[] nasty = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, w[3], w[3] - 1, w[3] + 1, 0xffff, 0x10000, 7, 12};
        for (int n = 0; n < 2500; n++) {
          int[] m = w.clone();
          int at = starts.get(r.nextInt(starts.size()));
          int len = w[at] >>> 16;
          switch (r.nextInt(7)) {
            case 0 -> m[r.nextInt(5)] = nasty[r.nextInt(nasty.length)];
            case 1 -> m[at] = (new int[] {0, 1, len + 1, len - 1, 0xffff}[r.nextInt(5)] << 16) | (w[at] & 0xffff);
            case 2 -> m[at] = (w[at] & 0xffff0000) | r.nextInt(400);
            case 3 -> m[at + r.nextInt(len)] = nasty[r.nextInt(nasty.length)];
            case 4 -> m[at + r.nextInt(len)] = r.nextInt();
            case 5 -> { // drop the instruction
              int[] d = new int[m.length - len];
              System.arraycopy(m, 0, d, 0, at);
              System.arraycopy(m, at + len, d, at, m.length - at - len);
              m = d;
            }
            default -> { // duplicate it
              int[] d = new int[m.length + len];
              System.arraycopy(m, 0, d, 0, at + len);
              System.arraycopy(m, at, d, at + len, m.length - at);
              m = d;
            }
          }
          byte[] bytes = new byte[m.length * 4];
          java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asIntBuffer().put(m);
          mutants++;
          try {
            ColumnKernel.seal(sig, bytes);
            SpirvSeal.requireFeatures(k.program(64), bytes, gpu.device().info().features());
            accepted++;
          } catch (GpuException expected) {
            assertTrue(expected.getMessage().contains("Fix: "), expected.getMessage());
          }
          try {
            JavaSemantics.scan(sig, body, g, io.vkspark.gpu.internal.SpirvModule.parse("m", bytes));
          } catch (GpuException expected) {
            assertTrue(expected.getMessage().contains("Fix: "), expected.getMessage());
          }
        }
      }
    }
    assertEquals(15_000, mutants);
    assertTrue(accepted < mutants, "some mutants must be refused");
  }

  /**
   * Huge local arrays: float q[2147483647] kept spirv-opt busy for minutes and gigabytes (it is
   * linear in the length), and q[100000000] compiled to 400 MB of private memory per row. Refused
   * from the fast unoptimized compile, before the optimizer sees them; small arrays still run.
   */
  @Test
  void hugeLocalArrays_areRefusedBeforeOptimizing() {
    for (String body : new String[] {"float q[2147483647]; return q[0];", "float q[100000000]; q[int(y) & 7] = x; return q[1];",
        "const int n = 1 << 16; float[n] q; q[0] = x; return q[0];", "float q[1024][1024]; return q[1][2] + x;",
        "struct S { vec4 v[8192]; }; S s; s.v[0] = vec4(x); return s.v[0].x;"}) {
      long t0 = System.nanoTime();
      GpuException e = assertThrows(GpuException.class, () -> ColumnKernel.compile(SIG, body), body);
      assertTrue((System.nanoTime() - t0) < 20_000_000_000L, "refused in seconds: " + body);
      assertEquals(GpuException.Code.COMPILE, e.code(), e.getMessage());
      assertTrue(e.getMessage().contains("bytes of local variables per row"), e.getMessage());
      assertTrue(e.getMessage().contains("Fix: "), e.getMessage());
    }
    ColumnKernel k = ColumnKernel.compile(SIG, "float q[1024]; for (int i = 0; i < 1024; i++) { q[i] = x * float(i); }\n"
        + "return q[clamp(int(y), 0, 1023)];");
    assertEquals(List.of(6f, 0f), gpu.run(k, new Object[] {2f, 5f}, new Object[] {3f, -1f}));
  }
}
