package io.vkspark.examples.bench;

import io.vkspark.spark.VkConf;
import io.vkspark.spark.cache.VkCacheSerializer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * vkspark's cache against Spark's default cache for CPU queries: the same options table cached by
 * each serializer (a session each: {@code spark.sql.cache.serializer} is static), then the scan
 * floor ({@code sum} of the five input columns), built-in SQL only, no GPU UDF. One JSON line per
 * serializer with the median; the sums must agree.
 *
 * <pre>
 * CacheBench [--rows N] [--runs K] [--partitions P] [--cache-batch R]
 * </pre>
 */
public final class CacheBench {
  private CacheBench() {}

  public static void main(String[] args) {
    long rows = 50_000_000L;
    int runs = 5;
    int partitions = Runtime.getRuntime().availableProcessors();
    String cacheBatch = "1000000";
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[i + 1].replace("_", ""));
        case "--runs" -> runs = Integer.parseInt(args[i + 1]);
        case "--partitions" -> partitions = Integer.parseInt(args[i + 1]);
        case "--cache-batch" -> cacheBatch = args[i + 1];
        default -> throw new IllegalArgumentException(
            "usage: CacheBench [--rows N] [--runs K] [--partitions P] [--cache-batch R], not " + args[i]);
      }
    }
    Row expected = null;
    for (String serializer : List.of("org.apache.spark.sql.execution.columnar.DefaultCachedBatchSerializer",
        VkCacheSerializer.class.getName())) {
      SparkSession spark = SparkSession.builder()
          .master("local[" + partitions + "]")
          .appName("vkspark-cache-bench")
          .config("spark.plugins", "io.vkspark.spark.VkSparkPlugin")
          .config("spark.sql.cache.serializer", serializer)
          .config("spark.sql.inMemoryColumnarStorage.batchSize", cacheBatch)
          .config("spark.sql.shuffle.partitions", String.valueOf(partitions))
          .config(VkConf.METRICS_LEVEL, "debug")
          .config("spark.ui.enabled", "false")
          .config("spark.driver.host", "127.0.0.1")
          .config("spark.driver.bindAddress", "127.0.0.1")
          .getOrCreate();
      try {
        long t0 = System.nanoTime();
        spark.range(0, rows, 1, partitions).selectExpr("id",
                "20D + rand(1) * 180D AS s", "0.7D + rand(2) * 0.6D AS m", "(1D + rand(3) * 730D) / 365D AS t",
                "rand(4) * 0.06D AS r", "0.08D + rand(5) * 0.55D AS v")
            .selectExpr("id", "s", "s * m AS k", "t", "r", "v").createOrReplaceTempView("options");
        spark.catalog().cacheTable("options");
        long count = spark.table("options").count();
        double cacheS = (System.nanoTime() - t0) / 1e9;
        double[] times = new double[runs];
        Row result = null;
        for (int r = 0; r < runs; r++) {
          long start = System.nanoTime();
          result = spark.sql("SELECT sum(s), sum(k), sum(t), sum(r), sum(v) FROM options").first();
          times[r] = (System.nanoTime() - start) / 1e9;
        }
        double[] sorted = times.clone();
        Arrays.sort(sorted);
        List<String> all = new ArrayList<>();
        for (double t : times) {
          all.add(String.format(Locale.ROOT, "%.4f", t));
        }
        System.out.printf(Locale.ROOT, "{\"case\": \"cache_scan_sum\", \"serializer\": \"%s\", \"rows\": %d, "
                + "\"partitions\": %d, \"cache_batch\": %s, \"cache_s\": %.2f, \"median_s\": %.4f, \"runs_s\": [%s], "
                + "\"sum_s\": %s}%n", serializer.substring(serializer.lastIndexOf('.') + 1), count, partitions, cacheBatch,
            cacheS, sorted[runs / 2], String.join(", ", all), result.get(0));
        if (expected == null) {
          expected = result;
        } else {
          for (int c = 0; c < 5; c++) {
            double e = expected.getDouble(c);
            double g = result.getDouble(c);
            if (Math.abs(e - g) > 1e-9 * Math.abs(e)) {
              throw new IllegalStateException("sum " + c + " differs between the caches: " + e + " vs " + g);
            }
          }
        }
        spark.catalog().clearCache();
      } finally {
        spark.stop();
      }
    }
  }
}
