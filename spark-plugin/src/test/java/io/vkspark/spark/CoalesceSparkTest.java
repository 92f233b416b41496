package io.vkspark.spark;

import io.vkspark.spark.agg.VkGpuAggregateExec;
import io.vkspark.spark.exec.GpuEvalIterator;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.conf.VkConf;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.DeviceCounters;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.plan.VkExplain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Coalescing (spark.vkspark.coalesce): small child batches from Parquet gathered into one GPU
 * dispatch, with every pass-through type, nulls, guards, filters, loop-limit recomputation, verify
 * mode and a retried task; each result checked against Spark's CPU plan (the UDFs' call()), every
 * row on the GPU, and fewer GPU dispatches than child batches.
 */
@ExtendWith({TestSpark.Validated.class, TestSpark.RestoresConf.class})
final class CoalesceSparkTest {
  private static final int FILES = 2;
  private static final int ROWS_PER_FILE = 4_500;
  private static final int ROWS = FILES * ROWS_PER_FILE;
  private static String table;

  /** Every column type a GPU UDF takes, plus strings, with about 10% nulls; one file per partition. */
  @BeforeAll
  static void write() throws Exception {
    Path dir = Files.createTempDirectory("vkspark-coalesce").resolve("t.parquet");
    spark().range(0, ROWS, 1, FILES).selectExpr(
            "id",
            nullable("cast(rand(1) * 2000000 - 1000000 as int)", 1) + " AS i",
            nullable("cast(rand(2) * 2000 as int)", 2) + " AS j",
            nullable("cast(rand(3) * 9e15 as bigint)", 3) + " AS l",
            nullable("cast(rand(4) * 1e12 - 5e11 as bigint)", 4) + " AS m",
            nullable("cast(rand(5) * 2000 - 1000 as float)", 5) + " AS f",
            nullable("cast(rand(6) * 100 as float)", 6) + " AS g",
            nullable("rand(7) * 2e6 - 1e6", 7) + " AS a",
            nullable("randn(8) * 1e3", 8) + " AS b",
            nullable("rand(9) < 0.5", 9) + " AS p",
            nullable("rand(10) < 0.3", 10) + " AS q",
            nullable("date_add(date'2000-01-01', cast(rand(11) * 10000 as int))", 11) + " AS d",
            nullable("timestamp_micros(946684800000000 + cast(rand(12) * 9.4e14 as bigint))", 12) + " AS t",
            nullable("concat('s', cast(id * 7 as string), repeat('x', cast(rand(13) * 20 as int)))", 13) + " AS s")
        .write().parquet(dir.toString());
    table = dir.toString();
    GpuUdfs.register(spark(), "loop_sum", new BoundedTimeSparkTest.LoopSum());
  }

  private static String nullable(String expr, int seed) {
    return "CASE WHEN rand(" + (100 + seed) + ") < 0.1 THEN NULL ELSE " + expr + " END";
  }

  private static Dataset<Row> table() {
    return spark().read().parquet(table);
  }


  /** Every column passes through next to GPU calls of every type, one under a CASE guard. */
  private static final String[] EVERY_TYPE = {"*",
      "gpu_hypot(a, b) AS h", "int_poly(i, j) AS ip", "long_mix(l, m) AS lm", "float_saxpy(f, g) AS fs",
      "xor_gpu(p, q) AS x", "add_days(d, j) AS ad", "add_hours(t, j) AS ah",
      "CASE WHEN a > 0 THEN is_positive(b) END AS guarded"};

  private static void set(String... kv) {
    for (int k = 0; k < kv.length; k += 2) {
      spark().conf().set(kv[k], kv[k + 1]);
    }
  }

  /** All rows on the GPU, and the node's batch and dispatch counts seen by {@code check}. */
  private static Consumer<Dataset<Row>> onGpu(BiConsumer<Long, Long> batchesAndDispatches) {
    return ran -> {
      assertAllRowsOnGpu(ran);
      Map<String, Long> m = metrics(gpuNodes(ran).get(0));
      assertEquals((long) ROWS, m.get("gpuRows"), m.toString());
      batchesAndDispatches.accept(m.get("inputBatches"), m.get("gpuDispatches"));
    };
  }

  @ParameterizedTest(name = "reader batch {0}")
  @CsvSource({"1", "1000", "4096", "4097"})
  void smallReaderBatches_coalesceIntoFewerDispatches_everyTypePassesThrough(int readerBatch) {
    set("spark.sql.parquet.columnarReaderBatchSize", String.valueOf(readerBatch), Settings.METRICS_LEVEL.key(), "debug",
        Settings.VERIFY.key(), "strict", Settings.VERIFY_SAMPLE_RATE.key(), "1");
    int perFile = (ROWS_PER_FILE + readerBatch - 1) / readerBatch;
    assertVksparkEqualsCpu(() -> table().selectExpr(EVERY_TYPE), onGpu((batches, dispatches) -> {
      assertEquals((long) FILES * perFile, batches, "child batches read");
      assertEquals((long) FILES, dispatches, "one dispatch per partition (file): " + batches + " child batches");
    }));
  }

  /**
   * One copy: a sum fused onto the GPU node and reduced on the GPU reads 1,000-row Parquet batches;
   * each child batch's arguments go straight into the GPU's input buffers (stagedBytes 0, nothing
   * staged on the host), several child batches per dispatch, every row reduced on the GPU, results
   * Spark's. With verify on (it re-runs call() over the arguments), the same query folds on the host
   * and the child batches are staged as before.
   */
  @Test
  void fusedReduction_smallBatches_argumentsCopiedOnceStraightToTheGpu_verifyStillStages() {
    set("spark.sql.parquet.columnarReaderBatchSize", "1000", Settings.METRICS_LEVEL.key(), "debug");
    table().createOrReplaceTempView("coalesce_t");
    String sql = "SELECT sum(float_saxpy(f, g)), max(float_saxpy(f, g)), sum(gpu_hypot(a, b)), count(int_poly(i, j)),"
        + " max(int_poly(i, j)), count(*) FROM coalesce_t"; // no integral sum: under ANSI it folds on the host
    List<List<Row>> both = onAndOff(() -> spark().sql(sql), ran -> {
      Map<String, Long> fused = reduced(ran);
      assertEquals((long) ROWS, fused.get("gpuReducedRows"), fused.toString());
      Map<String, Long> m = metrics(gpuNodes(ran).get(0));
      assertEquals((long) ROWS, m.get("gpuRows"), m.toString());
      assertEquals(10L, m.get("inputBatches"), m.toString());
      assertTrue(m.get("gpuDispatches") < m.get("inputBatches"), m.toString());
      assertEquals(0L, m.get("stagedBytes"), () -> "no host staging copy: " + m);
      assertTrue(m.get("uploadBytes") >= (long) ROWS * (4 + 4 + 8 + 8 + 4 + 4), () -> "the arguments were uploaded: " + m);
    });
    TestSpark.assertAggregatesEqual(both.get(1), both.get(0));

    set(Settings.VERIFY.key(), "strict", Settings.VERIFY_SAMPLE_RATE.key(), "1");
    both = onAndOff(() -> spark().sql(sql), ran -> {
      Map<String, Long> m = metrics(gpuNodes(ran).get(0));
      assertEquals((long) ROWS, m.get("gpuRows"), m.toString());
      assertTrue(m.get("stagedBytes") >= (long) ROWS * (4 + 4 + 8 + 8 + 4 + 4), () -> "verify reads the staged arguments: " + m);
      assertEquals(0L, m.get("verifyMismatches"), m.toString());
    });
    TestSpark.assertAggregatesEqual(both.get(1), both.get(0));
  }

  /** The metrics of the one fused aggregate node of {@code ran}. */
  private static Map<String, Long> reduced(Dataset<Row> ran) {
    List<VkGpuAggregateExec> out = new ArrayList<>();
    VkExplain.visit(ran.queryExecution().executedPlan(), p -> {
      if (p instanceof VkGpuAggregateExec g) {
        out.add(g);
      }
    });
    assertEquals(1, out.size(), () -> explain(ran));
    return GpuEvalIterator.snapshot(out.get(0).metricsMap());
  }

  @Test
  void coalesceOff_andBatchesOfHalfBatchRows_keepOneDispatchPerChildBatch() {
    set("spark.sql.parquet.columnarReaderBatchSize", "1000", Settings.METRICS_LEVEL.key(), "debug",
        Settings.COALESCE.key(), "false");
    assertVksparkEqualsCpu(() -> table().selectExpr(EVERY_TYPE), onGpu((batches, dispatches) -> {
      assertEquals(10L, batches);
      assertEquals(10L, dispatches, "coalescing off: one dispatch per child batch");
    }));
    // Child batches of batchRows / 2 rows or more are evaluated as they come (no copy).
    set(Settings.COALESCE.key(), "true", Settings.BATCH_ROWS.key(), "2000");
    assertVksparkEqualsCpu(() -> table().selectExpr(EVERY_TYPE), onGpu((batches, dispatches) -> {
      assertEquals(10L, batches);
      assertEquals(10L, dispatches, "batches of half batchRows are not coalesced");
    }));
  }

  @Test
  void aBatchThatDoesNotFit_waitsForTheNextDispatch() {
    // 700-row batches, at most 2,000 rows a dispatch: a third 700-row batch does not fit and waits for the next one.
    set("spark.sql.parquet.columnarReaderBatchSize", "700", Settings.METRICS_LEVEL.key(), "debug",
        Settings.BATCH_ROWS.key(), "2000", Settings.VERIFY.key(), "strict", Settings.VERIFY_SAMPLE_RATE.key(), "1");
    assertVksparkEqualsCpu(() -> table().selectExpr(EVERY_TYPE), onGpu((batches, dispatches) -> {
      assertEquals(14L, batches, "7 batches per file (6 of 700, one of 300)");
      assertEquals(6L, dispatches, "per file: 700+700, 700+700, 700+700+300");
    }));
  }

  @Test
  void cachedBatches_coalesce() {
    set("spark.sql.inMemoryColumnarStorage.batchSize", "1000", Settings.METRICS_LEVEL.key(), "debug");
    Dataset<Row> cached = table().cache();
    try {
      assertEquals(ROWS, cached.count());
      assertVksparkEqualsCpu(() -> cached.selectExpr(EVERY_TYPE), onGpu((batches, dispatches) -> {
        assertEquals(10L, batches, "cache batches of 1,000 rows (4,500 per partition)");
        assertEquals((long) FILES, dispatches, "one dispatch per partition");
      }));
    } finally {
      cached.unpersist(true);
    }
  }

  @Test
  void filterBelowAndAbove_coalesced() {
    // A filter below makes the child row-based: RowToColumnar's batches (here 300 rows) are coalesced.
    set("spark.sql.parquet.columnarReaderBatchSize", "500", "spark.sql.inMemoryColumnarStorage.batchSize", "300",
        Settings.METRICS_LEVEL.key(), "debug");
    assertVksparkEqualsCpu(() -> table().where("id % 3 <> 0 AND s IS NOT NULL").selectExpr(EVERY_TYPE)
        .where("h > 1000"), ran -> { // (an OR here puts the call in a conditional branch once Spark 3.5 inlines h)
          assertAllRowsOnGpu(ran);
          Map<String, Long> m = metrics(gpuNodes(ran).get(0));
          assertTrue(m.get("gpuDispatches") < m.get("inputBatches"), m.toString());
          // about 4,400 (Spark 3.5 pushes h > 1000 below the node) to 6,000 rows, in batches of 300
          assertTrue(m.get("inputBatches") >= 14, "rows in batches of 300: " + m);
        });
  }

  @Test
  void loopLimitRecomputation_onCoalescedBatches_usesCall() {
    // j * 50 is computed below the node, row by row: RowToColumnar's batches (500 rows) are coalesced.
    set("spark.sql.inMemoryColumnarStorage.batchSize", "500", Settings.METRICS_LEVEL.key(), "debug",
        Settings.FALLBACK.key(), "true");
    boolean limited = ExecutorDevice.get(VkConf.of(spark()), "driver").orElseThrow().device().loopLimit() > 0;
    assertVksparkEqualsCpu(() -> table().selectExpr("*", "loop_sum(j, j * 50) AS s50", "gpu_hypot(a, b) AS h"), ran -> {
      Map<String, Long> m = metrics(gpuNodes(ran).get(0));
      assertEquals(18L, m.get("inputBatches"), m.toString());
      if (limited) {
        assertTrue(m.get("loopLimitBatches") > 0 && m.get("loopLimitBatches") <= 2, "coalesced batches: " + m);
        assertTrue(m.get("cpuRows") > 0, "recomputed with call(): " + m);
      } else {
        assertEquals(0L, m.get("cpuRows"), m.toString());
      }
    });
  }

  /** Passes ids through, but fails the first attempt of partition 1 once some of its rows went by. */
  public static final class FailFirstAttempt implements UDF1<Long, Long> {
    @Override
    public Long call(Long id) {
      TaskContext t = TaskContext.get();
      if (t != null && t.attemptNumber() == 0 && t.partitionId() == 1 && id % ROWS_PER_FILE == 3_000) {
        throw new IllegalStateException("injected coalesce failure in partition 1, attempt 0, id " + id);
      }
      return id;
    }
  }

  @Test
  void taskFailedWhileCoalescing_isRetried_correctResults_nothingLeaked() throws Exception {
    SparkSession s = spark();
    s.udf().register("fail_first_attempt_c", new FailFirstAttempt(), DataTypes.LongType);
    // The failing UDF feeds a GPU argument, so it runs below the node: the failure comes while batches are staged,
    // after three dispatches of 1,000 rows (four 250-row batches each) in partition 1.
    set("spark.sql.parquet.columnarReaderBatchSize", "500", "spark.sql.inMemoryColumnarStorage.batchSize", "250",
        Settings.METRICS_LEVEL.key(), "debug", Settings.BATCH_ROWS.key(), "1000");
    String[] cols = {"id", "s", "d", "gpu_hypot(a + cast(fail_first_attempt_c(id) AS double) * 0, b) AS h"};
    AtomicInteger injected = new AtomicInteger();
    SparkListener listener = new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.reason() instanceof ExceptionFailure f && f.toErrorString().contains("injected coalesce")) {
          injected.incrementAndGet();
        }
      }
    };
    s.sparkContext().addSparkListener(listener);
    try {
      table().selectExpr(cols).collectAsList(); // warm: buffers pooled, kernels built
      s.sparkContext().listenerBus().waitUntilEmpty();
      GpuDevice device = ExecutorDevice.current().orElseThrow().device();
      // Idle buffer sets freed before each count: how many the pool holds depends on how many tasks
      // happened to hold a GPU permit at once (CI once saw one more set, 5 buffers, in the second query).
      ExecutorDevice.current().orElseThrow().runtime().trim();
      DeviceCounters before = device.counters();
      assertVksparkEqualsCpu(() -> table().selectExpr(cols), ran -> {
        assertAllRowsOnGpu(ran);
        Map<String, Long> m = metrics(gpuNodes(ran).get(0));
        assertTrue(m.get("gpuDispatches") < m.get("inputBatches"), m.toString());
      });
      ExecutorDevice.current().orElseThrow().runtime().trim();
      DeviceCounters after = device.counters();
      assertEquals(before.buffersLive(), after.buffersLive(), "no buffer leaked by the failed attempt");
      assertEquals(before.commandBuffersLive(), after.commandBuffersLive(), "no command buffer leaked");
      s.sparkContext().listenerBus().waitUntilEmpty();
      assertEquals(3, injected.get(), "the warm-up, GPU and CPU runs each failed once and were retried");
    } finally {
      s.sparkContext().removeSparkListener(listener);
    }
  }
}
