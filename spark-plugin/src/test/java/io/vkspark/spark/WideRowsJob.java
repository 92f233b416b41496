package io.vkspark.spark;

import io.vkspark.gpu.GpuException;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.plan.VkExplain;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.exec.VkRowToColumnarExec;
import io.vkspark.spark.conf.Settings;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;

/**
 * The wide-row job of {@link WideRowsSparkTest}, run in a child JVM with a small heap: 60 rows of
 * 10 MiB strings and one row of 140 MB, each query twice with vkspark and once without, printing
 * one {@code key=value} line per observation (results, GPU and CPU rows, batches, errors).
 */
public final class WideRowsJob {
  static final int ROWS = 60;
  static final int WIDTH = 10 << 20;
  static final int WIDE = 140_000_000;

  /** A string's UTF-8 length, on the GPU and in call(). */
  public static final class Slen implements UDF1<String, Integer>, GpuUdf {
    @Override
    public Integer call(String s) {
      return s == null ? null : s.getBytes(StandardCharsets.UTF_8).length;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("int").arg("s", "string").body("return s_length();");
    }
  }

  private WideRowsJob() {}

  /**
   * Issue 33's query: the 140 MB string is a constant the optimizer folds into the plan, so every
   * plan text that renders it in full keeps a copy on the heap for as long as Spark keeps the query.
   */
  static final String FOLDED = "SELECT slen(s) FROM (SELECT concat(repeat('y', 140000000), 'Q') AS s FROM range(1))";

  public static void main(String[] args) {
    if (args.length > 1 && args[1].equals("repeat")) {
      repeat(args[0]);
      return;
    }
    SparkSession spark = SparkSession.builder().master("local[2]").appName("vkspark-wide-rows")
        .config("spark.plugins", VkSparkPlugin.class.getName())
        .config("spark.vkspark.shaderCacheDir", Path.of(args[0]).toAbsolutePath().toString())
        .config("spark.vkspark.placement", "gpu") // the test counts the rows on the GPU
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate();
    try {
      GpuUdfs.register(spark, "slen", new Slen());
      // The length is computed per row, so the optimizer cannot fold the strings into the plan.
      String narrow = query(ROWS, WIDTH);
      String wide = query(1, WIDE);
      for (int run = 1; run <= 2; run++) {
        report(spark, "narrow" + run, narrow);
      }
      for (int run = 1; run <= 2; run++) {
        report(spark, "wide" + run, wide);
      }
      spark.conf().set(Settings.FALLBACK.key(), "false");
      for (int run = 1; run <= 2; run++) {
        report(spark, "strict" + run, wide);
      }
      spark.conf().set(Settings.ENABLED.key(), "false");
      report(spark, "narrowSpark", narrow);
      report(spark, "wideSpark", wide);
    } finally {
      spark.stop();
    }
  }

  /**
   * {@link #FOLDED} three times with vkspark, then three times without, in one application: each
   * run prints {@code folded<N>=<rows> gpuRows cpuRows batches wideRows} (or an error). Spark's SQL
   * status store keeps the plan description of each execution, 140 MB literal included, so the heap
   * a run finds taken grows with every run before it, vkspark's or not (a Spark-alone sixth run ran
   * out of the 3 GiB once in CI); it keeps one execution here, so each run, with vkspark or without,
   * has the heap of the one before it to share, and what vkspark itself kept across runs still shows.
   */
  private static void repeat(String shaderCache) {
    SparkSession spark = SparkSession.builder().master("local[2]").appName("vkspark-wide-repeat")
        .config("spark.plugins", VkSparkPlugin.class.getName())
        .config("spark.vkspark.shaderCacheDir", Path.of(shaderCache).toAbsolutePath().toString())
        .config("spark.ui.enabled", "false")
        .config("spark.sql.ui.retainedExecutions", "1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate();
    try {
      GpuUdfs.register(spark, "slen", new Slen());
      for (int run = 1; run <= 6; run++) {
        spark.conf().set(Settings.ENABLED.key(), String.valueOf(run <= 3));
        report(spark, "folded" + run, FOLDED);
      }
    } finally {
      spark.stop();
    }
  }

  static String query(int rows, int width) {
    return "SELECT count(*), sum(slen(s)) FROM (SELECT repeat('z', " + width + " + CAST(id % 1 AS INT)) AS s "
        + "FROM range(0, " + rows + ", 1, 1))";
  }

  /** Runs {@code sql} and prints {@code name=rows gpuRows cpuRows batches wideRows}, or {@code name=error ...}. */
  private static void report(SparkSession spark, String name, String sql) {
    long t0 = System.nanoTime();
    Dataset<Row> df = spark.sql(sql);
    String out;
    try {
      List<Row> rows = df.collectAsList();
      long[] gpu = new long[4];
      VkExplain.visit(df.queryExecution().executedPlan(), p -> {
        if (p instanceof VkGpuEvalExec e) {
          gpu[0] += e.metricsMap().get("gpuRows").value();
          gpu[1] += e.metricsMap().get("cpuRows").value();
        } else if (p instanceof VkRowToColumnarExec c) {
          gpu[2] += c.metricsMap().get("numOutputBatches").value();
          gpu[3] += c.metricsMap().get("wideRows").value();
        }
      });
      out = rows + " gpuRows=" + gpu[0] + " cpuRows=" + gpu[1] + " batches=" + gpu[2] + " wideRows=" + gpu[3];
    } catch (Exception e) { // SparkException is checked, and collectAsList throws it undeclared
      // Spark's wrapping names task and stage ids, which differ from run to run: the vkspark error alone
      out = "error " + e;
      for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
        if (c instanceof GpuException g) {
          out = "error " + g.code() + " " + g.getMessage().replace('\n', ' ');
          break;
        }
      }
    }
    System.out.println(name + "=" + out);
    System.out.println("ms " + name + " " + (System.nanoTime() - t0) / 1_000_000);
    System.out.flush();
  }
}
