package io.vkspark.spark.shim;

/**
 * What sets Spark 4.0 apart from the other 4.x lines, read by the shared {@link SparkShim}
 * (src/shim/spark4x/): one constant each, the values {@code SparkShim} publishes.
 */
public final class SparkLine {
  private SparkLine() {}

  /** This line, as in the plugin jar's name. */
  static final String LINE = "4.0";

  /** STANDARD JSON error messages (the constructor before 4.1 cannot carry the message template). */
  static final boolean STANDARD_JSON_ERRORS = false;
}
