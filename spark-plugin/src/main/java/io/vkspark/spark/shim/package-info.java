/**
 * What differs per Spark line (3.5, 4.0, 4.1, 4.2) and per Scala version: one class per difference,
 * compiled from {@code src/shim/<line>} by the line's Maven profile ({@code SparkShim} holds the
 * Catalyst calls, {@code Scala} the collection bridges). Nothing else in vkspark names a Spark
 * version. {@code PlanNode}, the same on every line, is the base of vkspark's physical nodes over the
 * per-Scala {@code UnaryExecShim}.
 *
 * <p>May import: nothing of vkspark.
 */
package io.vkspark.spark.shim;
