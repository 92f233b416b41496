package io.vkspark.examples.bench;

import io.vkspark.examples.BlackScholes;
import io.vkspark.examples.ImpliedVolatility;
import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.DoubleRounding;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.BatchStats;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float8Vector;

/**
 * What correctly rounded double division and sqrt cost: the Black-Scholes and implied-volatility
 * examples' bodies through the batch runner on the device's own {@code /} and {@code sqrt}
 * ({@code vkspark.doubleRounding=native}) and on vkspark's ({@code refine}), same rows, same
 * device. Prints one JSON line per case with the median wall and device time per batch, and one
 * per body with the refined/native ratio and how many rows differ (none where the device's own
 * are exact, as on lavapipe; the last bit of some rows on an NVIDIA H200).
 *
 * <p>Args: {@code [rows [ivRows [runs]]]}, default 4194304, 262144, 5.
 */
public final class DoubleRoundingBench {
  private DoubleRoundingBench() {}

  public static void main(String[] args) {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 4 << 20;
    int ivRows = args.length > 1 ? Integer.parseInt(args[1]) : 256 << 10;
    int runs = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    try (BufferAllocator alloc = new RootAllocator()) {
      double[][] bs = options(rows, false);
      double[][] iv = options(ivRows, true);
      ColumnKernel bsKernel = ColumnKernel.compile(new BlackScholes().kernel().spec("black_scholes"));
      ColumnKernel ivKernel = ColumnKernel.compile(new ImpliedVolatility().kernel().spec("implied_volatility"));
      double[][] results = new double[4][];
      double[][] times = new double[4][];
      String[] modes = {"native", "refine"};
      for (int m = 0; m < 2; m++) {
        String before = System.getProperty(DoubleRounding.PROPERTY);
        System.setProperty(DoubleRounding.PROPERTY, modes[m]);
        GpuDevice d;
        try {
          d = GpuDevices.open(DeviceOptions.defaults().withDevice(System.getProperty("vkspark.device", "")));
        } finally {
          if (before == null) {
            System.clearProperty(DoubleRounding.PROPERTY);
          } else {
            System.setProperty(DoubleRounding.PROPERTY, before);
          }
        }
        try (d; ColumnRuntime rt = new ColumnRuntime(d)) {
          line("bench", "double_rounding_device", "mode", modes[m], "device", d.info().name(),
              "double_rounding", d.doubleRounding().toString());
          times[2 * m] = run(rt, alloc, bsKernel, bs, runs, results, 2 * m);
          times[2 * m + 1] = run(rt, alloc, ivKernel, iv, runs, results, 2 * m + 1);
          report(modes[m], "black_scholes", rows, times[2 * m]);
          report(modes[m], "implied_volatility", ivRows, times[2 * m + 1]);
        }
      }
      for (int b = 0; b < 2; b++) {
        int differ = 0;
        for (int i = 0; i < results[b].length; i++) {
          if (Double.doubleToLongBits(results[b][i]) != Double.doubleToLongBits(results[b + 2][i])) {
            differ++;
          }
        }
        line("bench", "double_rounding_cost", "udf", b == 0 ? "black_scholes" : "implied_volatility",
            "rows", results[b].length, "rows_differing", differ,
            "wall_refine_over_native", times[b + 2][0] / times[b][0],
            "device_refine_over_native", times[b][1] > 0 ? times[b + 2][1] / times[b][1] : -1.0);
      }
    }
  }

  private static void report(String mode, String udf, int rows, double[] t) {
    line("bench", "double_rounding", "mode", mode, "udf", udf, "rows", rows, "wall_median_ms", t[0],
        "device_median_ms", t[1]);
  }

  private static void line(Object... keyValues) {
    java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      m.put((String) keyValues[i], keyValues[i + 1]);
    }
    System.out.println(Json.write(m));
  }

  /** Columns s, k, t, r, v (Black-Scholes), or price, s, k, t, r (implied volatility, priced at a known vol). */
  private static double[][] options(int rows, boolean priced) {
    Random rnd = new Random(7);
    double[][] c = new double[5][rows];
    for (int i = 0; i < rows; i++) {
      double s = 50 + 100 * rnd.nextDouble();
      double k = 50 + 100 * rnd.nextDouble();
      double t = 0.1 + 1.9 * rnd.nextDouble();
      double r = 0.08 * rnd.nextDouble();
      double v = 0.1 + 0.5 * rnd.nextDouble();
      double[] row = priced ? new double[] {BlackScholes.price(s, k, t, r, v), s, k, t, r} : new double[] {s, k, t, r, v};
      for (int j = 0; j < 5; j++) {
        c[j][i] = row[j];
      }
    }
    return c;
  }

  /** Median wall and device milliseconds of {@code runs} batches after a warm-up; keeps the results. */
  private static double[] run(ColumnRuntime rt, BufferAllocator alloc, ColumnKernel k, double[][] cols, int runs,
                              double[][] keep, int slot) {
    int rows = cols[0].length;
    List<Float8Vector> vectors = new ArrayList<>();
    try {
      for (double[] col : cols) {
        Float8Vector v = new Float8Vector("c", alloc);
        v.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
          v.set(i, col[i]);
        }
        v.setValueCount(rows);
        vectors.add(v);
      }
      List<InputColumn> in = vectors.stream().map(v -> ArrowInputs.of(v, SqlType.DOUBLE)).toList();
      List<SqlType> types = List.of(SqlType.DOUBLE, SqlType.DOUBLE, SqlType.DOUBLE, SqlType.DOUBLE, SqlType.DOUBLE);
      try (BatchRunner runner = rt.runner(List.of(new KernelCall(k, new int[] {0, 1, 2, 3, 4})), types, rows, alloc)) {
        Float8Vector out = (Float8Vector) runner.run(in, rows).get(0);
        keep[slot] = new double[rows];
        for (int i = 0; i < rows; i++) {
          keep[slot][i] = out.isNull(i) ? Double.NaN : out.get(i);
        }
        long[] wall = new long[runs];
        long[] device = new long[runs];
        for (int i = 0; i < runs; i++) {
          BatchStats before = runner.stats();
          long t0 = System.nanoTime();
          runner.run(in, rows);
          wall[i] = System.nanoTime() - t0;
          device[i] = runner.stats().deviceNs() - before.deviceNs();
        }
        Arrays.sort(wall);
        Arrays.sort(device);
        return new double[] {wall[runs / 2] / 1e6, device[runs / 2] / 1e6};
      }
    } finally {
      vectors.forEach(Float8Vector::close);
    }
  }
}
