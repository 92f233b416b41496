package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.DeviceCounters;
import io.vkspark.gpu.DeviceType;
import io.vkspark.gpu.column.cache.DeviceColumnCache;
import io.vkspark.gpu.internal.FaultInjection;
import io.vkspark.spark.agg.VkGpuAggregateExec;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.exec.GpuEvalIterator;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.plan.VkExplain;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.FilterExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Cached columns kept in device memory ({@code spark.vkspark.cache.device}), in a session of its own
 * with vkspark's cache and a device budget of 2 MiB ({@code spark.vkspark.cache.deviceMemory}, static):
 * the typed query's 1.2 MB of columns fit it, the 3.2 MB of the eviction test do not. Coalescing is off so
 * that each cached batch reaches the GPU as it is (coalesced batches are copies, not cached columns).
 * Every result is compared with the host copy's (the device cache off), with the UDFs' call() over the
 * cache and with the uncached Parquet table (what Spark's default cache returns).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class DeviceCacheSparkTest {
  private static final long BUDGET = 2L << 20;
  private static SparkSession s;

  @BeforeAll
  static void start() {
    parquet(); // written by the shared session before it stops
    s = TestSpark.cacheSessionBuilder()
        .config(Settings.CACHE_DEVICE_MEMORY.key(), "2m")
        .config(Settings.COALESCE.key(), "false")
        .getOrCreate();
    TestSpark.registerTestUdfs(s);
  }

  @AfterAll
  static void stop() {
    TestSpark.stopCacheSession(s);
    s = null;
  }

  private static DeviceColumnCache cache() {
    return ExecutorDevice.current().orElseThrow().deviceCache();
  }

  private static long sum(Dataset<Row> ran, String metric) {
    long n = 0;
    for (VkGpuEvalExec node : gpuNodes(ran)) {
      n += metrics(node).get(metric);
    }
    return n;
  }

  /** Waits (with GC: a Spark line that drops batches unclosed frees them by their Cleaner) for the device copies to go. */
  private static void awaitResidentBytes(long bytes) {
    for (int i = 0; i < 50 && cache().stats().residentBytes() > bytes; i++) {
      System.gc();
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Runs {@code q} with the device cache on or off; every row must run on the GPU. */
  private static Dataset<Row> run(Supplier<Dataset<Row>> q, boolean device, List<Row> rowsOut) {
    s.conf().set(Settings.CACHE_DEVICE.key(), String.valueOf(device));
    try {
      Dataset<Row> ran = q.get();
      rowsOut.addAll(ran.collectAsList());
      assertAllRowsOnGpu(ran);
      return ran;
    } finally {
      s.conf().unset(Settings.CACHE_DEVICE.key());
    }
  }

  /** By the first column, an int or bigint (a grouped query's key: null first). */
  private static List<Row> sorted(List<Row> rows) {
    List<Row> out = new ArrayList<>(rows);
    out.sort(Comparator.comparing(r -> r.isNullAt(0) ? Long.MIN_VALUE : ((Number) r.get(0)).longValue()));
    return out;
  }

  /** {@code sum(gpu_hypot(a, b))}, fused onto the GPU node and reduced on the GPU, with the device cache on or off. */
  private static double fusedSum(Dataset<Row> cached, boolean device) {
    s.conf().set(Settings.CACHE_DEVICE.key(), String.valueOf(device));
    try {
      Dataset<Row> q = cached.selectExpr("sum(gpu_hypot(a, b)) AS total");
      double total = q.collectAsList().get(0).getDouble(0);
      assertTrue(plan(q).toString().contains("VkGpuAggregate"), "fused: " + plan(q));
      return total;
    } finally {
      s.conf().unset(Settings.CACHE_DEVICE.key());
    }
  }

  /** A GPU UDF over each type the cache holds, with nulls (about 10% per column). */
  private static Dataset<Row> typed(Dataset<Row> t) {
    return t.selectExpr("id", "int_poly(i, j) AS ip", "long_mix(l, m) AS lm", "float_saxpy(f, g) AS fs",
        "gpu_hypot(a, b) AS h", "xor_gpu(p, q) AS x", "add_days(d, j) AS dd", "add_hours(t, j) AS th");
  }

  @Test
  @Order(1)
  void everyType_fromTheDeviceCopy_equalsTheHostCopy_andSparksRows() {
    Dataset<Row> cached = s.read().parquet(parquet()).cache();
    try {
      assertEquals(20_000L, cached.count());
      List<Row> host = new ArrayList<>();
      Dataset<Row> onHost = run(() -> typed(cached), false, host);
      DeviceColumnCache.Stats before = cache().stats();
      List<Row> first = new ArrayList<>();
      Dataset<Row> uploading = run(() -> typed(cached), true, first);
      List<Row> second = new ArrayList<>();
      Dataset<Row> hitting = run(() -> typed(cached), true, second);
      DeviceColumnCache.Stats after = cache().stats();

      assertTrue(sum(uploading, "deviceCacheUploads") > 0, "the first query wrote the device copies");
      long hits = sum(hitting, "deviceCacheHits");
      assertTrue(hits > 0, "the second query read the device copies");
      assertEquals(0, sum(hitting, "deviceCacheUploads"), "nothing was written again: the columns fit the budget");
      assertTrue(sum(hitting, "deviceCacheCopyTime") > 0, "the device copies are timed");
      assertTrue(after.hits() - before.hits() >= hits, after + " vs " + before);
      assertEquals(0, after.evictions() - before.evictions(), "the typed columns fit the budget: " + after);
      assertTrue(after.residentBytes() > 0 && after.residentBytes() <= BUDGET, after.toString());
      // fixed-width columns come from the device: only the tail words of booleans are still written by the host
      assertTrue(sum(hitting, "uploadBytes") * 10 < sum(onHost, "uploadBytes"),
          "host copies: " + sum(hitting, "uploadBytes") + " bytes with the device copies, " + sum(onHost, "uploadBytes")
              + " without");

      assertRowsEqual(sorted(host), sorted(first));
      assertRowsEqual(sorted(host), sorted(second));
      // unset (the default): a GPU reads the device copies, a CPU Vulkan device (lavapipe) the host's
      Dataset<Row> byDefault = typed(cached);
      List<Row> unset = byDefault.collectAsList();
      assertAllRowsOnGpu(byDefault);
      boolean gpu = ExecutorDevice.current().orElseThrow().device().info().type() != DeviceType.CPU;
      assertEquals(gpu, sum(byDefault, "deviceCacheHits") > 0, "unset, the device cache is on for a GPU only");
      assertRowsEqual(sorted(host), sorted(unset));
      // Spark alone (the UDFs' call()) over the uncached table: what Spark's default cache returns
      s.conf().set(Settings.ENABLED.key(), "false");
      try {
        Dataset<Row> spark = typed(s.read().parquet(parquet()));
        List<Row> plain = spark.collectAsList();
        assertTrue(gpuNodes(spark).isEmpty(), "Spark's own plan");
        assertRowsEqual(sorted(plain), sorted(second));
      } finally {
        s.conf().unset(Settings.ENABLED.key());
      }
      assertNoValidationErrors();
    } finally {
      cached.unpersist(true);
    }
  }

  @Test
  @Order(2)
  void unpersist_freesTheDeviceCopies_andRecachingUploadsAgain() {
    Supplier<Dataset<Row>> table = () -> s.read().parquet(parquet()).selectExpr("id", "a", "b");
    Dataset<Row> cached = table.get().cache();
    assertEquals(20_000L, cached.count());
    List<Row> host = new ArrayList<>();
    run(() -> cached.selectExpr("id", "gpu_hypot(a, b) AS h"), false, host); // warm: buffer sets recorded
    DeviceCounters warm = ExecutorDevice.current().orElseThrow().device().counters();
    long buffersBefore = warm.buffersLive();
    List<Row> onDevice = new ArrayList<>();
    run(() -> cached.selectExpr("id", "gpu_hypot(a, b) AS h"), true, onDevice);
    DeviceCounters held = ExecutorDevice.current().orElseThrow().device().counters();
    assertTrue(held.buffersLive() > buffersBefore, "device copies were made: " + cache().stats());
    // each recording keeps one command buffer of copies, recorded again for each batch: a second run creates none
    long created = held.commandBuffersCreated();
    run(() -> cached.selectExpr("id", "gpu_hypot(a, b) AS h"), true, new ArrayList<>());
    assertEquals(created, ExecutorDevice.current().orElseThrow().device().counters().commandBuffersCreated(),
        "the copies' command buffers are recorded again, not allocated");
    assertRowsEqual(sorted(host), sorted(onDevice));
    // a fused aggregate reduced on the GPU reads the same device copies
    long hitsBefore = cache().stats().hits();
    double fusedOnDevice = fusedSum(cached, true);
    assertTrue(cache().stats().hits() >= hitsBefore + 2, "the fused aggregate read the device copies: " + cache().stats());
    assertEquals(fusedSum(cached, false), fusedOnDevice, 1e-9 * Math.abs(fusedOnDevice));

    held = ExecutorDevice.current().orElseThrow().device().counters(); // the fused runs recorded their own sets
    int columns = cache().stats().columns();
    assertTrue(columns > 0, cache().stats().toString());
    cached.unpersist(true);
    awaitResidentBytes(0);
    assertEquals(0, cache().stats().residentBytes(), "unpersist freed the device copies: " + cache().stats());
    assertEquals(0, cache().stats().columns());
    DeviceCounters after = ExecutorDevice.current().orElseThrow().device().counters();
    assertEquals(held.buffersLive() - columns, after.buffersLive(), "one device buffer per cached column, all freed");
    assertEquals(held.commandBuffersLive(), after.commandBuffersLive(), "no command buffer left behind");

    Dataset<Row> again = table.get().cache();
    try {
      assertEquals(20_000L, again.count());
      List<Row> reuploaded = new ArrayList<>();
      Dataset<Row> ran = run(() -> again.selectExpr("id", "gpu_hypot(a, b) AS h"), true, reuploaded);
      assertTrue(sum(ran, "deviceCacheUploads") > 0, "the new cached batches were written to the device");
      assertEquals(0, sum(ran, "deviceCacheHits"), "nothing of the unpersisted batches was read");
      assertRowsEqual(sorted(host), sorted(reuploaded));
      List<Row> hit = new ArrayList<>();
      assertTrue(sum(run(() -> again.selectExpr("id", "gpu_hypot(a, b) AS h"), true, hit), "deviceCacheHits") > 0);
      assertRowsEqual(sorted(host), sorted(hit));
      assertNoValidationErrors();
    } finally {
      again.unpersist(true);
    }
    assertEquals(0, cache().stats().residentBytes());
  }

  @Test
  @Order(3)
  void overBudget_evictsLeastRecentlyUsed_staysWithinIt_andResultsStayRight() {
    // 200,000 rows of two doubles in 4 partitions: 3.2 MB of columns against a 2 MiB budget
    Supplier<Dataset<Row>> big = () -> s.range(0, 200_000, 1, 4).selectExpr("id",
        "CASE WHEN id % 11 = 0 THEN NULL ELSE cast(id AS double) * 0.25 END AS a", "cast(id % 1000 AS double) AS b");
    Dataset<Row> cached = big.get().cache();
    try {
      assertEquals(200_000L, cached.count());
      List<Row> host = new ArrayList<>();
      run(() -> cached.selectExpr("id", "gpu_hypot(a, b) AS h"), false, host);
      long evictionsBefore = cache().stats().evictions();
      for (int i = 0; i < 2; i++) {
        List<Row> onDevice = new ArrayList<>();
        Dataset<Row> ran = run(() -> cached.selectExpr("id", "gpu_hypot(a, b) AS h"), true, onDevice);
        assertTrue(sum(ran, "deviceCacheUploads") > 0, "columns were written again after their eviction");
        assertRowsEqual(sorted(host), sorted(onDevice));
        DeviceColumnCache.Stats st = cache().stats();
        assertTrue(st.residentBytes() <= BUDGET, "within the budget: " + st);
      }
      assertTrue(cache().stats().evictions() > evictionsBefore, "columns were evicted: " + cache().stats());
      assertNoValidationErrors();
    } finally {
      cached.unpersist(true);
    }
    awaitResidentBytes(0);
    assertEquals(0, cache().stats().residentBytes(), cache().stats().toString());
  }

  /** A scenario: Black-Scholes with the rate and volatility shifted by literals, computed on the device. */
  private static Dataset<Row> scenario(Dataset<Row> options, double rate, double vol) {
    return options.selectExpr("id", "black_scholes_call(s, k, t, r + " + rate + ", v * " + vol + " + 0.02) AS p");
  }

  @Test
  @Order(5)
  void computedArguments_readTheCachedColumns_fromTheDevice_oneKernelForEveryScenario() {
    // 20,000 options in 4 partitions (0.8 MB of columns, within the budget); r is null on every 13th row
    Dataset<Row> cached = s.range(0, 20_000, 1, 4).selectExpr("id", "cast(id % 40 AS double) + 80 AS s",
        "cast(id % 7 AS double) + 100 AS k", "cast(id % 5 AS double) * 0.25 + 0.25 AS t",
        "CASE WHEN id % 13 = 0 THEN NULL ELSE cast(id % 3 AS double) * 0.01 + 0.01 END AS r",
        "cast(id % 9 AS double) * 0.05 + 0.1 AS v").selectExpr("*", // the arguments computed by Spark, as columns
        "r + 0.03 AS r3", "v * 1.3 + 0.02 AS v3").cache();
    try {
      assertEquals(20_000L, cached.count());
      List<Row> first = new ArrayList<>();
      Dataset<Row> uploading = run(() -> scenario(cached, 0.01, 1.1), true, first);
      String explain = explain(uploading);
      assertFalse(plan(uploading).toString().contains("vk_arg"), "no projection computes an argument: " + explain);
      assertTrue(explain.contains(" + 0.01)") && explain.contains(" * 1.1)"), "EXPLAIN shows the arguments: " + explain);
      List<Row> second = new ArrayList<>();
      Dataset<Row> hitting = run(() -> scenario(cached, 0.01, 1.1), true, second);
      assertTrue(sum(hitting, "deviceCacheHits") > 0, "the second query read the device copies: " + cache().stats());
      assertEquals(0, sum(hitting, "deviceCacheUploads"), "nothing was written again");
      assertRowsEqual(sorted(first), sorted(second));
      long nulls = second.stream().filter(r -> r.isNullAt(1)).count();
      assertEquals(20_000 / 13 + 1, nulls, "a null rate is a null argument, a null price");

      // another scenario: other literal values, the same kernel, no new pipeline, read from the same device copies
      String kernel = gpuNodes(hitting).get(0).calls().get(0).kernel().id();
      long pipelines = ExecutorDevice.current().orElseThrow().device().counters().kernelsLive();
      List<Row> other = new ArrayList<>();
      Dataset<Row> shifted = run(() -> scenario(cached, 0.03, 1.3), true, other);
      assertEquals(kernel, gpuNodes(shifted).get(0).calls().get(0).kernel().id(), "one kernel for every scenario");
      assertEquals(pipelines, ExecutorDevice.current().orElseThrow().device().counters().kernelsLive(), "no new pipeline");
      assertTrue(sum(shifted, "deviceCacheHits") > 0, "the other scenario read the device copies");

      // Spark alone (call() over the host copy of the same cache)
      s.conf().set(Settings.ENABLED.key(), "false");
      try {
        for (Object[] c : new Object[][] {{0.01, 1.1, second}, {0.03, 1.3, other}}) {
          Dataset<Row> spark = scenario(cached, (Double) c[0], (Double) c[1]);
          List<Row> plain = spark.collectAsList();
          assertTrue(gpuNodes(spark).isEmpty(), "Spark's own plan");
          @SuppressWarnings("unchecked")
          List<Row> gpu = sorted((List<Row>) c[2]);
          List<Row> want = sorted(plain);
          assertEquals(want.size(), gpu.size());
          for (int i = 0; i < want.size(); i++) { // vkmath's exp and log are not StrictMath's to the last bit
            assertEquals(want.get(i).get(0), gpu.get(i).get(0));
            assertEquals(want.get(i).isNullAt(1), gpu.get(i).isNullAt(1), "row " + i);
            if (!want.get(i).isNullAt(1)) {
              assertEquals(want.get(i).getDouble(1), gpu.get(i).getDouble(1), 1e-12 * 100, "row " + i);
            }
          }
        }
      } finally {
        s.conf().unset(Settings.ENABLED.key());
      }
      assertNotEquals(second.get(1).get(1), other.get(1).get(1), "the scenarios' values differ");
      // the sweep's form, summed (a GPU UDF: a translated one is verified by sample, so not fused by default):
      // the fused aggregate reduced on the GPU reads the same device copies and computes the same arguments
      Supplier<Dataset<Row>> summed = () -> cached.selectExpr("sum(gpu_hypot(r + 0.03, v * 1.3 + 0.02)) AS total");
      s.conf().set(Settings.ENABLED.key(), "false");
      double wantSum;
      try {
        wantSum = summed.get().collectAsList().get(0).getDouble(0);
      } finally {
        s.conf().unset(Settings.ENABLED.key());
      }
      s.conf().set(Settings.CACHE_DEVICE.key(), "true");
      try {
        long hitsBefore = cache().stats().hits();
        Dataset<Row> fused = summed.get();
        double total = fused.collectAsList().get(0).getDouble(0);
        assertTrue(plan(fused).toString().contains("VkGpuAggregate"), "fused: " + plan(fused));
        assertFalse(plan(fused).toString().contains("vk_arg"), plan(fused).toString());
        assertTrue(cache().stats().hits() > hitsBefore, "the fused aggregate read the device copies: " + cache().stats());
        assertEquals(wantSum, total, 1e-12 * Math.abs(wantSum));
      } finally {
        s.conf().unset(Settings.CACHE_DEVICE.key());
      }
      // the device computed the arguments bit for bit as Spark did: the same kernel body over Spark's columns gives the same bits
      for (Object[] c : new Object[][] {{"r3", "v3", other}}) {
        List<Row> columns = new ArrayList<>();
        run(() -> cached.selectExpr("id", "black_scholes_call(s, k, t, " + c[0] + ", " + c[1] + ") AS p"), true, columns);
        @SuppressWarnings("unchecked")
        List<Row> gpu = sorted((List<Row>) c[2]);
        List<Row> want = sorted(columns);
        for (int i = 0; i < want.size(); i++) {
          assertEquals(want.get(i), gpu.get(i), "row " + i);
        }
      }
      assertNoValidationErrors();
    } finally {
      cached.unpersist(true);
    }
  }

  /** The fused aggregate nodes' metrics of {@code ran}, summed. */
  private static Map<String, Long> fusedMetrics(Dataset<Row> ran) {
    Map<String, Long> out = new HashMap<>();
    VkExplain.visit(ran.queryExecution().executedPlan(), p -> {
      if (p instanceof VkGpuAggregateExec g) {
        GpuEvalIterator.snapshot(g.metricsMap()).forEach((k, v) -> out.merge(k, v, Long::sum));
      }
    });
    return out;
  }

  /** Spark's own rows for {@code q} (vkspark off: call() over the host copy of the same cache). */
  private static List<Row> sparks(Supplier<Dataset<Row>> q) {
    s.conf().set(Settings.ENABLED.key(), "false");
    try {
      Dataset<Row> d = q.get();
      List<Row> rows = d.collectAsList();
      assertTrue(gpuNodes(d).isEmpty(), "Spark's own plan");
      return sorted(rows);
    } finally {
      s.conf().unset(Settings.ENABLED.key());
    }
  }

  /**
   * Issue 35: a sweep query over the device cache grouped by a key the device computes ({@code id % 7}):
   * fused by default, reduced per key on the GPU in the UDFs' own submission, every cached column read
   * from its device copy (no column value copied by the host: only validity bits, for the results with
   * nulls; the key's range comes from its expression, so {@code id} is never read on the host) and only
   * per-key partials read back; Spark's rows, integers exactly. The same after a lost device (the task
   * retried on the device opened again, whose cache starts empty), over a table past the device budget
   * (columns evicted and written again), and after unpersisting and caching again.
   */
  @Test
  @Order(6)
  void groupedByAComputedKey_overTheDeviceCache_onlyPartialsComeBack_throughALostDeviceEvictionAndUnpersist() {
    Supplier<Dataset<Row>> table = () -> s.range(0, 20_000, 1, 4).selectExpr("id",
        "CASE WHEN id % 13 = 0 THEN NULL ELSE cast(id % 40 AS double) * 0.5 END AS a", "cast(id % 9 AS double) * 0.25 AS b",
        "CASE WHEN id % 11 = 0 THEN NULL ELSE cast(id % 1000 AS int) - 500 END AS n",
        "CASE WHEN id % 17 = 0 THEN NULL ELSE cast(id % 9 AS int) + 1000 END AS c");
    Dataset<Row> cached = table.get().cache();
    Supplier<Dataset<Row>> q = () -> s.sql("SELECT id % 7 AS g, sum(gpu_hypot(a, b * 1.5D)), count(*),"
        + " min(int_poly(n, n)), max(int_poly(n, n)), count(int_poly(n, n)) FROM dc_grouped GROUP BY id % 7");
    try {
      cached.createOrReplaceTempView("dc_grouped");
      assertEquals(20_000L, cached.count());
      List<Row> want = sparks(q);
      List<Row> first = new ArrayList<>();
      run(q, true, first); // writes the device copies
      List<Row> second = new ArrayList<>();
      Dataset<Row> hitting = run(q, true, second);
      Map<String, Long> fused = fusedMetrics(hitting);
      assertEquals(20_000L, fused.get("gpuReducedRows"), "every row reduced on the GPU: " + fused);
      assertEquals(0L, fused.get("aggregatedRows"), fused.toString());
      assertTrue(sum(hitting, "deviceCacheHits") >= 4 * 4, "a, b, n and the key's source id from the device: " + cache().stats());
      assertEquals(0, sum(hitting, "deviceCacheUploads"));
      assertTrue(sum(hitting, "uploadBytes") < 20_000, "no column value copied by the host (" + 8 * 20_000
          + " bytes a double column), only validity bits: " + sum(hitting, "uploadBytes"));
      long bound = sum(hitting, "numOutputBatches") * 64 * 6 * 16; // per batch: 64 key slots at most, 5 aggregates and the row count
      assertTrue(sum(hitting, "readbackBytes") <= bound, "per-key partials only: " + sum(hitting, "readbackBytes"));
      String explain = explain(hitting);
      assertFalse(explain.contains("ColumnarToRow") && explain.indexOf("ColumnarToRow") > explain.indexOf("VkGpuAggregate"),
          "nothing turns the cached batches into rows under the fused node: " + explain);
      assertAggregatesEqual(want, sorted(first));
      assertAggregatesEqual(want, sorted(second));

      // a lost device: the task fails once, Spark retries it on the device the executor opens again
      long lost = ExecutorDevice.devicesLost();
      FaultInjection.loseDeviceOnNextWait();
      List<Row> retried = new ArrayList<>();
      Dataset<Row> again = run(q, true, retried);
      FaultInjection.reset();
      assertEquals(lost + 1, ExecutorDevice.devicesLost(), "the device was lost once");
      assertTrue(sum(again, "deviceCacheUploads") > 0, "the new device's cache started empty");
      assertAggregatesEqual(want, sorted(retried));
    } finally {
      FaultInjection.reset();
      cached.unpersist(true);
    }
    awaitResidentBytes(0);
    // past the 2 MiB budget (100,000 rows: 2.8 MB of columns): evicted and written again, still Spark's rows
    Dataset<Row> big = s.range(0, 100_000, 1, 4).selectExpr("id", "cast(id % 1000 AS double) * 0.5 AS a",
        "cast(id % 9 AS double) * 0.25 AS b", "cast(id % 100 AS int) AS n").cache();
    try {
      big.createOrReplaceTempView("dc_grouped");
      assertEquals(100_000L, big.count());
      List<Row> want = sparks(q);
      long evictions = cache().stats().evictions();
      for (int i = 0; i < 2; i++) {
        List<Row> got = new ArrayList<>();
        Dataset<Row> ran = run(q, true, got);
        assertEquals(100_000L, fusedMetrics(ran).get("gpuReducedRows"));
        assertAggregatesEqual(want, sorted(got));
        assertTrue(cache().stats().residentBytes() <= BUDGET, cache().stats().toString());
      }
      assertTrue(cache().stats().evictions() > evictions, "columns were evicted: " + cache().stats());
    } finally {
      big.unpersist(true);
    }
    awaitResidentBytes(0);
    assertEquals(0, cache().stats().residentBytes(), "unpersist freed the device copies: " + cache().stats());
    // cached again: new batches, written to the device again, the same rows
    Dataset<Row> recached = table.get().cache();
    try {
      recached.createOrReplaceTempView("dc_grouped");
      assertEquals(20_000L, recached.count());
      List<Row> got = new ArrayList<>();
      Dataset<Row> ran = run(q, true, got);
      assertTrue(sum(ran, "deviceCacheUploads") > 0);
      assertAggregatesEqual(sparks(q), sorted(got));
      // grouped by a cached int column (fused with fuseAggregates=true): its range is the batch's, found when cached
      s.conf().set(Settings.FUSE_AGGREGATES.key(), "true");
      try {
        Supplier<Dataset<Row>> byColumn = () -> s.sql("SELECT c, sum(gpu_hypot(a, b)), count(*) FROM dc_grouped GROUP BY c");
        List<Row> byC = new ArrayList<>();
        Dataset<Row> column = run(byColumn, true, byC);
        assertEquals(20_000L, fusedMetrics(column).get("gpuReducedRows"), fusedMetrics(column).toString());
        assertEquals(10, byC.size(), "9 keys and null");
        assertAggregatesEqual(sparks(byColumn), sorted(byC));
      } finally {
        s.conf().unset(Settings.FUSE_AGGREGATES.key());
      }
      assertNoValidationErrors();
    } finally {
      recached.unpersist(true);
    }
  }

  /** Whether {@code ran}'s executed plan holds a Spark {@code Filter}. */
  private static boolean hasFilter(Dataset<Row> ran) {
    boolean[] found = {false};
    VkExplain.visit(ran.queryExecution().executedPlan(), p -> {
      found[0] |= p instanceof FilterExec;
    });
    return found[0];
  }

  /**
   * Issue 35: a {@code WHERE} on cached columns is evaluated on the device by the fused aggregate
   * reduced on the GPU: no {@code Filter} in the plan, EXPLAIN says so, the rows it drops are counted
   * on the device ({@code deviceFilteredRows}, exactly the rows Spark drops) and no value of a
   * filtered column is copied by the host (validity bits only). Grouped and ungrouped sums, counts,
   * MIN and MAX equal Spark's (integers exactly) with nulls, NaN and {@code -0.0} in the filtered
   * columns (NaN is Spark's largest double and equals itself), comparisons of ints, bigints, doubles,
   * booleans, dates and timestamps, {@code IN} with a null, {@code BETWEEN}, an empty result, a filter
   * that keeps every row and a GPU UDF predicate. A filter the device cannot evaluate (a string
   * function, a non-deterministic one) keeps Spark's {@code Filter}, with the reason in EXPLAIN.
   */
  @Test
  @Order(7)
  void filtersOnCachedColumns_runOnTheDevice_andEqualSparks_orStayInSparksFilterWithTheReason() {
    Dataset<Row> cached = s.range(0, 20_000, 1, 4).selectExpr("id",
        "CASE WHEN id % 13 = 0 THEN NULL ELSE cast(id % 40 AS double) * 0.5 END AS a", "cast(id % 9 AS double) * 0.25 AS b",
        "CASE WHEN id % 11 = 0 THEN NULL WHEN id % 17 = 0 THEN double('NaN') WHEN id % 19 = 0 THEN -0.0D"
            + " ELSE cast(id % 20 AS double) * 0.05 END AS t",
        "cast(id % 10 AS double) * 0.1 AS v",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE cast(id % 12 AS int) END AS n",
        "CASE WHEN id % 23 = 0 THEN NULL ELSE id % 3 = 0 END AS p",
        "CASE WHEN id % 29 = 0 THEN NULL ELSE date_add(date'2000-01-01', cast(id % 5000 AS int)) END AS d",
        "timestamp_micros(946684800000000 + id * 3600000000) AS ts").cache();
    try {
      cached.createOrReplaceTempView("dc_filtered");
      assertEquals(20_000L, cached.count());
      String grouped = "SELECT id % 7 AS g, sum(gpu_hypot(a, b)), count(*), min(int_poly(n, n)), max(int_poly(n, n)),"
          + " count(gpu_hypot(a, b)) FROM dc_filtered WHERE %s GROUP BY id % 7";
      String ungrouped = "SELECT sum(gpu_hypot(a, b)), count(*), min(int_poly(n, n)), max(gpu_hypot(a, b)) FROM dc_filtered"
          + " WHERE %s";
      List<String[]> cases = List.of(
          new String[] {grouped, "t > 0.5D AND v < 0.4D"},
          new String[] {grouped, "t = double('NaN') OR t <= 0.0D OR n IS NULL"},
          new String[] {ungrouped, "n IN (1, 2, NULL) AND NOT (n IN (4, 5)) AND p AND d BETWEEN date'2000-03-01' AND date'2010-01-01'"
              + " AND ts < timestamp'2001-06-01 00:00:00'"},
          new String[] {ungrouped, "n <> 3 AND t >= -0.0D AND id >= 100"},
          new String[] {ungrouped, "n > 100"}, // keeps nothing
          new String[] {grouped, "id >= 0"}, // keeps every row
          new String[] {grouped, "is_positive(b) AND n IN (1, 2, 3, 5, 8)"}); // a GPU UDF predicate
      run(() -> s.sql(grouped.replace("%s", "t > 0.5D AND v < 2D AND n > 0 AND p AND d > date'2000-01-01' AND ts > timestamp'2000-01-01 00:00:00'")),
          true, new ArrayList<>()); // writes the device copies
      for (String[] c : cases) {
        Supplier<Dataset<Row>> q = () -> s.sql(c[0].replace("%s", c[1]));
        List<Row> want = sparks(q);
        // the rows Spark's filter keeps: its COUNT(*) (over the groups)
        long kept = want.stream().mapToLong(r -> r.getLong(c[0] == grouped ? 2 : 1)).sum();
        List<Row> got = new ArrayList<>();
        Dataset<Row> ran = run(q, true, got);
        String explain = explain(ran);
        assertFalse(hasFilter(ran), "the filter runs on the device: " + explain);
        assertTrue(explain.contains("evaluated on the device"), explain);
        Map<String, Long> fused = fusedMetrics(ran);
        assertEquals(20_000L, fused.get("gpuReducedRows"), c[1] + ": every row reduced on the GPU: " + fused);
        assertEquals(0L, fused.get("aggregatedRows"), fused.toString());
        assertEquals(20_000L - kept, fused.get("deviceFilteredRows"), c[1] + ": the rows Spark drops: " + fused);
        if (!c[1].startsWith("is_positive")) { // the predicate's result is a host column of the GPU node under it
          assertEquals(0, sum(ran, "deviceCacheUploads"), "the columns were on the device already: " + c[1]);
          assertTrue(sum(ran, "deviceCacheHits") > 0, c[1]);
          assertTrue(sum(ran, "uploadBytes") < 20_000, c[1] + ": no column value copied by the host (" + 8 * 20_000
              + " bytes a double column), only validity bits: " + sum(ran, "uploadBytes"));
        }
        assertAggregatesEqual(want, sorted(got));
      }
      // not evaluable on the device: Spark's Filter stays, and EXPLAIN says why
      for (String[] c : new String[][] {{"upper(cast(n AS string)) = '7'", "is not evaluable on the device"},
          {"rand(3) < 0.5D", "not deterministic"}}) {
        Supplier<Dataset<Row>> q = () -> s.sql(ungrouped.replace("%s", c[0]));
        List<Row> want = sparks(q);
        List<Row> got = new ArrayList<>();
        Dataset<Row> ran = run(q, true, got);
        String explain = explain(ran);
        assertTrue(hasFilter(ran), explain);
        assertTrue(explain.contains("stays on the host") && explain.contains(c[1]), explain);
        assertEquals(0L, fusedMetrics(ran).getOrDefault("deviceFilteredRows", 0L));
        assertAggregatesEqual(want, sorted(got));
      }
      assertNoValidationErrors();
    } finally {
      cached.unpersist(true);
    }
  }

  @Test
  @Order(4)
  void deviceCopies_areOwnedByTheExecutorsDevice_withTheStaticBudget() {
    assertEquals(BUDGET, cache().budgetBytes());
  }
}
