package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.spark.agg.VkGpuAggregateExec;
import io.vkspark.spark.api.GpuFunction;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.exec.GpuEvalIterator;
import io.vkspark.spark.plan.VkExplain;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.execution.FilterExec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code verify=sample} under a fused aggregate whose {@code WHERE} runs on the device (issue 35), in
 * a session of its own with vkspark's cache ({@code spark.sql.cache.serializer} is static) and its
 * device copies.
 */
final class VerifyFilteredSparkTest {
  private static SparkSession s;

  @BeforeAll
  static void start() {
    s = TestSpark.cacheSessionBuilder()
        .config(Settings.CACHE_DEVICE_MEMORY.key(), "2m")
        .config(Settings.COALESCE.key(), "false")
        .getOrCreate();
  }

  @AfterAll
  static void stop() {
    TestSpark.stopCacheSession(s);
    s = null;
  }

  /**
   * Issue 33: the sampled rows' GPU results come back with the reduction and are checked for exactly
   * the rows the device filter keeps: call() here throws on the rows it drops, as a UDF guarded by
   * its WHERE may, and no mismatch is counted; the result equals Spark's.
   */
  @Test
  void sample_underADeviceFilter_checksExactlyTheRowsItKeeps() {
    GpuFunction.define("recip_d").returns("double").arg("x", "double").body("1.0 / x")
        .cpu((UDF1<Double, Double>) x -> {
          if (x == 0.0) {
            throw new ArithmeticException("x = 0: the WHERE drops it");
          }
          return 1.0 / x;
        }).register(s);
    Dataset<Row> cached = s.range(0, 20_000, 1, 4).selectExpr("id", "cast(id % 10 AS double) AS x").cache();
    try {
      cached.createOrReplaceTempView("verify_filtered");
      assertEquals(20_000L, cached.count());
      s.conf().set(Settings.CACHE_DEVICE.key(), "true");
      s.conf().set(Settings.VERIFY.key(), "sample");
      s.conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "1"); // every row of a checked batch
      s.conf().set(Settings.VERIFY_BUDGET.key(), "1"); // every reduced batch checked
      Supplier<Dataset<Row>> q = () -> s.sql("SELECT count(*), sum(recip_d(x)) FROM verify_filtered WHERE x <> 0D");
      List<List<Row>> both = onAndOff(q, ran -> {
        assertAllRowsOnGpu(ran);
        boolean[] filter = {false};
        Map<String, Long> fused = new HashMap<>();
        VkExplain.visit(ran.queryExecution().executedPlan(), p -> {
          filter[0] |= p instanceof FilterExec;
          if (p instanceof VkGpuAggregateExec g) {
            GpuEvalIterator.snapshot(g.metricsMap()).forEach((k, v) -> fused.merge(k, v, Long::sum));
          }
        });
        assertFalse(filter[0], "the filter runs on the device: " + explain(ran));
        assertEquals(20_000L, fused.get("gpuReducedRows"), fused.toString());
        assertEquals(2_000L, fused.get("deviceFilteredRows"), fused.toString());
        long checked = gpuNodes(ran).stream().mapToLong(n -> metrics(n).get("verifyRows")).sum();
        long mismatches = gpuNodes(ran).stream().mapToLong(n -> metrics(n).get("verifyMismatches")).sum();
        assertEquals(18_000L, checked, "every row the filter keeps, and only those");
        assertEquals(0L, mismatches);
      });
      assertAggregatesEqual(both.get(1), both.get(0));
      assertEquals(18_000L, both.get(0).get(0).getLong(0));
    } finally {
      for (String k : List.of(Settings.CACHE_DEVICE.key(), Settings.VERIFY.key(), Settings.VERIFY_SAMPLE_RATE.key(),
          Settings.VERIFY_BUDGET.key())) {
        s.conf().unset(k);
      }
      cached.unpersist(true);
    }
  }
}
