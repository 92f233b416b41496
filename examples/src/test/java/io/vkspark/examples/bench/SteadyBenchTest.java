package io.vkspark.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vkspark.spark.conf.Settings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's steady-state figures (issue 13's target) come from a real GPU case: a GPU UDF's
 * line carries {@code "steady"} with the Vulkan objects created over its timed runs (none), device
 * memory against its budgets and host memory before and after; the summary carries them per case;
 * a variant without a GPU node has none. Its JSON is parsed back by Jackson.
 */
@Tag("defaultLineOnly")
class SteadyBenchTest {
  /** The bench writes NaN for a ratio to a variant it did not run (Python's json reads it). */
  private static final ObjectMapper JSON = com.fasterxml.jackson.databind.json.JsonMapper.builder()
      .enable(com.fasterxml.jackson.core.json.JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

  @Test
  void gpuCase_reportsNoVulkanObjectsAfterWarmup_budgets_andHostMemory() throws Exception {
    SparkSession spark = QueryProfileTest.spark();
    long rows = 20_000;
    Path dir = Files.createTempDirectory("vkspark-steady-bench");
    Path files = SparkBench.writeOptions(spark, Map.of("parquet-dir", dir.toString()), rows, "options-xy", true);
    spark.read().parquet(files.toString()).createOrReplaceTempView("steady_pq");
    // Small batches, one GPU dispatch each: about 80 per run.
    spark.conf().set("spark.sql.parquet.columnarReaderBatchSize", "256");
    spark.conf().set(Settings.COALESCE.key(), "false");
    spark.conf().set(Settings.METRICS_LEVEL.key(), "debug");
    List<SparkBench.Result> results = new ArrayList<>();
    List<String> lines;
    try {
      lines = SparkBench.run(spark, "steady_black_scholes", List.of(
          new SparkBench.Variant("gpu_udf", () -> spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM steady_pq"),
              SparkBench.UNFUSED), // as SparkBench's gpu_udf: Spark's partial aggregate over the results read back
          new SparkBench.Variant("java_udf", () -> spark.sql("SELECT sum(black_scholes_cpu(s, k, t, r, v)) FROM steady_pq"),
              SparkBench.CPU_ONLY)), // as SparkBench's java_udf: Spark runs call(), never translated
          3, "\"rows\": " + rows + ", \"source\": \"parquet\"", 1e-9, results);
    } finally {
      for (String k : List.of("spark.sql.parquet.columnarReaderBatchSize", Settings.COALESCE.key(),
          Settings.METRICS_LEVEL.key())) {
        spark.conf().unset(k);
      }
    }
    lines.forEach(System.err::println);
    JsonNode gpu = JSON.readTree(lines.get(0));
    JsonNode cpu = JSON.readTree(lines.get(1));
    assertEquals("gpu_udf", gpu.get("variant").asText());
    assertTrue(gpu.get("agrees").asBoolean(), "the GPU sum against the Java UDF's: " + lines);
    assertEquals(rows, gpu.get("gpu").get("rows_on_gpu").asLong(), gpu.toString());
    assertEquals(0, gpu.get("gpu").get("rows_on_cpu").asLong(), gpu.toString());
    long batchesPerRun = gpu.get("gpu").get("child_batches").asLong();
    assertTrue(batchesPerRun >= 78, "small batches: " + gpu);

    JsonNode steady = gpu.get("steady");
    assertEquals(3, steady.get("timed_runs").asInt(), steady.toString());
    assertEquals(3 * batchesPerRun, steady.get("child_batches").asLong(), steady.toString());
    assertEquals(0, steady.get("new_vulkan_objects").asLong(), steady.toString());
    steady.get("vulkan_objects_after_warmup").fields().forEachRemaining(e ->
        assertEquals(0, e.getValue().asLong(), e.getKey() + " in " + steady));
    assertTrue(steady.get("vulkan_objects_after_warmup").has("command_buffers_created"), steady.toString());
    assertTrue(steady.get("within_budgets").asBoolean(), steady.toString());
    JsonNode after = steady.get("after");
    assertTrue(after.get("device_bytes_held").asLong() > 0, "the pooled buffer sets: " + after);
    assertTrue(after.get("device_buffer_bytes").asLong() >= after.get("device_bytes_held").asLong(), after.toString());
    assertTrue(after.get("device_idle_budget_bytes").asLong() > 0, after.toString());
    assertTrue(after.get("rss_bytes").asLong() > 0, "Linux has /proc/self/status: " + after);
    assertEquals(0, steady.get("host_growth").get("arrow_bytes").asLong(), "task memory given back: " + steady);
    assertTrue(steady.get("before").has("direct_bytes"), steady.toString());
    assertNull(cpu.get("steady"), "no GPU node, no steady figures: " + cpu);

    // The summary row of the case carries the GPU UDF's figures.
    SparkBench.Result g = results.get(0);
    assertEquals(0, g.steady().newVulkanObjects());
    assertTrue(g.steady().withinBudgets());
    assertNull(results.get(1).steady());
    assertFalse(lines.get(0).contains("\"steady\": null"));
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    try (java.io.PrintStream json = new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8)) {
      DataPathBench.summary(json, results, List.of(rows + " rows, parquet"));
    }
    JsonNode summary = JSON.readTree(out.toString(java.nio.charset.StandardCharsets.UTF_8).trim());
    assertEquals("data_path_summary", summary.get("bench").asText());
    assertEquals(0, summary.get("gpu_new_vulkan_objects").asLong(), summary.toString());
    assertTrue(summary.get("gpu_within_device_budgets").asBoolean(), summary.toString());
    assertEquals(0, summary.get("gpu_arrow_growth_bytes").asLong(), summary.toString());
    assertTrue(summary.has("gpu_rss_growth_bytes"), summary.toString());
  }
}
