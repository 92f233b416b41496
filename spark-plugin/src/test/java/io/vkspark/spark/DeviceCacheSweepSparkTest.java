package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.spark.agg.VkGpuAggregateExec;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.exec.GpuEvalIterator;
import io.vkspark.spark.plan.VkExplain;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF5;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 35's implied-volatility sweep over vkspark's device cache, with the plugin's defaults
 * (coalescing on, the default device budget): SweepBench's query shape,
 * {@code sum(CASE WHEN isnan(f(price * c, s, k, t, r + c2)) ...), count_if(isnan(...))}, over a cached
 * table whose batches are smaller than half of {@code batchRows} (as the bench's 2 M-row table in 16
 * partitions is: 125,000 rows a batch), through a GPU UDF with a loop (as implied volatility's Newton
 * steps are), so its batches may be handed back to {@code call()}: not appended to the GPU, they were
 * coalesced into a host copy, which is no cached column, and every value was uploaded on every query.
 * The second query must read every cached column from its device copy and upload nothing; a loop-free
 * UDF's fused sum (appended to the GPU) still gathers the small batches, on the device.
 */
final class DeviceCacheSweepSparkTest {
  private static SparkSession s;

  /** Twelve Newton steps for {@code v} in {@code v * v * t * s = price * k * (1 + r)}: a loop, in + - * / only. */
  public static final class NewtonVol implements UDF5<Double, Double, Double, Double, Double, Double>, GpuUdf {
    private static final long serialVersionUID = 1L;

    @Override
    public Double call(Double price, Double s, Double k, Double t, Double r) {
      if (price == null || s == null || k == null || t == null || r == null) {
        return null;
      }
      double target = price * k * (1.0 + r) / (t * s);
      if (!(target > 0.0)) {
        return Double.NaN;
      }
      double v = 1.0;
      for (int i = 0; i < 12; i++) {
        v = 0.5 * (v + target / v);
      }
      return v;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("double").arg("price", "double").arg("s", "double").arg("k", "double")
          .arg("t", "double").arg("r", "double").body("""
              double target = price * k * (1.0lf + r) / (t * s);
              if (!(target > 0.0lf)) {
                return packDouble2x32(uvec2(0u, 0x7ff80000u));
              }
              double v = 1.0lf;
              for (int i = 0; i < 12; i++) {
                v = 0.5lf * (v + target / v);
              }
              return v;
              """);
    }
  }

  @BeforeAll
  static void start() {
    s = TestSpark.cacheSessionBuilder() // the defaults: coalescing on, the default device budget
        .getOrCreate();
    GpuUdfs.register(s, "newton_vol", new NewtonVol());
  }

  @AfterAll
  static void stop() {
    TestSpark.stopCacheSession(s);
    s = null;
  }

  /** Every vkspark GPU node's metrics of {@code ran} (plain and fused), summed by name. */
  private static Map<String, Long> metricsOf(Dataset<Row> ran) {
    Map<String, Long> out = new HashMap<>();
    VkExplain.visit(ran.queryExecution().executedPlan(), p -> {
      if (p instanceof VkGpuAggregateExec g) {
        GpuEvalIterator.snapshot(g.metricsMap()).forEach((k, v) -> out.merge(k, v, Long::sum));
      }
    });
    for (var node : gpuNodes(ran)) {
      metrics(node).forEach((k, v) -> out.merge(k, v, Long::sum));
    }
    return out;
  }

  @Test
  void impliedVolatilityStyleSweep_overTheDeviceCache_uploadsNothingFromItsSecondQuery() {
    // 200,000 options in 4 partitions, cached in Spark's 10,000-row batches: under half of batchRows, so small
    Dataset<Row> cached = s.range(0, 200_000, 1, 4).selectExpr("id", "cast(id % 40 AS double) + 80 AS s",
        "cast(id % 7 AS double) + 100 AS k", "cast(id % 5 AS double) * 0.25 + 0.25 AS t",
        "cast(id % 3 AS double) * 0.01 + 0.01 AS r",
        "CASE WHEN id % 101 = 0 THEN -1D ELSE cast(id % 17 AS double) * 0.5 + 1 END AS price").cache();
    IntFunction<String> query = j -> "SELECT sum(CASE WHEN isnan(iv) THEN 0D ELSE iv END), count_if(isnan(iv)) FROM"
        + " (SELECT newton_vol(price * " + (1 + 0.01 * j) + "D, s, k, t, r + " + 0.005 * j + "D) AS iv FROM dc_sweep)";
    try {
      cached.createOrReplaceTempView("dc_sweep");
      assertEquals(200_000L, cached.count());
      s.conf().set(Settings.CACHE_DEVICE.key(), "true");
      Dataset<Row> first;
      Dataset<Row> second;
      List<Row> firstRows;
      List<Row> secondRows;
      try {
        first = s.sql(query.apply(1));
        firstRows = first.collectAsList();
        second = s.sql(query.apply(2));
        secondRows = second.collectAsList();
      } finally {
        s.conf().unset(Settings.CACHE_DEVICE.key());
      }
      Map<String, Long> m = metricsOf(second);
      String explain = explain(second);
      assertTrue(explain.contains("VkGpuAggregate") && explain.contains("reduced on the GPU"), explain);
      assertFalse(explain.contains("vk_arg"), "the arguments are computed in the kernel: " + explain);
      assertTrue(m.getOrDefault("deviceCacheHits", 0L) > 0, "the second query read the device copies: " + m);
      assertEquals(0L, m.getOrDefault("uploadBytes", -1L), "nothing copied by the host: " + m + "\n" + explain);
      assertEquals(0L, m.getOrDefault("deviceCacheUploads", -1L), m.toString());
      assertTrue(metricsOf(first).getOrDefault("deviceCacheUploads", 0L) > 0, "the first query wrote the device copies");

      s.conf().set(Settings.ENABLED.key(), "false");
      try {
        for (int j = 1; j <= 2; j++) {
          Dataset<Row> spark = s.sql(query.apply(j));
          List<Row> want = spark.collectAsList();
          assertTrue(gpuNodes(spark).isEmpty(), "Spark's own plan");
          assertAggregatesEqual(want, j == 1 ? firstRows : secondRows);
          assertTrue(want.get(0).getLong(1) > 0, "some rows are NaN: " + want);
        }
      } finally {
        s.conf().unset(Settings.ENABLED.key());
      }

      // a loop-free UDF's fused sum is appended to the GPU: the small cached batches are still gathered, on the device
      String appended = "SELECT sum(gpu_hypot(price * 1.01D, s + 0.5D)), count(*) FROM dc_sweep";
      s.conf().set(Settings.CACHE_DEVICE.key(), "true");
      Dataset<Row> gathered;
      List<Row> gatheredRows;
      try {
        s.sql(appended).collectAsList(); // its kernel compiled; price and s are on the device already
        gathered = s.sql(appended);
        gatheredRows = gathered.collectAsList();
      } finally {
        s.conf().unset(Settings.CACHE_DEVICE.key());
      }
      Map<String, Long> g = metricsOf(gathered);
      assertTrue(g.getOrDefault("deviceCacheHits", 0L) > 0, "counted where appended: " + g);
      assertEquals(0L, g.getOrDefault("uploadBytes", -1L), g.toString());
      assertTrue(g.get("numOutputBatches") < 20, "the 20 cached batches gathered into fewer dispatches: " + g);
      s.conf().set(Settings.ENABLED.key(), "false");
      try {
        assertAggregatesEqual(s.sql(appended).collectAsList(), gatheredRows);
      } finally {
        s.conf().unset(Settings.ENABLED.key());
      }
      assertNoValidationErrors();
    } finally {
      cached.unpersist(true);
    }
  }
}
