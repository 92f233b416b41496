package io.vkspark.examples.bench;

import io.vkspark.spark.conf.Settings;

import io.vkspark.examples.FloatPolynomial;
import io.vkspark.examples.SparkJobs;
import io.vkspark.examples.plain.BlackScholesJava;
import io.vkspark.examples.plain.ImpliedVolatilityJava;
import io.vkspark.gpu.DeviceCounters;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.executor.Footprint;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.types.DataTypes;

/**
 * The Spark side-by-side benchmark ({@code make bench}): on one cached DataFrame, the same math as
 * (a) a GPU UDF, (b) Spark built-in SQL and (c) a plain Java UDF, for Black-Scholes (40 bytes of
 * input per row, near transfer-bound), implied volatility (24 Newton steps per row,
 * compute-bound) and a float polynomial (saxpy-like, transfer-bound). Each query sums its result
 * so no rows travel to the driver; the sums are checked to agree. Prints one JSON line per case
 * and variant, with medians, ratios and the GPU node's metrics.
 *
 * <p>{@code --cases translate} (issue 23, {@code make bench-translate}) compares, on the same cached
 * rows, a plain Java UDF translated from its bytecode ({@link BlackScholesJava},
 * {@link ImpliedVolatilityJava}), the hand-written GPU UDF, the same plain Java UDF on the CPU and
 * built-in SQL; see {@link TranslateCases#translate}.
 *
 * <pre>
 * SparkBench [--rows N] [--runs K] [--partitions P] [--cache-batch R] [--cases bs,iv,poly,translate] [--source cache|parquet|both]
 *            [--iv-rows N] [--iv-runs K] [--translate-cases bs,iv] [--translate-fuse unset|true|false]
 *            [--parquet-rows N] [--parquet-dir DIR] [--reader-batches 4096,1048576] [--iv-sql true|false] [--out FILE]
 * </pre>
 *
 * <p>{@code --source parquet} reads the options from Parquet files instead of the cache (see
 * {@link ParquetCases#parquet}; Black-Scholes and implied volatility); {@code both}, the default, runs the cached
 * cases, then the Parquet ones.
 */
public final class SparkBench {
  private SparkBench() {}

  /** {@code spark.vkspark.fuseAggregates}: on by default where the GPU reduces the aggregate. */
  static final String FUSE_AGGREGATES = io.vkspark.spark.conf.Settings.FUSE_AGGREGATES.key();
  /**
   * The {@code gpu_udf} variants' setting: the GPU UDF with Spark's own partial aggregate over its
   * results, as every earlier figure measured it (DataPathBench's {@code gpu_udf_fused} measures the
   * sum reduced on the GPU, the default for these sums since 2026-12-01).
   */
  static final Map<String, String> UNFUSED = Map.of(FUSE_AGGREGATES, "false");
  /**
   * {@code spark.vkspark.translate} (issue 23): plain Java UDFs translated from their bytecode into
   * GPU kernels; on by default, {@code false} leaves them to Spark.
   */
  static final String TRANSLATE = io.vkspark.spark.conf.Settings.PREFIX + "translate";
  /** The {@code java_udf} variants' setting: a plain Java UDF that Spark runs on the CPU, never translated. */
  static final Map<String, String> CPU_ONLY = Map.of(TRANSLATE, "false");

  /** A way to compute a case; {@code conf} is set on the session while it runs. */
  record Variant(String name, Supplier<Dataset<Row>> query, Map<String, String> conf) {
    Variant(String name, Supplier<Dataset<Row>> query) {
      this(name, query, Map.of());
    }
  }

  public static void main(String[] args) {
    Map<String, String> a = parse(args);
    long rows = Long.parseLong(a.getOrDefault("rows", "5000000").replace("_", ""));
    int runs = Integer.parseInt(a.getOrDefault("runs", "5"));
    int cores = Runtime.getRuntime().availableProcessors();
    int partitions = Integer.parseInt(a.getOrDefault("partitions", String.valueOf(cores)));
    String cacheBatch = a.getOrDefault("cache-batch", "10000");
    List<String> cases = Arrays.asList(a.getOrDefault("cases", "bs,iv,poly").split(","));
    String source = a.getOrDefault("source", "both");
    if (!List.of("cache", "parquet", "both").contains(source)) {
      throw new IllegalArgumentException("--source is cache, parquet or both, not " + source);
    }
    PrintStream json = a.containsKey("out") ? open(a.get("out")) : null;

    SparkSession spark = SparkSession.builder()
        .appName("vkspark SparkBench")
        .master(a.getOrDefault("master", "local[" + cores + "]"))
        .config("spark.plugins", "io.vkspark.spark.VkSparkPlugin")
        .config(Settings.CONCURRENT_GPU_TASKS.key(), a.getOrDefault("concurrent", String.valueOf(cores)))
        .config(Settings.METRICS_LEVEL.key(), "debug")
        .config(Settings.BATCH_ROWS.key(), a.getOrDefault("batch-rows", String.valueOf(Settings.BATCH_ROWS.defaultValue())))
        .config("spark.sql.inMemoryColumnarStorage.batchSize", cacheBatch)
        .config("spark.sql.shuffle.partitions", String.valueOf(partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate();
    try {
      SparkJobs.registerAll(spark);
      spark.udf().register("float_polynomial_cpu",
          (UDF2<Float, Float, Float>) (x, y) -> x == null || y == null ? null : FloatPolynomial.eval(x, y),
          DataTypes.FloatType);
      // Issue 23: plain Java UDFs (no vkspark API), translated to GPU kernels unless spark.vkspark.translate=false.
      spark.udf().register("black_scholes_java", new BlackScholesJava(), DataTypes.DoubleType);
      spark.udf().register("implied_volatility_java", new ImpliedVolatilityJava(), DataTypes.DoubleType);
      long t0 = System.nanoTime();
      if (source.equals("parquet")) {
        ParquetCases.parquet(spark, a, json, rows, runs, cores, cases);
        return;
      }
      Dataset<Row> data = options(spark, rows, partitions).cache();
      long count = data.count();
      data.createOrReplaceTempView("bench");
      System.err.printf("[bench] cached %,d rows in %d partitions (cache batch %s rows) in %.1f s on %s%n", count,
          partitions, cacheBatch, (System.nanoTime() - t0) / 1e9, SparkJobs.deviceLine(spark));
      String common = String.format(Locale.ROOT, "\"rows\": %d, \"partitions\": %d, \"cores\": %d, \"cache_batch\": %s, "
          + "\"device\": \"%s\"", rows, partitions, cores, cacheBatch, deviceName());

      List<Variant> scan = List.of(new Variant("spark_sql", () -> spark.sql("SELECT sum(s + k + t + r + v) FROM bench")));
      emit(json, run(spark, "scan_floor", scan, runs, common, 0));
      if (cases.contains("bs")) {
        emit(json, run(spark, "black_scholes", List.of(
            new Variant("gpu_udf", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM bench"), UNFUSED),
            new Variant("spark_sql", () -> BlackScholesSql.with(spark.table("bench")).selectExpr("sum(bs)")),
            new Variant("java_udf", () -> spark.sql("SELECT sum(black_scholes_cpu(s, k, t, r, v)) FROM bench"), CPU_ONLY)),
            runs, common, 1e-9));
      }
      // Spark's SQL form of 24 Newton steps is slow enough to need fewer rows on big runs (--iv-rows);
      // every implied-volatility variant reads the same subset, view bench_iv.
      // The subset is cached on its own, so no variant pays for scanning the rows it leaves out.
      long ivRows = Long.parseLong(a.getOrDefault("iv-rows", String.valueOf(rows)).replace("_", ""));
      String ivCommon = common.replaceFirst("^\"rows\": \\d+", "\"rows\": " + Math.min(ivRows, rows));
      List<String> translateCases = Arrays.asList(a.getOrDefault("translate-cases", "bs,iv").split(","));
      if (cases.contains("iv") || cases.contains("translate") && translateCases.contains("iv")) {
        Dataset<Row> subset = ivRows >= rows ? data : spark.table("bench").where("id < " + ivRows).cache();
        subset.count();
        subset.createOrReplaceTempView("bench_iv");
      }
      if (cases.contains("iv")) {
        String nanToZero = "sum(CASE WHEN isnan(%1$s) THEN 0D ELSE %1$s END), count_if(isnan(%1$s))";
        emit(json, run(spark, "implied_volatility", List.of(
            new Variant("gpu_udf", () -> spark.sql("SELECT " + String.format(nanToZero,
                "implied_volatility(price, s, k, t, r)") + " FROM bench_iv"), UNFUSED),
            // 24 fused Newton steps exceed the JVM's 64 KB method limit under whole-stage codegen, and
            // Spark would then interpret them; per-operator code generation is Spark's fastest form here.
            new Variant("spark_sql", () -> ImpliedVolatilitySql.with(spark.table("bench_iv"), "iv")
                .selectExpr(String.format(nanToZero, "iv").split(", (?=count_if)")),
                Map.of("spark.sql.codegen.wholeStage", a.getOrDefault("iv-sql-wholestage", "false"))),
            new Variant("java_udf", () -> spark.sql("SELECT " + String.format(nanToZero,
                "implied_volatility_cpu(price, s, k, t, r)") + " FROM bench_iv"), CPU_ONLY)),
            Integer.parseInt(a.getOrDefault("iv-runs", String.valueOf(runs))), ivCommon, 1e-7));
      }
      if (cases.contains("poly")) {
        emit(json, run(spark, "float_polynomial", List.of(
            new Variant("gpu_udf", () -> spark.sql("SELECT sum(float_polynomial(x, y)) FROM bench"), UNFUSED),
            new Variant("spark_sql", () -> spark.sql("SELECT sum(CAST(0.5 AS FLOAT) * x * x * x - CAST(2 AS FLOAT) * x + y)"
                + " FROM bench")),
            new Variant("java_udf", () -> spark.sql("SELECT sum(float_polynomial_cpu(x, y)) FROM bench"), CPU_ONLY)),
            runs, common, 1e-5));
      }
      if (cases.contains("translate")) {
        TranslateCases.translate(spark, a, json, runs, common, ivCommon, translateCases);
      }
      if (source.equals("both")) {
        spark.catalog().clearCache(); // the Parquet runs read files, not the cached rows
        ParquetCases.parquet(spark, a, json, rows, runs, cores, cases);
      }
    } finally {
      spark.stop();
      if (json != null) {
        json.close();
      }
    }
  }

  /** The options table: doubles s, k, t, r, v and price (Black-Scholes of the row, with noise), floats x, y. */
  static Dataset<Row> options(SparkSession spark, long rows, int partitions) {
    return spark.range(0, rows, 1, partitions).selectExpr("id",
            "20D + rand(1) * 180D AS s", "0.7D + rand(2) * 0.6D AS m", "(1D + rand(3) * 730D) / 365D AS t",
            "rand(4) * 0.06D AS r", "0.08D + rand(5) * 0.55D AS v", "(rand(6) - 0.5D) * 0.004D AS noise",
            "CAST(rand(7) * 4 - 2 AS FLOAT) AS x", "CAST(rand(8) AS FLOAT) AS y")
        .selectExpr("id", "s", "s * m AS k", "t", "r", "v", "noise", "x", "y")
        .selectExpr("id", "s", "k", "t", "r", "v", "black_scholes(s, k, t, r, v) * (1D + noise) AS price", "x", "y");
  }

  /**
   * The options table of {@code rows} rows in {@value #PARQUET_FILES} Parquet files named
   * {@code <prefix>-<rows>.parquet} under {@code --parquet-dir}, with the floats {@code x, y} when
   * {@code withFloats}; written unless a complete earlier run left them.
   */
  static Path writeOptions(SparkSession spark, Map<String, String> a, long rows, String prefix, boolean withFloats) {
    Path dir = Path.of(a.getOrDefault("parquet-dir", "target/bench-parquet")).toAbsolutePath()
        .resolve(prefix + "-" + rows + ".parquet");
    if (!Files.exists(dir.resolve("_SUCCESS"))) {
      long t0 = System.nanoTime();
      Dataset<Row> options = options(spark, rows, PARQUET_FILES);
      (withFloats ? options : options.drop("x", "y")).write().mode("overwrite").parquet(dir.toString());
      System.err.printf("[bench] wrote %,d options to %d Parquet files in %s in %.1f s%n", rows, PARQUET_FILES, dir,
          (System.nanoTime() - t0) / 1e9);
    }
    return dir;
  }

  /** Files the Parquet case writes (one per write task). */
  static final int PARQUET_FILES = 16;

  /** Runs every variant (one warm-up, then {@code runs} timed runs) and returns JSON lines. */
  static List<String> run(SparkSession spark, String name, List<Variant> variants, int runs, String common, double tolerance) {
    return run(spark, name, variants, runs, common, tolerance, new ArrayList<>());
  }

  /**
   * One variant's figures, for tables: the median, the GPU's device time as a share of the wall
   * time of the run its metrics come from (NaN without a GPU node), and the largest relative
   * difference of its result from the reference variant's (the last one).
   */
  record Result(String name, String variant, double medianS, double deviceShare, double relDiff, double tolerance,
                boolean agrees, Steady steady, Map<String, Long> gpuMetrics) {}

  /**
   * Issue 13's steady-state figures of one variant's timed runs (after its warm-up): Vulkan objects
   * created meanwhile (0 in a steady state), device memory against its budgets, and host memory
   * before and after ({@link Footprint}). Null for a variant without a GPU node.
   */
  record Steady(Footprint before, Footprint after, int runs, long childBatches) {
    /** Vulkan objects created (buffers, command buffers, descriptor sets) during the timed runs. */
    long newVulkanObjects() {
      return after.vulkanObjectsSince(before).entrySet().stream().filter(e -> e.getKey().endsWith("_created"))
          .mapToLong(Map.Entry::getValue).sum();
    }

    boolean withinBudgets() {
      return before.withinBudgets() && after.withinBudgets();
    }

    /** The JSON object {@code "steady"}: objects after warm-up, budgets, host memory before, after and grown. */
    Map<String, Object> json() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("timed_runs", runs);
      m.put("child_batches", childBatches);
      m.put("new_vulkan_objects", newVulkanObjects());
      m.put("vulkan_objects_after_warmup", after.vulkanObjectsSince(before));
      m.put("within_budgets", withinBudgets());
      m.put("before", before.json());
      m.put("after", after.json());
      m.put("host_growth", after.hostGrowthSince(before));
      return m;
    }
  }

  /** As {@link #run(SparkSession, String, List, int, String, double)}, also adding each variant's {@link Result} to {@code sink}. */
  static List<String> run(SparkSession spark, String name, List<Variant> variants, int runs, String common, double tolerance,
                          List<Result> sink) {
    Map<String, double[]> times = new LinkedHashMap<>();
    Map<String, Row> results = new LinkedHashMap<>();
    Map<String, Map<String, Long>> metrics = new LinkedHashMap<>();
    Map<String, String> counters = new LinkedHashMap<>();
    Map<String, Double> metricsRun = new LinkedHashMap<>();
    Map<String, Steady> steady = new LinkedHashMap<>();
    for (Variant v : variants) {
      v.conf().forEach(spark.conf()::set);
      Row first = v.query().get().collectAsList().get(0); // warm-up: compiles kernels, records buffer sets
      DeviceCounters before = counters();
      Footprint footprintBefore = Footprint.now();
      long heapBefore = usedHeap();
      long childBatches = 0;
      double[] t = new double[runs];
      Dataset<Row> last = null;
      for (int i = 0; i < runs; i++) {
        Dataset<Row> df = v.query().get();
        df.queryExecution().executedPlan(); // analysis, optimization and planning are not what is measured
        long t0 = System.nanoTime();
        results.put(v.name(), df.collectAsList().get(0));
        t[i] = (System.nanoTime() - t0) / 1e9;
        last = df;
        childBatches += SparkJobs.gpuMetrics(df).getOrDefault("inputBatches", 0L);
      }
      Footprint footprintAfter = Footprint.now();
      if (!results.get(v.name()).equals(first) && !close(first, results.get(v.name()), 1e-12)) {
        System.err.println("[bench] " + name + "/" + v.name() + ": warm-up and timed results differ: " + first + " vs "
            + results.get(v.name()));
      }
      v.conf().keySet().forEach(spark.conf()::unset);
      times.put(v.name(), t);
      metricsRun.put(v.name(), t[runs - 1]); // the GPU node's metrics are those of the last timed run
      metrics.put(v.name(), SparkJobs.gpuMetrics(last));
      if (!metrics.get(v.name()).isEmpty()) {
        steady.put(v.name(), new Steady(footprintBefore, footprintAfter, runs, childBatches));
      }
      DeviceCounters after = counters();
      if (before != null && after != null) {
        counters.put(v.name(), String.format(Locale.ROOT, "\"new_buffers\": %d, \"new_command_buffers\": %d, "
                + "\"new_descriptor_sets\": %d, \"device_buffer_bytes\": %d, \"heap_growth_bytes\": %d",
            after.buffersCreated() - before.buffersCreated(), after.commandBuffersCreated() - before.commandBuffersCreated(),
            after.descriptorSetsCreated() - before.descriptorSetsCreated(), after.bufferBytesLive(), usedHeap() - heapBefore));
      }
    }
    List<String> lines = new ArrayList<>();
    double sql = times.containsKey("spark_sql") ? median(times.get("spark_sql")) : Double.NaN;
    double java = times.containsKey("java_udf") ? median(times.get("java_udf")) : Double.NaN;
    Row reference = results.get(variants.get(variants.size() - 1).name());
    for (Variant v : variants) {
      double m = median(times.get(v.name()));
      Row r = results.get(v.name());
      boolean agrees = close(reference, r, tolerance);
      double relDiff = relDiff(reference, r);
      StringBuilder s = new StringBuilder(String.format(Locale.ROOT,
          "{\"bench\": \"spark\", \"case\": \"%s\", \"variant\": \"%s\", %s, \"median_s\": %.4f, \"min_s\": %.4f, "
              + "\"runs_s\": %s, \"rows_per_s\": %.4g, \"x_vs_spark_sql\": %.3f, \"x_vs_java_udf\": %.3f, "
              + "\"result\": \"%s\", \"agrees\": %s, \"rel_diff\": %.3g, \"tolerance\": %.3g",
          name, v.name(), common, m, Arrays.stream(times.get(v.name())).min().orElse(0),
          Arrays.toString(round(times.get(v.name()))), rowsOf(common) / m, sql / m, java / m, r, agrees, relDiff,
          tolerance));
      Map<String, Long> g = metrics.get(v.name());
      double deviceShare = g.isEmpty() ? Double.NaN : g.getOrDefault("deviceTime", 0L) / 1e9 / metricsRun.get(v.name());
      if (!g.isEmpty()) {
        s.append(String.format(Locale.ROOT, ", \"gpu\": {\"child_batches\": %d, \"batches\": %d, \"dispatches\": %d, \"rows_on_gpu\": %d, "
                + "\"rows_on_cpu\": %d, \"upload_bytes\": %d, \"readback_bytes\": %d, \"device_s\": %.4f, \"wait_s\": %.4f, "
                + "\"host_copy_s\": %.4f, \"semaphore_wait_s\": %.4f, \"slots_reused\": %d, \"slots_moved\": %d, "
                + "\"slots_appended\": %d, \"buffer_sets_recorded\": %d, \"metrics_run_s\": %.4f, \"device_share_of_wall\": %.4f}",
            g.getOrDefault("inputBatches", 0L), g.getOrDefault("numOutputBatches", 0L), g.getOrDefault("gpuDispatches", 0L), g.getOrDefault("gpuRows", 0L),
            g.getOrDefault("cpuRows", 0L), g.getOrDefault("uploadBytes", 0L), g.getOrDefault("readbackBytes", 0L),
            g.getOrDefault("deviceTime", 0L) / 1e9, g.getOrDefault("waitTime", 0L) / 1e9,
            g.getOrDefault("hostTime", 0L) / 1e9, g.getOrDefault("semaphoreWaitTime", 0L) / 1e9,
            g.getOrDefault("reusedSlots", 0L), g.getOrDefault("movedSlots", 0L), g.getOrDefault("appendedSlots", 0L),
            g.getOrDefault("bufferSetsRecorded", 0L), metricsRun.get(v.name()), deviceShare));
      }
      if (counters.containsKey(v.name())) {
        s.append(", ").append(counters.get(v.name()));
      }
      Steady st = steady.get(v.name());
      if (st != null) {
        s.append(", \"steady\": ").append(Json.write(st.json()));
      }
      lines.add(s.append('}').toString());
      sink.add(new Result(name, v.name(), m, deviceShare, relDiff, tolerance, agrees, st, g));
      if (!agrees) {
        System.err.println("[bench] " + name + "/" + v.name() + " DISAGREES: " + r + " vs " + reference);
      }
    }
    return lines;
  }

  /** The largest relative difference between the numeric columns of two result rows (0 when equal). */
  static double relDiff(Row a, Row b) {
    double worst = 0;
    for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
      if (a.get(i) instanceof Number x && b.get(i) instanceof Number y) {
        double dx = x.doubleValue();
        double dy = y.doubleValue();
        double scale = Math.max(Math.abs(dx), Math.abs(dy));
        worst = Math.max(worst, scale == 0 ? 0 : Math.abs(dx - dy) / scale);
      }
    }
    return worst;
  }

  private static long rowsOf(String common) {
    return Long.parseLong(common.replaceFirst("^\"rows\": (\\d+),.*$", "$1"));
  }

  private static boolean close(Row a, Row b, double tolerance) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      Object x = a.get(i);
      Object y = b.get(i);
      if (x instanceof Number nx && y instanceof Number ny && !(x instanceof Long)) {
        double dx = nx.doubleValue();
        double dy = ny.doubleValue();
        if (Math.abs(dx - dy) > tolerance * Math.max(Math.abs(dx), Math.abs(dy))) {
          return false;
        }
      } else if (x instanceof Long lx && y instanceof Long ly) {
        if (Math.abs(lx - ly) > Math.max(2, (long) (1e-4 * Math.max(lx, ly)))) {
          return false;
        }
      } else if (x == null ? y != null : !x.equals(y)) {
        return false;
      }
    }
    return true;
  }

  private static double median(double[] t) {
    double[] s = t.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  private static double[] round(double[] t) {
    return Arrays.stream(t).map(x -> Math.round(x * 1e4) / 1e4).toArray();
  }

  private static DeviceCounters counters() {
    return ExecutorDevice.current().map(g -> g.device().counters()).orElse(null);
  }

  static String deviceName() {
    return ExecutorDevice.current().map(g -> g.device().info().name()).orElse("none");
  }

  private static long usedHeap() {
    Runtime rt = Runtime.getRuntime();
    return rt.totalMemory() - rt.freeMemory();
  }

  static void emit(PrintStream json, List<String> lines) {
    for (String l : lines) {
      System.out.println(l);
      if (json != null) {
        json.println(l);
      }
    }
  }

  static PrintStream open(String file) {
    try {
      Path p = Path.of(file);
      if (p.getParent() != null) {
        Files.createDirectories(p.getParent());
      }
      return new PrintStream(Files.newOutputStream(p), true, java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("usage: SparkBench [--rows N] [--runs K] [--partitions P] [--cache-batch R] "
            + "[--cases bs,iv,poly,translate] [--source cache|parquet|both] [--iv-rows N] [--iv-runs K] [--parquet-rows N] [--parquet-dir DIR] "
            + "[--translate-cases bs,iv] [--translate-fuse unset|true|false] "
            + "[--reader-batches 4096,1048576] [--iv-sql true|false] [--concurrent C] [--batch-rows B] [--master M] [--out FILE]; got "
            + args[i]);
      }
      m.put(args[i].substring(2), args[++i]);
    }
    return m;
  }
}
