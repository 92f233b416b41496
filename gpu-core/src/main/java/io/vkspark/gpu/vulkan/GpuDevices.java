package io.vkspark.gpu.vulkan;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.internal.VulkanDevice;
import io.vkspark.gpu.internal.VulkanInstance;
import java.util.List;

/**
 * Where a {@link GpuDevice} comes from: the Vulkan devices of this machine, listed or opened. Apart
 * from {@code GpuDevice} so that the API ({@code io.vkspark.gpu}) names no implementation: the
 * Vulkan objects ({@code io.vkspark.gpu.internal}) implement it, and only this class reaches them.
 *
 * <pre>{@code
 * try (GpuDevice device = GpuDevices.open(DeviceOptions.defaults())) {
 *   System.out.println(device.info().summary());
 * }
 * }</pre>
 */
public final class GpuDevices {
  private GpuDevices() {}

  /**
   * Opens the device {@code options} select.
   *
   * @throws GpuException NO_VULKAN when no loader or driver is installed, NO_DEVICE when nothing
   *     matches the selector
   */
  public static GpuDevice open(DeviceOptions options) {
    return VulkanDevice.open(options);
  }

  /** Every Vulkan device on this machine, in Vulkan's order (opens and closes an instance). */
  public static List<DeviceInfo> list() {
    return VulkanInstance.listDevices();
  }

  /**
   * Whether the Vulkan loader finds the Khronos validation layer. Only tests and debugging use it
   * ({@link DeviceOptions#validation()}); without it a device asked for validation opens without
   * it and logs a warning, unless the environment variable VKSPARK_VALIDATION_REQUIRED is set.
   */
  public static boolean validationLayerInstalled() {
    return VulkanInstance.validationLayerInstalled();
  }
}
