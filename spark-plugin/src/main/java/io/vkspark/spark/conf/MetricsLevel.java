package io.vkspark.spark.conf;

import java.util.Locale;

/** Which metrics a node shows ({@code spark.vkspark.metrics.level}). */
public enum MetricsLevel {
  /** what a Spark user tunes or checks with: rows, bytes, times, memory, verification */
  ESSENTIAL,
  /** also vkspark internals: dispatches, host copies, buffer reuse */
  DEBUG;

  /** Whether a node at this level shows a metric of level {@code m}. */
  public boolean shows(MetricsLevel m) {
    return m.ordinal() <= ordinal();
  }

  public String value() {
    return name().toLowerCase(Locale.ROOT);
  }
}
