package io.vkspark.spark;

import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.api.GpuFunction;
import io.vkspark.spark.conf.Settings;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.extension.ExtendWith;

/** GPU UDFs in Spark SQL on a real local SparkSession: results equal Spark's own CPU run. */
@ExtendWith(TestSpark.Validated.class)
final class GpuUdfSqlTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "int_poly(i, j)",
      "long_mix(l, m)",
      "float_saxpy(f, g)",
      "hypot_gpu(a, b)",
      "xor_gpu(p, q)",
      "add_days(d, j)",
      "add_hours(t, j)",
      "is_positive(b)"})
  void everyType_withNulls_gpuEqualsCpu(String call) {
    Dataset<Row> gpu = table().selectExpr("id", call + " AS r");
    assertEquals(1, gpuNodes(gpu).size(), () -> explain(gpu));
    assertGpuEqualsCpu(() -> table().selectExpr("id", call + " AS r"));
    List<Row> rows = gpu.collectAsList();
    assertAllRowsOnGpu(gpu);
    assertEquals(20_000L, metrics(gpuNodes(gpu).get(0)).get("gpuRows"));
    assertTrue(rows.stream().anyMatch(r -> r.isNullAt(1)), "nulls propagate");
    assertTrue(rows.stream().anyMatch(r -> !r.isNullAt(1)));
  }

  @Test
  void explain_showsTheGpuNodeAndTheDevice() {
    String plan = explain(table().selectExpr("id", "hypot_gpu(a, b)"));
    assertTrue(plan.contains("VkGpuEval [hypot_gpu(a#"), plan);
    assertTrue(plan.contains("on GPU"), plan);
    assertTrue(plan.contains("== Extended Information (vkspark) =="), plan);
    assertTrue(plan.contains("('llvmpipe") || plan.contains("on GPU ('"), plan);
  }

  @Test
  void dataFrameApi_callFunction() {
    assertGpuEqualsCpu(() -> table().select(functions.col("id"),
        functions.call_function("hypot_gpu", functions.col("a"), functions.col("b")).as("h")));
    assertEquals(1, gpuNodes(table().select(functions.col("id"),
        functions.call_function("hypot_gpu", functions.col("a"), functions.col("b")))).size());
  }

  @Test
  void nestedInOtherExpressions_andSeveralInOneSelect() {
    String[] cols = {"id", "hypot_gpu(a, b) * 2 + 1 AS h", "int_poly(i, j) - 7 AS p", "xor_gpu(p, q) AND p AS x",
        "float_saxpy(f, g) AS s"};
    Dataset<Row> df = table().selectExpr(cols);
    assertEquals(1, gpuNodes(df).size(), "one node evaluates every call: " + explain(df));
    assertEquals(4, gpuNodes(df).get(0).calls().size());
    assertGpuEqualsCpu(() -> table().selectExpr(cols));
    df.collectAsList();
    assertAllRowsOnGpu(df);
  }

  @Test
  void gpuUdfOfGpuUdf_stacksTwoNodes() {
    String[] cols = {"id", "hypot_gpu(hypot_gpu(a, b), a) AS h", "is_positive(hypot_gpu(b, 1.5D) - 3.0D) AS q"};
    Dataset<Row> df = table().selectExpr(cols);
    assertEquals(2, gpuNodes(df).size(), explain(df));
    assertGpuEqualsCpu(() -> table().selectExpr(cols));
  }

  @Test
  void inWhere() {
    Dataset<Row> df = table().where("is_positive(b) AND hypot_gpu(a, b) > 1000").select("id", "a", "b");
    assertGpuEqualsCpu(() -> table().where("is_positive(b) AND hypot_gpu(a, b) > 1000").select("id", "a", "b"));
    long n = df.collectAsList().size();
    assertAllRowsOnGpu(df);
    assertTrue(n > 0 && n < 20_000, "filtered " + n);
  }

  @Test
  void inAggregates() {
    Dataset<Row> df = table().groupBy(functions.expr("j % 5").as("k"))
        .agg(functions.expr("sum(int_poly(i, j))"), functions.expr("avg(hypot_gpu(a, b))"), functions.expr("count(*)"));
    df.collectAsList();
    assertAllRowsOnGpu(df);
    List<List<Row>> both = gpuAndCpu(() -> table().groupBy(functions.expr("j % 5").as("k"))
        .agg(functions.expr("sum(int_poly(i, j))"), functions.expr("avg(hypot_gpu(a, b))"), functions.expr("count(*)")));
    assertAggregatesEqual(both.get(1), both.get(0)); // the average's sum is reduced on the GPU, in its order
  }

  @Test
  void nestedCallsInAggregates_allRunOnTheGpu() {
    Dataset<Row> df = table().groupBy(functions.expr("p").as("k"))
        .agg(functions.expr("sum(hypot_gpu(hypot_gpu(a, b), a))"), functions.expr("max(int_poly(int_poly(i, j), j))"));
    String plan = explain(df);
    assertFalse(plan.contains("runs on CPU"), plan);
    assertEquals(2, gpuNodes(df).size(), plan);
    assertGpuEqualsCpu(() -> table().groupBy(functions.expr("p").as("k"))
        .agg(functions.expr("sum(hypot_gpu(hypot_gpu(a, b), a))"), functions.expr("max(int_poly(int_poly(i, j), j))")));
  }

  @Test
  void filterPushedToTheScan_isNotReportedAsCpu() {
    String plan = explain(table().where("hypot_gpu(a, b) > 100").select("id"));
    assertTrue(plan.contains("on GPU"), plan);
    assertFalse(plan.contains("runs on CPU"), plan);
  }

  @Test
  void callsInsideLambdas_stayWithTheirLambdaVariables() {
    withFallback(() -> {
      Dataset<Row> df = table().selectExpr("id", "transform(array(a, b), x -> hypot_gpu(x, 1.0D)) AS t");
      assertTrue(explain(df).contains("hypot_gpu runs on CPU because it is inside a lambda function"), explain(df));
      assertVksparkEqualsCpu(() -> table().selectExpr("id", "transform(array(a, b), x -> hypot_gpu(x, 1.0D)) AS t"),
          ran -> assertTrue(gpuNodes(ran).isEmpty(), explain(ran)));
      assertVksparkEqualsCpu(() -> table().where("exists(array(a, b), x -> is_positive(x))").select("id"),
          ran -> assertTrue(gpuNodes(ran).isEmpty(), explain(ran)));
      assertTrue(table().selectExpr("transform(array(a, b), x -> hypot_gpu(x, 1.0D)) AS t").where("t[0] IS NOT NULL").count() > 0);
    });
  }

  @Test
  void conditionalCalls_neverEvaluateArgumentsTheConditionSkips() {
    // ANSI mode (Spark 4's default) fails on division by zero: the guarded divisions must stay guarded.
    String z = "(j % 5)";
    String[] cols = {"id", "CASE WHEN " + z + " <> 0 THEN int_poly(i div " + z + ", 1) END AS c",
        "CASE WHEN " + z + " <> 0 THEN hypot_gpu(a, b) END AS h", "coalesce(hypot_gpu(a, b), 0D) AS k"};
    Consumer<Dataset<Row>> someRowsOnGpu = ran -> {
      assertFalse(gpuNodes(ran).isEmpty(), explain(ran));
      gpuNodes(ran).forEach(n -> assertTrue(metrics(n).get("gpuRows") > 0, metrics(n).toString()));
    };
    withFallback(() -> {
      assertVksparkEqualsCpu(() -> table().selectExpr(cols), someRowsOnGpu);
      Dataset<Row> df = table().selectExpr(cols);
      assertEquals(1, gpuNodes(df).size(), explain(df));
      // int_poly runs on the GPU too: its computed argument is computed under the guard (IF(guard, i div z, NULL)).
      assertFalse(explain(df).contains("runs on CPU"), explain(df));
      assertTrue(explain(df).contains("else null AS vk_arg0"), explain(df));
      df.collectAsList();
      assertAllRowsOnGpu(df);
      assertVksparkEqualsCpu(() -> table().where(z + " <> 0 AND int_poly(i div " + z + ", 1) > 3").select("id"), ran -> { });
      assertVksparkEqualsCpu(() -> table().groupBy("p").agg(functions.expr(
          "sum(CASE WHEN " + z + " <> 0 THEN int_poly(i div " + z + ", 1) END)"), functions.expr("sum(hypot_gpu(a, b))")),
          someRowsOnGpu);
    });
  }

  @Test
  void groupByAFunctionFromTheFunctionsConf() {
    assertGpuEqualsCpu(() -> table().groupBy(functions.expr("int_poly(j, 1)").as("k")).count());
    assertGpuEqualsCpu(() -> spark().sql("SELECT int_poly(j % 7, 1) AS k, count(*) FROM parquet.`" + parquet()
        + "` GROUP BY int_poly(j % 7, 1)"));
  }

  @Test
  void implicitCasts_followSpark() {
    // int_poly takes ints: j is int, a literal 2 is int; hypot_gpu takes doubles: an int column and a decimal literal cast.
    assertGpuEqualsCpu(() -> table().selectExpr("id", "hypot_gpu(j, 2.5) AS h", "long_mix(i, j) AS m"));
  }

  @Test
  void manyPartitions_includingEmptyOnes_onFourTasks() {
    SparkSession s = spark();
    String[] cols = {"id", "hypot_gpu(cast(id as double), 3.0D) AS h", "int_poly(cast(id as int), 1) AS p"};
    // 16 partitions of which most are empty after the filter.
    assertGpuEqualsCpu(() -> s.range(0, 4000, 1, 16).where("id % 1000 < 3 OR id > 3990").selectExpr(cols));
    assertGpuEqualsCpu(() -> s.range(0, 200_000, 1, 16).selectExpr(cols));
  }

  @Test
  void cachedDataFrameAndParquet_areReadAsColumnarBatches() {
    Dataset<Row> cached = table().select("id", "a", "b", "i", "j").cache();
    try {
      cached.count();
      Dataset<Row> df = cached.selectExpr("id", "hypot_gpu(a, b) AS h", "int_poly(i, j) AS p");
      String plan = explain(df);
      assertTrue(plan.contains("InMemoryTableScan"), plan);
      assertFalse(plan.contains("RowToColumnar"), "a cached child feeds columnar batches: " + plan);
      assertGpuEqualsCpu(() -> cached.selectExpr("id", "hypot_gpu(a, b) AS h", "int_poly(i, j) AS p"));
    } finally {
      cached.unpersist();
    }
    String parquetPlan = explain(table().selectExpr("id", "hypot_gpu(a, b)"));
    assertTrue(parquetPlan.contains("FileScan parquet"), parquetPlan);
    assertFalse(parquetPlan.contains("RowToColumnar"), "Parquet feeds columnar batches: " + parquetPlan);
  }

  @Test
  void metrics_areNonZero_andOutputSlotsAreReusedAfterTheFirstBatch() {
    SparkSession s = spark();
    s.conf().set("spark.sql.parquet.columnarReaderBatchSize", "1000");
    s.conf().set(Settings.METRICS_LEVEL.key(), "debug");
    s.conf().set(Settings.COALESCE.key(), "false"); // one dispatch per 1,000-row batch (CoalesceSparkTest covers coalescing)
    try {
      Dataset<Row> df = table().selectExpr("id", "hypot_gpu(a, b) AS h");
      df.collectAsList();
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertEquals(20_000L, m.get("numOutputRows"), m.toString());
      assertEquals(20_000L, m.get("gpuRows"), m.toString());
      assertTrue(m.get("gpuDispatches") >= 20, m.toString());
      assertEquals(20_000L * 16, m.get("uploadBytes"), "two double columns: " + m);
      assertEquals(20_000L * 8, m.get("readbackBytes"), m.toString());
      assertTrue(m.get("deviceTime") > 0 && m.get("waitTime") > 0, m.toString());
      assertTrue(m.get("reusedSlots") > 0, m.toString());
      assertEquals(0L, m.get("cpuRows"), m.toString());
      long tasksThatAppended = m.get("appendedSlots") / 2;
      assertTrue(m.get("reusedSlots") >= 2 * (m.get("numOutputBatches") - tasksThatAppended) - m.get("movedSlots"),
          "after each task's first batch, slots are reused: " + m);
    } finally {
      s.conf().unset("spark.sql.parquet.columnarReaderBatchSize");
      s.conf().unset(Settings.METRICS_LEVEL.key());
      s.conf().unset(Settings.COALESCE.key());
    }
  }

  @Test
  void functionsConf_registersClassesInEverySession() {
    SparkSession other = spark().newSession();
    Dataset<Row> df = other.read().parquet(parquet()).selectExpr("id", "int_poly(i, j) AS p", "gpu_hypot(a, b) AS h");
    assertEquals(1, gpuNodes(df).size(), explain(df));
    df.collectAsList();
    assertAllRowsOnGpu(df);
    // Compared in the other session itself: its vkspark on vs off (not the shared session's).
    assertGpuEqualsCpu(() -> other.read().parquet(parquet()).selectExpr("id", "int_poly(i, j) AS p"));
  }

  /**
   * One task (coalesce(1), no shuffle) so the query needs exactly one buffer set: with several
   * tasks, how many hold a GPU permit at once (and so how many sets the pool must hold) depends on
   * timing, and a second query that happened to run two at once where the first ran one recorded a
   * set (seen once in CI).
   */
  @Test
  void secondQuery_recordsNothingNew() {
    table().selectExpr("id", "float_saxpy(f, g)").coalesce(1).collectAsList();
    long recorded = ExecutorDevice.current().orElseThrow().device().counters().commandBuffersCreated();
    long buffers = ExecutorDevice.current().orElseThrow().device().counters().buffersCreated();
    Dataset<Row> again;
    spark().conf().set(Settings.METRICS_LEVEL.key(), "debug");
    try {
      again = table().selectExpr("id", "float_saxpy(f, g)").coalesce(1);
      again.collectAsList();
    } finally {
      spark().conf().unset(Settings.METRICS_LEVEL.key());
    }
    assertEquals(recorded, ExecutorDevice.current().orElseThrow().device().counters().commandBuffersCreated(),
        () -> "command buffers recorded by the second query; its metrics: " + metrics(gpuNodes(again).get(0)));
    assertEquals(buffers, ExecutorDevice.current().orElseThrow().device().counters().buffersCreated());
    assertEquals(0L, metrics(gpuNodes(again).get(0)).get("bufferSetsRecorded"));
    assertAllRowsOnGpu(again);
  }

  /**
   * The kernel always sees a date as int days since 1970-01-01 and a timestamp as int64_t UTC
   * microseconds; call() sees what Spark gives any Java UDF, here java.time.LocalDate and Instant
   * under {@code spark.sql.datetime.java8API.enabled=true} (a UDF written for java.sql.Date would
   * fail Spark's CPU run with a ClassCastException). Both agree with Spark's unix_date/unix_micros.
   */
  @Test
  void java8DatetimeApi_callSeesLocalDateAndInstant_kernelSeesDaysAndMicros() {
    SparkSession s = spark();
    GpuFunction.define("epoch_day_j8").returns("int").arg("d", "date").body("d")
        .cpu((UDF1<LocalDate, Integer>) d -> d == null ? null : (int) d.toEpochDay())
        .register(s);
    GpuFunction.define("epoch_micros_j8").returns("bigint").arg("t", "timestamp").body("t")
        .cpu((UDF1<Instant, Long>) t -> t == null ? null
            : ChronoUnit.MICROS.between(Instant.EPOCH, t))
        .register(s);
    s.conf().set("spark.sql.datetime.java8API.enabled", "true");
    try {
      List<List<Row>> both = gpuAndCpu(() -> table().selectExpr("id", "epoch_day_j8(d)", "epoch_micros_j8(t)"));
      assertRowsEqual(both.get(1), both.get(0));
      List<Row> spark = table().selectExpr("id", "unix_date(d)", "unix_micros(t)").collectAsList().stream()
          .sorted(Comparator.comparing((Row r) -> String.valueOf(r.get(0)))).toList();
      assertRowsEqual(spark, both.get(0));
      assertTrue(both.get(0).stream().anyMatch(r -> !r.isNullAt(1) && !r.isNullAt(2)));
    } finally {
      s.conf().unset("spark.sql.datetime.java8API.enabled");
    }
  }
}
