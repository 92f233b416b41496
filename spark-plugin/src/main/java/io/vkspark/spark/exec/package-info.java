/**
 * Running GPU UDF calls: the {@code VkGpuEval} node and its per-partition iterator, which routes each
 * batch (GPU, GPU reduction, CPU) and runs the GPU step, adaptive placement, the fused reduction's
 * steps and verify mode. What a planned call is lives in {@code exec.call}, Spark's vectors as GPU
 * inputs in {@code exec.input}, the CPU path in {@code exec.cpu}. Never imports {@code agg}: a fused
 * aggregate reaches the iterator through one hook declared here.
 *
 * <p>May import: shim, conf, kernel, api, cache, executor, glsl, udf, exec.call, exec.input, exec.cpu.
 */
package io.vkspark.spark.exec;
