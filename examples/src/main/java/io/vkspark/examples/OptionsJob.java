package io.vkspark.examples;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Prices the options that {@link GenerateOptions} wrote, with GPU UDFs in plain Spark SQL, and
 * checks the GPU against the CPU:
 *
 * <pre>
 * OptionsJob &lt;parquet path&gt; [--generate ROWS]
 * </pre>
 *
 * <p>With {@code --generate}, it first writes ROWS rows with {@link GenerateOptions} (so one
 * spark-submit covers a cluster smoke test).
 *
 * <ol>
 *   <li>a report: in-the-money options ({@code WHERE in_the_money(s, k)}) by quarter of
 *       {@code days_to_expiry}, with their count, mean volatility, mean implied volatility and
 *       total Black-Scholes value; then a few rows, the physical plan (with its
 *       {@code VkGpuEval} node) and that node's metrics;
 *   <li>checks, over every row: {@code black_scholes} on the GPU against (a) Black-Scholes in
 *       built-in Spark SQL with an independent normal CDF ({@link SparkJobs#normCdfSql}, Hart's
 *       algorithm), evaluated by Spark's own CPU code, and (b) the UDF's Java {@code call()};
 *       {@code implied_volatility} against its Java {@code call()} (a Newton iteration has no
 *       reasonable built-in SQL form); {@code days_to_expiry} against {@code datediff};
 *       {@code in_the_money} against {@code s > k}.
 * </ol>
 *
 * <p>Tolerances: Black-Scholes {@code |gpu - ref| <= 1e-12 |ref| + 1e-14 max(s, k)} (the absolute
 * term covers deep out-of-the-money prices, a difference of two nearly equal products);
 * implied volatility {@code |gpu - cpu| <= 1e-9}, or, where vega is tiny and the volatility
 * ill-conditioned, the two volatilities reprice within the Black-Scholes tolerance; NaN and null
 * must match; dates and predicates exactly. Exits with status 1 when a check fails (status 0,
 * and no {@code System.exit}, on success).
 */
public final class OptionsJob {
  static final double BS_REL = 1e-12;
  static final double BS_ABS = 1e-14;
  static final double IV_ABS = 1e-9;

  private OptionsJob() {}

  public static void main(String[] args) {
    boolean generate = args.length == 3 && args[1].equals("--generate");
    if (args.length != 1 && !generate) {
      throw new IllegalArgumentException("usage: OptionsJob <parquet path written by GenerateOptions> [--generate ROWS]");
    }
    SparkJobs.Session session = SparkJobs.session("vkspark OptionsJob");
    boolean ok;
    try {
      if (generate) {
        GenerateOptions.write(session.spark(), args[0], Long.parseLong(args[2].replace("_", "")),
            session.spark().sparkContext().defaultParallelism(), System.out);
      }
      ok = run(session.spark(), args[0], System.out);
    } finally {
      session.close();
    }
    if (!ok) {
      System.err.println("[options] FAILED: the GPU results disagree with the CPU (see above)");
      System.exit(1);
    }
  }

  /** Runs the report and the checks; true when every check passes. */
  public static boolean run(SparkSession spark, String path, PrintStream out) {
    GpuRowsByExecutor byExecutor = new GpuRowsByExecutor();
    spark.sparkContext().addSparkListener(byExecutor);
    try {
      return runReport(spark, path, out);
    } finally {
      if (!SparkJobs.drainListenerBus(spark.sparkContext())) {   // every task-end event counted
        out.println("[options] note: Spark's listener bus did not drain in 10 s; the counts may be short");
      }
      spark.sparkContext().removeSparkListener(byExecutor);
      out.println("[options] rows on GPU by executor: " + byExecutor.rows());
    }
  }

  private static boolean runReport(SparkSession spark, String path, PrintStream out) {
    SparkJobs.registerAll(spark);
    spark.read().parquet(path).createOrReplaceTempView("options");
    out.println(SparkJobs.deviceLine(spark));

    long start = System.nanoTime();
    Dataset<Row> report = spark.sql("""
        SELECT days_to_expiry(trade_date, expiry) DIV 91 AS quarter,
               count(*) AS options,
               avg(v) AS mean_vol,
               avg(CASE WHEN isnan(iv) THEN NULL ELSE iv END) AS mean_implied_vol,
               count_if(isnan(iv)) AS no_implied_vol,
               sum(model) AS total_value
        FROM (SELECT trade_date, expiry, v,
                     black_scholes(s, k, t, r, v) AS model,
                     implied_volatility(price, s, k, t, r) AS iv
              FROM options
              WHERE in_the_money(s, k))
        GROUP BY 1 ORDER BY 1""");
    List<Row> rows = report.collectAsList();
    out.printf("[options] in-the-money options by quarter to expiry (%s):%n", SparkJobs.secondsSince(start));
    out.print(SparkJobs.table(report.columns(), rows));

    Dataset<Row> sample = spark.sql("""
        SELECT id, s, k, t, r, v, price, days_to_expiry(trade_date, expiry) AS days,
               black_scholes(s, k, t, r, v) AS model, implied_volatility(price, s, k, t, r) AS implied_vol
        FROM options WHERE in_the_money(s, k) AND id < 1000 ORDER BY id LIMIT 5""");
    out.println("[options] a few rows:");
    out.print(SparkJobs.table(sample.columns(), sample.collectAsList()));

    out.println("[options] physical plan of the report:");
    out.println(SparkJobs.explain(report));
    if (SparkJobs.gpuNodes(report).isEmpty()) {
      out.println("[options] note: no " + SparkJobs.GPU_NODE + " node in the plan (is the plugin enabled?)");
    }
    out.println("[options] " + SparkJobs.GPU_NODE + " metrics of the report:");
    SparkJobs.formatGpuMetrics(report).forEach(m -> out.println("  " + m));

    return check(spark, out);
  }

  /**
   * Sums each task's "rows on GPU" metric by the executor that ran it, so a cluster run can show
   * that every executor's GPU did work (node metrics alone add all executors up).
   */
  static final class GpuRowsByExecutor extends org.apache.spark.scheduler.SparkListener {
    private final java.util.Map<String, Long> rows = new java.util.concurrent.ConcurrentSkipListMap<>();

    @Override
    public void onTaskEnd(org.apache.spark.scheduler.SparkListenerTaskEnd end) {
      var it = end.taskInfo().accumulables().iterator();
      while (it.hasNext()) {
        org.apache.spark.scheduler.AccumulableInfo a = it.next();
        if (a.name().isDefined() && a.name().get().equals("rows on GPU") && a.update().isDefined()
            && a.update().get() instanceof Long n) {
          rows.merge(end.taskInfo().executorId(), n, Long::sum);
        }
      }
    }

    /** e.g. {@code 0=2000000, 1=2000000}. */
    String rows() {
      return rows.isEmpty() ? "none" : rows.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
          .collect(java.util.stream.Collectors.joining(", "));
    }
  }

  /** Compares every row's GPU results with the CPU references; prints one line per check. */
  static boolean check(SparkSession spark, PrintStream out) {
    long start = System.nanoTime();
    Dataset<Row> both = SparkJobs.withBlackScholesSql(spark.table("options"), "s", "k", "t", "r", "v", "bs_sql")
        .selectExpr("s", "k", "t", "r", "v",
            "black_scholes(s, k, t, r, v) AS bs_gpu",
            "black_scholes_cpu(s, k, t, r, v) AS bs_cpu",
            "bs_sql",
            "implied_volatility(price, s, k, t, r) AS iv_gpu",
            "implied_volatility_cpu(price, s, k, t, r) AS iv_cpu",
            "days_to_expiry(trade_date, expiry) AS days_gpu",
            "datediff(expiry, trade_date) AS days_sql",
            "in_the_money(s, k) AS itm_gpu",
            "s > k AS itm_sql")
        .selectExpr("*",
            "black_scholes_cpu(s, k, t, r, iv_gpu) AS repriced_gpu",
            "black_scholes_cpu(s, k, t, r, iv_cpu) AS repriced_cpu");
    String bsTol = "(" + BS_REL + "D * abs(%2$s) + " + BS_ABS + "D * greatest(s, k))";
    Row c = both.selectExpr(
        "count(*) AS n",
        bad("bs_gpu", "bs_cpu", bsTol) + " AS bad_bs_cpu",
        bad("bs_gpu", "bs_sql", bsTol) + " AS bad_bs_sql",
        "coalesce(max(try_divide(nanvl(abs(bs_gpu - bs_cpu), 0D), greatest(s, k))), 0D) AS err_bs_cpu",
        "coalesce(max(try_divide(nanvl(abs(bs_gpu - bs_sql), 0D), greatest(s, k))), 0D) AS err_bs_sql",
        "count_if(NOT coalesce(" + agree("iv_gpu", "iv_cpu", "" + IV_ABS + "D") + " OR "
            + agree("repriced_gpu", "repriced_cpu", bsTol.formatted("", "repriced_cpu")) + ", false)) AS bad_iv",
        "coalesce(max(nanvl(abs(iv_gpu - iv_cpu), 0D)), 0D) AS err_iv",
        "count_if(isnan(iv_gpu)) AS nan_iv",
        "count_if(NOT (days_gpu <=> days_sql)) AS bad_days",
        "count_if(NOT (itm_gpu <=> itm_sql)) AS bad_itm").first();
    long n = c.getLong(0);
    boolean ok = true;
    ok &= line(out, "black_scholes GPU vs Java call()", c.getLong(1), n,
        String.format(Locale.ROOT, "max |diff| / max(s,k) = %.2e", c.getDouble(3)));
    ok &= line(out, "black_scholes GPU vs built-in Spark SQL (Hart CDF)", c.getLong(2), n,
        String.format(Locale.ROOT, "max |diff| / max(s,k) = %.2e", c.getDouble(4)));
    ok &= line(out, "implied_volatility GPU vs Java call()", c.getLong(5), n,
        String.format(Locale.ROOT, "max |diff| = %.2e, NaN (no arbitrage-free vol) on %,d rows", c.getDouble(6),
            c.getLong(7)));
    ok &= line(out, "days_to_expiry GPU vs datediff", c.getLong(8), n, "exact");
    ok &= line(out, "in_the_money GPU vs s > k", c.getLong(9), n, "exact");
    out.printf("[options] checks %s in %s%n", ok ? "passed" : "FAILED", SparkJobs.secondsSince(start));
    return ok;
  }

  /** Rows where a and b disagree: not both null, not both NaN, not within tol. */
  private static String bad(String a, String b, String tol) {
    return "count_if(NOT coalesce(" + agree(a, b, tol.formatted(a, b)) + ", false))";
  }

  private static String agree(String a, String b, String tol) {
    return "((" + a + " IS NULL AND " + b + " IS NULL) OR (isnan(" + a + ") AND isnan(" + b + ")) OR abs(" + a
        + " - " + b + ") <= " + tol + ")";
  }

  private static boolean line(PrintStream out, String what, long bad, long n, String detail) {
    out.printf(Locale.ROOT, "[options] check %-52s %s: %,d of %,d rows outside tolerance; %s%n", what,
        bad == 0 ? "OK  " : "FAIL", bad, n, detail);
    return bad == 0;
  }
}
