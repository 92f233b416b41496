package io.vkspark.examples;

import io.vkspark.gpu.DeviceType;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.conf.Settings;
import java.io.PrintStream;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * {@code make demo}: Black-Scholes on N random options (default 2,000,000) through the GPU UDF in
 * Spark SQL, and the same query on Spark's CPU ({@code spark.vkspark.enabled=false}: the UDF's
 * Java {@code call()}); checks every row of the GPU against the CPU and against Black-Scholes in
 * built-in Spark SQL, and prints the device, a few rows, both timings and the GPU node's metrics.
 *
 * <pre>
 * Demo [rows, default 2000000]
 * </pre>
 *
 * <p>Local mode on the best Vulkan device present when started with plain {@code java}. Exits
 * with status 1 when the check fails (no {@code System.exit} on success). The timings are honest
 * but say little on a machine without a GPU, where lavapipe runs the kernel on the same CPU cores
 * that Spark uses.
 */
public final class Demo {
  private Demo() {}

  public static void main(String[] args) {
    long rows = args.length > 0 ? Long.parseLong(args[0].replace("_", "")) : 2_000_000L;
    SparkJobs.Session session = SparkJobs.session("vkspark demo");
    if (session.owned()) {
      session.spark().sparkContext().setLogLevel("WARN");
    }
    boolean ok;
    try {
      ok = run(session.spark(), rows, System.out);
    } finally {
      session.close();
    }
    if (!ok) {
      System.err.println("[demo] FAILED: GPU and CPU results disagree (see above)");
      System.exit(1);
    }
  }

  /**
   * The demo on {@code spark}; true when the GPU agrees with the CPU on every row. It runs with
   * {@code spark.vkspark.placement=gpu} (restored after): the demo shows the GPU path, so adaptive
   * placement must not send its batches to {@code call()}.
   */
  public static boolean run(SparkSession spark, long rows, PrintStream out) {
    String placement = spark.conf().getOption(Settings.PLACEMENT.key()).getOrElse(() -> null);
    spark.conf().set(Settings.PLACEMENT.key(), "gpu");
    try {
      return runOnGpu(spark, rows, out);
    } finally {
      if (placement == null) {
        spark.conf().unset(Settings.PLACEMENT.key());
      } else {
        spark.conf().set(Settings.PLACEMENT.key(), placement);
      }
    }
  }

  private static boolean runOnGpu(SparkSession spark, long rows, PrintStream out) {
    SparkJobs.registerAll(spark);
    out.printf("[demo] vkspark: Black-Scholes on %,d options, GPU UDF vs Spark on the CPU%n", rows);
    out.println(SparkJobs.deviceLine(spark));
    if (ExecutorDevice.current().map(g -> g.device().info().type() == DeviceType.CPU).orElse(false)) {
      out.println("[demo] note: this Vulkan device is the CPU itself (no GPU found): the kernel and Spark share the"
          + " same cores, so expect no speed-up here; the point is that both paths agree.");
    }

    long t0 = System.nanoTime();
    int partitions = Math.max(2, spark.sparkContext().defaultParallelism() * 2);
    out.printf("[demo] generating %,d random options in %d partitions, cached in memory ...%n", rows, partitions);
    Dataset<Row> options = spark.range(0, rows, 1, partitions)
        .selectExpr("id", "20D + rand(1) * 180D AS s", "0.7D + rand(2) * 0.6D AS m", "0.02D + rand(3) * 2D AS t",
            "rand(4) * 0.06D AS r", "0.08D + rand(5) * 0.55D AS v")
        .selectExpr("id", "s", "s * m AS k", "t", "r", "v")
        .cache();
    try {
      options.count();
      options.createOrReplaceTempView("demo_options");
      out.printf("[demo]   done in %s%n", SparkJobs.secondsSince(t0));
      return run(spark, rows, out, options);
    } finally {
      options.unpersist();
    }
  }

  private static boolean run(SparkSession spark, long rows, PrintStream out, Dataset<Row> options) {
    String query = "SELECT count(*) AS n, sum(black_scholes(s, k, t, r, v)) AS total FROM demo_options";

    long t0 = System.nanoTime();
    out.println("[demo] warming up on 1% of the rows (compiles the Vulkan kernel, JIT-compiles the CPU path) ...");
    spark.sql(query + " WHERE id % 100 = 0").collectAsList();
    withGpu(spark, false, () -> spark.sql(query + " WHERE id % 100 = 0").collectAsList());
    out.printf("[demo]   done in %s%n", SparkJobs.secondsSince(t0));

    out.println("[demo] GPU: " + query + " ...");
    t0 = System.nanoTime();
    Dataset<Row> gpu = spark.sql(query);
    Row g = gpu.collectAsList().get(0);   // collect, not first(): first() would run another plan
    double gpuS = (System.nanoTime() - t0) / 1e9;
    out.printf(Locale.ROOT, "[demo]   GPU  %.3f s (%,.0f rows/s), sum of prices %.10e%n", gpuS, rows / gpuS, g.getDouble(1));

    out.println("[demo] CPU: the same query with " + Settings.ENABLED.key() + "=false (the UDF's Java call()) ...");
    t0 = System.nanoTime();
    Row c = withGpu(spark, false, () -> spark.sql(query).first());
    double cpuS = (System.nanoTime() - t0) / 1e9;
    out.printf(Locale.ROOT, "[demo]   CPU  %.3f s (%,.0f rows/s), sum of prices %.10e%n", cpuS, rows / cpuS, c.getDouble(1));
    out.printf(Locale.ROOT, "[demo]   GPU/CPU speed: %.2fx%n", cpuS / gpuS);

    out.println("[demo] " + SparkJobs.GPU_NODE + " metrics of the GPU query:");
    SparkJobs.formatGpuMetrics(gpu).forEach(m -> out.println("[demo]   " + m));
    if (SparkJobs.gpuNodes(gpu).isEmpty()) {
      out.println("[demo]   (no " + SparkJobs.GPU_NODE + " node: the plugin is not enabled in this session)");
    }

    out.println("[demo] a few rows:");
    Dataset<Row> few = spark.sql("SELECT s, k, t, r, v, black_scholes(s, k, t, r, v) AS gpu, "
        + "black_scholes_cpu(s, k, t, r, v) AS cpu FROM demo_options WHERE id < 5");
    out.print(SparkJobs.table(few.columns(), few.collectAsList()));

    out.println("[demo] checking every row: GPU vs Java call() vs built-in Spark SQL ...");
    t0 = System.nanoTime();
    String tol = "(" + OptionsJob.BS_REL + "D * abs(%s) + " + OptionsJob.BS_ABS + "D * greatest(s, k))";
    Row check = SparkJobs.withBlackScholesSql(
            spark.table("demo_options").selectExpr("s", "k", "t", "r", "v", "black_scholes(s, k, t, r, v) AS gpu",
                "black_scholes_cpu(s, k, t, r, v) AS cpu"), "s", "k", "t", "r", "v", "builtin")
        .selectExpr("count(*)",
            "count_if(NOT coalesce(abs(gpu - cpu) <= " + tol.formatted("cpu") + ", false))",
            "count_if(NOT coalesce(abs(gpu - builtin) <= " + tol.formatted("builtin") + ", false))",
            "coalesce(max(abs(gpu - cpu) / greatest(s, k)), 0D)",
            "coalesce(max(abs(gpu - builtin) / greatest(s, k)), 0D)",
            "count_if(gpu = cpu)")
        .first();
    long n = check.getLong(0);
    long badCpu = check.getLong(1);
    long badSql = check.getLong(2);
    out.printf(Locale.ROOT, "[demo]   done in %s: %,d rows; GPU vs Java: %,d outside tolerance (max |diff|/max(s,k) "
            + "%.1e, %,d bit-identical); GPU vs built-in SQL: %,d outside tolerance (max %.1e)%n",
        SparkJobs.secondsSince(t0), n, badCpu, check.getDouble(3), check.getLong(5), badSql, check.getDouble(4));
    boolean ok = n == rows && badCpu == 0 && badSql == 0;
    out.println(ok ? "[demo] OK: the GPU agrees with the CPU on every row"
        : "[demo] FAILED: " + (n != rows ? "rows lost; " : "") + "see the counts above");
    return ok;
  }

  /** Runs {@code f} with vkspark on or off in this session, restoring the setting after. */
  static <T> T withGpu(SparkSession spark, boolean enabled, java.util.function.Supplier<T> f) {
    String before = spark.conf().getOption(Settings.ENABLED.key()).getOrElse(() -> null);
    spark.conf().set(Settings.ENABLED.key(), String.valueOf(enabled));
    try {
      return f.get();
    } finally {
      if (before == null) {
        spark.conf().unset(Settings.ENABLED.key());
      } else {
        spark.conf().set(Settings.ENABLED.key(), before);
      }
    }
  }
}
