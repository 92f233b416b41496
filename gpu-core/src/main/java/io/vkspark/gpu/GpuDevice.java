package io.vkspark.gpu;

import java.util.List;

/**
 * One Vulkan device opened for compute: instance, physical and logical device, a compute queue,
 * the VMA allocator, the shader compiler and the pipeline cache. A Spark executor holds one; it is
 * opened by {@code io.vkspark.gpu.vulkan.GpuDevices}.
 *
 * <p>Thread-safe: buffers, kernels and recordings may be created and replayed from many threads;
 * submissions to the queue are serialized. {@link #close()} waits for the device, closes every
 * object still open (logging how many) and destroys the device; it is idempotent, and any use
 * afterwards is a {@code CLOSED} error.
 *
 * <pre>{@code
 * try (GpuDevice device = GpuDevices.open(DeviceOptions.defaults());
 *      Kernel k = device.load(program)) {
 *   List<ByteBuffer> out = k.dispatch(List.of(x), Groups.of(16));
 * }
 * }</pre>
 */
public interface GpuDevice extends AutoCloseable {
  DeviceInfo info();

  DeviceOptions options();

  /** Allocates a buffer of {@code bytes} bytes for {@code role}. */
  GpuBuffer createBuffer(long bytes, BufferRole role);

  /** Compiles (or takes from the caches) and loads a program. */
  Kernel load(Program program);

  /** Records several dispatch steps into one command buffer. */
  PrerecordedDispatch prerecord(List<DispatchStep> steps);

  DeviceCounters counters();

  /** Errors the validation layer reported so far (0 without validation). */
  long validationErrors();

  /** The validation layer's error and warning messages so far (bounded). */
  List<String> validationMessages();

  boolean isClosed();

  /**
   * Whether the device reported {@code VK_ERROR_DEVICE_LOST}; every later submission and wait
   * fails with DEVICE_LOST. Close it and open a new one.
   */
  boolean isLost();

  /**
   * Iterations after which this device's driver stops a loop and carries on with the values it
   * has (lavapipe: 65,535), or 0 when a 200,000-iteration probe ran in full. Measured by a probe
   * kernel on the first call, then remembered.
   */
  int loopLimit();

  /**
   * Whether this device's double {@code /} and {@code sqrt} give Java's bits, and whether kernels
   * loaded here use vkspark's correctly rounded ones instead; probed when the device opens.
   */
  DoubleRounding doubleRounding();

  @Override
  void close();
}
