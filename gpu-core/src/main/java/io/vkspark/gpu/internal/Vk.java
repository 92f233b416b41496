package io.vkspark.gpu.internal;

import static org.lwjgl.vulkan.VK10.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;

/** Every Vulkan result is checked here: a failure becomes a {@link GpuException} with its code. */
public final class Vk {
  private Vk() {}

  public static void check(int result, String call) {
    if (result != VK_SUCCESS) {
      throw error(result, call);
    }
  }

  public static GpuException error(int result, String call) {
    String name = resultName(result);
    return switch (result) {
      case VK_ERROR_OUT_OF_DEVICE_MEMORY, VK_ERROR_OUT_OF_HOST_MEMORY -> GpuException.of(Code.OUT_OF_MEMORY,
          call + " failed with " + name + ".",
          "use smaller batches (spark.vkspark.batchRows) or fewer concurrent GPU tasks.");
      case VK_ERROR_DEVICE_LOST -> GpuException.of(Code.DEVICE_LOST,
          call + " failed with VK_ERROR_DEVICE_LOST: the driver reset or lost the device.",
          "close this GpuDevice and open a new one; check the driver log (dmesg) for the cause.");
      case VK_ERROR_INCOMPATIBLE_DRIVER, VK_ERROR_INITIALIZATION_FAILED -> GpuException.of(Code.NO_VULKAN,
          call + " failed with " + name + ": no usable Vulkan driver.",
          "install a Vulkan driver (Debian: apt-get install libvulkan1 mesa-vulkan-drivers) or set VK_DRIVER_FILES.");
      case VK_ERROR_LAYER_NOT_PRESENT -> GpuException.of(Code.NO_VULKAN,
          call + " failed with " + name + ": the Khronos validation layer is not installed.",
          "install it (Debian: apt-get install vulkan-validationlayers) or turn validation off.");
      default -> GpuException.of(Code.VULKAN, call + " failed with " + name + " (" + result + ").",
          "this is a driver or vkspark bug; run with validation on (-Dvkspark.validation=true) and report the messages.");
    };
  }

  public static String resultName(int result) {
    return switch (result) {
      case VK_SUCCESS -> "VK_SUCCESS";
      case VK_NOT_READY -> "VK_NOT_READY";
      case VK_TIMEOUT -> "VK_TIMEOUT";
      case VK_INCOMPLETE -> "VK_INCOMPLETE";
      case VK_ERROR_OUT_OF_HOST_MEMORY -> "VK_ERROR_OUT_OF_HOST_MEMORY";
      case VK_ERROR_OUT_OF_DEVICE_MEMORY -> "VK_ERROR_OUT_OF_DEVICE_MEMORY";
      case VK_ERROR_INITIALIZATION_FAILED -> "VK_ERROR_INITIALIZATION_FAILED";
      case VK_ERROR_DEVICE_LOST -> "VK_ERROR_DEVICE_LOST";
      case VK_ERROR_MEMORY_MAP_FAILED -> "VK_ERROR_MEMORY_MAP_FAILED";
      case VK_ERROR_LAYER_NOT_PRESENT -> "VK_ERROR_LAYER_NOT_PRESENT";
      case VK_ERROR_EXTENSION_NOT_PRESENT -> "VK_ERROR_EXTENSION_NOT_PRESENT";
      case VK_ERROR_FEATURE_NOT_PRESENT -> "VK_ERROR_FEATURE_NOT_PRESENT";
      case VK_ERROR_INCOMPATIBLE_DRIVER -> "VK_ERROR_INCOMPATIBLE_DRIVER";
      case VK_ERROR_TOO_MANY_OBJECTS -> "VK_ERROR_TOO_MANY_OBJECTS";
      case VK_ERROR_FORMAT_NOT_SUPPORTED -> "VK_ERROR_FORMAT_NOT_SUPPORTED";
      case VK_ERROR_FRAGMENTED_POOL -> "VK_ERROR_FRAGMENTED_POOL";
      default -> "VkResult " + result;
    };
  }

  /** {@code major.minor.patch} of a packed Vulkan version. */
  public static String version(int v) {
    return VK_API_VERSION_MAJOR(v) + "." + VK_API_VERSION_MINOR(v) + "." + VK_API_VERSION_PATCH(v);
  }
}
