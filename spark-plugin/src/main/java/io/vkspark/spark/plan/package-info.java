/**
 * Planning GPU UDF calls on the driver: analysis-time type checks, where each call runs
 * ({@link io.vkspark.spark.plan.GpuPlanner}), where calls sit and under which guard, the physical
 * rule that inserts {@code VkGpuEval} nodes, calls left in Spark's operators, and EXPLAIN.
 *
 * <p>May import: shim, conf, kernel, api, cache, executor, glsl, udf, exec.call, exec.
 */
package io.vkspark.spark.plan;
