package io.vkspark.gpu;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * How to open a {@link GpuDevice}.
 *
 * @param device which device: empty for the best one (discrete &gt; integrated &gt; CPU), a number
 *     for an index in Vulkan's order, a UUID, or a case-insensitive substring of the name
 * @param validation enable the Khronos validation layer and count what it reports (where it is not
 *     installed: a warning, or an error with VKSPARK_VALIDATION_REQUIRED set, as {@code make test} does)
 * @param transfers direct host writes where possible, or always staged
 * @param shaderCacheDir where compiled SPIR-V and the pipeline cache live; null disables them
 * @param robustBufferAccess enable robustBufferAccess when the device has it, so an
 *     out-of-bounds index in a user's kernel cannot touch memory outside its buffers
 * @param fenceTimeout how long a wait for the device may take before it is an error
 * @param memoryLimit most bytes of buffers this device may hold at once (0 for no limit beyond the
 *     device's own); reaching it is an OUT_OF_MEMORY error, which batch runners answer by splitting
 */
public record DeviceOptions(
    String device,
    boolean validation,
    TransferMode transfers,
    Path shaderCacheDir,
    boolean robustBufferAccess,
    Duration fenceTimeout,
    long memoryLimit) {

  public DeviceOptions {
    device = device == null ? "" : device.trim();
    Objects.requireNonNull(transfers, "transfers");
    Objects.requireNonNull(fenceTimeout, "fenceTimeout");
    if (fenceTimeout.isNegative() || fenceTimeout.isZero()) {
      throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
          "fence timeout " + fenceTimeout + " is not positive.", "use a positive timeout, e.g. 2 minutes.");
    }
    if (memoryLimit < 0) {
      throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
          "device memory limit " + memoryLimit + " is negative.", "use 0 (no limit) or a number of bytes.");
    }
  }

  /** The defaults: best device, no validation, AUTO transfers, cache under the user's cache dir. */
  public static DeviceOptions defaults() {
    return new DeviceOptions("", Boolean.getBoolean("vkspark.validation"), TransferMode.AUTO,
        defaultCacheDir(), true, Duration.ofMinutes(2), 0);
  }

  /** {@code $XDG_CACHE_HOME/vkspark} or {@code ~/.cache/vkspark}. */
  public static Path defaultCacheDir() {
    String xdg = System.getenv("XDG_CACHE_HOME");
    Path base = xdg != null && !xdg.isBlank()
        ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
    return base.resolve("vkspark");
  }

  public DeviceOptions withDevice(String selector) {
    return new DeviceOptions(selector, validation, transfers, shaderCacheDir, robustBufferAccess, fenceTimeout, memoryLimit);
  }

  public DeviceOptions withValidation(boolean on) {
    return new DeviceOptions(device, on, transfers, shaderCacheDir, robustBufferAccess, fenceTimeout, memoryLimit);
  }

  public DeviceOptions withTransfers(TransferMode mode) {
    return new DeviceOptions(device, validation, mode, shaderCacheDir, robustBufferAccess, fenceTimeout, memoryLimit);
  }

  public DeviceOptions withShaderCacheDir(Path dir) {
    return new DeviceOptions(device, validation, transfers, dir, robustBufferAccess, fenceTimeout, memoryLimit);
  }

  public DeviceOptions withRobustBufferAccess(boolean on) {
    return new DeviceOptions(device, validation, transfers, shaderCacheDir, on, fenceTimeout, memoryLimit);
  }

  public DeviceOptions withFenceTimeout(Duration timeout) {
    return new DeviceOptions(device, validation, transfers, shaderCacheDir, robustBufferAccess, timeout, memoryLimit);
  }

  public DeviceOptions withMemoryLimit(long bytes) {
    return new DeviceOptions(device, validation, transfers, shaderCacheDir, robustBufferAccess, fenceTimeout, bytes);
  }
}
