package io.vkspark.spark.exec;

import static io.vkspark.spark.TestSpark.assertAllRowsOnGpu;
import static io.vkspark.spark.TestSpark.assertVksparkEqualsCpu;
import static io.vkspark.spark.TestSpark.explain;
import static io.vkspark.spark.TestSpark.gpuNodes;
import static io.vkspark.spark.TestSpark.metrics;
import static io.vkspark.spark.TestSpark.spark;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.spark.TestSpark;
import io.vkspark.spark.agg.VkGpuAggregateExec;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.plan.VkExplain;
import io.vkspark.gpu.DeviceType;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.exec.call.VkMetric;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code spark.vkspark.placement=adaptive} on a real local Spark and lavapipe: batches of one shape
 * timed on both paths, then sent to the faster one; results equal to Spark's plan with the UDF's
 * {@code call()} either way; a fused aggregate adaptive too; {@code gpu} never moves a batch; a
 * GLSL-only UDF with no CPU device besides its GPU is never moved. Which path is faster on lavapipe
 * is whatever this machine measures, so the tests that need a switch make the GPU's measurements
 * slower with {@link AdaptivePlacement#bias} (the batches still run on both real paths).
 *
 * <p>40 batches of 500 rows over 2 partitions ({@code coalesce} off, so each stays a batch).
 */
@ExtendWith({TestSpark.Validated.class, TestSpark.RestoresConf.class})
final class AdaptivePlacementSparkTest {
  private static final int ROWS = 20_000;
  private static final int BATCH = 500;
  private static final String ADAPTIVE = "on GPU (adaptive: GPU or call() per batch, timed)";
  /** The GPU's measured time plus this, per row: far slower than call() on any machine. */
  private static final double SLOW_GPU_NANOS = 1_000_000;

  @BeforeEach
  void adaptive() {
    AdaptivePlacement.shared().reset();
    spark().conf().set(Settings.PLACEMENT.key(), "adaptive");
    spark().conf().set(Settings.COALESCE.key(), "false");
    spark().conf().set("spark.sql.inMemoryColumnarStorage.batchSize", String.valueOf(BATCH));
  }

  @AfterEach
  void forget() {
    AdaptivePlacement.shared().reset();
  }

  private static Dataset<Row> hypot() {
    return spark().range(0, ROWS, 1, 2).selectExpr("id", "id * 0.5 - 3000 AS a", "id * 0.25 + 7 AS b")
        .selectExpr("id", "gpu_hypot(a, b) AS h");
  }

  /**
   * Issue 33: every row run with {@code call()} has a cause, and the causes add up to
   * {@code cpuRows}, over the representative queries under adaptive placement with the GPU made to
   * look slow (trial slices, and batches chosen for the CPU where a shape has more): a fused SUM/MIN/MAX/COUNT of a UDF,
   * a cached DataFrame, and dictionary-encoded Parquet (j has 2,000 values in 20,000 rows).
   * {@code TestSpark.metrics} asserts the sum for every node it reads, in every Spark test.
   */
  @Test
  void cpuRowCauses_addUpToCpuRows_overRepresentativeQueries() {
    AdaptivePlacement.shared().bias(AdaptivePlacement.Path.GPU, SLOW_GPU_NANOS);
    spark().conf().set(Settings.COALESCE.key(), "true");
    Dataset<Row> cached = TestSpark.table().selectExpr("id", "a", "b").cache();
    try {
      List<Supplier<Dataset<Row>>> queries = List.of(
          () -> TestSpark.table().selectExpr("sum(gpu_hypot(a, b))", "min(gpu_hypot(a, b))", "max(gpu_hypot(b, a))",
              "count(gpu_hypot(a, b))"),
          () -> cached.selectExpr("id", "gpu_hypot(a, b) AS h"),
          () -> TestSpark.table().selectExpr("id", "int_poly(i, j) AS p", "int_poly(j, j) AS q"));
      Map<String, Long> total = new TreeMap<>();
      for (Supplier<Dataset<Row>> q : queries) {
        assertVksparkEqualsCpu(q, df -> gpuNodes(df).forEach(n -> metrics(n).forEach((k, v) -> total.merge(k, v, Long::sum))));
      }
      long causes = VkMetric.cpuRowCauses().stream().mapToLong(c -> total.getOrDefault(c.key(), 0L)).sum();
      assertTrue(total.get("cpuRows") > 0, total.toString());
      assertEquals(total.get("cpuRows"), causes, total.toString());
      assertTrue(total.get("cpuRowsAdaptiveTrial") > 0, total.toString());
    } finally {
      cached.unpersist();
    }
  }

  @Test
  void adaptive_timesBothPaths_andMatchesCall() {
    List<Map<String, Long>> ran = new ArrayList<>();
    assertVksparkEqualsCpu(AdaptivePlacementSparkTest::hypot, df -> ran.add(metrics(gpuNodes(df).get(0))));
    Map<String, Long> m = ran.get(0);
    String timings = AdaptivePlacement.shared().summary();
    System.out.println("[adaptive] lavapipe vs call(), measured: " + timings.strip() + "; metrics " + m);
    // the trials: batches on the GPU, each with a slice (at most the batch) timed with call()
    long trials = (long) AdaptivePlacement.TRIALS * BATCH;
    assertTrue(m.get("adaptiveGpuRows") >= trials, m + "\n" + timings);
    assertTrue(m.get("cpuRowsAdaptiveTrial") >= (long) AdaptivePlacement.TRIALS * AdaptivePlacement.MIN_TRIAL_ROWS
        && m.get("cpuRowsAdaptiveTrial") <= m.get("adaptiveGpuRows"), m + "\n" + timings);
    assertEquals((long) ROWS, m.get("adaptiveGpuRows") + m.get("adaptiveCpuRows"), m.toString());
    assertEquals(m.get("adaptiveGpuRows"), m.get("gpuRows"), m.toString());
    assertEquals(m.get("adaptiveCpuRows"), m.get("cpuRowsAdaptiveChoice"), m.toString());
    assertEquals(m.get("cpuRowsAdaptiveTrial") + m.get("cpuRowsAdaptiveChoice"), m.get("cpuRows"), m.toString());
    assertTrue(explain(hypot()).contains("gpu_hypot(") && explain(hypot()).contains(ADAPTIVE), explain(hypot()));
  }

  @Test
  void adaptive_slowerGpu_switchesToCall_andMatchesCall() {
    AdaptivePlacement.shared().bias(AdaptivePlacement.Path.GPU, SLOW_GPU_NANOS);
    List<Map<String, Long>> ran = new ArrayList<>();
    assertVksparkEqualsCpu(AdaptivePlacementSparkTest::hypot, df -> ran.add(metrics(gpuNodes(df).get(0))));
    Map<String, Long> m = ran.get(0);
    assertTrue(m.get("adaptiveSwitches") >= 1, m.toString());
    assertTrue(m.get("adaptiveGpuRows") > 0, m.toString());
    // at most each shape's trials (and the batches of the other task before they were timed) on the GPU
    assertTrue(m.get("adaptiveCpuRows") > m.get("adaptiveGpuRows"), m.toString());
    assertEquals((long) ROWS, m.get("adaptiveGpuRows") + m.get("adaptiveCpuRows"), m.toString());
    assertEquals(m.get("adaptiveCpuRows"), m.get("cpuRowsAdaptiveChoice"), m.toString());
    assertTrue(AdaptivePlacement.shared().summary().contains("on CPU"), AdaptivePlacement.shared().summary());
  }

  @Test
  void fusedAggregate_slowerGpu_reducesSomeBatchesOnTheGpu_foldsTheOthers_sameSum() {
    AdaptivePlacement.shared().bias(AdaptivePlacement.Path.GPU, SLOW_GPU_NANOS);
    Supplier<Dataset<Row>> sum = () -> hypot().selectExpr("sum(h) AS s", "count(h) AS n");
    List<Map<String, Long>> eval = new ArrayList<>();
    List<Map<String, Long>> fused = new ArrayList<>();
    List<List<Row>> both = TestSpark.onAndOff(sum, df -> {
      eval.add(metrics(gpuNodes(df).get(0)));
      VkExplain.visit(df.queryExecution().executedPlan(), p -> {
        if (p instanceof VkGpuAggregateExec g) {
          fused.add(GpuEvalIterator.snapshot(g.metricsMap()));
        }
      });
    });
    assertEquals(1, fused.size(), "the sum is fused onto the GPU node");
    Map<String, Long> m = eval.get(0);
    Map<String, Long> f = fused.get(0);
    assertTrue(m.get("adaptiveSwitches") >= 1 && m.get("adaptiveGpuRows") > 0 && m.get("adaptiveCpuRows") > 0,
        m.toString());
    assertEquals(m.get("adaptiveGpuRows"), f.get("gpuReducedRows"), "GPU batches reduced on the GPU: " + f);
    assertEquals(m.get("adaptiveCpuRows"), f.get("aggregatedRows"), "call() batches folded on the host: " + f);
    Row cpu = both.get(1).get(0);
    Row gpu = both.get(0).get(0);
    assertEquals(cpu.getLong(1), gpu.getLong(1));
    assertEquals(cpu.getDouble(0), gpu.getDouble(0), Math.abs(cpu.getDouble(0)) * 1e-12, both.toString());
  }

  @Test
  void placementGpu_neverMovesABatch() {
    spark().conf().set(Settings.PLACEMENT.key(), "gpu");
    AdaptivePlacement.shared().bias(AdaptivePlacement.Path.GPU, SLOW_GPU_NANOS);
    assertVksparkEqualsCpu(AdaptivePlacementSparkTest::hypot, df -> {
      assertAllRowsOnGpu(df);
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertEquals(0L, m.get("adaptiveGpuRows") + m.get("adaptiveCpuRows") + m.get("adaptiveSwitches"), m.toString());
    });
    assertFalse(explain(hypot()).contains("adaptive"), explain(hypot()));
    assertEquals("", AdaptivePlacement.shared().summary(), "nothing was timed");
  }

  /**
   * A GLSL-only UDF has no {@code call()}: its CPU path is its SPIR-V on a CPU Vulkan device besides
   * the GPU. Here the only device is lavapipe, a CPU device that already is the GPU path, so the
   * UDF must run there, whatever the timings say. (On a GPU host with lavapipe installed the same
   * call is adaptive; no such host here.)
   */
  @Test
  void glslOnly_withoutACpuDeviceBesidesTheGpu_isNeverMoved() {
    boolean lavapipeOnly = ExecutorDevice.current().orElseThrow().device().info().type() == DeviceType.CPU;
    Assumptions.assumeTrue(lavapipeOnly, "the executor's device is a GPU");
    AdaptivePlacement.shared().bias(AdaptivePlacement.Path.GPU, SLOW_GPU_NANOS);
    Supplier<Dataset<Row>> q = () -> spark().range(0, ROWS, 1, 2)
        .selectExpr("id", "cast(id % 1000 AS int) AS i", "cast(id % 7 AS int) AS j")
        .selectExpr("id", "glsl_file_mix(i, j) AS x");
    Dataset<Row> df = q.get();
    List<Row> rows = df.collectAsList();
    assertEquals(ROWS, rows.size());
    assertAllRowsOnGpu(df);
    Map<String, Long> m = metrics(gpuNodes(df).get(0));
    assertEquals(0L, m.get("adaptiveGpuRows") + m.get("adaptiveCpuRows") + m.get("adaptiveSwitches"), m.toString());
  }
}
