/**
 * Where devices come from: {@link io.vkspark.gpu.vulkan.GpuDevices} lists and opens the Vulkan
 * devices of this machine. The one exported package that reaches the implementation, so that the
 * API ({@code io.vkspark.gpu}) names none.
 *
 * <p>May import: root, internal.
 */
package io.vkspark.gpu.vulkan;
