package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.vulkan.GpuDevices;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * vkmath's {@code vk_norm_cdf} runs each costly step once a lane (one exact product, one rational
 * function with coefficients picked per region, one division, one exp) so that a GPU subgroup whose
 * lanes fall in different regions of erfc does not run every region's steps. It must give the bits
 * of the branchy form it replaced ({@code norm-cdf-branchy.glsl}, fdlibm's erfc regions as
 * branches): both run in one dispatch over the regions' edges, a ulp either side of each, special
 * values and random arguments, and every result is compared bit for bit.
 */
class NormCdfBitsTest {
  /** z = x / sqrt(2) at erfc's region edges and the function's own thresholds. */
  private static final double[] EDGES_Z = {0x1p-56, 0.25, 0.84375, 1.25, 1 / 0.35, 6, 28};

  static List<Double> arguments() {
    List<Double> xs = new ArrayList<>(List.of(0.0, -0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN,
        Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL, Double.MAX_VALUE, -Double.MAX_VALUE, 39.5, -39.5,
        -38.5, -40.0, 1e300, -1e300));
    for (double ez : EDGES_Z) {
      for (double sign : new double[] {1, -1}) {
        double x = sign * ez * Math.sqrt(2);
        for (int k = -40; k <= 40; k++) {
          xs.add(x + k * Math.ulp(x));
        }
      }
    }
    for (double t : new double[] {39.5, 38.5}) { // the lower tail's cut-off and underflow
      for (int k = -40; k <= 40; k++) {
        xs.add(-t + k * Math.ulp(t));
      }
    }
    SplittableRandom rnd = new SplittableRandom(20261203);
    for (int i = 0; i < 400_000; i++) {
      xs.add(rnd.nextDouble(-12, 12)); // every region, mixed within a subgroup
    }
    for (int i = 0; i < 100_000; i++) {
      xs.add(rnd.nextDouble(-42, 42));
    }
    for (int i = 0; i < 100_000; i++) {
      xs.add((rnd.nextBoolean() ? 1 : -1) * Math.scalb(1.0 + rnd.nextDouble(), rnd.nextInt(-80, 8)));
    }
    return xs;
  }

  @Test
  void branchFreeForm_givesTheBranchyFormsBits() throws IOException {
    List<Double> xs = arguments();
    int n = xs.size();
    ByteBuffer in = ByteBuffer.allocate(8 * n).order(ByteOrder.LITTLE_ENDIAN);
    xs.forEach(in::putDouble);
    in.flip();
    String reference;
    try (InputStream r = NormCdfBitsTest.class.getResourceAsStream("/io/vkspark/gpu/norm-cdf-branchy.glsl")) {
      assertNotNull(r, "norm-cdf-branchy.glsl is not on the test classpath");
      reference = new String(r.readAllBytes(), StandardCharsets.UTF_8);
    }
    String source = VkMathTest.PRELUDE + VkMathTest.library() + "\n" + reference + """
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) readonly buffer Xs { double xs[]; };
        layout(std430, set = 0, binding = 1) writeonly buffer Rs { double rs[]; };
        void main() {
          uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x
              + gl_LocalInvocationID.x;
          if (i >= uint(xs.length())) return;
          rs[2u * i] = vk_norm_cdf(xs[i]);
          rs[2u * i + 1u] = ref_norm_cdf(xs[i]);
        }
        """;
    try (GpuDevice device = GpuDevices.open(DeviceOptions.defaults().withValidation(true))) {
      Program program = Program.glsl("norm_cdf_bits_test", source).workgroupSize(64)
          .buffer(BufferDecl.input("xs", 0, ElementType.FLOAT64))
          .buffer(BufferDecl.output("rs", 1, ElementType.FLOAT64, 2L * n)).build();
      ByteBuffer out;
      try (Kernel kernel = device.load(program)) {
        out = kernel.dispatch(List.of(in), Groups.covering(n, 64, 65535)).get(0).order(ByteOrder.LITTLE_ENDIAN);
      }
      assertEquals(0, device.validationErrors(), device.validationMessages().toString());
      int differ = 0;
      StringBuilder examples = new StringBuilder();
      for (int i = 0; i < n; i++) {
        double got = out.getDouble(16 * i);
        double want = out.getDouble(16 * i + 8);
        boolean same = Double.isNaN(want) ? Double.isNaN(got) : Double.doubleToRawLongBits(got) == Double.doubleToRawLongBits(want);
        if (!same && differ++ < 8) {
          examples.append(String.format(" x=%s: %s, branchy %s;", xs.get(i), got, want));
        }
        if (!Double.isNaN(xs.get(i))) {
          assertTrue(want >= 0 && want <= 1, "Phi(" + xs.get(i) + ") = " + want);
        }
      }
      assertEquals(0, differ, differ + " of " + n + " arguments differ:" + examples);
      // and a few of Phi's exact values: Phi(0), Phi(+Infinity), Phi(-Infinity)
      assertEquals(0.5, out.getDouble(0), 0.0);
      assertEquals(1.0, out.getDouble(16 * 2), 0.0);
      assertEquals(0.0, out.getDouble(16 * 3), 0.0);
    }
  }
}
