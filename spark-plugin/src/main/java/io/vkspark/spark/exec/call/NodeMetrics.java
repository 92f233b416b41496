package io.vkspark.spark.exec.call;

import io.vkspark.spark.conf.MetricsLevel;

import java.io.Serializable;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.execution.metric.SQLMetric;

/**
 * One {@code VkGpuEval} node's SQL metrics, keyed by {@link VkMetric}: only those of the configured
 * level exist, and adding to one that does not is a no-op, so the code that counts never checks
 * the level. Serialized into each task with the node's closure (SQLMetric is an accumulator).
 */
public final class NodeMetrics implements Serializable {
  private static final long serialVersionUID = 1L;

  private final EnumMap<VkMetric, SQLMetric> metrics;

  private NodeMetrics(EnumMap<VkMetric, SQLMetric> metrics) {
    this.metrics = metrics;
  }

  /** The metrics of {@code level}, registered with {@code sc}. */
  public static NodeMetrics create(SparkContext sc, MetricsLevel level) {
    EnumMap<VkMetric, SQLMetric> m = new EnumMap<>(VkMetric.class);
    for (VkMetric k : VkMetric.at(level)) {
      m.put(k, k.kind().create(sc, k.description()));
    }
    return new NodeMetrics(m);
  }

  /** Adds {@code value} to {@code metric}; nothing when the level leaves it out or value is 0. */
  public void add(VkMetric metric, long value) {
    SQLMetric m = metrics.get(metric);
    if (m != null && value != 0) {
      m.add(value);
    }
  }

  /** By key, in enum order (the order Spark's UI shows). */
  public Map<String, SQLMetric> byKey() {
    Map<String, SQLMetric> out = new LinkedHashMap<>();
    metrics.forEach((k, m) -> out.put(k.key(), m));
    return Collections.unmodifiableMap(out);
  }
}
