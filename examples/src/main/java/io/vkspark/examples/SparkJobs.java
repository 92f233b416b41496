package io.vkspark.examples;

import io.vkspark.spark.plan.VkExplain;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.VkSparkPlugin;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF5;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataTypes;

/**
 * What the example jobs share: the session (reusing one that exists), registering the example
 * UDFs, finding the {@code VkGpuEval} nodes of an executed plan and reading their SQL metrics,
 * the device line, and Black-Scholes written with Spark's built-in SQL functions as an independent
 * CPU check. Only public Spark and vkspark API is used, so jobs outside {@code io.vkspark.spark}
 * can do the same.
 */
public final class SparkJobs {
  /** The physical node that runs GPU UDFs ({@code VkGpuEvalExec.nodeName()}). */
  public static final String GPU_NODE = "VkGpuEval";

  private SparkJobs() {}

  /** A session and whether this job created it (and so should stop it). */
  public record Session(SparkSession spark, boolean owned) {
    /** Stops the session if this job created it. */
    public void close() {
      if (owned) {
        spark.stop();
      }
    }
  }

  /**
   * {@code SparkSession.builder().getOrCreate()}: an existing session is reused as it is (tests,
   * notebooks); a new one gets {@code local[*]} when no master is configured (plain
   * {@code java -cp}) and the vkspark plugin added to {@code spark.plugins} when missing.
   */
  public static Session session(String appName) {
    boolean existing = SparkSession.getActiveSession().isDefined() || SparkSession.getDefaultSession().isDefined();
    SparkSession.Builder b = SparkSession.builder();
    if (!existing) {
      SparkConf conf = new SparkConf();
      b.appName(conf.get("spark.app.name", appName));
      if (!conf.contains("spark.master")) {
        b.master("local[*]");
      }
      String plugins = conf.get("spark.plugins", "");
      if (!plugins.contains(VkSparkPlugin.class.getName())) {
        b.config("spark.plugins", plugins.isBlank() ? VkSparkPlugin.class.getName()
            : plugins + "," + VkSparkPlugin.class.getName());
      }
    }
    return new Session(b.getOrCreate(), !existing);
  }

  /**
   * Registers the example GPU UDFs under their snake-case names, plus {@code black_scholes_cpu} and
   * {@code implied_volatility_cpu}: the same classes' {@code call()} as plain Java UDFs, which
   * run on the CPU (their lambdas call another class's static method, which the Java UDF
   * translator does not follow: EXPLAIN says so), so one query can compare both.
   */
  public static void registerAll(SparkSession spark) {
    GpuUdfs.register(spark, "black_scholes", new BlackScholes());
    GpuUdfs.register(spark, "implied_volatility", new ImpliedVolatility());
    GpuUdfs.register(spark, "haversine", new Haversine());
    GpuUdfs.register(spark, "float_polynomial", new FloatPolynomial());
    GpuUdfs.register(spark, "saxpy", new Saxpy());
    GpuUdfs.register(spark, "collatz_steps", new CollatzSteps());
    GpuUdfs.register(spark, "in_the_money", new InTheMoney());
    GpuUdfs.register(spark, "days_to_expiry", new DaysToExpiry());
    GpuUdfs.register(spark, "seconds_since_midnight", new SecondsSinceMidnight());
    spark.udf().register("black_scholes_cpu", (UDF5<Double, Double, Double, Double, Double, Double>)
        (s, k, t, r, v) -> s == null || k == null || t == null || r == null || v == null ? null
            : BlackScholes.price(s, k, t, r, v), DataTypes.DoubleType);
    spark.udf().register("implied_volatility_cpu", (UDF5<Double, Double, Double, Double, Double, Double>)
        (p, s, k, t, r) -> p == null || s == null || k == null || t == null || r == null ? null
            : ImpliedVolatility.solve(p, s, k, t, r), DataTypes.DoubleType);
  }

  // ---- plans and metrics ---------------------------------------------------------------------

  /** Every node of a physical plan, inside adaptive plans, query stages and subqueries too. */
  public static void visit(SparkPlan plan, Consumer<SparkPlan> f) {
    io.vkspark.spark.plan.VkExplain.visit(plan, f);
  }

  /** The {@value #GPU_NODE} nodes of {@code df}'s executed plan (after an action: the final plan). */
  public static List<SparkPlan> gpuNodes(Dataset<?> df) {
    List<SparkPlan> out = new ArrayList<>();
    visit(df.queryExecution().executedPlan(), p -> {
      if (GPU_NODE.equals(p.nodeName())) {
        out.add(p);
      }
    });
    return out;
  }

  /**
   * Waits until Spark's listener bus has delivered every event posted so far (task ends, say), so a
   * listener's counts are complete; false when it did not drain (within Spark's 10 s). The bus is
   * Spark-internal (public in bytecode).
   */
  public static boolean drainListenerBus(org.apache.spark.SparkContext sc) {
    try {
      sc.listenerBus().waitUntilEmpty();
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  /** A node's SQLMetric objects by key, in the node's order (Scala 2.12 and 2.13 alike: no converters). */
  public static Map<String, SQLMetric> metricsByKey(SparkPlan node) {
    Map<String, SQLMetric> out = new LinkedHashMap<>();
    node.metrics().foreach(kv -> out.put(kv._1(), kv._2()));
    return out;
  }

  /** A node's SQL metrics (the values the Spark UI shows), by key, in the node's order (the UI's). */
  public static Map<String, Long> metrics(SparkPlan node) {
    Map<String, Long> out = new LinkedHashMap<>();
    metricsByKey(node).forEach((k, m) -> out.put(k, m.value()));
    return out;
  }

  /**
   * The metrics of all {@value #GPU_NODE} nodes of {@code df}, summed by key. Metrics are filled
   * by executing {@code df} itself ({@code collectAsList()}); {@code first()} or {@code show()}
   * execute a different plan.
   */
  public static Map<String, Long> gpuMetrics(Dataset<?> df) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (SparkPlan n : gpuNodes(df)) {
      metrics(n).forEach((k, v) -> out.merge(k, v, k.equals("peakDeviceMemory") ? Math::max : Long::sum));
    }
    return out;
  }

  /**
   * The metrics of each {@value #GPU_NODE} node of {@code df} (executed) as lines: the node, then
   * "description: value" per metric (sizes in KiB/MiB, times in ms).
   */
  public static List<String> formatGpuMetrics(Dataset<?> df) {
    List<String> lines = new ArrayList<>();
    List<SparkPlan> nodes = gpuNodes(df);
    for (int i = 0; i < nodes.size(); i++) {
      SparkPlan node = nodes.get(i);
      lines.add((nodes.size() > 1 ? "node " + (i + 1) + " of " + nodes.size() + ": " : "") + node.simpleString(100));
      Map<String, SQLMetric> all = metricsByKey(node);
      metrics(node).forEach((k, v) -> {
        SQLMetric m = all.get(k);
        String label = m.name().isDefined() ? m.name().get() : k;
        String value = switch (m.metricType()) {
          case "size" -> bytes(v);
          case "nsTiming" -> String.format(Locale.ROOT, "%.1f ms", v / 1e6);
          case "timing" -> v + " ms";
          default -> String.format(Locale.ROOT, "%,d", v);
        };
        lines.add("  " + label + ": " + value);
      });
    }
    return lines;
  }

  static String bytes(long b) {
    return b < 1024 ? b + " B" : b < 1 << 20 ? String.format(Locale.ROOT, "%.1f KiB", b / 1024.0)
        : String.format(Locale.ROOT, "%.1f MiB", b / 1048576.0);
  }

  /** The physical plan as {@code EXPLAIN} prints it, with vkspark's section. */
  public static String explain(Dataset<?> df) {
    return df.queryExecution().explainString(org.apache.spark.sql.execution.SimpleMode$.MODULE$);
  }

  /**
   * "[vkspark] device: ..." for this JVM: the device the local executor opened (local mode), why
   * it has none, or that the devices are the executors' (cluster mode: see their logs).
   */
  public static String deviceLine(SparkSession spark) {
    if (ExecutorDevice.current().isPresent()) {
      DeviceInfo d = ExecutorDevice.current().get().device().info();
      return "[vkspark] device: " + d.name() + " (" + d.type().description() + ", Vulkan " + d.apiVersion() + ", "
          + d.driver() + ")";
    }
    if (ExecutorDevice.unavailableReason().isPresent()) {
      return "[vkspark] device: none, GPU UDFs run on the CPU: " + ExecutorDevice.unavailableReason().get();
    }
    return spark.sparkContext().isLocal() ? "[vkspark] device: not opened (is spark.plugins set to "
        + VkSparkPlugin.class.getName() + "?)" : "[vkspark] device: the executors' (cluster mode; see executor logs)";
  }

  // ---- Black-Scholes in built-in Spark SQL ----------------------------------------------------

  /**
   * The standard normal CDF of the double column (or parenthesized expression) {@code x} in
   * built-in Spark SQL: Hart's 1968 double-precision algorithm as given by G. West, "Better
   * approximations to cumulative normal functions" (2005). Absolute error about 2e-16, an
   * algorithm independent of the fdlibm {@code erfc} behind {@link BlackScholes}.
   */
  public static String normCdfSql(String x) {
    String a = "abs(" + x + ")";
    String num = horner(a, "3.52624965998911E-02D", "0.700383064443688D", "6.37396220353165D", "33.912866078383D",
        "112.079291497871D", "221.213596169931D", "220.206867912376D");
    String den = horner(a, "8.83883476483184E-02D", "1.75566716318264D", "16.064177579207D", "86.7807322029461D",
        "296.564248779674D", "637.333633378831D", "793.826512519948D", "440.413735824752D");
    String e = "exp(-" + a + " * " + a + " / 2D)";
    String cf = a + " + 1D / (" + a + " + 2D / (" + a + " + 3D / (" + a + " + 4D / (" + a + " + 0.65D))))";
    String tail = "(CASE WHEN " + a + " > 37D THEN 0D WHEN " + a + " < 7.07106781186547D THEN " + e + " * " + num
        + " / " + den + " ELSE " + e + " / (" + cf + ") / 2.506628274631D END)";
    return "(CASE WHEN " + x + " > 0D THEN 1D - " + tail + " ELSE " + tail + " END)";
  }

  private static String horner(String a, String... c) {
    String s = c[0];
    for (int i = 1; i < c.length; i++) {
      s = "(" + s + " * " + a + " + " + c[i] + ")";
    }
    return s;
  }

  /**
   * {@code in} with a column {@code out}: the Black-Scholes call price of columns s, k, t, r, v
   * in built-in Spark SQL (ln, exp, sqrt and {@link #normCdfSql}), evaluated by Spark's own CPU
   * code. Valid inputs only ({@code s, k > 0}, {@code t, v >= 0}); NaN otherwise, like the UDF.
   */
  public static Dataset<Row> withBlackScholesSql(Dataset<Row> in, String s, String k, String t, String r, String v,
                                                 String out) {
    String valid = "(" + s + " > 0D AND " + k + " > 0D AND " + t + " >= 0D AND " + v + " >= 0D)";
    Dataset<Row> d = in
        .withColumn("bs_df_", org.apache.spark.sql.functions.expr("exp(-" + r + " * " + t + ")"))
        .withColumn("bs_sd_", org.apache.spark.sql.functions.expr(v + " * sqrt(" + t + ")"))
        .withColumn("bs_d1_", org.apache.spark.sql.functions.expr("CASE WHEN " + valid + " AND bs_sd_ > 0D THEN (ln("
            + s + " / " + k + ") + (" + r + " + 0.5D * " + v + " * " + v + ") * " + t + ") / bs_sd_ END"))
        .withColumn("bs_d2_", org.apache.spark.sql.functions.expr("bs_d1_ - bs_sd_"));
    return d.withColumn(out, org.apache.spark.sql.functions.expr("CASE WHEN NOT " + valid + " THEN double('NaN')"
            + " WHEN bs_sd_ = 0D THEN greatest(" + s + " - " + k + " * bs_df_, 0D) ELSE " + s + " * "
            + normCdfSql("bs_d1_") + " - " + k + " * bs_df_ * " + normCdfSql("bs_d2_") + " END"))
        .drop("bs_df_", "bs_sd_", "bs_d1_", "bs_d2_");
  }

  /** Rows as a plain text table, doubles to 6 significant digits. */
  public static String table(String[] columns, List<Row> rows) {
    List<String[]> cells = new ArrayList<>();
    cells.add(columns);
    for (Row r : rows) {
      String[] c = new String[r.size()];
      for (int i = 0; i < c.length; i++) {
        Object v = r.get(i);
        c[i] = v instanceof Double d ? String.format(Locale.ROOT, "%.6g", d)
            : v instanceof Float f ? String.format(Locale.ROOT, "%.6g", f) : String.valueOf(v);
      }
      cells.add(c);
    }
    int[] w = new int[columns.length];
    for (String[] c : cells) {
      for (int i = 0; i < c.length; i++) {
        w[i] = Math.max(w[i], c[i].length());
      }
    }
    StringBuilder sb = new StringBuilder();
    for (String[] c : cells) {
      sb.append(' ');
      for (int i = 0; i < c.length; i++) {
        sb.append(' ').append(" ".repeat(w[i] - c[i].length())).append(c[i]);
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  /** Seconds since {@code startNs}, for progress lines. */
  static String secondsSince(long startNs) {
    return String.format(Locale.ROOT, "%.2f s", (System.nanoTime() - startNs) / 1e9);
  }
}
