package io.vkspark.spark.agg;

import io.vkspark.spark.exec.call.VkMetric;

import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.execution.metric.SQLMetric;

/**
 * The one list of the {@code VkGpuAggregate} node's SQL metrics, as {@link VkMetric} is the
 * {@code VkGpuEval} node's: the key, how Spark aggregates and shows it, and what the Spark UI calls
 * it. The node and the aggregator that fills them come from here, and docs/METRICS.md is checked
 * against it, so they cannot drift apart. Enum order is the order the UI lists them in. Every one is
 * shown at every {@code spark.vkspark.metrics.level}: together they say which path ran.
 */
public enum AggregateMetric {
  NUM_OUTPUT_ROWS("numOutputRows", VkMetric.Kind.SUM, "partial aggregate rows emitted"),
  AGGREGATED_ROWS("aggregatedRows", VkMetric.Kind.SUM, "rows aggregated without leaving columns"),
  GPU_REDUCED_ROWS("gpuReducedRows", VkMetric.Kind.SUM, "rows aggregated on the GPU (results not read back)"),
  GPU_READBACK_BYTES("gpuReadbackBytes", VkMetric.Kind.SIZE, "GPU aggregate partials read back"),
  DEVICE_FILTERED_ROWS("deviceFilteredRows", VkMetric.Kind.SUM, "rows a filter dropped on the GPU");

  private final String key;
  private final VkMetric.Kind kind;
  private final String description;

  AggregateMetric(String key, VkMetric.Kind kind, String description) {
    this.key = key;
    this.kind = kind;
    this.description = description;
  }

  /** The key in the node's metrics map (and in {@code SparkPlan.metrics()}). */
  public String key() {
    return key;
  }

  /** The name the Spark UI shows. */
  public String description() {
    return description;
  }

  /** One node's metrics, registered with {@code sc}; an EnumMap, so it travels to the tasks as it is. */
  static EnumMap<AggregateMetric, SQLMetric> create(SparkContext sc) {
    EnumMap<AggregateMetric, SQLMetric> m = new EnumMap<>(AggregateMetric.class);
    for (AggregateMetric k : values()) {
      m.put(k, k.kind.create(sc, k.description));
    }
    return m;
  }

  /** {@code metrics} by key, in enum order (the order Spark's UI shows). */
  static Map<String, SQLMetric> byKey(Map<AggregateMetric, SQLMetric> metrics) {
    Map<String, SQLMetric> out = new LinkedHashMap<>();
    metrics.forEach((k, m) -> out.put(k.key, m));
    return out;
  }

  /** The metric as docs/METRICS.md lists it: {@code - `key`, "description" (kind)}. */
  String docLine() {
    return "- `" + key + "`, \"" + description + "\" (" + kind.name().toLowerCase(Locale.ROOT) + ")";
  }
}
