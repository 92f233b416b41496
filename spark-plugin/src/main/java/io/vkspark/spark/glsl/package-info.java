/**
 * GPU UDFs written in GLSL only, for users who write no Java: definitions from
 * {@code spark.vkspark.glsl} and {@code vkspark_define}, and their {@code call()}, which runs the
 * same SPIR-V one row at a time.
 *
 * <p>May import: shim, conf, kernel, api, executor.
 */
package io.vkspark.spark.glsl;
