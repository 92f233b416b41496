package io.vkspark.gpu.internal;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.DoubleRounding;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.Program;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Measures whether a device's double {@code /} and {@code sqrt} give Java's bits: one kernel
 * divides {@link #CASES} fixed operand pairs (the H200's known misses, decimal scalings, ulp-hard
 * significands, subnormals, huge and tiny ratios, zeros, infinities, NaN), takes square roots and
 * computes the rounding error of {@code a * b} with {@code fma} (zero where fma is not fused), and
 * the host compares each result with Java's. Operands come from a buffer so no compiler folds
 * them. When vkspark's correctly rounded functions will be used, the same kernel rewritten
 * ({@link DoubleRoundingRewrite}) is checked too.
 */
final class DoubleRoundingProbe {
  /** Operand pairs probed (a multiple of the workgroup size). */
  static final int CASES = 4096;
  private static final int GROUP = 64;

  private static final String SOURCE = source("a / b");

  /** The probe kernel with {@code quotient} as its first result (tests put an inexact division there). */
  static String source(String quotient) {
    return """
        #version 450
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) readonly buffer In { double v[]; };
        layout(std430, set = 0, binding = 1) buffer Out { double r[]; };
        void main() {
          uint i = gl_GlobalInvocationID.x;
          double a = v[2u * i];
          double b = v[2u * i + 1u];
          r[3u * i] = QUOTIENT;
          r[3u * i + 1u] = sqrt(a);
          r[3u * i + 2u] = fma(a, b, -(a * b)); // the rounding error of a * b where fma is fused
        }
        """.replace("QUOTIENT", quotient);
  }

  private DoubleRoundingProbe() {}

  /** What one run found: mismatches against Java and the first of each, for the log. */
  record Result(int divideMisses, int sqrtMisses, int fmaMisses, String example) {}

  /** Probes {@code device} (which must have float64) and applies {@code mode}. */
  static DoubleRounding measure(VulkanDevice device, DoubleRounding.Mode mode) {
    double[] cases = cases();
    byte[] spirv = GlslCompiler.compileOrThrow("vk_double_rounding_probe.comp", SOURCE,
        device.options().shaderCacheDir());
    Result own = run(device, spirv, cases);
    boolean refineDivide = mode == DoubleRounding.Mode.REFINE || (mode == DoubleRounding.Mode.AUTO && own.divideMisses() > 0);
    boolean refineSqrt = mode == DoubleRounding.Mode.REFINE || (mode == DoubleRounding.Mode.AUTO && own.sqrtMisses() > 0);
    boolean fused = own.fmaMisses() == 0 && DoubleRounding.fmaAllowed();
    boolean refinedExact = true;
    String example = own.example();
    if (refineDivide || refineSqrt) {
      Result refined = run(device, DoubleRoundingRewrite.refine(spirv, refineDivide, refineSqrt, fused), cases);
      refinedExact = (!refineDivide || refined.divideMisses() == 0) && (!refineSqrt || refined.sqrtMisses() == 0);
      if (!refinedExact) {
        example = "refined: " + refined.example();
      }
    }
    return new DoubleRounding(own.divideMisses() == 0, own.sqrtMisses() == 0, refineDivide, refineSqrt, fused,
        refinedExact, example);
  }

  /** Runs the probe kernel {@code spirv} over {@code cases} (pairs a, b) and compares with Java. */
  static Result run(VulkanDevice device, byte[] spirv, double[] cases) {
    int n = cases.length / 2;
    Program p = Program.spirv("vk_double_rounding_probe", ByteBuffer.wrap(spirv)).workgroupSize(GROUP)
        .buffer(BufferDecl.input("v", 0, ElementType.FLOAT64))
        .buffer(BufferDecl.output("r", 1, ElementType.FLOAT64, 3L * n))
        .build();
    ByteBuffer in = ByteBuffer.allocateDirect(8 * cases.length).order(ByteOrder.LITTLE_ENDIAN);
    for (double d : cases) {
      in.putDouble(d);
    }
    in.flip();
    ByteBuffer out;
    try (Kernel k = device.loadExactly(p)) {
      out = k.dispatch(List.of(in), Groups.of((n + GROUP - 1) / GROUP)).get(0).order(ByteOrder.LITTLE_ENDIAN);
    }
    int divMisses = 0;
    int sqrtMisses = 0;
    int fmaMisses = 0;
    String example = "";
    for (int i = 0; i < n; i++) {
      double a = cases[2 * i];
      double b = cases[2 * i + 1];
      double q = out.getDouble(24 * i);
      double s = out.getDouble(24 * i + 8);
      if (Double.doubleToLongBits(out.getDouble(24 * i + 16)) != Double.doubleToLongBits(Math.fma(a, b, -(a * b)))) {
        fmaMisses++;
      }
      if (Double.doubleToLongBits(q) != Double.doubleToLongBits(a / b)) {
        if (divMisses++ == 0 && example.isEmpty()) {
          example = a + " / " + b + " = " + q + ", Java " + (a / b);
        }
      }
      if (Double.doubleToLongBits(s) != Double.doubleToLongBits(Math.sqrt(a))) {
        if (sqrtMisses++ == 0 && example.isEmpty()) {
          example = "sqrt(" + a + ") = " + s + ", Java " + Math.sqrt(a);
        }
      }
    }
    return new Result(divMisses, sqrtMisses, fmaMisses, example);
  }

  /** The probe's operand pairs {a0, b0, a1, b1, ...}: fixed hard cases, then seeded random ones. */
  static double[] cases() {
    double[] fixed = {
        123456789, 100, 100, 49, 1, 3, 2, 3, 1, 10, 7, 0.1, 1, 0x1.fffffffffffffp0, 0x1.fffffffffffffp0, 0x1.ffffffffffffep0,
        3 * Double.MIN_VALUE, 2, Double.MIN_VALUE, 2, 5 * Double.MIN_VALUE, 4, Double.MIN_NORMAL, 3, 1, Double.MAX_VALUE,
        Double.MAX_VALUE, 0.5, Double.MAX_VALUE, 0x1.0000000000001p0, 1, Double.MIN_VALUE, 0x1p-1022, 0x1p52,
        1, 0.0, -1, 0.0, 1, -0.0, 0.0, 0.0, -0.0, 3, Double.POSITIVE_INFINITY, 2, 2, Double.NEGATIVE_INFINITY,
        Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY, Double.NaN, 1, 1, Double.NaN,
        2, 1, 4, 1, 0x1.fffffffffffffp1, 1, 0x1p-1074, 1, 0x1p-1073, 1, 1e308, 1, 1e-308, 1, -4, 1};
    double[] out = new double[2 * CASES];
    System.arraycopy(fixed, 0, out, 0, fixed.length);
    SplittableRandom r = new SplittableRandom(0x5eed_d1f);
    for (int i = fixed.length; i < out.length; i += 2) {
      switch ((i / 2) % 6) {
        case 0 -> { // decimal scalings, as double(x) / 100.0
          out[i] = r.nextInt(-2_000_000_000, 2_000_000_000);
          out[i + 1] = new double[] {10, 100, 1000, 10000, 49, 7, 3}[r.nextInt(7)];
        }
        case 1 -> { // any bits
          out[i] = Double.longBitsToDouble(r.nextLong());
          out[i + 1] = Double.longBitsToDouble(r.nextLong());
        }
        case 2 -> { // significands near 1 and 2 (reciprocal and rounding edges)
          out[i] = Double.longBitsToDouble(0x3FF0000000000000L | (r.nextLong() & 0xFL) | (r.nextBoolean() ? 0xFFFFFFFFFFFF0L : 0));
          out[i + 1] = Double.longBitsToDouble(0x3FF0000000000000L | (r.nextLong() & 0xFL) | (r.nextBoolean() ? 0xFFFFFFFFFFFF0L : 0));
        }
        case 3 -> { // subnormal quotients and operands
          out[i] = r.nextDouble() * Math.scalb(1.0, -1000 - r.nextInt(74));
          out[i + 1] = (1 + r.nextDouble()) * Math.scalb(1.0, r.nextInt(-30, 60));
        }
        case 4 -> { // huge and tiny ratios
          out[i] = (1 + r.nextDouble()) * Math.scalb(1.0, r.nextInt(-1074, 1024));
          out[i + 1] = (1 + r.nextDouble()) * Math.scalb(1.0, r.nextInt(-1074, 1024));
        }
        default -> { // everyday values
          out[i] = r.nextDouble() * 1000;
          out[i + 1] = r.nextDouble() * 100 + 1e-3;
        }
      }
    }
    return out;
  }
}
