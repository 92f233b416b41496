package io.vkspark.spark;

import io.vkspark.spark.conf.MetricsLevel;

import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.exec.call.VkMetric;
import io.vkspark.spark.conf.Settings;

import static io.vkspark.spark.TestSpark.assertAllRowsOnGpu;
import static io.vkspark.spark.TestSpark.gpuNodes;
import static io.vkspark.spark.TestSpark.metrics;
import static io.vkspark.spark.TestSpark.parquet;
import static io.vkspark.spark.TestSpark.spark;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.junit.jupiter.api.Test;

/** {@code spark.vkspark.metrics.level}: which metrics the GPU node has, and in which order. */
class MetricsLevelSparkTest {

  @Test
  void essential_hasOnlyEssentialMetrics_inEnumOrder_debugHasAll() {
    SparkSession s = spark();
    Dataset<Row> essential = s.read().parquet(parquet()).selectExpr("id", "hypot_gpu(a, b) AS h");
    essential.collectAsList();
    VkGpuEvalExec node = gpuNodes(essential).get(0);
    assertEquals(keys(VkMetric.at(MetricsLevel.ESSENTIAL)), sparkKeys(node), "default level is essential");
    assertAllRowsOnGpu(essential);
    Map<String, Long> m = metrics(node);
    assertTrue(m.get("uploadBytes") > 0 && m.get("peakDeviceMemory") > 0, m.toString());
    assertEquals("size", node.metrics().apply("peakDeviceMemory").metricType());

    s.conf().set(Settings.METRICS_LEVEL.key(), "debug");
    try {
      Dataset<Row> debug = s.read().parquet(parquet()).selectExpr("id", "hypot_gpu(a, b) AS h");
      debug.collectAsList();
      VkGpuEvalExec d = gpuNodes(debug).get(0);
      assertEquals(keys(List.of(VkMetric.values())), sparkKeys(d));
      assertTrue(metrics(d).get("gpuDispatches") > 0, metrics(d).toString());
      assertAllRowsOnGpu(debug);
    } finally {
      s.conf().unset(Settings.METRICS_LEVEL.key());
    }
  }

  /** The keys in the order {@code SparkPlan.metrics()} iterates them (the order the UI lists). */
  private static List<String> sparkKeys(VkGpuEvalExec node) {
    List<String> out = new ArrayList<>();
    Map<String, SQLMetric> byKey = Scala.javaMap(node.metrics());
    out.addAll(byKey.keySet());
    for (VkMetric k : VkMetric.values()) {
      if (byKey.containsKey(k.key())) {
        assertEquals(k.description(), byKey.get(k.key()).name().get());
      }
    }
    return out;
  }

  private static List<String> keys(List<VkMetric> metrics) {
    return metrics.stream().map(VkMetric::key).toList();
  }
}
