package io.vkspark.spark.shim;

/**
 * What sets Spark 4.1 apart from the other 4.x lines, read by the shared {@link SparkShim}
 * (src/shim/spark4x/): one constant each, the values {@code SparkShim} publishes.
 */
public final class SparkLine {
  private SparkLine() {}

  /** This line, as in the plugin jar's name. */
  static final String LINE = "4.1";

  /** STANDARD JSON error messages (Spark 4.1's AnalysisException carries the message template). */
  static final boolean STANDARD_JSON_ERRORS = true;
}
