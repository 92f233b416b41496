/**
 * vkspark's GPU compute API, independent of how a device is reached: a device
 * ({@link io.vkspark.gpu.GpuDevice}) with its buffers, programs and kernels, prerecorded and timed
 * dispatch, output slots, the device's features and counters, and
 * {@link io.vkspark.gpu.GpuException} with its codes. It names no implementation: devices are opened
 * by {@code io.vkspark.gpu.vulkan.GpuDevices}, and {@code internal} implements these types with Vulkan.
 *
 * <p>May import: nothing of vkspark.
 */
package io.vkspark.gpu;
