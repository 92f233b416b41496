package io.vkspark.examples.bench;

import io.vkspark.examples.SparkJobs;
import io.vkspark.spark.cache.VkCacheSerializer;
import io.vkspark.spark.conf.Settings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec;
import org.apache.spark.sql.internal.SQLConf;

/**
 * vkspark's cache against Spark's default cache for CPU queries, side by side in one JVM: the same
 * options table cached once by each serializer (the static {@code spark.sql.cache.serializer} is
 * switched on the session's conf between the two {@code cache()} calls; each relation keeps the
 * serializer it was built with), then each query runs over both caches in turn, round after round,
 * so all see the same JIT, heap and machine state. vkspark's cache is read twice: as CPU queries
 * read it (column batches through {@code ColumnarToRow}), and as rows ({@code
 * spark.vkspark.cache.columnarOutput=false}, how CPU queries read it before {@code ReadCacheColumns}).
 * Built-in SQL only, no GPU UDF: the scan floor ({@code sum(s + k + t + r + v)}), the five sums, and
 * Black-Scholes. One JSON line per query and variant with the median wall time and the median of
 * the tasks' CPU time, and one per query and vkspark variant with its ratios over Spark's cache;
 * the results must agree.
 *
 * <pre>
 * CacheBench [--rows N] [--runs K] [--warmup W] [--partitions P] [--cache-batch R] [--queries floor,sums,bs]
 *            [--explain true]
 * </pre>
 */
public final class CacheBench {
  private CacheBench() {}

  private static final String DEFAULT = "org.apache.spark.sql.execution.columnar.DefaultCachedBatchSerializer";
  private static final String VK = VkCacheSerializer.class.getName();

  public static void main(String[] args) {
    long rows = 50_000_000L;
    int runs = 7;
    int warmup = 2;
    int partitions = Runtime.getRuntime().availableProcessors();
    String cacheBatch = "1000000";
    List<String> queries = List.of("floor", "sums", "bs");
    boolean explain = false;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--rows" -> rows = Long.parseLong(args[i + 1].replace("_", ""));
        case "--runs" -> runs = Integer.parseInt(args[i + 1]);
        case "--warmup" -> warmup = Integer.parseInt(args[i + 1]);
        case "--partitions" -> partitions = Integer.parseInt(args[i + 1]);
        case "--cache-batch" -> cacheBatch = args[i + 1];
        case "--queries" -> queries = List.of(args[i + 1].split(","));
        case "--explain" -> explain = Boolean.parseBoolean(args[i + 1]);
        default -> throw new IllegalArgumentException("usage: CacheBench [--rows N] [--runs K] [--warmup W] "
            + "[--partitions P] [--cache-batch R] [--queries floor,sums,bs] [--explain true], not " + args[i]);
      }
    }
    SparkSession spark = SparkSession.builder()
        .master("local[" + partitions + "]")
        .appName("vkspark-cache-bench")
        .config("spark.plugins", "io.vkspark.spark.VkSparkPlugin")
        .config("spark.sql.inMemoryColumnarStorage.batchSize", cacheBatch)
        .config("spark.sql.shuffle.partitions", String.valueOf(partitions))
        .config(Settings.METRICS_LEVEL.key(), "debug")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate();
    try {
      Map<String, String> tables = new LinkedHashMap<>();
      for (String serializer : List.of(DEFAULT, VK)) {
        String name = "options_" + shortName(serializer);
        SQLConf.get().setConfString("spark.sql.cache.serializer", serializer);
        DataPathBench.clearCacheSerializer();
        long t0 = System.nanoTime();
        // A filter that keeps every row and differs per cache, or Spark would find the first cache for the second.
        Dataset<Row> data = spark.range(0, rows, 1, partitions).where("id < " + (rows + tables.size())).selectExpr("id",
                "20D + rand(1) * 180D AS s", "0.7D + rand(2) * 0.6D AS m", "(1D + rand(3) * 730D) / 365D AS t",
                "rand(4) * 0.06D AS r", "0.08D + rand(5) * 0.55D AS v")
            .selectExpr("id", "s", "s * m AS k", "t", "r", "v").cache();
        data.count();
        data.createOrReplaceTempView(name);
        List<String> used = new ArrayList<>();
        spark.table(name).queryExecution().executedPlan().collectLeaves().foreach(leaf -> used.add(
            leaf instanceof InMemoryTableScanExec scan ? scan.relation().cacheBuilder().serializer().getClass().getName()
                : leaf.nodeName()));
        System.out.printf(Locale.ROOT, "{\"case\": \"cache_build\", \"serializer\": \"%s\", \"rows\": %d, \"cache_s\": %.2f}%n",
            shortName(serializer), rows, (System.nanoTime() - t0) / 1e9);
        if (!used.equals(List.of(serializer))) {
          throw new IllegalStateException(name + " is not read from a cache built by " + serializer + ": " + used);
        }
        tables.put(serializer, name);
      }
      if (explain) {
        for (String name : tables.values()) {
          Dataset<Row> df = spark.sql(query("floor", name));
          df.collectAsList();
          SparkPlan plan = df.queryExecution().executedPlan();
          if (plan instanceof AdaptiveSparkPlanExec adaptive) {
            plan = adaptive.executedPlan();
          }
          System.err.println("[bench] plan and generated code of the scan floor over " + name + ":\n"
              + org.apache.spark.sql.execution.debug.package$.MODULE$.codegenString(plan));
        }
      }
      List<Variant> variants = List.of(
          new Variant("spark_cache", tables.get(DEFAULT), Map.of()),
          // vkspark's cache as CPU queries read it before ReadCacheColumns: rows built from the cached batches
          new Variant("vk_cache_rows", tables.get(VK), Map.of(Settings.CACHE_COLUMNAR_OUTPUT.key(), "false")),
          new Variant("vk_cache", tables.get(VK), Map.of()));
      for (String q : queries) {
        compare(spark, q, variants, runs, warmup);
      }
    } finally {
      spark.stop();
    }
  }

  private static String query(String q, String table) {
    return switch (q) {
      case "floor" -> "SELECT sum(s + k + t + r + v) FROM " + table;
      case "sums" -> "SELECT sum(s), sum(k), sum(t), sum(r), sum(v) FROM " + table;
      default -> throw new IllegalArgumentException("query " + q + " is not one of floor, sums, bs");
    };
  }

  private static Dataset<Row> dataset(SparkSession spark, String q, String table) {
    return q.equals("bs") ? BlackScholesSql.with(spark.table(table)).selectExpr("sum(bs)") : spark.sql(query(q, table));
  }

  /** A cache to read: its view, and the session conf set while a query over it is planned and run. */
  private record Variant(String name, String table, Map<String, String> conf) {}

  /**
   * {@code q} over each variant, rotating which goes first each round; the median wall time and
   * the median of the tasks' CPU time (less disturbed by other load on the machine), and the ratios.
   */
  private static void compare(SparkSession spark, String q, List<Variant> variants, int runs, int warmup) {
    Map<String, double[]> times = new LinkedHashMap<>();
    Map<String, double[]> cpu = new LinkedHashMap<>();
    Map<String, Row> results = new LinkedHashMap<>();
    for (Variant v : variants) {
      times.put(v.name(), new double[runs]);
      cpu.put(v.name(), new double[runs]);
    }
    AtomicLong taskCpuNs = new AtomicLong();
    SparkListener listener = new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.taskMetrics() != null) {
          taskCpuNs.addAndGet(end.taskMetrics().executorCpuTime());
        }
      }
    };
    spark.sparkContext().addSparkListener(listener);
    try {
      for (int round = -warmup; round < runs; round++) {
        for (int k = 0; k < variants.size(); k++) {
          Variant v = variants.get(Math.floorMod(round + k, variants.size()));
          v.conf().forEach(spark.conf()::set);
          try {
            Dataset<Row> df = dataset(spark, q, v.table());
            df.queryExecution().executedPlan();
            SparkJobs.drainListenerBus(spark.sparkContext());
            taskCpuNs.set(0);
            long t0 = System.nanoTime();
            Row r = df.collectAsList().get(0);
            double t = (System.nanoTime() - t0) / 1e9;
            SparkJobs.drainListenerBus(spark.sparkContext());
            if (round >= 0) {
              times.get(v.name())[round] = t;
              cpu.get(v.name())[round] = taskCpuNs.get() / 1e9;
            }
            results.put(v.name(), r);
          } finally {
            v.conf().keySet().forEach(spark.conf()::unset);
          }
        }
      }
    } finally {
      spark.sparkContext().removeSparkListener(listener);
    }
    Map<String, Double> medians = new LinkedHashMap<>();
    Map<String, Double> cpuMedians = new LinkedHashMap<>();
    for (Variant v : variants) {
      medians.put(v.name(), median(times.get(v.name())));
      cpuMedians.put(v.name(), median(cpu.get(v.name())));
      List<String> all = new ArrayList<>();
      for (double t : times.get(v.name())) {
        all.add(String.format(Locale.ROOT, "%.4f", t));
      }
      System.out.printf(Locale.ROOT, "{\"case\": \"cache_%s\", \"variant\": \"%s\", \"median_s\": %.4f, "
              + "\"task_cpu_median_s\": %.4f, \"runs_s\": [%s], \"result\": \"%s\"}%n", q, v.name(), medians.get(v.name()),
          cpuMedians.get(v.name()), String.join(", ", all), results.get(v.name()));
    }
    String reference = variants.get(0).name();
    Row expected = results.get(reference);
    for (Variant v : variants) {
      Row got = results.get(v.name());
      for (int c = 0; c < expected.length(); c++) {
        double e = expected.getDouble(c);
        double g = got.getDouble(c);
        if (Math.abs(e - g) > 1e-9 * Math.abs(e)) {
          throw new IllegalStateException(q + ": result " + c + " of " + v.name() + " differs from " + reference + "'s: "
              + e + " vs " + g);
        }
      }
      if (!v.name().equals(reference)) {
        System.out.printf(Locale.ROOT, "{\"case\": \"cache_%s_ratio\", \"variant\": \"%s\", \"over\": \"%s\", "
                + "\"wall\": %.3f, \"task_cpu\": %.3f}%n", q, v.name(), reference,
            medians.get(v.name()) / medians.get(reference), cpuMedians.get(v.name()) / cpuMedians.get(reference));
      }
    }
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  private static String shortName(String serializer) {
    return serializer.substring(serializer.lastIndexOf('.') + 1);
  }
}
