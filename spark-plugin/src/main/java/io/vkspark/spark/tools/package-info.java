/**
 * Command-line tools for users of vkspark's Spark side: {@link io.vkspark.spark.tools.UdfCheck},
 * which says which UDFs of an application's jar translate to the GPU. Nothing in vkspark imports it.
 *
 * <p>May import: shim, conf, kernel, api, cache, executor, glsl, udf, exec.
 */
package io.vkspark.spark.tools;
