package io.vkspark.examples.bench;

import static io.vkspark.examples.bench.SparkBench.CPU_ONLY;
import static io.vkspark.examples.bench.SparkBench.FUSE_AGGREGATES;
import static io.vkspark.examples.bench.SparkBench.PARQUET_FILES;
import static io.vkspark.examples.bench.SparkBench.UNFUSED;
import static io.vkspark.examples.bench.SparkBench.deviceName;
import static io.vkspark.examples.bench.SparkBench.emit;
import static io.vkspark.examples.bench.SparkBench.run;

import io.vkspark.examples.SparkJobs;
import io.vkspark.examples.bench.SparkBench.Variant;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.executor.ExecutorDevice;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.SparkSession;

/**
 * {@link SparkBench}'s Parquet cases ({@code --source parquet|both}): the options read straight from
 * Parquet files at each reader batch size; its JSON lines are SparkBench's.
 */
final class ParquetCases {
  private ParquetCases() {}

  /**
   * The Parquet case (issue 14): the options written once to {@value SparkBench#PARQUET_FILES} Parquet files
   * (kept in {@code --parquet-dir} and reused by later runs), then read straight from the files with
   * each reader batch size of {@code --reader-batches} (Spark's default 4,096, and 1,048,576): the scan
   * floor, Black-Scholes and implied volatility as GPU UDF, built-in SQL and Java UDF, and at reader
   * batches under {@code batchRows / 2} the GPU UDF with {@code spark.vkspark.coalesce=false} too.
   * Each JSON line carries the reader batch size and the GPU node's child batches and dispatches.
   * Implied volatility reads a file set of {@code --iv-rows} rows when that is fewer, and
   * {@code --iv-sql false} leaves out its slow SQL form.
   */
  static void parquet(SparkSession spark, Map<String, String> a, PrintStream json, long defaultRows, int runs, int cores,
                      List<String> cases) {
    long rows = Long.parseLong(a.getOrDefault("parquet-rows", String.valueOf(defaultRows)).replace("_", ""));
    // Spark's SQL form of 24 Newton steps is slow: --iv-rows gives implied volatility a smaller file set of its own.
    long ivRows = Math.min(rows, Long.parseLong(a.getOrDefault("iv-rows", String.valueOf(rows)).replace("_", "")));
    Path dir = writeOptions(spark, a, rows);
    Path ivDir = writeOptions(spark, a, ivRows);
    boolean ivSql = Boolean.parseBoolean(a.getOrDefault("iv-sql", "true"));
    int batchRows = io.vkspark.spark.conf.Settings.BATCH_ROWS.get(io.vkspark.spark.conf.Settings.lookup(spark));
    ExecutorDevice.get(VkConf.from(spark.sparkContext().getConf()), "driver"); // local mode: the device, for its name
    System.err.println("[bench] Parquet case: " + SparkJobs.deviceLine(spark));
    String nanToZero = "sum(CASE WHEN isnan(%1$s) THEN 0D ELSE %1$s END), count_if(isnan(%1$s))";
    for (String readerBatch : a.getOrDefault("reader-batches", "4096,1048576").split(",")) {
      spark.conf().set("spark.sql.parquet.columnarReaderBatchSize", readerBatch.trim());
      spark.read().parquet(dir.toString()).createOrReplaceTempView("bench_pq");
      spark.read().parquet(ivDir.toString()).createOrReplaceTempView("bench_pq_iv");
      int partitions = spark.table("bench_pq").rdd().getNumPartitions();
      String common = String.format(Locale.ROOT, "\"rows\": %d, \"partitions\": %d, \"cores\": %d, \"source\": \"parquet\", "
          + "\"files\": %d, \"reader_batch\": %s, \"batch_rows\": %d, \"device\": \"%s\"", rows, partitions, cores,
          PARQUET_FILES, readerBatch.trim(), batchRows, deviceName());
      boolean small = Integer.parseInt(readerBatch.trim()) < batchRows / 2;
      emit(json, run(spark, "parquet_scan_floor", List.of(
          new Variant("spark_sql", () -> spark.sql("SELECT sum(s + k + t + r + v) FROM bench_pq"))), runs, common, 0));
      if (cases.contains("bs")) {
        List<Variant> v = new ArrayList<>(List.of(
            new Variant("gpu_udf", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM bench_pq"), UNFUSED)));
        if (small) {
          v.add(new Variant("gpu_udf_no_coalesce", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM bench_pq"),
              Map.of(Settings.COALESCE.key(), "false", FUSE_AGGREGATES, "false")));
        }
        // Whole-stage code generation on (Spark's default) and off: the faster one is Spark's best.
        v.add(new Variant("spark_sql", () -> BlackScholesSql.with(spark.table("bench_pq")).selectExpr("sum(bs)")));
        v.add(new Variant("spark_sql_no_wholestage", () -> BlackScholesSql.with(spark.table("bench_pq")).selectExpr("sum(bs)"),
            Map.of("spark.sql.codegen.wholeStage", "false")));
        v.add(new Variant("java_udf", () -> spark.sql("SELECT sum(black_scholes_cpu(s, k, t, r, v)) FROM bench_pq"), CPU_ONLY));
        emit(json, run(spark, "parquet_black_scholes", v, runs, common, 1e-9));
      }
      if (cases.contains("iv")) {
        String gpu = "SELECT " + String.format(nanToZero, "implied_volatility(price, s, k, t, r)") + " FROM bench_pq_iv";
        List<Variant> v = new ArrayList<>(List.of(new Variant("gpu_udf", () -> spark.sql(gpu), UNFUSED)));
        if (small) {
          v.add(new Variant("gpu_udf_no_coalesce", () -> spark.sql(gpu),
              Map.of(Settings.COALESCE.key(), "false", FUSE_AGGREGATES, "false")));
        }
        if (ivSql) {
          // As for the cached case: whole-stage code generation would exceed the 64 KB method limit and interpret.
          v.add(new Variant("spark_sql", () -> ImpliedVolatilitySql.with(spark.table("bench_pq_iv"), "iv")
              .selectExpr(String.format(nanToZero, "iv").split(", (?=count_if)")),
              Map.of("spark.sql.codegen.wholeStage", a.getOrDefault("iv-sql-wholestage", "false"))));
        }
        v.add(new Variant("java_udf", () -> spark.sql("SELECT " + String.format(nanToZero,
            "implied_volatility_cpu(price, s, k, t, r)") + " FROM bench_pq_iv"), CPU_ONLY));
        String ivCommon = common.replaceFirst("^\"rows\": \\d+", "\"rows\": " + ivRows);
        emit(json, run(spark, "parquet_implied_volatility", v,
            Integer.parseInt(a.getOrDefault("iv-runs", String.valueOf(runs))), ivCommon, 1e-7));
      }
    }
    spark.conf().unset("spark.sql.parquet.columnarReaderBatchSize");
  }

  /** The options table of {@code rows} rows in Parquet files, written unless a complete earlier run left them. */
  private static Path writeOptions(SparkSession spark, Map<String, String> a, long rows) {
    return SparkBench.writeOptions(spark, a, rows, "options", false);
  }
}
