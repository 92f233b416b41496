package io.vkspark.spark;

import io.vkspark.spark.agg.VkGpuAggregateExec;
import io.vkspark.spark.plan.ConditionalGuardTest;

import io.vkspark.spark.api.GpuFunction;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.plan.VkExplain;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.LongStream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** spark.vkspark.verify: a sample of GPU rows re-computed with call() and compared. */
@ExtendWith({TestSpark.Validated.class, TestSpark.RestoresConf.class})
final class VerifyModeTest {
  @BeforeAll
  static void register() {
    SparkSession s = spark();
    // Deliberately wrong above 100: the GPU adds one, call() does not.
    GpuFunction.define("off_by_one").returns("int").arg("x", "int")
        .body("x > 100 ? x + 1 : x")
        .cpu((UDF1<Integer, Integer>) x -> x)
        .register(s);
    // Deliberately wrong above 100 too, over doubles (a double SUM reduces on the GPU, ANSI or not).
    GpuFunction.define("off_by_one_d").returns("double").arg("x", "double")
        .body("x > 100.0 ? x + 1.0 : x")
        .cpu((UDF1<Double, Double>) x -> x)
        .register(s);
  }

  /** Sums the metric over the query's GPU nodes, after asserting they ran on the GPU. */
  private static long metric(Dataset<Row> df, String name) {
    List<Map<String, Long>> ms = gpuNodes(df).stream().map(TestSpark::metrics).toList();
    assertFalse(ms.isEmpty(), explain(df));
    for (Map<String, Long> m : ms) {
      assertTrue(m.get("gpuRows") > 0, m.toString());
      assertEquals(0L, m.get("cpuRows"), m.toString());
    }
    return ms.stream().mapToLong(m -> m.get(name)).sum();
  }

  @Test
  void sample_countsMismatches_andReturnsTheGpuValues() {
    spark().conf().set(Settings.VERIFY.key(), "sample");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "0.01");
    spark().conf().set(Settings.VERIFY_BUDGET.key(), "1"); // the whole sample, to count it
    Dataset<Row> df = table().selectExpr("id", "off_by_one(i) AS r");
    List<Row> rows = df.collectAsList();
    List<Row> expected = table().selectExpr("id", "IF(i > 100, i + 1, i) AS r").collectAsList();
    assertRowsEqual(sortById(expected), sortById(rows));
    long checked = metric(df, "verifyRows");
    long mismatches = metric(df, "verifyMismatches");
    // 20,000 rows at 1%: about 200 checked, about half of them above 100.
    assertTrue(checked >= 150 && checked <= 260, "verify rows " + checked);
    assertTrue(mismatches > checked / 4 && mismatches < checked, mismatches + " of " + checked);
  }

  /**
   * Issue 33: under the default budget a task's first check takes a few rows (what call() costs is
   * not known yet: a whole first sample of an expensive UDF sat on every task's critical path), and
   * a wrong kernel is caught among them; later batches take what the budget allows.
   */
  @Test
  void sample_aTasksFirstCheck_probesAFewRows_andStillCatchesAWrongKernel() {
    spark().conf().set(Settings.VERIFY.key(), "sample");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "0.5");
    Dataset<Row> df = table().selectExpr("id", "off_by_one(i) AS r");
    df.collectAsList();
    long checked = metric(df, "verifyRows");
    assertTrue(checked > 0 && checked < 1_000, "a few rows a task, not half of 20,000: " + checked);
    assertTrue(metric(df, "verifyMismatches") > 0, "the wrong kernel is caught among " + checked);
  }

  /**
   * Issue 33: a GPU UDF whose GLSL body differs from its call() (a planted wrong kernel) under a
   * fused SUM/COUNT with {@code verify=sample}: the aggregate still reduces every row on the GPU
   * (only partials come back), and verify still catches the mismatch, from the sampled rows'
   * results read back with the reduction (the values it summed), within its time budget.
   */
  @Test
  void sample_underAFusedAggregate_stillReducesOnTheGpu_andCatchesAWrongKernel() {
    spark().conf().set(Settings.VERIFY.key(), "sample");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "0.05");
    Dataset<Row> df = table().selectExpr("sum(off_by_one_d(a)) AS s", "count(off_by_one_d(a)) AS n");
    Row got = df.collectAsList().get(0);
    Row want = table().selectExpr("sum(IF(a > 100, a + 1, a))", "count(a)").collectAsList().get(0);
    assertEquals(want.getLong(1), got.getLong(1));
    assertEquals(want.getDouble(0), got.getDouble(0), 1e-9 * Math.abs(want.getDouble(0)), "the GPU's values, as verify=sample returns them");
    long[] reduced = new long[1];
    VkExplain.visit(df.queryExecution().executedPlan(), p -> {
      if (p instanceof VkGpuAggregateExec g) {
        reduced[0] += g.metricsMap().get("gpuReducedRows").value();
      }
    });
    assertEquals(20_000L, reduced[0], "every row reduced on the GPU under verify=sample: " + explain(df));
    long checked = metric(df, "verifyRows");
    long mismatches = metric(df, "verifyMismatches");
    assertTrue(checked > 0 && checked < 20_000 / 10, "a bounded sample: " + checked);
    assertTrue(mismatches > 0, "the wrong kernel is caught: " + mismatches + " of " + checked);
  }

  /**
   * Under a fused aggregate a task's first reduced batch is checked, later ones at doubling intervals
   * while the checks stay within {@code verify.budget} of the task's reduction time (issue 33: when
   * a sample was a dispatch of its own, checking every small batch made a translated UDF's fused
   * sum 1.5x slower), and the wrong kernel is still caught.
   */
  @Test
  void sample_underAFusedAggregate_rerunsWithinItsBudget_andStillCatchesAWrongKernel() {
    spark().conf().set(Settings.VERIFY.key(), "sample");
    spark().conf().set(Settings.BATCH_ROWS.key(), "256");
    spark().conf().set("spark.sql.inMemoryColumnarStorage.batchSize", "256"); // rows turned into batches of 256
    spark().conf().set(Settings.COALESCE.key(), "false");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "0.000001"); // one row a checked batch
    spark().conf().set(Settings.VERIFY_BUDGET.key(), "1"); // every reduced batch's sample runs again
    // two tasks of about 120 batches each
    Supplier<Dataset<Row>> query = () -> spark().range(0, 60_000, 1, 2).selectExpr("sum(off_by_one_d(id * 0.5D)) AS s");
    Dataset<Row> every = query.get();
    every.collectAsList();
    long all = metric(every, "verifyRows");
    spark().conf().unset(Settings.VERIFY_BUDGET.key()); // the default budget
    Dataset<Row> df = query.get();
    Row got = df.collectAsList().get(0);
    Row want = spark().range(0, 60_000, 1, 2).selectExpr("sum(IF(id * 0.5D > 100, id * 0.5D + 1, id * 0.5D))")
        .collectAsList().get(0);
    assertEquals(want.getDouble(0), got.getDouble(0), 1e-9 * Math.abs(want.getDouble(0)), "the GPU's values");
    long checked = metric(df, "verifyRows");
    assertTrue(all >= 200, "a rerun per reduced batch with the whole budget: " + all);
    assertTrue(checked > 0 && checked * 4 <= all, "within the budget, a few reruns: " + checked + " of " + all);
    assertTrue(metric(df, "verifyMismatches") > 0, "the wrong kernel is caught by a task's first batch");
  }

  /**
   * Issue 33: a reduced batch's sample costs no dispatch of its own: its rows' results come back
   * from the batch's own submission (one dispatch per reduced batch with every batch checked), and
   * they are the values the GPU summed, so the planted wrong kernel is caught; the sum is the GPU's.
   */
  @Test
  void sample_underAFusedAggregate_comesBackWithTheReduction_noDispatchOfItsOwn() {
    spark().conf().set(Settings.METRICS_LEVEL.key(), "debug"); // gpuDispatches
    spark().conf().set(Settings.VERIFY.key(), "sample");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "0.05");
    spark().conf().set(Settings.VERIFY_BUDGET.key(), "1"); // every reduced batch checked
    spark().conf().set(Settings.BATCH_ROWS.key(), "2048");
    spark().conf().set("spark.sql.inMemoryColumnarStorage.batchSize", "2048"); // rows turned into batches of 2,048
    spark().conf().set(Settings.COALESCE.key(), "false");
    Dataset<Row> df = spark().range(0, 20_000, 1, 2).selectExpr("sum(off_by_one_d(id * 0.5D)) AS s");
    Row got = df.collectAsList().get(0);
    Row want = spark().range(0, 20_000, 1, 2).selectExpr("sum(IF(id * 0.5D > 100, id * 0.5D + 1, id * 0.5D))")
        .collectAsList().get(0);
    assertEquals(want.getDouble(0), got.getDouble(0), 1e-9 * Math.abs(want.getDouble(0)), "the GPU's values");
    long batches = metric(df, "numOutputBatches");
    assertTrue(batches >= 10, "batches of at most 2,048 rows: " + batches);
    assertEquals(batches, metric(df, "gpuDispatches"), "one dispatch per reduced batch, its checked sample's included");
    assertTrue(metric(df, "verifyRows") >= batches, "every batch checked: " + metric(df, "verifyRows"));
    assertTrue(metric(df, "verifyMismatches") > 0, "the wrong kernel is caught");
  }

  /**
   * A translated Java UDF that reads a field of its own: the translation reads it when the query is
   * planned. Null for a null argument (strict: a reduction reads the validity of its arguments).
   */
  static final class Scaled implements UDF1<Double, Double> {
    double k = 1.0;

    @Override
    public Double call(Double x) {
      return x == null ? null : x * k;
    }
  }

  /**
   * Issue 33: a translated UDF under a fused sum with the defaults (verify=sample for translated
   * UDFs): equal to Spark's, reduced on the GPU, its sample checked with no dispatch of its own;
   * and a planted wrong translation (the kernel keeps the field's value at planning, call() in the
   * tasks reads the value set afterwards) is still caught.
   */
  @Test
  void translatedUdf_defaultVerify_underAFusedSum_equalsSparks_andCatchesAPlantedWrongTranslation() {
    spark().conf().set(Settings.METRICS_LEVEL.key(), "debug");
    Scaled udf = new Scaled();
    spark().udf().register("scaled_t", udf, DataTypes.DoubleType);
    Supplier<Dataset<Row>> q = () -> spark().range(0, 20_000, 1, 2).selectExpr("sum(scaled_t(id * 0.5D)) AS s");
    List<List<Row>> both = onAndOff(q, ran -> {
      assertEquals(20_000L, reducedRows(ran), "reduced on the GPU: " + explain(ran));
      assertTrue(metric(ran, "verifyRows") > 0, "verify=sample by default for a translated UDF");
      assertEquals(0L, metric(ran, "verifyMismatches"));
      assertEquals(metric(ran, "numOutputBatches"), metric(ran, "gpuDispatches"), "no dispatch for the sample");
    });
    assertAggregatesEqual(both.get(1), both.get(0));

    Dataset<Row> planted = q.get();
    planted.queryExecution().executedPlan(); // translated now, with k = 1
    udf.k = 3.0; // the tasks' call() (the UDF serialized with them) reads 3
    double got = planted.collectAsList().get(0).getDouble(0);
    assertEquals(0.5 * 19_999 * 20_000 / 2, got, 1e-6, "the kernel's values, with k = 1");
    assertEquals(20_000L, reducedRows(planted));
    assertTrue(metric(planted, "verifyMismatches") > 0, "the wrong translation is caught");
  }

  private static long reducedRows(Dataset<Row> df) {
    long[] reduced = new long[1];
    VkExplain.visit(df.queryExecution().executedPlan(), p -> {
      if (p instanceof VkGpuAggregateExec g) {
        reduced[0] += g.metricsMap().get("gpuReducedRows").value();
      }
    });
    return reduced[0];
  }

  @Test
  void strict_failsNamingTheUdfTheRowAndBothValues() {
    spark().conf().set(Settings.VERIFY.key(), "strict");
    Throwable e = assertThrows(Throwable.class, () -> table().selectExpr("id", "off_by_one(i) AS r").collectAsList());
    GpuException g = cause(e);
    assertEquals(GpuException.Code.VERIFY, g.code(), g.getMessage());
    String msg = g.getMessage();
    assertTrue(msg.matches("(?s)vkspark: GPU UDF 'off_by_one' disagrees with its call\\(\\) on the row \\(x=(\\d+)\\): "
        + "GPU gave (\\d+), call\\(\\) gave (\\d+)\\. Fix: .*"), msg);
    String x = msg.replaceFirst("(?s).*\\(x=(\\d+)\\).*", "$1");
    assertTrue(msg.contains("GPU gave " + (Integer.parseInt(x) + 1) + ", call() gave " + x), msg);
  }

  private static GpuException cause(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof GpuException g) {
        return g;
      }
    }
    throw new AssertionError("no GpuException in " + t, t);
  }

  @Test
  void correctUdfs_noMismatches_rowsChecked() {
    spark().conf().set(Settings.VERIFY.key(), "strict");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "0.05");
    Supplier<Dataset<Row>> q = () -> table().selectExpr("id", "int_poly(i, j) AS p", "hypot_gpu(a, b) AS h",
        "float_saxpy(f, g) AS s", "long_mix(l, m) AS x", "is_positive(a) AS y", "add_days(d, j) AS z");
    Dataset<Row> df = q.get();
    df.collectAsList();
    long checked = metric(df, "verifyRows");
    assertTrue(checked >= 6 * 900, "verify rows " + checked);
    assertEquals(0L, metric(df, "verifyMismatches"));
    assertGpuEqualsCpu(q);
  }

  @Test
  void strict_respectsGuards_neverRunsASkippedBranch() throws Exception {
    ConditionalGuardTest.table(); // x, y: y is 0 where id % 7 = 3, null where id % 11 = 0
    spark().conf().set(Settings.VERIFY.key(), "strict");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "1");
    Supplier<Dataset<Row>> q = () -> ConditionalGuardTest.t().selectExpr("id",
        "CASE WHEN y <> 0 THEN safe_div(x, y) ELSE -1 END AS r");
    Dataset<Row> df = q.get();
    df.collectAsList();
    long taken = LongStream.range(0, 20_000).filter(id -> id % 11 != 0 && id % 7 != 3).count();
    assertEquals(taken, metric(df, "verifyRows"), "every row whose branch is taken, and only those");
    assertEquals(0L, metric(df, "verifyMismatches"));
    assertGpuEqualsCpu(q);
  }

  /** Indicative cost of sample mode at the default rate (lavapipe on a shared 2-core box). */
  @Test
  void sampleModeCost_printed() {
    Supplier<Dataset<Row>> q = () -> spark().range(0, 2_000_000, 1, 2)
        .selectExpr("hypot_gpu(CAST(id AS DOUBLE), 3.0D) AS h", "int_poly(CAST(id AS INT), 1) AS p")
        .selectExpr("sum(h)", "sum(p)");
    q.get().collectAsList(); // warm: kernels compiled, buffers recorded
    long off = 0;
    long on = 0;
    long verifyNs = 0;
    for (int round = 0; round < 3; round++) {
      long t0 = System.nanoTime();
      q.get().collectAsList();
      off += System.nanoTime() - t0;
      spark().conf().set(Settings.VERIFY.key(), "sample");
      t0 = System.nanoTime();
      Dataset<Row> df = q.get();
      df.collectAsList();
      on += System.nanoTime() - t0;
      spark().conf().unset(Settings.VERIFY.key());
      verifyNs += metric(df, "verifyTime");
      assertTrue(metric(df, "verifyRows") >= 2, "verify rows: " + metric(df, "verifyRows")); // within verify.budget
    }
    System.out.printf("vkspark verify cost: 2M rows x 2 UDFs, off %.0f ms, sample@%s %.0f ms per query (%+.1f%%); "
            + "verifier's own time %.1f ms per query%n",
        off / 3e6, Settings.VERIFY_SAMPLE_RATE.defaultValue(), on / 3e6, 100.0 * (on - off) / off, verifyNs / 3e6);
  }

  private static List<Row> sortById(List<Row> rows) {
    return rows.stream().sorted(Comparator.comparingLong((Row r) -> r.getLong(0))).toList();
  }
}
