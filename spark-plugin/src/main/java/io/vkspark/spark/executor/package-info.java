/**
 * The executor's devices: its one Vulkan device with the permits that bound GPU tasks and their
 * leases ({@link io.vkspark.spark.executor.ExecutorDevice}), the CPU Vulkan device of GLSL-only UDFs
 * ({@link io.vkspark.spark.executor.CpuVulkan}), and the footprint that checks for leaks.
 *
 * <p>May import: shim, conf, kernel, cache.
 */
package io.vkspark.spark.executor;
