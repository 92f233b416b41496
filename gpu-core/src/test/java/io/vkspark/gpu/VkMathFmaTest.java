package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.vulkan.GpuDevices;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * vkmath's exact products take one {@code fma} where the device's probe found it fused
 * (specialization constant 1, {@code VKM_FUSED_FMA}) and Dekker's splitting elsewhere. Both are
 * exact where vkmath calls them, so every function must give the same bits either way: the
 * functions of {@link VkMathTest}, over its arguments, on a device as opened and on the same device
 * opened with {@code vkspark.fma=off}, compared bit for bit. On a device that does not fuse (lavapipe)
 * both runs take Dekker's form; the comparison has teeth on one that does (an NVIDIA H200).
 */
class VkMathFmaTest {
  @Test
  void specializationConstant_isTheProbesVerdict_andOffClearsIt() {
    String source = VkMathTest.PRELUDE + VkMathTest.library() + """
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) readonly buffer Xs { double xs[]; };
        layout(std430, set = 0, binding = 1) writeonly buffer Rs { double rs[]; };
        void main() {
          uint i = gl_GlobalInvocationID.x;
          if (i >= uint(xs.length())) return;
          dvec2 p = vkm_two_prod(xs[i], xs[i] + 1.0LF);
          rs[i] = i == 0u ? (VKM_FUSED_FMA ? 1.0LF : 0.0LF) : p.x + p.y;
        }
        """;
    for (boolean off : new boolean[] {false, true}) {
      try (GpuDevice device = open(off)) {
        ByteBuffer out = run(device, source, List.of(doubles(0.5, 3.0)), 2);
        boolean fused = device.doubleRounding().fusedFma();
        assertFalse(off && fused, "vkspark.fma=off, yet the device reports a fused fma: " + device.doubleRounding());
        assertEquals(fused ? 1.0 : 0.0, out.getDouble(0), "VKM_FUSED_FMA against " + device.doubleRounding());
        assertEquals(12.0, out.getDouble(8), 0.0);
      }
    }
  }

  @Test
  void exactProduct_fmaAndDekker_agree() {
    SplittableRandom rnd = new SplittableRandom(20261203);
    int n = 200_000;
    double[] a = new double[n];
    double[] b = new double[n];
    for (int i = 0; i < n; i++) { // products well inside the range where both are exact
      a[i] = (rnd.nextBoolean() ? 1 : -1) * Math.scalb(1.0 + rnd.nextDouble(), rnd.nextInt(-400, 400));
      b[i] = (rnd.nextBoolean() ? 1 : -1) * Math.scalb(1.0 + rnd.nextDouble(), rnd.nextInt(-400, 400));
    }
    String source = VkMathTest.PRELUDE + VkMathTest.library() + """
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) readonly buffer As { double as_[]; };
        layout(std430, set = 0, binding = 1) readonly buffer Bs { double bs[]; };
        layout(std430, set = 0, binding = 2) writeonly buffer Rs { dvec2 rs[]; };
        void main() {
          uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x
              + gl_LocalInvocationID.x;
          if (i >= uint(as_.length())) return;
          rs[2u * i] = vkm_two_prod(as_[i], bs[i]);
          rs[2u * i + 1u] = vkm_two_prod_dekker(as_[i], bs[i]);
        }
        """;
    try (GpuDevice device = open(false)) {
      ByteBuffer out = run(device, source, List.of(doubles(a), doubles(b)), 4L * n);
      int differ = 0;
      StringBuilder examples = new StringBuilder();
      for (int i = 0; i < n; i++) {
        long[] w = new long[4];
        for (int j = 0; j < 4; j++) {
          w[j] = Double.doubleToRawLongBits(out.getDouble(32 * i + 8 * j));
        }
        if ((w[0] != w[2] || w[1] != w[3]) && differ++ < 5) {
          examples.append(String.format(" %s * %s;", a[i], b[i]));
        }
        // and the product is exact: p is Java's a * b and p + e is a * b to twice the precision
        assertEquals(a[i] * b[i], out.getDouble(32 * i), 0.0);
        assertEquals(Math.fma(a[i], b[i], -a[i] * b[i]), out.getDouble(32 * i + 8), 0.0,
            "the rounding error of " + a[i] + " * " + b[i] + " on " + device.doubleRounding());
      }
      assertEquals(0, differ, differ + " of " + n + " products differ between the fma and Dekker forms:" + examples);
    }
  }

  @Test
  void everyFunction_givesTheSameBitsWithAndWithoutFma() {
    List<VkMathTest.Fn> fns = VkMathTest.functions();
    VkMathTest.Cases cases = VkMathTest.Cases.of(fns, 4321);
    int n = cases.size();
    int[] ops = cases.ops();
    double[] xs = cases.xs();
    double[] ys = cases.ys();
    ByteBuffer[] outs = new ByteBuffer[2];
    String[] rounding = new String[2];
    for (int m = 0; m < 2; m++) {
      try (GpuDevice device = open(m == 1)) {
        outs[m] = run(device, cases.program(fns), cases.buffers(), n);
        rounding[m] = device.doubleRounding().toString();
      }
    }
    int differ = 0;
    StringBuilder examples = new StringBuilder();
    for (int i = 0; i < n; i++) {
      long fma = Double.doubleToRawLongBits(outs[0].getDouble(8 * i));
      long dekker = Double.doubleToRawLongBits(outs[1].getDouble(8 * i));
      if (fma != dekker && differ++ < 8) {
        examples.append(String.format(" %s(%s, %s): %s against %s;", fns.get(ops[i]).name(), xs[i], ys[i],
            outs[0].getDouble(8 * i), outs[1].getDouble(8 * i)));
      }
    }
    assertEquals(0, differ, differ + " of " + n + " results differ (" + rounding[0] + " / " + rounding[1] + "):" + examples);
  }

  private static GpuDevice open(boolean fmaOff) {
    String before = System.getProperty(DoubleRounding.FMA_PROPERTY);
    System.setProperty(DoubleRounding.FMA_PROPERTY, fmaOff ? "off" : "auto");
    try {
      return GpuDevices.open(DeviceOptions.defaults().withValidation(true));
    } finally {
      if (before == null) {
        System.clearProperty(DoubleRounding.FMA_PROPERTY);
      } else {
        System.setProperty(DoubleRounding.FMA_PROPERTY, before);
      }
    }
  }

  /** Runs {@code source} over double {@code inputs} (bindings 0.., one row per double) and returns its double output. */
  private static ByteBuffer run(GpuDevice device, String source, List<ByteBuffer> inputs, long outDoubles) {
    Program.Builder b = Program.glsl("vkmath_fma_test", source).workgroupSize(64);
    for (int i = 0; i < inputs.size(); i++) {
      b.buffer(BufferDecl.input("in" + i, i, ElementType.FLOAT64));
    }
    Program program = b.buffer(BufferDecl.output("out", inputs.size(), ElementType.FLOAT64, outDoubles)).build();
    return run(device, program, inputs, inputs.get(0).remaining() / 8);
  }

  /** Runs {@code program} over {@code rows} rows of {@code inputs} and returns its output. */
  private static ByteBuffer run(GpuDevice device, Program program, List<ByteBuffer> inputs, int rows) {
    try (Kernel kernel = device.load(program)) {
      ByteBuffer out = kernel.dispatch(inputs, Groups.covering(rows, 64, 65535)).get(0).order(ByteOrder.LITTLE_ENDIAN);
      assertEquals(0, device.validationErrors(), device.validationMessages().toString());
      return out;
    }
  }

  private static ByteBuffer doubles(double... v) {
    ByteBuffer b = ByteBuffer.allocate(8 * v.length).order(ByteOrder.LITTLE_ENDIAN);
    for (double d : v) {
      b.putDouble(d);
    }
    return b.flip();
  }
}
