package io.vkspark.gpu.internal;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.GlslCompiler;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.Program;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Whether a device flushes 32-bit subnormal floats when a kernel does not ask it to keep them: one
 * kernel subtracts, multiplies, adds and compares {@link #CASES} pairs whose operands or exact
 * results are subnormal, and the host compares with Java. The NVIDIA H200 flushes
 * ({@code 1.17549435E-38f - 1.4E-45f} gave {@code 1.17549435E-38}); lavapipe keeps them though it
 * promises nothing ({@code shaderDenormPreserveFloat32=false}). Operands come from a buffer, so no
 * compiler folds them; the results other than the subnormals' are exact in any rounding.
 */
final class FloatFlushProbe {
  private static final int GROUP = 64;
  /** Operand pairs {a, b}: subnormal operands, and normal ones whose difference, sum or product is subnormal. */
  static final float[] CASES = {
      1.17549435E-38f, 1.4E-45f, Float.MIN_VALUE, 1f, 1e-40f, 0f, 0f, 1e-40f, 1.5f * 0x1p-126f, -0x1p-126f,
      0x1p-126f, 0x1p-140f, 0x1p-100f, 0x1p-30f, -3e-42f, 2f, 5.877472E-39f, -5.877472E-39f, 0x1.8p-126f, 0x1p-126f};

  private FloatFlushProbe() {}

  private static final String SOURCE = """
      #version 450
      layout(local_size_x_id = 0) in;
      layout(std430, set = 0, binding = 0) readonly buffer In { float v[]; };
      layout(std430, set = 0, binding = 1) buffer Out { float r[]; };
      void main() {
        uint i = gl_GlobalInvocationID.x;
        float a = v[2u * i];
        float b = v[2u * i + 1u];
        r[4u * i] = a - b;
        r[4u * i + 1u] = a * b;
        r[4u * i + 2u] = a + b;
        r[4u * i + 3u] = a < b ? 1.0 : (a > b ? -1.0 : 0.0);
      }
      """;

  /** The probe's SPIR-V, compiled once per JVM (the same for every device). */
  private static volatile byte[] compiled;

  /** Whether {@code device} flushed any case: a description of the first, or empty when it kept them all. */
  static String flushes(VulkanDevice device) {
    byte[] spirv = compiled;
    if (spirv == null) {
      spirv = GlslCompiler.compileOrThrow("vk_float_flush_probe.comp", SOURCE, device.options().shaderCacheDir());
      compiled = spirv;
    }
    Program p = Program.spirv("vk_float_flush_probe", ByteBuffer.wrap(spirv)).workgroupSize(GROUP)
        .buffer(BufferDecl.input("v", 0, ElementType.FLOAT32))
        .buffer(BufferDecl.output("r", 1, ElementType.FLOAT32, 4L * GROUP))
        .build();
    ByteBuffer in = ByteBuffer.allocateDirect(8 * GROUP).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < 2 * GROUP; i++) {
      in.putFloat(i < CASES.length ? CASES[i] : 1f);
    }
    in.flip();
    ByteBuffer out;
    try (Kernel k = device.loadExactly(p)) {
      out = k.dispatch(List.of(in), Groups.of(1)).get(0).order(ByteOrder.LITTLE_ENDIAN);
    }
    for (int i = 0; i < CASES.length / 2; i++) {
      float a = CASES[2 * i];
      float b = CASES[2 * i + 1];
      float[] java = {a - b, a * b, a + b, a < b ? 1f : (a > b ? -1f : 0f)};
      String[] what = {" - ", " * ", " + ", " <> "};
      for (int j = 0; j < 4; j++) {
        float got = out.getFloat(16 * i + 4 * j);
        if (Float.floatToIntBits(got) != Float.floatToIntBits(java[j])) {
          return a + what[j] + b + " gave " + got + ", Java " + java[j];
        }
      }
    }
    return "";
  }
}
