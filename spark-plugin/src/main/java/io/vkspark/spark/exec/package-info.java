/**
 * Running GPU UDF calls: the {@code VkGpuEval} node and its per-partition iterator, a planned call
 * and where it runs ({@link io.vkspark.spark.exec.Placement}), Spark's vectors as GPU inputs, the
 * coalescer, verify mode and the node's metrics. Never imports {@code agg}: a fused aggregate
 * reaches the iterator through one hook declared here.
 *
 * <p>May import: shim, conf, kernel, api, cache, executor, glsl, udf.
 */
package io.vkspark.spark.exec;
