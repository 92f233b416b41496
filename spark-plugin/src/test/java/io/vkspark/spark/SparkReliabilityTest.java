package io.vkspark.spark;

import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.conf.VkConf;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.DeviceCounters;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.spark.conf.Settings;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.ExceptionFailure;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Faults in Spark: failed and retried tasks, device memory running out, degenerate data. */
@ExtendWith(TestSpark.Validated.class)
final class SparkReliabilityTest {

  /** Passes ids through, but fails the first attempt of partition 1 mid-way (after GPU batches ran). */
  public static final class FailFirstAttempt implements UDF1<Long, Long> {
    @Override
    public Long call(Long id) {
      TaskContext t = TaskContext.get();
      if (t != null && t.attemptNumber() == 0 && t.partitionId() == 1 && id % 1000 == 900) {
        throw new IllegalStateException("injected failure in partition 1, attempt 0, id " + id);
      }
      return id;
    }
  }

  @Test
  void taskFailedMidPartitionAndRetried_correctResults_countersBackToBaseline() throws Exception {
    SparkSession s = spark();
    s.udf().register("fail_first_attempt", new FailFirstAttempt(), DataTypes.LongType);
    s.conf().set("spark.sql.parquet.columnarReaderBatchSize", "500");
    AtomicInteger injected = new AtomicInteger();
    SparkListener listener = new SparkListener() {
      @Override
      public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.reason() instanceof ExceptionFailure f && f.toErrorString().contains("injected failure")) {
          injected.incrementAndGet();
        }
      }
    };
    s.sparkContext().addSparkListener(listener);
    try {
      String[] cols = {"fail_first_attempt(id) AS id", "gpu_hypot(a, b) AS h", "int_poly(i, j) AS p"};
      table().selectExpr("id", "gpu_hypot(a, b) AS h", "int_poly(i, j) AS p").collectAsList(); // warm the pool
      GpuDevice device = ExecutorDevice.current().orElseThrow().device();
      ExecutorDevice.current().orElseThrow().runtime().trim(); // count without idle sets (their number depends on timing)
      DeviceCounters before = device.counters();
      Dataset<Row> df = table().selectExpr(cols);
      List<List<Row>> both = gpuAndCpu(() -> table().selectExpr(cols));
      assertRowsEqual(both.get(1), both.get(0));
      assertEquals(20_000, both.get(0).size());
      df.collectAsList();
      ExecutorDevice.current().orElseThrow().runtime().trim();
      DeviceCounters after = device.counters();
      assertEquals(before.buffersLive(), after.buffersLive(), "no buffer leaked by the failed attempt");
      assertEquals(before.commandBuffersLive(), after.commandBuffersLive(), "no command buffer leaked");
      assertEquals(before.descriptorSetsLive(), after.descriptorSetsLive());
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertEquals(20_000L, m.get("gpuRows"), m.toString());
      assertEquals(0L, m.get("cpuRows"), m.toString());
      s.sparkContext().listenerBus().waitUntilEmpty();
      // GPU, CPU and the last run: each job's first attempt of partition 1 failed, and was retried.
      assertEquals(3, injected.get(), "the injected failures happened");
    } finally {
      s.sparkContext().removeSparkListener(listener);
      s.conf().unset("spark.sql.parquet.columnarReaderBatchSize");
    }
  }

  @Test
  void deviceOutOfMemory_batchesAreSplitAndTheQueryCompletes() {
    SparkSession s = spark();
    VkConf good = VkConf.from(s.sparkContext().conf());
    GpuDevice old = ExecutorDevice.current().orElseThrow().device();
    ExecutorDevice.shutdown();
    DeviceCounters closed = old.counters();
    assertTrue(closed.nothingLive(), "the executor's device closed with nothing alive: " + closed);
    assertEquals(0, old.validationErrors(), old.validationMessages().toString());
    // 2 MiB for everything: 1 M-row buffer sets (24 MiB) cannot exist; dispatches shrink to fit.
    ExecutorDevice.init(TestSpark.confWith(s.sparkContext().conf(), Map.of(Settings.DEVICE.key(), "",
        Settings.FALLBACK.key(), "true", Settings.VALIDATION.key(), "true", Settings.DEVICE_MEMORY_LIMIT.key(), "2m")),
        "driver", null);
    try {
      assertGpuEqualsCpu(() -> table().selectExpr("id", "gpu_hypot(a, b) AS h"));
      Dataset<Row> df = table().selectExpr("id", "gpu_hypot(a, b) AS h");
      df.collectAsList();
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertEquals(20_000L, m.get("gpuRows"), "still on the GPU, in smaller dispatches: " + m);
      DeviceCounters c = ExecutorDevice.current().orElseThrow().device().counters();
      assertTrue(c.bufferBytesLive() <= 2L << 20, "the limit holds: " + c);
      assertTrue(c.buffersCreated() > 0, c.toString());
    } finally {
      ExecutorDevice.shutdown();
      ExecutorDevice.init(good, "driver", null);
    }
  }

  @Test
  void executorShutdownWhileAQueryRuns_waitsForItsGpuWork_andClosesClean() throws Exception {
    SparkSession s = spark();
    VkConf good = VkConf.from(s.sparkContext().conf());
    s.conf().set("spark.sql.parquet.columnarReaderBatchSize", "100");
    s.conf().set(Settings.COALESCE.key(), "false"); // many small dispatches, so the shutdown comes mid-query
    Thread query = new Thread(() -> {
      try {
        table().selectExpr("id", "gpu_hypot(a, b)", "int_poly(i, j)").collectAsList();
      } catch (RuntimeException expected) {
        // the query may fail once its device is gone; what matters is the device closing clean
      }
    });
    try {
      GpuDevice device = ExecutorDevice.current().orElseThrow().device();
      long before = device.counters().dispatchesSubmitted();
      query.start();
      long deadline = System.nanoTime() + 60_000_000_000L;
      while (device.counters().dispatchesSubmitted() < before + 20 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      ExecutorDevice.shutdown();
      DeviceCounters c = device.counters();
      assertTrue(device.isClosed());
      assertTrue(c.nothingLive(), "nothing alive after shutting down under load: " + c);
      assertEquals(0, device.validationErrors(), device.validationMessages().toString());
      query.join(120_000);
      assertFalse(query.isAlive());
    } finally {
      s.conf().unset("spark.sql.parquet.columnarReaderBatchSize");
      s.conf().unset(Settings.COALESCE.key());
      ExecutorDevice.shutdown();
      ExecutorDevice.init(good, "driver", null);
    }
    assertGpuEqualsCpu(() -> table().selectExpr("id", "gpu_hypot(a, b)"));
  }

  @Test
  void allNullColumn_emptyTable_singleRow() {
    SparkSession s = spark();
    // a strict GPU UDF over a null literal is null on every row: planned as a null literal, no GPU work
    assertVksparkEqualsCpu(() -> table().selectExpr("id", "gpu_hypot(a, cast(null as double)) AS h", "int_poly(i, null) AS p"),
        ran -> assertTrue(gpuNodes(ran).isEmpty(), () -> explain(ran)));
    assertTrue(table().selectExpr("gpu_hypot(a, cast(null as double)) AS h").collectAsList().stream().allMatch(r -> r.isNullAt(0)));
    // No rows at all: nothing can run on the GPU, but nothing may run on the CPU either.
    List<List<Row>> empty = onAndOff(() -> table().where("id < 0").selectExpr("id", "gpu_hypot(a, b)"), ran -> {
      assertFalse(gpuNodes(ran).isEmpty(), explain(ran));
      gpuNodes(ran).forEach(n -> assertEquals(0L, metrics(n).get("cpuRows"), metrics(n).toString()));
    });
    assertEquals(List.of(List.of(), List.of()), empty);
    assertGpuEqualsCpu(() -> table().where("id = 4242").selectExpr("id", "gpu_hypot(a, b)", "xor_gpu(p, q)"));
    assertGpuEqualsCpu(() -> s.range(0, 1, 1, 1).selectExpr("id", "gpu_hypot(cast(id as double), 2.0D)"));
  }
}
