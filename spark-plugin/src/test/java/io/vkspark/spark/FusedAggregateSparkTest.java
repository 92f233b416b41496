package io.vkspark.spark;

import io.vkspark.gpu.GpuException;
import io.vkspark.spark.conf.Settings;

import io.vkspark.spark.exec.GpuEvalIterator;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.plan.VkExplain;
import io.vkspark.spark.agg.VkGpuAggregateExec;
import io.vkspark.spark.exec.VkGpuEvalExec;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF2;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Aggregates fused onto the GPU node (VkGpuAggregate): SUM, COUNT, MIN, MAX and AVG of GPU UDF
 * results of every numeric type, ungrouped and grouped, with nulls, an empty partition, NaN and
 * negative zero, each against Spark's own plan (vkspark off: the UDFs' call() and Spark's
 * aggregate); the fused node is in the plan, aggregated every row, and the rows ran on the GPU.
 */
@ExtendWith(TestSpark.Validated.class)
final class FusedAggregateSparkTest {
  private static final String[] COLUMNS = {"x_d", "x_f", "x_i", "x_l", "x_n"};

  /** double a + b: one IEEE addition, so GPU and CPU agree bit for bit (signs of zero and NaN too). */
  public static final class DAdd implements UDF2<Double, Double, Double>, GpuUdf {
    @Override
    public Double call(Double a, Double b) {
      return a == null || b == null ? null : a + b;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("double").arg("a", "double").arg("b", "double").body("a + b");
    }
  }

  /** float a + b. */
  public static final class FAdd implements UDF2<Float, Float, Float>, GpuUdf {
    @Override
    public Float call(Float a, Float b) {
      return a == null || b == null ? null : a + b;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("float").arg("a", "float").arg("b", "float").body("a + b");
    }
  }

  /**
   * 20,000 ids over 4 partitions, the second left empty by a filter; columns with about 8-14% nulls,
   * -0.0 in b, one NaN in n, int and bigint columns, and an int key k of 10 values plus null.
   */
  @BeforeAll
  static void data() {
    GpuUdfs.register(spark(), "d_add", new DAdd());
    GpuUdfs.register(spark(), "f_add", new FAdd());
    GpuUdfs.register(spark(), "long_mix", new TestUdfs.LongMix());
    spark().range(0, 20_000, 1, 4).where("id < 5000 OR id >= 10000").selectExpr("id",
            "CASE WHEN id % 13 = 0 THEN NULL ELSE (id % 1000) * 0.37 - 100 END AS a",
            "CASE WHEN id % 11 = 0 THEN NULL WHEN id % 97 = 0 THEN -0.0D ELSE id * 0.001 END AS b",
            "CASE WHEN id % 17 = 0 THEN NULL ELSE cast((id % 300) * 0.25 - 30 AS float) END AS f",
            "CASE WHEN id % 7 = 0 THEN NULL ELSE cast(id % 5000 - 2500 AS int) END AS i",
            "cast(id % 3 AS int) AS j",
            "CASE WHEN id % 9 = 0 THEN NULL ELSE id * 1000003 END AS l",
            "CASE WHEN id = 12345 THEN double('NaN') WHEN id % 5 = 0 THEN NULL ELSE 1.5D END AS n",
            "CASE WHEN id % 19 = 0 THEN NULL ELSE cast(id % 10 AS int) END AS k")
        .createOrReplaceTempView("fused_t");
  }

  @BeforeEach
  void fusionOn() {
    spark().conf().set(Settings.FUSE_AGGREGATES.key(), "true"); // fuse whatever qualifies (unset: only what the GPU reduces)
  }

  @AfterEach
  void defaults() {
    for (String k : List.of(Settings.VERIFY.key(), Settings.VERIFY_SAMPLE_RATE.key(), Settings.FUSE_AGGREGATES.key(),
        "spark.sql.adaptive.enabled", Settings.FUSE_AGGREGATES_ON_GPU.key(), Settings.FUSE_AGGREGATES_KEY_SLOTS.key(),
        "spark.sql.ansi.enabled", Settings.COALESCE.key(), "spark.sql.inMemoryColumnarStorage.batchSize")) {
      spark().conf().unset(k);
    }
  }


  /** Every function over every column: sum, count, count(*), min, max, avg. */
  private static String everyFunction() {
    List<String> out = new ArrayList<>();
    for (String c : COLUMNS) {
      out.add("sum(" + c + ")");
      out.add("count(" + c + ")");
      out.add("min(" + c + ")");
      out.add("max(" + c + ")");
      out.add("avg(" + c + ")");
    }
    out.add("count(*)");
    return String.join(", ", out);
  }

  private static final String CALLS = "SELECT k, d_add(a, b) AS x_d, f_add(f, f) AS x_f, int_poly(i, j) AS x_i,"
      + " long_mix(l, id) AS x_l, d_add(n, b) AS x_n";

  @Test
  void ungrouped_everyFunctionOfEveryType_matchesSpark_fusedOnTheGpu_verified() {
    spark().conf().set(Settings.VERIFY.key(), "strict");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "1");
    String sql = "SELECT " + everyFunction() + " FROM (" + CALLS + " FROM fused_t)";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    Dataset<Row> ran = lastRun;
    assertFused(ran, 15_000); // verify needs the rows: folded on the host, every row checked
    Map<String, Long> eval = metrics(gpuNodes(ran).get(0));
    assertEquals(15_000L * 5, eval.get("verifyRows"), eval.toString());
    assertEquals(0L, eval.get("verifyMismatches"), eval.toString());
    assertAggregatesEqual(both.get(1), both.get(0));
    Row r = both.get(0).get(0);
    assertTrue(Double.isNaN(r.getDouble(20)) && Double.isNaN(r.getDouble(23)), "NaN sums and is the largest: " + r);
    assertEquals(1.5, r.getDouble(22), "min skips NaN");
  }

  /**
   * The same query without verify and without ANSI (so the integral sums may wrap): reduced on the
   * GPU in the UDFs' submission; only per-workgroup partials came back, far fewer bytes than the
   * 15,000 rows' results; equal to Spark's (doubles within summation order).
   */
  @Test
  void ungrouped_everyFunctionOfEveryType_reducedOnTheGpu_matchesSpark_perRowResultsNotReadBack() {
    spark().conf().set("spark.sql.ansi.enabled", "false");
    String sql = "SELECT " + everyFunction() + " FROM (" + CALLS + " FROM fused_t)";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    assertFused(lastRun, 15_000, true);
    Map<String, Long> eval = metrics(gpuNodes(lastRun).get(0));
    long perRow = 15_000L * (8 + 4 + 4 + 8 + 8); // the five results' bytes, had they come back
    assertTrue(eval.get("readbackBytes") > 0 && eval.get("readbackBytes") * 10 < perRow,
        () -> "only partials read back: " + eval + " against " + perRow + " bytes of rows");
    assertAggregatesEqual(both.get(1), both.get(0));
    Row r = both.get(0).get(0);
    assertTrue(Double.isNaN(r.getDouble(20)) && Double.isNaN(r.getDouble(23)), "NaN sums and is the largest: " + r);
    assertEquals(1.5, r.getDouble(22), "min skips NaN");
  }

  /** ANSI mode: an integral SUM must fail on overflow, which the GPU reduction does not check: folded on the host. */
  @Test
  void ansiIntegralSum_foldsOnTheHost_butDoubleOnlyQueryReducesOnTheGpu() {
    spark().conf().set("spark.sql.ansi.enabled", "true");
    String ints = "SELECT sum(x_i), max(x_d) FROM (" + CALLS + " FROM fused_t)";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(ints));
    assertFused(lastRun, 15_000, false);
    assertAggregatesEqual(both.get(1), both.get(0));
    String doubles = "SELECT sum(x_d), min(x_f), count(x_l), avg(x_i), count(*) FROM (" + CALLS + " FROM fused_t)";
    both = gpuAndCpu(() -> spark().sql(doubles));
    assertFused(lastRun, 15_000, true);
    assertAggregatesEqual(both.get(1), both.get(0));
    spark().conf().set(Settings.FUSE_AGGREGATES_ON_GPU.key(), "false"); // the switch back to the host fold
    both = gpuAndCpu(() -> spark().sql(doubles));
    assertFused(lastRun, 15_000, false);
    assertAggregatesEqual(both.get(1), both.get(0));
  }

  /**
   * {@code fuseAggregates} unset (the default) fuses exactly what the GPU will reduce: a reducible
   * query is fused and reduced on the GPU; the same query under verify or with {@code onGpu}
   * false, and an integral sum under ANSI, keep Spark's partial aggregate (fused with {@code true},
   * folded on the host); {@code false} fuses nothing; any other value is an error.
   */
  @Test
  void conf_unsetFusesExactlyWhatTheGpuReduces_trueAlsoFoldsOnTheHost_falseNever() {
    spark().conf().unset(Settings.FUSE_AGGREGATES.key());
    spark().conf().set("spark.sql.ansi.enabled", "true");
    String reducible = "SELECT sum(x_d), min(x_f), count(x_l), avg(x_i), count(*) FROM (" + CALLS + " FROM fused_t)";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(reducible));
    assertFused(lastRun, 15_000, true);
    assertAggregatesEqual(both.get(1), both.get(0));

    String ansiIntSum = "SELECT sum(x_i), max(x_d) FROM (" + CALLS + " FROM fused_t)";
    assertNotFused(ansiIntSum);
    spark().conf().set(Settings.FUSE_AGGREGATES_ON_GPU.key(), "false");
    assertNotFused(reducible);
    spark().conf().unset(Settings.FUSE_AGGREGATES_ON_GPU.key());
    spark().conf().set(Settings.VERIFY.key(), "sample"); // checks its sample beside the GPU reduction
    both = gpuAndCpu(() -> spark().sql(reducible));
    assertAggregatesEqual(both.get(1), both.get(0));
    Map<String, Long> agg = GpuEvalIterator.snapshot(fusedNodes(lastRun).get(0).metricsMap());
    Map<String, Long> eval = metrics(gpuNodes(lastRun).get(0));
    assertEquals(15_000L, agg.get("gpuReducedRows"), agg.toString());
    assertEquals(0L, agg.get("aggregatedRows"), agg.toString());
    assertTrue(eval.get("verifyRows") > 0 && eval.get("verifyMismatches") == 0, eval.toString());
    // the partials, and the sampled rows' results read back once more to be checked
    assertTrue(eval.get("readbackBytes") > agg.get("gpuReadbackBytes"), eval + " " + agg);
    spark().conf().set(Settings.VERIFY.key(), "strict"); // needs every row back
    assertNotFused(reducible);
    spark().conf().unset(Settings.VERIFY.key());

    spark().conf().set(Settings.FUSE_AGGREGATES.key(), "true");
    both = gpuAndCpu(() -> spark().sql(ansiIntSum));
    assertFused(lastRun, 15_000, false);
    assertAggregatesEqual(both.get(1), both.get(0));

    spark().conf().set(Settings.FUSE_AGGREGATES.key(), "false");
    assertNotFused(reducible);

    spark().conf().set(Settings.FUSE_AGGREGATES.key(), "yes");
    Throwable e = assertThrows(Exception.class, () -> spark().sql(reducible).collectAsList());
    while (!(e instanceof GpuException) && e.getCause() != null) {
      e = e.getCause();
    }
    String message = e.getMessage();
    assertTrue(e instanceof GpuException && message.contains(Settings.FUSE_AGGREGATES.key() + " is 'yes'")
        && message.contains("Fix:"), message);

    spark().conf().unset(Settings.FUSE_AGGREGATES.key());
    spark().conf().set(Settings.FUSE_AGGREGATES_ON_GPU.key(), "flase"); // Boolean.parseBoolean read this as false, silently
    e = assertThrows(Exception.class, () -> spark().sql(reducible).collectAsList());
    while (!(e instanceof GpuException) && e.getCause() != null) {
      e = e.getCause();
    }
    assertTrue(e instanceof GpuException && e.getMessage().startsWith(Settings.FUSE_AGGREGATES_ON_GPU.key()
        + " is 'flase', not a boolean. Fix: set " + Settings.FUSE_AGGREGATES_ON_GPU.key() + " to true or false."), e.getMessage());
  }

  /** {@code sql} runs with Spark's partial aggregate over the GPU node, every row on the GPU, equal to Spark's. */
  private static void assertNotFused(String sql) {
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    assertTrue(fusedNodes(lastRun).isEmpty(), () -> explain(lastRun));
    assertEquals(15_000L, metrics(gpuNodes(lastRun).get(0)).get("gpuRows"));
    assertAggregatesEqual(both.get(1), both.get(0));
  }

  /** x: a GPU UDF result with NaN (every 7th row), null (every 11th or 13th) and -0.0 (every 97th) among doubles. */
  private static final String NAN_CALLS = "SELECT d_add(p, b) AS x, int_poly(i, j) AS x_i, long_mix(l, id) AS x_l, a FROM"
      + " (SELECT *, CASE WHEN id % 7 = 3 THEN double('NaN') WHEN id % 13 = 0 THEN NULL ELSE (id % 50) * 0.5 - 5 END AS p"
      + " FROM fused_t)";

  /**
   * Aggregates of expressions over a UDF result, the benchmark's implied-volatility query among
   * them ({@code sum(CASE WHEN isnan(x) THEN 0D ELSE x END), count_if(isnan(x))}): computed per row
   * and reduced on the GPU, so only partials come back; equal to Spark's. Under the session's
   * default ANSI setting (double arithmetic cannot fail), then with ANSI off for wrapping integer
   * arithmetic and narrowing casts; with ANSI on those fold on the host.
   */
  @Test
  void expressionArguments_nanToZeroAndCountIf_reducedOnTheGpu_matchesSpark() {
    String iv = "SELECT sum(CASE WHEN isnan(x) THEN 0D ELSE x END), count_if(isnan(x)), sum(x * 2 + 1),"
        + " max(coalesce(x, 0D)), min(nanvl(x, -1D)), count(x, x_i), avg(CASE WHEN x > 10 OR x IS NULL THEN x_i END),"
        + " count(CASE WHEN isnan(x) AND x_i < 0 THEN 1 END), max(-x), sum(cast(x_i AS double) * x), count(*)"
        + " FROM (" + NAN_CALLS + ")";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(iv));
    assertFused(lastRun, 15_000, true);
    Map<String, Long> eval = metrics(gpuNodes(lastRun).get(0));
    long perRow = 15_000L * (8 + 4 + 8); // the three results' bytes, had they come back
    assertTrue(eval.get("readbackBytes") > 0 && eval.get("readbackBytes") * 10 < perRow,
        () -> "only partials read back: " + eval + " against " + perRow + " bytes of rows");
    assertAggregatesEqual(both.get(1), both.get(0));
    Row r = both.get(0).get(0);
    assertTrue(r.getLong(1) > 1000 && !Double.isNaN(r.getDouble(0)) && Double.isNaN(r.getDouble(2)),
        () -> "NaN rows counted and zeroed, NaN sums: " + r);

    // the benchmark's form: the UDF written inside the expressions (DataPathBench NAN_TO_ZERO)
    String bench = "SELECT sum(CASE WHEN isnan(d_add(p, b)) THEN 0D ELSE d_add(p, b) END), count_if(isnan(d_add(p, b)))"
        + " FROM (SELECT *, CASE WHEN id % 7 = 3 THEN double('NaN') ELSE id * 0.5 END AS p FROM fused_t)";
    List<List<Row>> benchRows = gpuAndCpu(() -> spark().sql(bench));
    assertFused(lastRun, 15_000, true);
    assertAggregatesEqual(benchRows.get(1), benchRows.get(0));
    assertTrue(benchRows.get(0).get(0).getLong(1) > 1000, () -> "NaN rows counted: " + benchRows.get(0));

    spark().conf().set("spark.sql.ansi.enabled", "false");
    String ints = "SELECT sum(x_i * 3 + 1), max(cast(x_l AS int)), min(-x_l), sum(cast(x AS bigint)),"
        + " max(cast(x_i AS bigint) * x_l), sum(CASE WHEN x_i > 0 THEN x_i ELSE -x_i END) FROM (" + NAN_CALLS + ")";
    both = gpuAndCpu(() -> spark().sql(ints));
    assertFused(lastRun, 15_000, true);
    assertAggregatesEqual(both.get(1), both.get(0));

    spark().conf().set("spark.sql.ansi.enabled", "true"); // x_i + 1 must fail on overflow: not on the GPU
    String ansi = "SELECT max(x_i + 1), sum(CASE WHEN isnan(x) THEN 0D ELSE x END) FROM (" + NAN_CALLS + ")";
    both = gpuAndCpu(() -> spark().sql(ansi));
    assertFused(lastRun, 15_000, false);
    assertAggregatesEqual(both.get(1), both.get(0));
  }

  /**
   * {@code sum} of a float UDF's result, as the benchmark's float polynomial is summed: Spark sums
   * a float as a double of the widened values, and so does the GPU, in the UDF's submission, under
   * the default {@code fuseAggregates} (unset: fused only because it reduces on the GPU). With
   * nulls, NaN, both infinities, an empty partition and partitions of odd sizes, and every finite
   * value a multiple of 0.25 below 2^9 (so the double sums are exact in any order), the results
   * equal Spark's bit for bit: sums, min, max, avg, count, and the expressions the device computes
   * over floats (negation, {@code isnan} selection, {@code coalesce}). Float arithmetic over the
   * result is not computed on the device (a device that flushes float32 subnormals would differ
   * from Java): that query keeps Spark's partial aggregate, with the same result.
   */
  @Test
  void floatUdfSum_default_reducedOnTheGpu_equalsSparkBitForBit_floatArithmeticNotFused() {
    spark().conf().unset(Settings.FUSE_AGGREGATES.key());
    spark().range(0, 9_001, 1, 4).where("id < 2250 OR id >= 4500").selectExpr(
            "CASE WHEN id % 17 = 0 THEN NULL ELSE cast((id % 301) * 0.25 - 30 AS float) END AS f",
            "CASE WHEN id = 4501 THEN float('NaN') WHEN id = 100 THEN float('Infinity') WHEN id = 7000 THEN float('-Infinity')"
                + " WHEN id % 13 = 0 THEN NULL ELSE cast(id % 7 AS float) END AS g",
            "CASE WHEN id = 8999 THEN float('Infinity') WHEN id % 5 = 0 THEN NULL ELSE cast(id % 9 AS float) * -0.5F END AS h")
        .createOrReplaceTempView("float_t");
    long rows = 2250 + 2250 + 2251;
    String x = "f_add(f, f)";
    String y = "f_add(g, g)";
    String sql = "SELECT sum(" + x + "), sum(" + y + "), sum(f_add(h, h)), min(" + y + "), max(" + y + "), min(" + x + "),"
        + " max(" + x + "), avg(" + x + "), count(" + x + "), sum(-" + x + "), max(-" + y + "),"
        + " sum(CASE WHEN isnan(" + y + ") THEN CAST(0 AS FLOAT) ELSE " + y + " END), max(coalesce(" + x + ", CAST(0 AS FLOAT))),"
        + " count(CASE WHEN " + y + " > CAST(3 AS FLOAT) THEN 1 END), count(*) FROM float_t";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    assertFused(lastRun, rows, true);
    Row gpu = both.get(0).get(0);
    Row cpu = both.get(1).get(0);
    assertEquals(cpu.size(), gpu.size());
    for (int c = 0; c < cpu.size(); c++) {
      Object want = cpu.get(c);
      Object got = gpu.get(c);
      if (want instanceof Double d) {
        assertEquals(Double.doubleToLongBits(d), Double.doubleToLongBits((Double) got), "column " + c + ": " + cpu + " vs " + gpu);
      } else if (want instanceof Float f) {
        assertEquals(Float.floatToIntBits(f), Float.floatToIntBits((Float) got), "column " + c + ": " + cpu + " vs " + gpu);
      } else {
        assertEquals(want, got, "column " + c + ": " + cpu + " vs " + gpu);
      }
    }
    assertTrue(Double.isNaN(gpu.getDouble(1)) && gpu.getDouble(2) == Double.POSITIVE_INFINITY && gpu.getDouble(0) != 0
        && Float.isNaN(gpu.getFloat(4)) && gpu.getDouble(11) != 0 && gpu.getLong(8) > 6000, () -> "the cases happened: " + gpu);

    String arithmetic = "SELECT sum(" + x + " * CAST(2 AS FLOAT)) FROM float_t";
    List<List<Row>> scaled = gpuAndCpu(() -> spark().sql(arithmetic));
    assertTrue(fusedNodes(lastRun).isEmpty(), () -> explain(lastRun));
    assertEquals(rows, metrics(gpuNodes(lastRun).get(0)).get("gpuRows"));
    assertEquals(scaled.get(1), scaled.get(0));
  }

  /** An argument over a column of the GPU node's child (not on the device): the host fold, same result. */
  @Test
  void expressionOverChildColumn_foldsOnTheHost_matchesSpark() {
    String sql = "SELECT sum(CASE WHEN isnan(x) THEN a ELSE x END), count_if(isnan(x)) FROM (" + NAN_CALLS + ")";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    assertFused(lastRun, 15_000, false);
    assertAggregatesEqual(both.get(1), both.get(0));
  }

  /** Grouped by a computed key, with expressions over the UDF results as arguments (computed by the fused node). */
  @Test
  void grouped_byComputedIntKey_withNullKey_expressionArguments_matchesSpark_explainShowsTheNode_offByConf() {
    String sql = "SELECT k % 4 AS k4, " + everyFunction() + ", sum(x_d * 2), max(x_i + j), count(x_f + 1)"
        + " FROM (" + CALLS + ", j FROM fused_t) GROUP BY k % 4";
    String before = explain(spark().sql(sql));
    assertTrue(before.contains("isFinalPlan=false") && before.contains("VkGpuAggregate (partial)"),
        () -> "EXPLAIN shows the fused node before the adaptive query runs: " + before);
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    assertFused(lastRun, 15_000);
    assertEquals(5, both.get(0).size(), "4 keys and null");
    assertAggregatesEqual(both.get(1), both.get(0));
    String explain = explain(lastRun);
    assertTrue(explain.contains("VkGpuAggregate (partial) [keys=[_groupingexpression#"), explain);
    assertTrue(explain.contains("folded on the host: not every part reduces on the GPU"), explain); // max(x_i + j): j is on the host
    assertTrue(explain.contains("sum(x_d"), explain);

    spark().conf().set(Settings.FUSE_AGGREGATES.key(), "false");
    Dataset<Row> off = spark().sql(sql);
    List<Row> rows = off.collectAsList();
    assertTrue(fusedNodes(off).isEmpty(), () -> explain(off));
    assertAllRowsOnGpu(off);
    assertEquals(5, rows.size());
  }

  /**
   * Grouped by an int column of the GPU node's child (10 values and null): every function of every
   * type reduced per key on the GPU, in the UDFs' submission; only per-key partials came back, far
   * fewer bytes than the 15,000 rows' results; equal to Spark's (doubles within summation order).
   */
  @Test
  void groupedByIntColumn_everyFunctionOfEveryType_reducedPerKeyOnTheGpu_matchesSpark_perRowResultsNotReadBack() {
    spark().conf().set("spark.sql.ansi.enabled", "false");
    String sql = "SELECT k, " + everyFunction() + " FROM (" + CALLS + " FROM fused_t) GROUP BY k";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    assertFused(lastRun, 15_000, true);
    assertEquals(11, both.get(0).size(), "10 keys and null");
    Map<String, Long> eval = metrics(gpuNodes(lastRun).get(0));
    long perRow = 15_000L * (8 + 4 + 4 + 8 + 8); // the five results' bytes, had they come back
    assertTrue(eval.get("readbackBytes") > 0 && eval.get("readbackBytes") * 10 < perRow,
        () -> "only per-key partials read back: " + eval + " against " + perRow + " bytes of rows");
    assertAggregatesEqual(both.get(1), both.get(0));
  }

  /**
   * Grouped by an int column of the GPU node's child (j, also a UDF argument: the optimizer computes
   * k from id inside the fused node here, which would fold on the host), with arguments computed
   * over the UDF results (the implied-volatility benchmark's NaN-to-zero sum and count_if, coalesce,
   * wrapping integer arithmetic): each key's aggregates computed per row and reduced on the GPU;
   * equal to Spark's.
   */
  @Test
  void groupedByIntColumn_expressionArguments_reducedPerKeyOnTheGpu_matchesSpark() {
    spark().conf().set("spark.sql.ansi.enabled", "false");
    String sql = "SELECT j, sum(CASE WHEN isnan(x) THEN 0D ELSE x END), count_if(isnan(x)), max(coalesce(x, 0D)),"
        + " sum(x_i * 2 + 1), min(-x), count(x, x_i), count(*) FROM (SELECT d_add(p, b) AS x, int_poly(i, j) AS x_i, j FROM"
        + " (SELECT *, CASE WHEN id % 7 = 3 THEN double('NaN') WHEN id % 13 = 0 THEN NULL ELSE (id % 50) * 0.5 - 5 END AS p"
        + " FROM fused_t)) GROUP BY j";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    assertFused(lastRun, 15_000, true);
    assertEquals(3, both.get(0).size(), "keys 0, 1, 2");
    assertAggregatesEqual(both.get(1), both.get(0));
  }

  /**
   * Grouped by a date, a bigint beyond the int range, and an int key that is also a UDF argument;
   * small batches, so keys repeat across the batches of a partition; a key spanning too many
   * values for the slots in some batches only: those fold on the host (their UDFs still on the
   * GPU), merged with the GPU-reduced batches' groups of the same keys; all equal to Spark's.
   */
  @Test
  void groupedByDateBigintAndUdfArgumentKeys_smallBatches_wideBatchesFoldOnTheHost_matchSpark() {
    spark().conf().set("spark.sql.ansi.enabled", "false");
    spark().conf().set(Settings.COALESCE.key(), "false");
    spark().conf().set("spark.sql.inMemoryColumnarStorage.batchSize", "1000");
    spark().range(0, 20_000, 1, 4).selectExpr("id",
            "CASE WHEN id % 13 = 0 THEN NULL ELSE (id % 1000) * 0.37 - 100 END AS a",
            "CASE WHEN id % 11 = 0 THEN NULL WHEN id % 97 = 0 THEN -0.0D ELSE id * 0.001 END AS b",
            "CASE WHEN id % 19 = 0 THEN NULL ELSE cast(id % 10 AS int) - 4 END AS k",
            "date_add(DATE'2024-02-27', cast(id % 7 AS int)) AS kd",
            "cast(id % 5 AS bigint) - 5000000000 AS kl",
            // narrow (10 values) below id 12,500, wide in every batch above it, with the narrow keys mixed in
            "CASE WHEN id >= 12500 AND id % 2 = 1 THEN cast(id AS int) ELSE cast(id % 10 AS int) END AS kw")
        .createOrReplaceTempView("grouped_t");
    String udfs = "sum(d_add(a, b)), count(*), min(d_add(a, b)), max(d_add(b, a)), avg(d_add(a, b))";
    for (String key : List.of("kd", "kl")) {
      String sql = "SELECT " + key + ", " + udfs + " FROM grouped_t GROUP BY " + key;
      List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
      assertFused(lastRun, 20_000, true);
      assertAggregatesEqual(both.get(1), both.get(0));
    }
    // the key k is a UDF's argument too: the runner's input is shared
    String byArg = "SELECT k, sum(int_poly(k, k)), " + udfs + " FROM grouped_t GROUP BY k";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(byArg));
    assertFused(lastRun, 20_000, true);
    assertEquals(11, both.get(0).size());
    assertAggregatesEqual(both.get(1), both.get(0));

    String wide = "SELECT kw, " + udfs + " FROM grouped_t GROUP BY kw";
    both = gpuAndCpu(() -> spark().sql(wide));
    assertAggregatesEqual(both.get(1), both.get(0));
    Map<String, Long> m = GpuEvalIterator.snapshot(fusedNodes(lastRun).get(0).metricsMap());
    assertEquals(20_000L, m.get("gpuReducedRows") + m.get("aggregatedRows"), m.toString());
    assertTrue(m.get("gpuReducedRows") >= 10_000 && m.get("aggregatedRows") >= 5_000, () -> "the batches below id "
        + "10,000 reduced on the GPU, those above 15,000 (wide) folded on the host: " + m);
    Map<String, Long> eval = metrics(gpuNodes(lastRun).get(0));
    assertEquals(20_000L, eval.get("gpuRows"), "the wide batches' UDFs ran on the GPU too");
    assertTrue(eval.get("numOutputBatches") >= 8, () -> "several batches per partition, keys repeated across them: " + eval);

    spark().conf().set(Settings.FUSE_AGGREGATES_KEY_SLOTS.key(), "4"); // 10 keys: every batch too wide
    both = gpuAndCpu(() -> spark().sql(byArg));
    assertFused(lastRun, 20_000, false);
    assertAggregatesEqual(both.get(1), both.get(0));
  }

  /**
   * Keys the device computes (issue 35): {@code id % 7} (Java's sign of the dividend), {@code pmod}
   * of an int column with nulls (the null key its own group), {@code CAST(id % 16 AS INT)} under
   * ANSI, and {@code pmod} of a UDF's result: with {@code fuseAggregates} unset (the default) each is
   * fused because its expression bounds it, reduced per key on the GPU, and only per-key partials
   * came back; integer aggregates exactly Spark's, doubles within summation order. A key whose range
   * needs the source's values ({@code floor(b * 2.5D)}) reduces too, with {@code fuseAggregates=true}.
   */
  @Test
  void groupedByKeysComputedOnTheDevice_defaultFusion_reducedPerKeyOnTheGpu_matchSpark() {
    spark().conf().unset(Settings.FUSE_AGGREGATES.key()); // the default: fused only where the GPU reduces every batch
    Dataset<Row> cached = spark().table("fused_t").cache(); // its columns as columns, not expressions over id
    try {
      cached.createOrReplaceTempView("fused_c");
      String udfs = "sum(d_add(a, b)), count(*), min(long_mix(l, id)), max(long_mix(l, id)), avg(d_add(a, b)),"
          + " count(int_poly(i, j))";
      for (String key : List.of("id % 7", "pmod(i, 5)", "i % -3", "CAST(id % 16 AS INT)", "pmod(int_poly(i, j), 6)")) {
        String sql = "SELECT " + key + " AS g, " + udfs + " FROM fused_c GROUP BY " + key;
        List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
        assertFused(lastRun, 15_000, true);
        assertAggregatesEqual(both.get(1), both.get(0));
        String explain = explain(lastRun);
        assertTrue(explain.contains("reduced per key on the GPU, the key computed on the device"), explain);
        Map<String, Long> eval = metrics(gpuNodes(lastRun).get(0));
        // per batch, one 16-byte partial per aggregate (6, and the hidden row count) per key slot in the range: at most 64
        long bound = eval.get("numOutputBatches") * 64 * 7 * 16;
        assertTrue(eval.get("readbackBytes") <= bound, () -> key + ": only per-key partials read back: " + eval
            + " against " + bound + " bytes");
      }
      spark().conf().set("spark.sql.ansi.enabled", "false");
      String sums = "SELECT i % 4 AS g, sum(int_poly(i, j)), sum(long_mix(l, id)), min(int_poly(i, j)) FROM fused_c GROUP BY i % 4";
      List<List<Row>> both = gpuAndCpu(() -> spark().sql(sums));
      assertFused(lastRun, 15_000, true);
      assertEquals(both.get(1), both.get(0), "integer sums exactly Spark's (wrapping), the null key its own group");

      spark().conf().set(Settings.FUSE_AGGREGATES.key(), "true"); // a key ranged from its source's values
      String floor = "SELECT floor(b * 2.5D) AS g, " + udfs + " FROM fused_c GROUP BY floor(b * 2.5D)"; // 0 to 50, and null
      both = gpuAndCpu(() -> spark().sql(floor));
      assertFused(lastRun, 15_000, true);
      assertAggregatesEqual(both.get(1), both.get(0));
    } finally {
      cached.unpersist(true);
    }
  }

  /**
   * min/max keep the first of -0.0 and 0.0, as Spark does; a sum of -0.0 alone is 0.0; one
   * partition, so the order is fixed. Without adaptive execution (the rule after the transitions).
   */
  @Test
  void negativeZero_minMaxKeepTheFirst_sumOfNegativeZeroIsPositive_asSpark_withoutAqe() {
    spark().conf().set("spark.sql.adaptive.enabled", "false");
    spark().range(0, 12, 1, 1).selectExpr("cast(id % 3 AS int) AS g",
            // zeros Spark cannot fold (it folds a CASE of 0.0 and -0.0 to one of them)
            "id", "cast(id - id AS double) AS zero", "cast(id - id AS double) * -1.0D AS negzero")
        .selectExpr("g", "CASE WHEN g = 0 THEN negzero WHEN g = 1 THEN (CASE WHEN id < 6 THEN zero ELSE negzero END)"
                + " ELSE (CASE WHEN id < 6 THEN negzero ELSE zero END) END AS z0",
            "CASE WHEN id = 4 THEN NULL WHEN id % 2 = 0 THEN cast(negzero AS float) ELSE cast(zero AS float) END AS w0")
        .createOrReplaceTempView("zeros_t");
    String sql = "SELECT g, min(d_add(z0, -0.0D)), max(d_add(z0, -0.0D)), sum(d_add(z0, -0.0D)), avg(d_add(z0, -0.0D)),"
        + " min(f_add(w0, float('-0.0'))), max(f_add(w0, float('-0.0'))), sum(f_add(w0, float('-0.0'))) FROM zeros_t GROUP BY g";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    assertFused(lastRun, 12, true); // grouped by a column of the GPU node's child: reduced per key on the GPU
    List<Row> cpu = both.get(1);
    List<Row> gpu = both.get(0);
    assertEquals(cpu.toString(), gpu.toString());
    for (int r = 0; r < cpu.size(); r++) {
      for (int c = 1; c < 8; c++) {
        assertEquals(cpu.get(r).get(c), gpu.get(r).get(c), "zero signs differ at row " + r + " column " + c);
      }
    }
    assertEquals(0.0, gpu.get(0).getDouble(3), "sum of -0.0 alone is 0.0");
    assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(gpu.get(0).getDouble(1)));
  }

  /**
   * count(*) and sum(udf) over a filtered cached table, the examples' Demo query: the GPU node sits
   * over a Filter. With and without adaptive execution, fused, and equal to Spark's.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void countAndSum_overFilteredCachedTable_matchesSpark_fused(boolean aqe) {
    spark().conf().set("spark.sql.adaptive.enabled", Boolean.toString(aqe));
    Dataset<Row> cached = spark().range(0, 20_000, 1, 4).selectExpr("id", "id * 0.5D AS s", "id * 0.25D AS k").cache();
    try {
      cached.createOrReplaceTempView("fused_cached");
      String sql = "SELECT count(*) AS n, sum(d_add(s, k)) AS total FROM fused_cached WHERE id % 100 = 0";
      List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
      assertFused(lastRun, 200, true); // count(*) and a sum of a UDF result: on the GPU
      assertAggregatesEqual(both.get(1), both.get(0));
      assertEquals(200L, both.get(0).get(0).getLong(0));
    } finally {
      cached.unpersist(true);
    }
  }

  private static Dataset<Row> lastRun;

  private static List<List<Row>> gpuAndCpu(Supplier<Dataset<Row>> query) {
    return onAndOff(query, ran -> {
      assertAllRowsOnGpu(ran);
      lastRun = ran;
    });
  }

  private static List<VkGpuAggregateExec> fusedNodes(Dataset<Row> df) {
    List<VkGpuAggregateExec> out = new ArrayList<>();
    VkExplain.visit(df.queryExecution().executedPlan(), p -> {
      if (p instanceof VkGpuAggregateExec g) {
        out.add(g);
      }
    });
    return out;
  }

  private static void assertFused(Dataset<Row> ran, long rows) {
    assertFused(ran, rows, false);
  }

  /**
   * One fused node, which aggregated every row the GPU computed (none went through Spark's
   * aggregate): on the GPU ({@code gpuReduced}: only partials read back) or folded on the host.
   */
  private static void assertFused(Dataset<Row> ran, long rows, boolean gpuReduced) {
    List<VkGpuAggregateExec> fused = fusedNodes(ran);
    assertEquals(1, fused.size(), () -> explain(ran));
    assertInstanceOf(VkGpuEvalExec.class, fused.get(0).child(), () -> "no transition under the fused node: " + explain(ran));
    Map<String, Long> m = GpuEvalIterator.snapshot(fused.get(0).metricsMap());
    assertEquals(gpuReduced ? 0 : rows, m.get("aggregatedRows"), m.toString());
    assertEquals(gpuReduced ? rows : 0, m.get("gpuReducedRows"), m.toString());
    if (gpuReduced) {
      assertEquals(metrics(gpuNodes(ran).get(0)).get("readbackBytes"), m.get("gpuReadbackBytes"),
          "the GPU node read back only the partials");
    }
    assertEquals(rows, metrics(gpuNodes(ran).get(0)).get("gpuRows"));
    assertTrue(m.get("numOutputRows") > 0, m.toString());
  }

}
