/**
 * The CPU path inside the {@code VkGpuEval} node: a batch's calls computed with the UDFs'
 * {@code call()} ({@link io.vkspark.spark.exec.cpu.CpuBatchStep}), compiled projections per call, the
 * rows a kernel handed back, and GLSL-only UDFs run on the CPU Vulkan device. Its own package
 * because it is what runs where the GPU does not, and it reads calls and inputs but never the GPU
 * step or the router that chose it.
 *
 * <p>May import: shim, conf, executor, exec.call, exec.input.
 */
package io.vkspark.spark.exec.cpu;
