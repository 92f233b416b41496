package io.vkspark.examples.bench;

import io.vkspark.examples.SparkJobs;
import io.vkspark.examples.plain.BlackScholesJava;
import io.vkspark.examples.plain.BlackScholesScala;
import io.vkspark.spark.conf.Settings;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;

/**
 * Issue 31's benchmark ({@code make bench-scala}): Black-Scholes written as a Scala closure
 * ({@link BlackScholesScala}, registered with {@code spark.udf.register}) against its Java twin
 * ({@link BlackScholesJava}, a plain {@code UDF5}), both translated from their bytecode to the GPU,
 * the Scala closure on the CPU ({@code spark.vkspark.translate=false}: Spark calls it) and built-in
 * SQL ({@link BlackScholesSql}), on the same cached rows ({@link SparkBench#options}). Each query sums
 * its result; the sums must agree with the Scala closure's own on the CPU (the last variant).
 * Prints one JSON line per variant, then a {@code "bench": "scala_summary"} line: the medians, the
 * Scala closure's time over its Java twin's (issue 31's target: at most 1.10), the speed-ups over the
 * CPU closure and SQL, and each variant's rows on the GPU ({@code scala_on_gpu}).
 *
 * <pre>
 * ScalaBench [--rows N] [--runs K] [--partitions P] [--cache-batch R] [--concurrent C] [--batch-rows B]
 *            [--verify sample|off] [--out FILE]
 * </pre>
 *
 * {@code --verify} sets {@code spark.vkspark.verify} for both translated variants (unset: a
 * translated UDF's default, {@code sample}).
 */
public final class ScalaBench {
  private ScalaBench() {}

  public static void main(String[] args) {
    Map<String, String> a = parse(args);
    long rows = Long.parseLong(a.getOrDefault("rows", "5000000").replace("_", ""));
    int runs = Integer.parseInt(a.getOrDefault("runs", "3"));
    int cores = Runtime.getRuntime().availableProcessors();
    int partitions = Integer.parseInt(a.getOrDefault("partitions", String.valueOf(cores)));
    String cacheBatch = a.getOrDefault("cache-batch", "10000");
    PrintStream json = a.containsKey("out") ? SparkBench.open(a.get("out")) : null;
    SparkSession spark = SparkSession.builder()
        .appName("vkspark ScalaBench")
        .master("local[" + cores + "]")
        .config("spark.plugins", "io.vkspark.spark.VkSparkPlugin")
        .config(Settings.CONCURRENT_GPU_TASKS.key(), a.getOrDefault("concurrent", String.valueOf(cores)))
        .config(Settings.BATCH_ROWS.key(), a.getOrDefault("batch-rows", String.valueOf(Settings.BATCH_ROWS.defaultValue())))
        .config(Settings.METRICS_LEVEL.key(), "debug")
        .config("spark.sql.inMemoryColumnarStorage.batchSize", cacheBatch)
        .config("spark.sql.shuffle.partitions", String.valueOf(partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate();
    try {
      SparkJobs.registerAll(spark);
      spark.udf().register("black_scholes_java", new BlackScholesJava(), DataTypes.DoubleType);
      BlackScholesScala.register(spark);
      long t0 = System.nanoTime();
      Dataset<Row> data = SparkBench.options(spark, rows, partitions).cache();
      long count = data.count();
      data.createOrReplaceTempView("bench");
      System.err.printf("[bench] cached %,d rows in %d partitions (cache batch %s rows) in %.1f s on %s%n", count,
          partitions, cacheBatch, (System.nanoTime() - t0) / 1e9, SparkJobs.deviceLine(spark));
      String common = String.format(Locale.ROOT, "\"rows\": %d, \"partitions\": %d, \"cores\": %d, \"cache_batch\": %s, "
          + "\"device\": \"%s\"", rows, partitions, cores, cacheBatch, SparkBench.deviceName());
      Map<String, String> translated = new LinkedHashMap<>(Map.of(SparkBench.TRANSLATE, "true"));
      if (a.containsKey("verify")) {
        translated.put(io.vkspark.spark.conf.Settings.PREFIX + "verify", a.get("verify"));
      }
      List<SparkBench.Result> results = new ArrayList<>();
      SparkBench.emit(json, SparkBench.run(spark, "black_scholes_scala", List.of(
          new SparkBench.Variant("scala_udf_translated",
              () -> spark.sql("SELECT sum(black_scholes_scala(s, k, t, r, v)) FROM bench"), translated),
          new SparkBench.Variant("java_udf_translated",
              () -> spark.sql("SELECT sum(black_scholes_java(s, k, t, r, v)) FROM bench"), translated),
          new SparkBench.Variant("spark_sql", () -> BlackScholesSql.with(spark.table("bench")).selectExpr("sum(bs)")),
          new SparkBench.Variant("scala_udf", () -> spark.sql("SELECT sum(black_scholes_scala(s, k, t, r, v)) FROM bench"),
              SparkBench.CPU_ONLY)),
          runs, common, 1e-9, results));
      SparkBench.emit(json, List.of(summary(common, results)));
    } finally {
      spark.stop();
      if (json != null) {
        json.close();
      }
    }
  }

  private static String summary(String common, List<SparkBench.Result> results) {
    Map<String, SparkBench.Result> by = new LinkedHashMap<>();
    results.forEach(r -> by.put(r.variant(), r));
    double scala = by.get("scala_udf_translated").medianS();
    double java = by.get("java_udf_translated").medianS();
    double cpu = by.get("scala_udf").medianS();
    double sql = by.get("spark_sql").medianS();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("scala_translated_s", scala);
    m.put("java_translated_s", java);
    m.put("scala_cpu_s", cpu);
    m.put("spark_sql_s", sql);
    m.put("scala_over_java", scala / java);
    m.put("within_10_percent_of_java", scala <= 1.10 * java);
    m.put("scala_cpu_speedup", cpu / scala);
    m.put("spark_sql_speedup", sql / scala);
    Map<String, Object> gpuRows = new LinkedHashMap<>();
    for (SparkBench.Result r : results) {
      gpuRows.put(r.variant(), r.gpuMetrics().getOrDefault("gpuRows", 0L));
    }
    m.put("gpu_rows", gpuRows);
    m.put("scala_on_gpu", (Long) gpuRows.get("scala_udf_translated") > 0);
    m.put("java_on_gpu", (Long) gpuRows.get("java_udf_translated") > 0);
    m.put("agree", results.stream().allMatch(SparkBench.Result::agrees));
    m.put("max_rel_diff", results.stream().mapToDouble(SparkBench.Result::relDiff).max().orElse(0));
    if (!(Boolean) m.get("scala_on_gpu")) {
      System.err.println("[bench] black_scholes_scala: the Scala closure did not run on the GPU (it does not translate: "
          + "see EXPLAIN's vkspark section); scala_udf_translated is a CPU figure");
    }
    return "{\"bench\": \"scala_summary\", \"case\": \"black_scholes_scala\", \"variant\": \"summary\", " + common + ", "
        + Json.write(m).substring(1);
  }

  private static final List<String> FLAGS = List.of("rows", "runs", "partitions", "cache-batch", "concurrent", "batch-rows",
      "verify", "out");

  private static Map<String, String> parse(String[] args) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--") || i + 1 >= args.length || !FLAGS.contains(args[i].substring(2))) {
        throw new IllegalArgumentException("usage: ScalaBench [--rows N] [--runs K] [--partitions P] [--cache-batch R] "
            + "[--concurrent C] [--batch-rows B] [--verify sample|off] [--out FILE]; got " + args[i]);
      }
      m.put(args[i].substring(2), args[++i]);
    }
    return m;
  }
}
