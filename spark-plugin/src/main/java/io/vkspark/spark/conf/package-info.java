/**
 * The {@code spark.vkspark.*} settings: each declared once ({@code Settings}), parsed and checked
 * into one immutable {@link io.vkspark.spark.conf.VkConf} per session or executor.
 *
 * <p>May import: shim.
 */
package io.vkspark.spark.conf;
