package io.vkspark.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vkspark.examples.BlackScholes;
import io.vkspark.examples.SparkJobs;
import io.vkspark.spark.VkSparkPlugin;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/** The issue 13 breakdown reads real metrics of a real GPU query (its JSON parsed back by Jackson). */
class QueryProfileTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The module's test session when one is open (same settings as ExampleSpark), else one like it. */
  static SparkSession spark() {
    SparkSession spark = SparkSession.builder()
        .master("local[2]")
        .appName("vkspark-examples-tests")
        .config("spark.plugins", VkSparkPlugin.class.getName())
        .config("spark.vkspark.validation", "true")
        .config("spark.vkspark.fallback", "false")
        .config("spark.vkspark.placement", "gpu")
        .config("spark.vkspark.shaderCacheDir", Path.of("target", "shader-cache").toAbsolutePath().toString())
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate();
    SparkJobs.registerAll(spark);
    return spark;
  }

  @Test
  void breakdown_ofGpuBlackScholesOverParquet_hasEveryRowOnTheGpu_everyTask_andTheScan() throws Exception {
    SparkSession spark = spark();
    long rows = 20_000;
    Path dir = Files.createTempDirectory("vkspark-breakdown");
    Path files = SparkBench.writeOptions(spark, Map.of("parquet-dir", dir.toString()), rows, "options-xy", true);
    spark.read().parquet(files.toString()).createOrReplaceTempView("breakdown_pq");
    int files16 = spark.table("breakdown_pq").inputFiles().length;
    assertEquals(SparkBench.PARQUET_FILES, files16);
    QueryProfile.TaskRecorder recorder = QueryProfile.attach(spark);
    Map<String, Object> labels = new LinkedHashMap<>();
    labels.put("case", "black_scholes");
    labels.put("source", "parquet");

    QueryProfile.Breakdown b = QueryProfile.profile(spark, recorder,
        spark.sql("SELECT sum(black_scholes(s, k, t, r, v)) FROM breakdown_pq"), labels, 2);
    JsonNode j = JSON.readTree(Json.write(b.json()));

    double expected = 0;
    for (Row r : spark.table("breakdown_pq").select("s", "k", "t", "r", "v").collectAsList()) {
      expected += BlackScholes.price(r.getDouble(0), r.getDouble(1), r.getDouble(2), r.getDouble(3), r.getDouble(4));
    }
    double gpu = Double.parseDouble(j.get("result").asText().replaceAll("[\\[\\]]", ""));
    assertEquals(expected, gpu, 1e-9 * Math.abs(expected), "the profiled query's sum against call() on the CPU");
    assertEquals("breakdown", j.get("bench").asText());
    assertEquals("black_scholes", j.get("case").asText());
    assertEquals(rows, j.get("vkspark").get("gpuRows").asLong(), j.toString());
    assertEquals(0, j.get("vkspark").get("cpuRows").asLong(), j.toString());
    assertTrue(j.get("vkspark").get("uploadBytes").asLong() >= rows * 5 * 8, j.toString());
    double wall = j.get("wall_s").asDouble();
    assertTrue(wall > 0, j.toString());
    JsonNode tasks = j.get("tasks");
    // The partial aggregation's tasks (at least one per input split), in one stage: the GPU reduces each
    // task to one row and the final aggregate runs on the driver (VkDriverAggregate), no shuffle.
    assertTrue(tasks.get("count").asInt() >= 2, tasks.toString());
    assertEquals(1, tasks.get("stages").asInt(), tasks.toString());
    assertEquals(rows, tasks.get("input_records").asLong(), tasks.toString());
    double run = tasks.get("executor_run_s").get("sum_s").asDouble();
    assertEquals(run / 2, tasks.get("executor_run_s").get("per_slot_s").asDouble(), 1e-9);
    assertTrue(run > 0 && run / 2 <= wall * 1.01 + 0.01, "per-slot run time within the wall time: " + tasks);
    List<String> nodes = new ArrayList<>();
    j.get("plan").forEach(n -> nodes.add(n.get("node").asText()));
    assertTrue(nodes.contains(SparkJobs.GPU_NODE), nodes.toString());
    // spark.vkspark.fuseAggregates unset: the ungrouped sum of the UDF's result is reduced on the GPU
    assertTrue(nodes.contains("VkGpuAggregate"), "the partial sum fused onto the GPU node by default: " + nodes);
    assertTrue(nodes.contains("VkDriverAggregate"), "the final aggregate on the driver: " + nodes);
    assertEquals(0, nodes.stream().filter("HashAggregate"::equals).count(), "no aggregate is Spark's: " + nodes);
    JsonNode scan = null;
    for (JsonNode n : j.get("plan")) {
      if (n.get("node").asText().startsWith("Scan parquet")) {
        scan = n;
      }
    }
    assertTrue(scan != null && scan.get("metrics").get("scanTime").get("sum_s").asDouble() > 0, j.get("plan").toString());
    assertTrue(b.table().contains("VkGpuEval") && b.table().contains("GPU busy") && b.table().contains("executor run"),
        b.table());
  }

  @Test
  void json_escapesStrings_writesNonFiniteAsNull_andKeepsOrder() throws Exception {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("z", "a \"quoted\"\\ line\nand\ttab\u0001");
    m.put("a", List.of(1L, 0.25, Double.NaN, true));
    m.put("big", 1.5e-9);
    m.put("none", null);
    String line = Json.write(m);
    JsonNode j = JSON.readTree(line);
    assertEquals("a \"quoted\"\\ line\nand\ttab\u0001", j.get("z").asText());
    assertEquals(0.25, j.get("a").get(1).asDouble());
    assertTrue(j.get("a").get(2).isNull());
    assertEquals(1.5e-9, j.get("big").asDouble(), 1e-20);
    assertTrue(line.startsWith("{\"z\""), line);
    assertTrue(j.get("none").isNull());
  }
}
