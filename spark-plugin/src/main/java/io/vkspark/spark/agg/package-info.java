/**
 * Fused aggregation: aggregates over GPU UDF results computed where the UDFs run. The logical
 * rule that pulls calls out of aggregates, the physical rule that fuses a partial aggregate onto
 * its {@code VkGpuEval} node, the decision to reduce on the GPU or fold on the host, the aggregate
 * node and its host fold. Depends on {@code exec} through one narrow hook.
 *
 * <p>May import: shim, conf, kernel, api, cache, executor, exec.call, exec, plan.
 */
package io.vkspark.spark.agg;
