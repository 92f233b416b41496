package io.vkspark.examples.bench;

import io.vkspark.spark.conf.Settings;

import io.vkspark.examples.FloatPolynomial;
import io.vkspark.examples.SparkJobs;
import io.vkspark.examples.bench.SparkBench.Result;
import io.vkspark.examples.bench.SparkBench.Variant;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.executor.Footprint;
import io.vkspark.spark.conf.VkConf;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.types.DataTypes;

/**
 * The benchmark of issue 13 ("past Spark's scan"), in three parts chosen with {@code --parts}:
 *
 * <ul>
 *   <li>{@code breakdown}: where the wall time of the GPU Black-Scholes query goes (and of Spark's
 *       built-in SQL form, for comparison), over Parquet files and over the cache: Spark's plan
 *       and task metrics and the GPU node's ({@link QueryProfile}); one JSON line and one table each.
 *   <li>{@code parquet}: the real-world figure: Black-Scholes, implied volatility and the float
 *       polynomial read from Parquet files (not cached) and summed, as GPU UDF, built-in SQL and
 *       Java UDF side by side: medians, ratios, the GPU's device time as a share of wall time, and
 *       how far the sums are apart against the tolerance they must meet.
 *   <li>{@code cache}: the scan floor and Black-Scholes (GPU UDF and built-in SQL), and with
 *       {@code --cache-cases bs,iv} implied volatility over all {@code --rows} (GPU UDF, built-in SQL,
 *       Java UDF; {@code --iv-runs} timed runs), with {@code grouped} Black-Scholes summed per one of
 *       16 int buckets (a column added to the cached table; fused per key on the GPU), over the cache of
 *       each class of {@code --cache-serializer} ({@code spark.sql.cache.serializer}; Spark's own by
 *       default), each in a fresh session, since Spark reads that static setting once per JVM.
 * </ul>
 *
 * <pre>
 * DataPathBench [--parts breakdown,parquet,cache] [--rows N] [--runs K] [--cases bs,iv,poly] [--cache-cases bs[,iv][,grouped]]
 *               [--iv-rows N] [--iv-runs K] [--iv-sql true|false] [--reader-batch R] [--cache-batch R]
 *               [--breakdown-sources parquet,cache] [--breakdown-variants gpu_udf,spark_sql]
 *               [--cache-serializer CLASS[,CLASS...]] [--parquet-dir DIR] [--partitions P]
 *               [--concurrent C] [--batch-rows B] [--master M] [--out FILE]
 * </pre>
 *
 * <p>Prints one JSON line per case and variant (as {@link SparkBench}), one per breakdown, and one
 * {@code data_path_summary} per case; the tables for people go to standard error.
 */
public final class DataPathBench {
  private DataPathBench() {}

  /** Spark's own cache serializer, the default of {@code spark.sql.cache.serializer}. */
  static final String DEFAULT_SERIALIZER = "org.apache.spark.sql.execution.columnar.DefaultCachedBatchSerializer";

  private static final Set<String> FLAGS = Set.of("parts", "rows", "runs", "cases", "cache-cases", "iv-rows", "iv-runs", "iv-sql",
      "iv-sql-wholestage", "reader-batch", "cache-batch", "breakdown-sources", "breakdown-variants", "cache-serializer",
      "parquet-dir", "partitions", "concurrent", "batch-rows", "master", "out");

  /**
   * The GPU UDF with its sum reduced in the GPU submission ({@code spark.vkspark.fuseAggregates}; the
   * default for these sums, set here so the variant means it whatever the default); {@code gpu_udf}
   * sets {@link SparkBench#UNFUSED}.
   */
  private static final Map<String, String> FUSED = Map.of(SparkBench.FUSE_AGGREGATES, "true");
  private static final Map<String, String> UNFUSED = SparkBench.UNFUSED;

  private static final String NAN_TO_ZERO = "sum(CASE WHEN isnan(%1$s) THEN 0D ELSE %1$s END), count_if(isnan(%1$s))";

  public static void main(String[] args) {
    Map<String, String> a = parse(args);
    List<String> parts = list(a.getOrDefault("parts", "breakdown,parquet,cache"));
    long rows = longArg(a, "rows", 5_000_000L);
    int runs = Integer.parseInt(a.getOrDefault("runs", "3"));
    int cores = Runtime.getRuntime().availableProcessors();
    List<String> serializers = list(a.getOrDefault("cache-serializer", DEFAULT_SERIALIZER));
    List<String> breakdownSources = list(a.getOrDefault("breakdown-sources", "parquet,cache"));
    PrintStream json = a.containsKey("out") ? SparkBench.open(a.get("out")) : null;
    List<Result> results = new ArrayList<>();
    List<String> caseRows = new ArrayList<>();
    SparkSession spark = session(a, cores, serializers.get(0));
    try {
      int slots = spark.sparkContext().defaultParallelism();
      QueryProfile.TaskRecorder recorder = QueryProfile.attach(spark);
      if (parts.contains("parquet") || (parts.contains("breakdown") && breakdownSources.contains("parquet"))) {
        parquet(spark, a, json, rows, runs, cores, slots, parts, breakdownSources, recorder, results, caseRows);
      }
      if (parts.contains("cache") || (parts.contains("breakdown") && breakdownSources.contains("cache"))) {
        for (int i = 0; i < serializers.size(); i++) {
          if (i > 0) {
            spark.stop();
            spark = session(a, cores, serializers.get(i));
            recorder = QueryProfile.attach(spark);
          }
          cache(spark, a, json, rows, runs, cores, slots, serializers.get(i), parts, breakdownSources, recorder, results,
              caseRows);
        }
      }
      summary(json, results, caseRows);
    } finally {
      spark.stop();
      if (json != null) {
        json.close();
      }
    }
  }

  /** A session as {@link SparkBench}'s, with {@code spark.sql.cache.serializer} set to {@code serializer}. */
  static SparkSession session(Map<String, String> a, int cores, String serializer) {
    clearCacheSerializer();
    SparkSession spark = SparkSession.builder()
        .appName("vkspark DataPathBench")
        .master(a.getOrDefault("master", "local[" + cores + "]"))
        .config("spark.plugins", "io.vkspark.spark.VkSparkPlugin")
        .config(Settings.CONCURRENT_GPU_TASKS.key(), a.getOrDefault("concurrent", String.valueOf(cores)))
        .config(Settings.METRICS_LEVEL.key(), "debug")
        .config(Settings.BATCH_ROWS.key(), a.getOrDefault("batch-rows", String.valueOf(Settings.BATCH_ROWS.defaultValue())))
        .config("spark.sql.cache.serializer", serializer)
        .config("spark.sql.inMemoryColumnarStorage.batchSize", a.getOrDefault("cache-batch", "1000000"))
        .config("spark.sql.shuffle.partitions", a.getOrDefault("partitions", String.valueOf(cores)))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate();
    SparkJobs.registerAll(spark);
    spark.udf().register("float_polynomial_cpu",
        (UDF2<Float, Float, Float>) (x, y) -> x == null || y == null ? null : FloatPolynomial.eval(x, y),
        DataTypes.FloatType);
    ExecutorDevice.get(VkConf.from(spark.sparkContext().getConf()), "driver"); // local mode: the device, for its name
    System.err.println("[bench] session with spark.sql.cache.serializer=" + serializer + "; " + SparkJobs.deviceLine(spark));
    return spark;
  }

  /**
   * Spark instantiates the cache serializer once per JVM and keeps it in {@code InMemoryRelation}'s
   * companion object; a new session with another {@code spark.sql.cache.serializer} gets it only
   * after this. {@code clearSerializer} is {@code private[columnar]} (public in bytecode) and the
   * same in Spark 3.5 to 4.2; kept in this one method so it can move into a version shim.
   */
  static void clearCacheSerializer() {
    org.apache.spark.sql.execution.columnar.InMemoryRelation$.MODULE$.clearSerializer();
  }

  // ---- the real-world figure: Parquet files, not cached ----------------------------------------

  private static void parquet(SparkSession spark, Map<String, String> a, PrintStream json, long rows, int runs, int cores,
                              int slots, List<String> parts, List<String> breakdownSources,
                              QueryProfile.TaskRecorder recorder, List<Result> results, List<String> caseRows) {
    List<String> cases = list(a.getOrDefault("cases", "bs,iv,poly"));
    long ivRows = Math.min(rows, longArg(a, "iv-rows", rows));
    Path dir = SparkBench.writeOptions(spark, a, rows, "options-xy", true);
    Path ivDir = SparkBench.writeOptions(spark, a, ivRows, "options-xy", true);
    String readerBatch = a.getOrDefault("reader-batch", "4096"); // Spark's default
    spark.conf().set("spark.sql.parquet.columnarReaderBatchSize", readerBatch);
    spark.read().parquet(dir.toString()).createOrReplaceTempView("bench_pq");
    spark.read().parquet(ivDir.toString()).createOrReplaceTempView("bench_pq_iv");
    int partitions = spark.table("bench_pq").rdd().getNumPartitions();
    int batchRows = io.vkspark.spark.conf.Settings.BATCH_ROWS.get(io.vkspark.spark.conf.Settings.lookup(spark));
    String common = String.format(Locale.ROOT, "\"rows\": %d, \"partitions\": %d, \"cores\": %d, \"source\": \"parquet\", "
        + "\"files\": %d, \"reader_batch\": %s, \"batch_rows\": %d, \"device\": \"%s\"", rows, partitions, cores,
        SparkBench.PARQUET_FILES, readerBatch, batchRows, SparkBench.deviceName());

    if (parts.contains("breakdown") && breakdownSources.contains("parquet")) {
      breakdown(spark, a, json, recorder, "bench_pq", "parquet", rows, runs, slots, Map.of("reader_batch", readerBatch));
    }
    if (parts.contains("parquet")) {
      SparkBench.emit(json, SparkBench.run(spark, "real_world_scan_floor", List.of(
          new Variant("spark_sql", () -> spark.sql("SELECT sum(s + k + t + r + v) FROM bench_pq"))), runs, common, 0, results));
      caseRows.add(rows + " rows, parquet");
      if (cases.contains("bs")) {
        SparkBench.emit(json, SparkBench.run(spark, "real_world_black_scholes", List.of(
            new Variant("gpu_udf", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM bench_pq"), UNFUSED),
            new Variant("gpu_udf_fused", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM bench_pq"), FUSED),
            new Variant("spark_sql", () -> BlackScholesSql.with(spark.table("bench_pq")).selectExpr("sum(bs)")),
            new Variant("java_udf", () -> spark.sql("SELECT sum(black_scholes_cpu(s, k, t, r, v)) FROM bench_pq"))),
            runs, common, 1e-9, results));
        caseRows.add(rows + " rows, parquet");
      }
      if (cases.contains("iv")) {
        SparkBench.emit(json, SparkBench.run(spark, "real_world_implied_volatility", impliedVolatility(spark, a, "bench_pq_iv"),
            Integer.parseInt(a.getOrDefault("iv-runs", String.valueOf(runs))),
            common.replaceFirst("^\"rows\": \\d+", "\"rows\": " + ivRows), 1e-7, results));
        caseRows.add(ivRows + " rows, parquet");
      }
      if (cases.contains("poly")) {
        SparkBench.emit(json, SparkBench.run(spark, "real_world_float_polynomial", List.of(
            new Variant("gpu_udf", () -> spark.sql("SELECT sum(float_polynomial(x, y)) FROM bench_pq"), UNFUSED),
            new Variant("gpu_udf_fused", () -> spark.sql("SELECT sum(float_polynomial(x, y)) FROM bench_pq"), FUSED),
            new Variant("spark_sql", () -> spark.sql("SELECT sum(CAST(0.5 AS FLOAT) * x * x * x - CAST(2 AS FLOAT) * x + y)"
                + " FROM bench_pq")),
            new Variant("java_udf", () -> spark.sql("SELECT sum(float_polynomial_cpu(x, y)) FROM bench_pq"))),
            runs, common, 1e-5, results));
        caseRows.add(rows + " rows, parquet");
      }
    }
    spark.conf().unset("spark.sql.parquet.columnarReaderBatchSize");
  }

  /**
   * Implied volatility over {@code table} as GPU UDF, built-in SQL ({@code --iv-sql}) and Java UDF;
   * NaN (no solution) counted apart and summed as 0 on every side.
   */
  private static List<Variant> impliedVolatility(SparkSession spark, Map<String, String> a, String table) {
    String gpu = "SELECT " + String.format(NAN_TO_ZERO, "implied_volatility(price, s, k, t, r)") + " FROM " + table;
    List<Variant> v = new ArrayList<>(List.of(new Variant("gpu_udf", () -> spark.sql(gpu), UNFUSED),
        // both aggregates computed in the GPU submission (CASE, isnan and count_if on the device): no per-row readback
        new Variant("gpu_udf_fused", () -> spark.sql(gpu), FUSED)));
    if (Boolean.parseBoolean(a.getOrDefault("iv-sql", "true"))) {
      // 24 fused Newton steps exceed the JVM's 64 KB method limit under whole-stage code generation.
      v.add(new Variant("spark_sql", () -> ImpliedVolatilitySql.with(spark.table(table), "iv")
          .selectExpr(String.format(NAN_TO_ZERO, "iv").split(", (?=count_if)")),
          Map.of("spark.sql.codegen.wholeStage", a.getOrDefault("iv-sql-wholestage", "false"))));
    }
    v.add(new Variant("java_udf", () -> spark.sql("SELECT " + String.format(NAN_TO_ZERO,
        "implied_volatility_cpu(price, s, k, t, r)") + " FROM " + table)));
    return v;
  }

  // ---- the cache, per serializer ---------------------------------------------------------------

  private static void cache(SparkSession spark, Map<String, String> a, PrintStream json, long rows, int runs, int cores,
                            int slots, String serializer, List<String> parts, List<String> breakdownSources,
                            QueryProfile.TaskRecorder recorder, List<Result> results, List<String> caseRows) {
    int partitions = Integer.parseInt(a.getOrDefault("partitions", String.valueOf(cores)));
    String cacheBatch = a.getOrDefault("cache-batch", "1000000");
    long t0 = System.nanoTime();
    boolean grouped = list(a.getOrDefault("cache-cases", "bs")).contains("grouped");
    Dataset<Row> options = SparkBench.options(spark, rows, partitions).drop("x", "y");
    // the grouped case's key: 16 buckets, a low-cardinality int column (only when that case runs)
    Dataset<Row> data = (grouped ? options.selectExpr("*", "cast(id % 16 AS int) AS bucket") : options).cache();
    data.count();
    double cacheS = (System.nanoTime() - t0) / 1e9;
    data.createOrReplaceTempView("bench_cache");
    System.err.printf(Locale.ROOT, "[bench] cached %,d rows with %s in %.1f s%n", rows, serializer, cacheS);
    String shortName = serializer.substring(serializer.lastIndexOf('.') + 1);
    if (parts.contains("breakdown") && breakdownSources.contains("cache")) {
      breakdown(spark, a, json, recorder, "bench_cache", "cache", rows, runs, slots,
          Map.of("cache_serializer", serializer, "cache_batch", cacheBatch));
    }
    if (parts.contains("cache")) {
      String common = String.format(Locale.ROOT, "\"rows\": %d, \"partitions\": %d, \"cores\": %d, \"source\": \"cache\", "
              + "\"cache_serializer\": \"%s\", \"cache_batch\": %s, \"cache_build_s\": %.3f, \"device\": \"%s\"", rows,
          partitions, cores, serializer, cacheBatch, cacheS, SparkBench.deviceName());
      SparkBench.emit(json, SparkBench.run(spark, "cache_scan_floor", List.of(
          new Variant("spark_sql", () -> spark.sql("SELECT sum(s + k + t + r + v) FROM bench_cache"))), runs, common, 0,
          results));
      caseRows.add(rows + " rows, cache " + shortName);
      SparkBench.emit(json, SparkBench.run(spark, "cache_black_scholes", List.of(
          new Variant("gpu_udf", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM bench_cache"), UNFUSED),
          new Variant("gpu_udf_fused", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM bench_cache"), FUSED),
          new Variant("spark_sql", () -> BlackScholesSql.with(spark.table("bench_cache")).selectExpr("sum(bs)"))),
          runs, common, 1e-9, results));
      caseRows.add(rows + " rows, cache " + shortName);
      if (list(a.getOrDefault("cache-cases", "bs")).contains("iv")) {
        SparkBench.emit(json, SparkBench.run(spark, "cache_implied_volatility", impliedVolatility(spark, a, "bench_cache"),
            Integer.parseInt(a.getOrDefault("iv-runs", String.valueOf(runs))), common, 1e-7, results));
        caseRows.add(rows + " rows, cache " + shortName);
      }
      if (grouped) {
        // per-bucket sums, checked through one weighted checksum row (a wrong or swapped bucket changes it)
        String perBucket = "SELECT bucket, sum(black_scholes(s, k, t, r, v)) AS bs FROM bench_cache GROUP BY bucket";
        String check = "SELECT sum(bs * (bucket + 1)), count(*) FROM (%s)";
        SparkBench.emit(json, SparkBench.run(spark, "cache_black_scholes_grouped", List.of(
            new Variant("gpu_udf", () -> spark.sql(String.format(check, perBucket)), UNFUSED),
            new Variant("gpu_udf_fused", () -> spark.sql(String.format(check, perBucket)), FUSED),
            new Variant("spark_sql", () -> BlackScholesSql.with(spark.table("bench_cache"), "bucket").groupBy("bucket")
                .agg(org.apache.spark.sql.functions.sum("bs").as("bs"))
                .selectExpr("sum(bs * (bucket + 1))", "count(*)"))),
            runs, common, 1e-9, results));
        caseRows.add(rows + " rows, cache " + shortName + ", 16 groups");
      }
    }
    data.unpersist(true);
  }

  // ---- where the time goes ---------------------------------------------------------------------

  /**
   * Black-Scholes over {@code table} as each of {@code --breakdown-variants}: one warm-up, then
   * {@code runs} profiled runs; the run of median wall time is reported.
   */
  private static void breakdown(SparkSession spark, Map<String, String> a, PrintStream json,
                                QueryProfile.TaskRecorder recorder, String table, String source, long rows, int runs,
                                int slots, Map<String, String> extra) {
    Map<String, java.util.function.Supplier<Dataset<Row>>> queries = new LinkedHashMap<>();
    queries.put("gpu_udf", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM " + table));
    queries.put("gpu_udf_fused", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM " + table));
    Map<String, Map<String, String>> confs = Map.of("gpu_udf", UNFUSED, "gpu_udf_fused", FUSED);
    queries.put("spark_sql", () -> BlackScholesSql.with(spark.table(table)).selectExpr("sum(bs)"));
    queries.put("java_udf", () -> spark.sql("SELECT sum(black_scholes_cpu(s, k, t, r, v)) FROM " + table));
    for (String variant : list(a.getOrDefault("breakdown-variants", "gpu_udf,spark_sql"))) {
      if (!queries.containsKey(variant)) {
        throw new IllegalArgumentException("--breakdown-variants are among " + queries.keySet() + ", not " + variant);
      }
      Map<String, String> conf = confs.getOrDefault(variant, Map.of());
      conf.forEach(spark.conf()::set);
      queries.get(variant).get().collectAsList(); // warm-up: compiles kernels, records buffer sets
      Map<String, Object> labels = new LinkedHashMap<>();
      labels.put("case", "black_scholes");
      labels.put("source", source);
      labels.put("variant", variant);
      labels.put("rows", rows);
      labels.putAll(new java.util.TreeMap<>(extra));
      labels.put("device", SparkBench.deviceName());
      List<QueryProfile.Breakdown> all = new ArrayList<>();
      Footprint before = Footprint.now();
      long childBatches = 0;
      for (int i = 0; i < Math.max(1, runs); i++) {
        Dataset<Row> query = queries.get(variant).get();
        all.add(QueryProfile.profile(spark, recorder, query, labels, slots));
        childBatches += SparkJobs.gpuMetrics(query).getOrDefault("inputBatches", 0L);
      }
      Footprint after = Footprint.now();
      conf.keySet().forEach(spark.conf()::unset);
      all.sort(Comparator.comparingDouble(b -> (Double) b.json().get("wall_s")));
      QueryProfile.Breakdown median = all.get(all.size() / 2);
      median.json().put("runs_wall_s", all.stream().map(b -> b.json().get("wall_s")).toList());
      if (variant.equals("gpu_udf")) {
        median.json().put("steady", new SparkBench.Steady(before, after, Math.max(1, runs), childBatches).json());
      }
      SparkBench.emit(json, List.of(QueryProfile.emit(median, System.err)));
    }
  }

  // ---- the side-by-side table --------------------------------------------------------------------

  /**
   * One {@code data_path_summary} JSON line per case (GPU UDF, built-in SQL and Java UDF medians,
   * the GPU UDF being the fused variant where the case has one, as fusion is the default; the ratios, the GPU's busy share, the largest relative difference of any variant's sum from the
   * reference against the case's tolerance) and the same as a table on standard error.
   */
  static void summary(PrintStream json, List<Result> results, List<String> caseRows) {
    Map<String, Map<String, Result>> byCase = new LinkedHashMap<>();
    // Cases repeat once per cache serializer: key them by case and the rows label recorded alongside.
    Map<String, String> labelOf = new LinkedHashMap<>();
    List<String> order = new ArrayList<>();
    int serial = 0;
    String previous = null;
    for (Result r : results) {
      if (!r.name().equals(previous)) {
        serial++;
        previous = r.name();
        order.add(r.name() + "#" + serial);
      }
      String key = r.name() + "#" + serial;
      byCase.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(r.variant(), r);
      labelOf.putIfAbsent(key, r.name());
    }
    StringBuilder t = new StringBuilder(String.format(Locale.ROOT, "%n[bench] issue 13 side by side (medians)%n"
        + "  %-30s %-48s %9s %9s %9s %10s %10s %9s %22s  %s%n", "case", "data", "GPU UDF", "SQL", "Java UDF", "GPU vs SQL",
        "vs Java", "GPU busy", "max rel diff (tol.)", "GPU steady: new Vulkan objects, budgets, RSS growth"));
    List<String> lines = new ArrayList<>();
    for (String key : order) {
      Map<String, Result> v = byCase.get(key);
      // the GPU column is what a user gets by default: the fused variant where the case has one
      String g = v.containsKey("gpu_udf_fused") ? "gpu_udf_fused" : "gpu_udf";
      double gpu = v.containsKey(g) ? v.get(g).medianS() : Double.NaN;
      double sql = v.containsKey("spark_sql") ? v.get("spark_sql").medianS() : Double.NaN;
      double java = v.containsKey("java_udf") ? v.get("java_udf").medianS() : Double.NaN;
      double busy = v.containsKey(g) ? v.get(g).deviceShare() : Double.NaN;
      double diff = v.values().stream().mapToDouble(Result::relDiff).max().orElse(0);
      double tol = v.values().iterator().next().tolerance();
      boolean agree = v.values().stream().allMatch(Result::agrees);
      Map<String, Object> s = new LinkedHashMap<>();
      s.put("bench", "data_path_summary");
      s.put("case", labelOf.get(key));
      String data = order.indexOf(key) < caseRows.size() ? caseRows.get(order.indexOf(key)) : "";
      s.put("data", data);
      s.put("gpu_variant", g);
      s.put("gpu_udf_s", gpu);
      if (!g.equals("gpu_udf") && v.containsKey("gpu_udf")) {
        s.put("gpu_udf_unfused_s", v.get("gpu_udf").medianS());
      }
      s.put("spark_sql_s", sql);
      s.put("java_udf_s", java);
      s.put("x_vs_spark_sql", sql / gpu);
      s.put("x_vs_java_udf", java / gpu);
      s.put("gpu_device_share_of_wall", busy);
      s.put("max_rel_diff", diff);
      s.put("tolerance", tol);
      s.put("sums_agree", agree);
      SparkBench.Steady steady = v.containsKey(g) ? v.get(g).steady() : null;
      if (steady != null) {
        // issue 13's steady-state target, over the GPU UDF's timed runs (after its warm-up)
        s.put("gpu_new_vulkan_objects", steady.newVulkanObjects());
        s.put("gpu_within_device_budgets", steady.withinBudgets());
        s.put("gpu_device_bytes_held", steady.after().deviceBytesHeld());
        s.put("gpu_rss_growth_bytes", steady.after().hostGrowthSince(steady.before()).get("rss_bytes"));
        s.put("gpu_arrow_growth_bytes", steady.after().hostGrowthSince(steady.before()).get("arrow_bytes"));
      }
      lines.add(Json.write(s));
      t.append(String.format(Locale.ROOT, "  %-30s %-48s %9s %9s %9s %10s %10s %9s %12.2g (%.0g) %s %s%n",
          labelOf.get(key) + (g.equals("gpu_udf") ? "" : " (fused)"),
          data, secs(gpu), secs(sql), secs(java), ratio(sql / gpu), ratio(java / gpu),
          Double.isNaN(busy) ? "" : String.format(Locale.ROOT, "%.1f%%", 100 * busy), diff, tol, agree ? "" : "DISAGREE",
          steady == null ? "" : String.format(Locale.ROOT, " %d, %s, %+.1f MiB", steady.newVulkanObjects(),
              steady.withinBudgets() ? "within" : "OVER", s.get("gpu_rss_growth_bytes") instanceof Long grown ? grown / 1048576.0 : 0)));
    }
    SparkBench.emit(json, lines);
    System.err.print(t);
  }

  private static String secs(double s) {
    return Double.isNaN(s) ? "" : String.format(Locale.ROOT, "%.3f s", s);
  }

  private static String ratio(double x) {
    return Double.isNaN(x) ? "" : String.format(Locale.ROOT, "%.2fx", x);
  }

  private static List<String> list(String s) {
    return Arrays.stream(s.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList();
  }

  private static long longArg(Map<String, String> a, String key, long dflt) {
    return Long.parseLong(a.getOrDefault(key, String.valueOf(dflt)).replace("_", ""));
  }

  private static Map<String, String> parse(String[] args) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String key = args[i].startsWith("--") ? args[i].substring(2) : "";
      if (!FLAGS.contains(key) || i + 1 >= args.length) {
        throw new IllegalArgumentException("usage: DataPathBench [--parts breakdown,parquet,cache] [--rows N] [--runs K] "
            + "[--cases bs,iv,poly] [--cache-cases bs[,iv][,grouped]] [--iv-rows N] [--iv-runs K] [--iv-sql true|false] [--reader-batch R] [--cache-batch R] "
            + "[--breakdown-sources parquet,cache] [--breakdown-variants gpu_udf,gpu_udf_fused,spark_sql,java_udf] "
            + "[--cache-serializer CLASS[,CLASS...]] [--parquet-dir DIR] [--partitions P] [--concurrent C] "
            + "[--batch-rows B] [--master M] [--out FILE]; got " + args[i]);
      }
      m.put(key, args[++i]);
    }
    return m;
  }
}
