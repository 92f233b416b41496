package io.vkspark.examples.bench;

import io.vkspark.examples.BlackScholes;
import io.vkspark.examples.Haversine;
import io.vkspark.examples.ImpliedVolatility;
import io.vkspark.gpu.DeviceOptions;
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
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float8Vector;

/**
 * What Java's bits cost: the Black-Scholes, implied-volatility and haversine examples' kernels
 * through the batch runner with every float operation {@code NoContraction} (the default) and with
 * {@code spark.vkspark.fastMath} (the driver may fuse {@code a * b + c}), same rows, same device,
 * alternating the two after a warm-up. Prints one JSON line per case with the median wall and device
 * milliseconds per batch, and one per UDF with the exact/fast ratios and how many rows differ (none
 * on lavapipe, which fuses nothing; on an NVIDIA H200, the rows the fused multiply-adds round
 * differently).
 *
 * <p>Args: {@code [rows [ivRows [runs]]]}, default 4194304, 262144, 7.
 */
public final class ContractionBench {
  private ContractionBench() {}

  public static void main(String[] args) {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 4 << 20;
    int ivRows = args.length > 1 ? Integer.parseInt(args[1]) : 256 << 10;
    int runs = args.length > 2 ? Integer.parseInt(args[2]) : 7;
    List<String> names = List.of("black_scholes", "implied_volatility", "haversine");
    List<ColumnKernel> kernels = List.of(
        ColumnKernel.compile(new BlackScholes().kernel().spec("black_scholes")),
        ColumnKernel.compile(new ImpliedVolatility().kernel().spec("implied_volatility")),
        ColumnKernel.compile(new Haversine().kernel().spec("haversine")));
    List<double[][]> inputs = List.of(options(rows, false), options(ivRows, true), coordinates(rows));
    try (BufferAllocator alloc = new RootAllocator();
         GpuDevice d = GpuDevices.open(DeviceOptions.defaults().withDevice(System.getProperty("vkspark.device", "")));
         ColumnRuntime rt = new ColumnRuntime(d)) {
      line("bench", "contraction_device", "device", d.info().name(), "double_rounding", d.doubleRounding().toString());
      for (int u = 0; u < names.size(); u++) {
        double[][] cols = inputs.get(u);
        try (Case exact = new Case(rt, alloc, kernels.get(u), cols);
             Case fast = new Case(rt, alloc, kernels.get(u).withFastMath(true), cols)) {
          for (int i = 0; i < runs; i++) { // alternated, so neither pays for a warming machine alone
            exact.time();
            fast.time();
          }
          double[] e = exact.medians();
          double[] f = fast.medians();
          int rowCount = cols[0].length;
          long differ = IntStream.range(0, rowCount)
              .filter(i -> Double.doubleToLongBits(exact.first[i]) != Double.doubleToLongBits(fast.first[i])).count();
          line("bench", "contraction", "mode", "exact", "udf", names.get(u), "rows", rowCount, "wall_median_ms", e[0],
              "device_median_ms", e[1]);
          line("bench", "contraction", "mode", "fastMath", "udf", names.get(u), "rows", rowCount, "wall_median_ms", f[0],
              "device_median_ms", f[1]);
          line("bench", "contraction_cost", "udf", names.get(u), "rows", rowCount, "rows_differing", differ,
              "wall_exact_over_fast", e[0] / f[0], "device_exact_over_fast", f[1] > 0 ? e[1] / f[1] : -1.0);
        }
      }
    }
  }

  /** One kernel over fixed columns: its first results and its timed runs (also {@link NormCdfVariantBench}'s). */
  static final class Case implements AutoCloseable {
    private final List<Float8Vector> vectors = new ArrayList<>();
    private final List<InputColumn> in = new ArrayList<>();
    private final BatchRunner runner;
    private final int rows;
    final double[] first;
    private final List<double[]> times = new ArrayList<>();

    Case(ColumnRuntime rt, BufferAllocator alloc, ColumnKernel k, double[][] cols) {
      rows = cols[0].length;
      for (double[] col : cols) {
        Float8Vector v = new Float8Vector("c", alloc);
        v.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
          v.set(i, col[i]);
        }
        v.setValueCount(rows);
        vectors.add(v);
        in.add(ArrowInputs.of(v, SqlType.DOUBLE));
      }
      List<SqlType> types = java.util.Collections.nCopies(cols.length, SqlType.DOUBLE);
      runner = rt.runner(List.of(new KernelCall(k, IntStream.range(0, cols.length).toArray())), types, rows, alloc);
      Float8Vector out = (Float8Vector) runner.run(in, rows).get(0); // also the warm-up
      first = new double[rows];
      for (int i = 0; i < rows; i++) {
        first[i] = out.isNull(i) ? Double.NaN : out.get(i);
      }
    }

    void time() {
      BatchStats before = runner.stats();
      long t0 = System.nanoTime();
      runner.run(in, rows);
      times.add(new double[] {(System.nanoTime() - t0) / 1e6, (runner.stats().deviceNs() - before.deviceNs()) / 1e6});
    }

    /** Median wall and device milliseconds, and the fastest device time. */
    double[] medians() {
      double[] wall = times.stream().mapToDouble(t -> t[0]).sorted().toArray();
      double[] device = times.stream().mapToDouble(t -> t[1]).sorted().toArray();
      return new double[] {wall[wall.length / 2], device[device.length / 2], device[0]};
    }

    @Override
    public void close() {
      runner.close();
      vectors.forEach(Float8Vector::close);
    }
  }

  private static void line(Object... keyValues) {
    java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      m.put((String) keyValues[i], keyValues[i + 1]);
    }
    System.out.println(Json.write(m));
  }

  /** Columns s, k, t, r, v (Black-Scholes), or price, s, k, t, r (implied volatility, priced at a known vol). */
  static double[][] options(int rows, boolean priced) {
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

  /** Columns lat1, lon1, lat2, lon2 in degrees. */
  private static double[][] coordinates(int rows) {
    Random rnd = new Random(11);
    double[][] c = new double[4][rows];
    for (int i = 0; i < rows; i++) {
      c[0][i] = -90 + 180 * rnd.nextDouble();
      c[1][i] = -180 + 360 * rnd.nextDouble();
      c[2][i] = -90 + 180 * rnd.nextDouble();
      c[3][i] = -180 + 360 * rnd.nextDouble();
    }
    return c;
  }
}
