/**
 * The plugin ({@link io.vkspark.spark.VkSparkPlugin}, the one setting a user needs:
 * {@code spark.plugins=io.vkspark.spark.VkSparkPlugin}) and the SQL extensions it installs, which
 * wire every package's rules into Spark.
 *
 * <p>May import: every vkspark package.
 */
package io.vkspark.spark;
