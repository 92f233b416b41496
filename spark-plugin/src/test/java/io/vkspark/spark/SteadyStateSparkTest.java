package io.vkspark.spark;

import io.vkspark.gpu.TransferMode;
import io.vkspark.spark.conf.Settings;

import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.executor.Footprint;
import io.vkspark.spark.exec.GpuEvalIterator;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.plan.VkExplain;
import io.vkspark.spark.agg.VkGpuAggregateExec;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.spark.cache.VkCacheSerializer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.execution.columnar.InMemoryRelation$;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * Issue 13's steady-state target, measured on the real device: after a warm-up, a GPU UDF over
 * 1,000 batches (one GPU dispatch each) creates no Vulkan object, keeps device memory within
 * {@code spark.vkspark.deviceMemoryLimit} and the pool's idle budget, and keeps host memory flat.
 * From Parquet, from vkspark's cache and through the fused aggregate.
 *
 * <p>A probe (a plain Java UDF above the GPU node, {@link Probe}) takes a {@link Footprint} as rows
 * of batch 100 and of the last batch go by, so "flat" is measured between batch ~100 and batch
 * 1,000 of one query, not only between queries. Exact counters are asserted exactly (Vulkan
 * objects, Arrow bytes, the cache's native bytes); the resident set only within
 * {@link #RSS_BOUND}, since the JIT, heap and lavapipe move it by megabytes of their own; past the
 * bound, only growth in both halves (batch 100 to {@link #MID} to the last) counts as a leak.
 */
final class SteadyStateSparkTest {
  private static final int BATCH = 64;
  private static final int BATCHES = 1_000;
  private static final int ROWS = BATCH * BATCHES;
  /** The device budget of this session (spark.vkspark.deviceMemoryLimit). */
  private static final long LIMIT = 64L << 20;
  /**
   * How much the resident set may grow between batch 100 and batch 1,000, less what the JVM
   * committed meanwhile (heap, code cache: {@code native_rss_bytes}): 16 MiB. Measured on lavapipe,
   * the raw resident set moved by 16 KiB to 11 MiB over those 900 batches (GC, JIT, malloc arenas),
   * so a tighter bound would flake on a shared 2-core box. Small per-batch leaks are the exact
   * counters' job (a 64-row batch is about 1.3 KiB of input and output); this bound catches a native
   * leak of about 18 KiB a batch or more (a buffer set of lavapipe's "device" memory, which is host
   * memory, or a driver object per submission that keeps a page).
   */
  private static final long RSS_BOUND = 16L << 20;
  /** Samples of the running query, by batch index. */
  static final Map<Long, Footprint> SAMPLES = new ConcurrentHashMap<>();
  private static SparkSession s;
  private static String table;

  /** The batch halfway between batch 100 and the last: a leak grows in both halves, a one-time step in one. */
  private static final int MID = 550;

  /** Passes {@code id} through; takes a {@link Footprint} at the first rows of batches 100 and {@link #MID}, and at the last row. */
  public static final class Probe implements UDF1<Long, Long> {
    @Override
    public Long call(Long id) {
      if (id != null && (id == 100L * BATCH || id == (long) MID * BATCH || id == ROWS - 1)) {
        SAMPLES.put(id / BATCH, Footprint.now());
      }
      return id;
    }
  }

  @BeforeAll
  static void start() throws Exception {
    TestSpark.stop();
    // spark.sql.cache.serializer is read once per JVM (see CacheSerializerSparkTest)
    InMemoryRelation$.MODULE$.clearSerializer();
    s = builder()
        .config("spark.sql.cache.serializer", VkCacheSerializer.class.getName())
        .config(Settings.DEVICE_MEMORY_LIMIT.key(), String.valueOf(LIMIT))
        .getOrCreate();
    s.udf().register("steady_probe", new Probe(), DataTypes.LongType);
    table = Files.createTempDirectory("vkspark-steady").resolve("t.parquet").toString();
    // One file, one partition, one task: batch k of the query is rows [64k, 64k + 64).
    s.range(0, ROWS, 1, 1).selectExpr("id", "cast(id % 1000 AS int) AS i", "cast(id % 7 AS int) AS j")
        .write().parquet(table);
  }

  @AfterAll
  static void stop() {
    try {
      ExecutorDevice.current().ifPresent(g -> assertEquals(0, g.device().validationErrors(),
          () -> "validation errors: " + g.device().validationMessages()));
    } finally {
      if (s != null) {
        s.stop();
        s = null;
      }
      InMemoryRelation$.MODULE$.clearSerializer();
    }
  }

  @AfterEach
  void defaults() {
    for (String k : List.of("spark.sql.parquet.columnarReaderBatchSize", "spark.sql.inMemoryColumnarStorage.batchSize",
        Settings.METRICS_LEVEL.key(), Settings.COALESCE.key(), Settings.BATCH_ROWS.key(), Settings.FUSE_AGGREGATES.key(),
        "spark.sql.ansi.enabled")) {
      s.conf().unset(k);
    }
    SAMPLES.clear();
  }

  /** sum(int_poly(i, j)) = sum(3 * (id % 1000) + id % 7) over every id, computed here. */
  private static long expectedSum() {
    long sum = 0;
    for (long id = 0; id < ROWS; id++) {
      sum += 3 * (id % 1000) + id % 7;
    }
    return sum;
  }

  /** Small batches, each its own GPU dispatch (coalescing off), node metrics on. */
  private static void smallBatches() {
    s.conf().set("spark.sql.parquet.columnarReaderBatchSize", String.valueOf(BATCH));
    s.conf().set("spark.sql.inMemoryColumnarStorage.batchSize", String.valueOf(BATCH));
    s.conf().set(Settings.COALESCE.key(), "false");
    s.conf().set(Settings.METRICS_LEVEL.key(), "debug");
  }

  private static final String PROBED = "SELECT sum(steady_probe(id)), sum(int_poly(i, j)) FROM %s";

  @Test
  void parquet_thousandBatches_noNewVulkanObjects_withinBudget_hostFlat() {
    smallBatches();
    steady(() -> s.sql(String.format(PROBED, "parquet.`" + table + "`")), true, BATCHES);
  }

  @Test
  void parquetCoalesced_thousandDispatchesOfFourBatches_noNewVulkanObjects_withinBudget_hostFlat() {
    smallBatches();
    // 16-row child batches gathered four at a time into 64-row dispatches (BatchCoalescer's staging reused).
    s.conf().set("spark.sql.parquet.columnarReaderBatchSize", String.valueOf(BATCH / 4));
    s.conf().set(Settings.COALESCE.key(), "true");
    s.conf().set(Settings.BATCH_ROWS.key(), String.valueOf(BATCH));
    steady(() -> s.sql(String.format(PROBED, "parquet.`" + table + "`")), true, 4 * BATCHES);
  }

  /**
   * The path of discrete GPUs without mapped device memory (spark.vkspark.transfers=staged: inputs
   * copied to device-local buffers, results copied back), on a device opened for it.
   */
  @Test
  void parquetStaged_thousandBatches_noNewVulkanObjects_withinBudget_hostFlat() {
    SparkConf conf = s.sparkContext().conf();
    VkConf good = VkConf.from(conf);
    ExecutorDevice.shutdown();
    ExecutorDevice.init(
        VkConf.from(k -> k.equals(Settings.TRANSFERS.key()) ? "staged" : conf.contains(k) ? conf.get(k) : null),
        "driver", null);
    try {
      ExecutorDevice gpu = ExecutorDevice.current().orElseThrow();
      assertEquals(TransferMode.STAGED, gpu.device().options().transfers());
      smallBatches();
      steady(() -> s.sql(String.format(PROBED, "parquet.`" + table + "`")), true, BATCHES);
      assertEquals(0, gpu.device().validationErrors(), () -> "validation errors: " + gpu.device().validationMessages());
    } finally {
      ExecutorDevice.shutdown();
      ExecutorDevice.init(good, "driver", null);
    }
  }

  /**
   * Over vkspark's cache, with the device copies on and off (unset, the device decides: on for a GPU):
   * with them, each batch's copies are recorded again into its recording's command buffer of copies,
   * so the steady state creates no command buffer either (the H200 created one a batch, 2026-12-03).
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void vkCache_thousandBatches_noNewVulkanObjects_withinBudget_hostFlat(boolean deviceCopies) {
    smallBatches();
    s.conf().set(Settings.CACHE_DEVICE.key(), String.valueOf(deviceCopies));
    Dataset<Row> cached = s.read().parquet(table).cache();
    try {
      assertEquals(ROWS, cached.count());
      cached.createOrReplaceTempView("steady_cached");
      long hits = ExecutorDevice.current().orElseThrow().deviceCache().stats().hits();
      steady(() -> s.sql(String.format(PROBED, "steady_cached")), true, BATCHES);
      long read = ExecutorDevice.current().orElseThrow().deviceCache().stats().hits() - hits;
      assertEquals(deviceCopies, read > 0, "columns read from device copies: " + read);
    } finally {
      cached.unpersist(true);
      s.conf().unset(Settings.CACHE_DEVICE.key());
    }
  }

  @Test
  void fusedAggregate_thousandBatches_noNewVulkanObjects_withinBudget_hostFlat() {
    smallBatches();
    s.conf().set(Settings.FUSE_AGGREGATES.key(), "true");
    steady(() -> s.sql("SELECT sum(int_poly(i, j)) FROM parquet.`" + table + "`"), false, BATCHES);
  }

  /**
   * Grouped by j (7 values) and reduced per key on the GPU (ANSI off: an integral sum may wrap, as
   * the GPU's does), every batch: its buffer set and both passes recorded once, nothing after.
   */
  @Test
  void fusedGroupedAggregate_reducedOnTheGpu_thousandBatches_noNewVulkanObjects_withinBudget_hostFlat() {
    smallBatches();
    s.conf().set(Settings.FUSE_AGGREGATES.key(), "true");
    s.conf().set("spark.sql.ansi.enabled", "false");
    Dataset<Row> ran = steady(() -> s.sql("SELECT sum(p) FROM (SELECT j, sum(int_poly(i, j)) AS p FROM parquet.`" + table
        + "` GROUP BY j)"), false, BATCHES);
    List<VkGpuAggregateExec> fused = new ArrayList<>();
    VkExplain.visit(ran.queryExecution().executedPlan(), p -> {
      if (p instanceof VkGpuAggregateExec g) {
        fused.add(g);
      }
    });
    assertEquals(1, fused.size(), () -> explain(ran));
    Map<String, Long> m = GpuEvalIterator.snapshot(fused.get(0).metricsMap());
    assertEquals((long) ROWS, m.get("gpuReducedRows"), m.toString());
    assertEquals(0L, m.get("aggregatedRows"), m.toString());
  }

  /**
   * Runs {@code query} once to warm up and once measured; asserts the result (against the sum
   * computed here), every row and batch on the GPU, and the steady state (with the probe's samples
   * when {@code probed}); the GPU node reads {@code childBatches} and makes one dispatch of 64 rows per 64 rows.
   */
  private static Dataset<Row> steady(Supplier<Dataset<Row>> query, boolean probed, int childBatches) {
    long expected = expectedSum();
    Row warm = query.get().collectAsList().get(0); // kernels built, buffer sets recorded, code JIT-compiled
    assertEquals(expected, warm.getLong(warm.size() - 1));
    SAMPLES.clear();
    Footprint before = Footprint.now();
    Dataset<Row> measured = query.get();
    Row row = measured.collectAsList().get(0);
    Footprint after = Footprint.now();

    assertEquals(expected, row.getLong(row.size() - 1), "sum(int_poly(i, j))");
    if (probed) {
      assertEquals((long) ROWS * (ROWS - 1) / 2, row.getLong(0), "every id went past the probe");
    }
    assertAllRowsOnGpu(measured);
    Map<String, Long> m = metrics(gpuNodes(measured).get(0));
    assertEquals((long) ROWS, m.get("gpuRows"), m.toString());
    assertEquals((long) childBatches, m.get("inputBatches"), m.toString());
    assertEquals((long) BATCHES, m.get("gpuDispatches"), "one dispatch per batch: " + m);
    assertEquals(0L, m.get("bufferSetsRecorded"), m.toString());

    assertTrue(after.noVulkanObjectsSince(before), () -> "Vulkan objects after warm-up: "
        + after.vulkanObjectsSince(before) + "\nbefore " + before + "\nafter " + after);
    assertEquals(before.device().dispatchesSubmitted() + BATCHES, after.device().dispatchesSubmitted(), "dispatches");
    for (Footprint f : List.of(before, after)) {
      assertBudgets(f);
    }
    Map<String, Long> growth = after.hostGrowthSince(before);
    assertEquals(0L, growth.get("arrow_bytes"), () -> "Arrow memory kept after the query: " + growth);
    assertEquals(0L, growth.get("cache_native_bytes"), () -> "cache memory grew: " + growth);
    System.err.printf("[steady] %s: %s; %s%n", m, growth, after);

    if (probed) {
      Footprint at100 = SAMPLES.get(100L);
      Footprint last = SAMPLES.get((long) BATCHES - 1);
      assertNotNull(at100, () -> "no sample at batch 100: " + SAMPLES.keySet());
      assertNotNull(last, () -> "no sample at the last batch: " + SAMPLES.keySet());
      // The probe ran as the batches went by: 899 dispatches between batch 100 and batch 999.
      assertEquals(BATCHES - 1 - 100, last.device().dispatchesSubmitted() - at100.device().dispatchesSubmitted(),
          () -> "samples not taken mid-query: " + at100 + " / " + last);
      assertTrue(last.noVulkanObjectsSince(at100), () -> "Vulkan objects between batch 100 and 1,000: "
          + last.vulkanObjectsSince(at100));
      assertBudgets(at100);
      assertBudgets(last);
      Map<String, Long> mid = last.hostGrowthSince(at100);
      System.err.printf("[steady] batch 100 -> %d: %s; at batch 100: %s%n", BATCHES, mid, at100);
      // The Arrow counter sees the task's vectors (so an Arrow leak would show): they are live mid-query.
      assertTrue(at100.arrowBytes() > 0, at100::toString);
      assertEquals(0L, mid.get("arrow_bytes"), () -> "Arrow memory grew between batch 100 and 1,000: " + mid);
      assertEquals(0L, mid.get("cache_native_bytes"), () -> "cache memory grew between batch 100 and 1,000: " + mid);
      assertTrue(mid.get("direct_bytes") <= 64 * 1024, () -> "direct buffers grew between batch 100 and 1,000: " + mid);
      // A leak grows with the batches, in both halves, and on every run; the JIT, GC or a malloc arena
      // move the resident set in steps (21 MiB once on the H200; 20-50 MiB once a JVM on the Spark 3.5 /
      // Scala 2.13 line on the CI box), once. Growth in both halves is checked on a second run.
      String grew = residentGrowth();
      if (grew != null) {
        SAMPLES.clear();
        assertEquals(expected, query.get().collectAsList().get(0).getLong(row.size() - 1));
        String again = residentGrowth();
        assertNull(again, () -> again + "\n(and on the run before: " + grew + ")");
      }
    }
    return measured;
  }

  /**
   * Why the probe's samples look like a leak: past the bound between batch 100 and the last, each half
   * grew by a quarter of it; null when they do not.
   */
  private static String residentGrowth() {
    Footprint at100 = SAMPLES.get(100L);
    Footprint half = SAMPLES.get((long) MID);
    Footprint last = SAMPLES.get((long) BATCHES - 1);
    assertTrue(at100 != null && half != null && last != null, () -> "samples missing: " + SAMPLES.keySet());
    Map<String, Long> mid = last.hostGrowthSince(at100);
    if (mid.get("native_rss_bytes") < RSS_BOUND) {
      return null;
    }
    long first = half.hostGrowthSince(at100).get("native_rss_bytes");
    long second = last.hostGrowthSince(half).get("native_rss_bytes");
    return first >= RSS_BOUND / 4 && second >= RSS_BOUND / 4 ? "resident set grew between batch 100 and 1,000 in both"
        + " halves (" + first + " and " + second + " bytes, a leak): " + mid : null;
  }

  /** Device memory within spark.vkspark.deviceMemoryLimit, and idle buffer sets within the pool's budget. */
  private static void assertBudgets(Footprint f) {
    assertEquals(LIMIT, f.deviceMemoryLimit(), "the session's device budget reached the device");
    assertTrue(f.deviceBufferBytes() > 0 && f.deviceBufferBytes() <= LIMIT, f::toString);
    assertTrue(f.deviceBytesHeld() <= f.deviceBufferBytes(), f::toString);
    assertTrue(f.withinBudgets(), f::toString);
  }
}
