package io.vkspark.gpu;

/**
 * What vkspark knows about a Vulkan physical device: identity (index, name, UUID, to match
 * Spark's GPU resource addresses), type, limits that shape kernels and batches, and the
 * features enabled on it.
 *
 * @param index position in Vulkan's enumeration order
 * @param uuid {@code VkPhysicalDeviceIDProperties.deviceUUID}, formatted 8-4-4-4-12
 * @param apiVersion the device's Vulkan version, e.g. {@code 1.3.230}
 * @param driver driver name and info, e.g. {@code llvmpipe: Mesa 22.3.6}
 * @param subgroupSize invocations per subgroup; workgroup sizes are multiples of it
 * @param maxWorkgroupCountX largest group count in x (65,535 on lavapipe)
 * @param maxWorkgroupSizeX largest {@code local_size_x}
 * @param maxStorageBufferRange largest storage-buffer binding in bytes; bounds batch capacity
 * @param timestampPeriodNs nanoseconds per timestamp tick; 0 when the queue has no timestamps
 * @param directHostWrites whether input buffers can be device memory the host writes directly
 *     (ReBAR on discrete GPUs, or unified memory)
 * @param deviceLocalBytes size of the largest device-local heap
 */
public record DeviceInfo(
    int index,
    String name,
    DeviceType type,
    String uuid,
    int vendorId,
    int deviceId,
    String apiVersion,
    String driver,
    int subgroupSize,
    int maxWorkgroupCountX,
    int maxWorkgroupSizeX,
    long maxStorageBufferRange,
    long maxUniformBufferRange,
    double timestampPeriodNs,
    DeviceFeatures features,
    boolean directHostWrites,
    long deviceLocalBytes) {

  /** Whether the compute queue records GPU timestamps. */
  public boolean timestamps() {
    return timestampPeriodNs > 0;
  }

  /** One line for logs: name, type, UUID, memory. */
  public String summary() {
    return String.format("#%d '%s' (%s, Vulkan %s, %s, %,d MiB device-local, uuid %s)",
        index, name, type.description(), apiVersion, driver, deviceLocalBytes >> 20, uuid);
  }
}
