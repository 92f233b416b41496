package io.vkspark.examples.bench;

import io.vkspark.examples.ImpliedVolatility;
import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.DoubleRounding;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.KernelSpec;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * What the implied-volatility kernel's normal CDF costs, by form: the example's kernel with
 * {@code vk_norm_cdf} as vkmath has it ({@code picks}: each costly step once a lane, coefficients
 * picked per region), as it was ({@code branchy}: fdlibm's regions as branches, the test resource
 * {@code norm-cdf-branchy.glsl}, read from {@code -Dbranchy=PATH}, by default its path from the
 * repository root), with its rational function's Horner steps fused ({@code fusedpoly}: other bits
 * on a device that fuses, so not taken) and replaced by a float logistic ({@code cheapcdf}: what the
 * rest of the kernel costs). Each on a device opened with {@code vkspark.fma=auto} and again with
 * {@code off}, alternated after a warm-up. Prints one JSON line per case with the median wall and
 * device milliseconds per batch and how many rows differ from {@code picks} with {@code auto}.
 *
 * <p>Args: {@code [rows [runs]]}, default 4194304, 7.
 */
public final class NormCdfVariantBench {
  private NormCdfVariantBench() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 4 << 20;
    int runs = args.length > 1 ? Integer.parseInt(args[1]) : 7;
    String branchy = Files.readString(Path.of(System.getProperty("branchy", "gpu-core/src/test/resources/io/vkspark/gpu/norm-cdf-branchy.glsl")));
    KernelSpec base = new ImpliedVolatility().kernel().spec("iv");
    Map<String, KernelSpec> variants = new LinkedHashMap<>();
    variants.put("picks", base);
    variants.put("branchy", new KernelSpec(base.signature(), base.body().replace("vk_norm_cdf", "ref_norm_cdf"), branchy));
    variants.put("fusedpoly", new KernelSpec(base.signature(), base.body().replace("vk_norm_cdf", "fp_norm_cdf"), fusedPoly()));
    variants.put("cheapcdf", new KernelSpec(base.signature(), base.body().replace("vk_norm_cdf", "ch_norm_cdf"),
        "double ch_norm_cdf(double x) { return double(1.0 / (1.0 + exp(-1.702 * float(x)))); }\n"));
    Map<String, ColumnKernel> kernels = new LinkedHashMap<>();
    variants.forEach((k, v) -> kernels.put(k, ColumnKernel.compile(v.named("iv_" + k))));
    double[][] cols = ContractionBench.options(rows, true);
    double[] reference = null;
    String before = System.getProperty(DoubleRounding.FMA_PROPERTY);
    for (String fma : new String[] {"auto", "off"}) {
      System.setProperty(DoubleRounding.FMA_PROPERTY, fma);
      try (BufferAllocator alloc = new RootAllocator();
           GpuDevice d = GpuDevices.open(DeviceOptions.defaults().withDevice(System.getProperty("vkspark.device", "")));
           ColumnRuntime rt = new ColumnRuntime(d)) {
        System.out.println("{\"device\": \"" + d.info().name() + "\", \"fma\": \"" + fma + "\", \"rounding\": \""
            + d.doubleRounding() + "\"}");
        List<ContractionBench.Case> cases = new ArrayList<>();
        try {
          for (ColumnKernel k : kernels.values()) {
            cases.add(new ContractionBench.Case(rt, alloc, k, cols));
          }
          for (int i = 0; i < runs; i++) {
            for (ContractionBench.Case c : cases) {
              c.time();
            }
          }
          if (reference == null) {
            reference = cases.get(0).first;
          }
          int j = 0;
          for (String name : kernels.keySet()) {
            ContractionBench.Case c = cases.get(j++);
            double[] m = c.medians();
            final double[] ref = reference;
            long differ = IntStream.range(0, rows)
                .filter(i -> Double.doubleToLongBits(ref[i]) != Double.doubleToLongBits(c.first[i])).count();
            System.out.printf("{\"variant\": \"%s\", \"fma\": \"%s\", \"rows\": %d, \"wall_ms\": %.3f, \"device_ms\": %.3f, \"device_min_ms\": %.3f, \"differ_from_picks_auto\": %d}%n",
                name, fma, rows, m[0], m[1], m[2], differ);
          }
        } finally {
          cases.forEach(ContractionBench.Case::close);
        }
      }
    }
    if (before == null) {
      System.clearProperty(DoubleRounding.FMA_PROPERTY);
    } else {
      System.setProperty(DoubleRounding.FMA_PROPERTY, before);
    }
  }

  /** vk_norm_cdf with its rational function's Horner steps as fma (other bits on a fusing device). */
  static String fusedPoly() throws Exception {
    String lib;
    try (InputStream in = ColumnKernel.class.getResourceAsStream("/io/vkspark/gpu/glsl/vkmath.glsl")) {
      lib = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    int start = lib.indexOf("double vk_norm_cdf(double x) {");
    int end = lib.indexOf("\n}\n", start) + 3;
    String fn = lib.substring(start, end).replace("vk_norm_cdf", "fp_norm_cdf");
    int a = fn.indexOf("  precise double num =");
    int b = fn.indexOf("  precise double q = num / den;");
    if (a < 0 || b < 0) {
      throw new IllegalStateException("no rational");
    }
    return fn.substring(0, a)
        + "  double num = fma(u, fma(u, fma(u, fma(u, fma(u, fma(u, fma(u, n7, n6), n5), n4), n3), n2), n1), n0);\n"
        + "  double den = fma(u, fma(u, fma(u, fma(u, fma(u, fma(u, fma(u, fma(u, d8, d7), d6), d5), d4), d3), d2), d1), 1.0LF);\n"
        + fn.substring(b);
  }
}
