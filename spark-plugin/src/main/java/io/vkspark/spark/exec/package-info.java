/**
 * Running GPU UDF calls: the {@code VkGpuEval} node and its per-partition iterator, which routes each
 * batch (GPU, GPU reduction, CPU) and runs the GPU step, adaptive placement and the fused
 * reduction's steps. What a planned call is lives in {@code exec.call}, Spark's vectors as GPU
 * inputs in {@code exec.input}, the CPU path in {@code exec.cpu}, verify mode in {@code exec.verify}.
 * Never imports {@code agg}: a fused aggregate reaches the iterator through one hook declared here.
 *
 * <p>May import: shim, conf, kernel, api, cache, executor, glsl, udf, exec.call, exec.input, exec.cpu, exec.verify.
 */
package io.vkspark.spark.exec;
