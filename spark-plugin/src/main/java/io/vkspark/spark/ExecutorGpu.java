package io.vkspark.spark;

import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.ColumnRuntime;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor's one Vulkan device, its column runtime and the semaphore that bounds concurrent
 * GPU tasks. Opened by the executor plugin ({@link VkSparkPlugin}), or on first use where the
 * plugin did not run; when the device cannot be opened, the reason is kept so every GPU UDF can
 * fall back to the CPU saying why, while the executor keeps running.
 */
public final class ExecutorGpu {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutorGpu.class);
  private static ExecutorGpu current;
  private static String unavailable;
  private static boolean initialized;
  /** Spark's gpu resource address given to {@link #init}, kept to reopen the same device after a loss. */
  private static String lastGpuAddress;
  private static long devicesLost;

  private final GpuDevice device;
  private final ColumnRuntime runtime;
  private final Semaphore semaphore;
  private final String executorId;
  private final int concurrentTasks;
  private volatile boolean closed;

  private ExecutorGpu(GpuDevice device, int concurrentTasks, String executorId) {
    this.device = device;
    this.runtime = new ColumnRuntime(device);
    this.semaphore = new Semaphore(concurrentTasks, true);
    this.executorId = executorId;
    this.concurrentTasks = concurrentTasks;
  }

  /**
   * Opens the device once per JVM. {@code gpuAddress} is Spark's {@code gpu} resource address for
   * this executor, when one is assigned; it selects the device instead of
   * {@code spark.vkspark.device}.
   */
  public static synchronized void init(VkConf conf, String executorId, String gpuAddress) {
    if (initialized) {
      return;
    }
    initialized = true;
    lastGpuAddress = gpuAddress;
    String selector = gpuAddress != null && !gpuAddress.isBlank() ? gpuAddress : conf.device();
    try {
      GpuDevice device = GpuDevice.open(conf.deviceOptions(selector));
      current = new ExecutorGpu(device, conf.concurrentGpuTasks(), executorId);
      LOG.info("vkspark executor {} uses Vulkan device {} ({} concurrent GPU tasks)", executorId,
          device.info().summary(), conf.concurrentGpuTasks());
    } catch (GpuException | LinkageError e) {
      unavailable = e instanceof GpuException g ? g.what() : String.valueOf(e.getMessage());
      LOG.warn("vkspark executor {} has no usable Vulkan device; GPU UDFs will run on the CPU: {}", executorId, e.getMessage());
    }
  }

  /** The device of this JVM, opening it with {@code conf} if nothing has yet. */
  public static synchronized Optional<ExecutorGpu> get(VkConf conf, String executorId) {
    if (!initialized) {
      init(conf, executorId, lastGpuAddress);
    }
    return Optional.ofNullable(current);
  }

  /** The device of this JVM, if one is open (does not open one). */
  public static synchronized Optional<ExecutorGpu> current() {
    return Optional.ofNullable(current);
  }

  /** Why no device is open, if opening failed: the error's {@link GpuException#what()}, without its fix. */
  public static synchronized Optional<String> unavailableReason() {
    return Optional.ofNullable(unavailable);
  }

  /**
   * Closes the device (executor shutdown); a later {@link #get} opens a new one. Spark may still be
   * running tasks when it stops its plugins, so this first takes every GPU permit (waiting up to a
   * minute): no task is then copying into or waiting on GPU memory while it is freed.
   */
  public static synchronized void shutdown() {
    if (current != null) {
      ExecutorGpu g = current;
      int permits = g.concurrentTasks;
      boolean quiet = false;
      try {
        quiet = g.semaphore.tryAcquire(permits, 60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (!quiet) {
        LOG.warn("vkspark executor {}: GPU tasks still running after 60 s; closing the device anyway", g.executorId);
      }
      g.closed = true;
      try {
        g.runtime.close();
      } catch (RuntimeException e) {
        LOG.warn("vkspark executor {}: closing the column runtime failed: {}", g.executorId, e.toString());
      } finally {
        g.device.close();
        LOG.info("vkspark executor {} closed its Vulkan device", g.executorId);
        current = null;
        // Wake every task still waiting for this device: it finds it closed and fails fast.
        g.semaphore.release(Integer.MAX_VALUE / 2);
      }
    }
    unavailable = null;
    initialized = false;
  }

  /**
   * The device of {@code lost} failed with DEVICE_LOST (or hung): the next task opens the device
   * again. Tasks still using the old one fail with DEVICE_LOST themselves (a lost device fails
   * every wait at once). A lost device is closed in the background once its tasks are gone; a hung
   * one (its kernel would not stop) is left open, since closing it would wait on the hang.
   */
  public static synchronized void deviceLost(ExecutorGpu lost, GpuException cause) {
    if (current != lost) {
      return; // already replaced
    }
    devicesLost++;
    current = null;
    initialized = false;
    lost.closed = true;
    boolean reallyLost = lost.device.isLost();
    LOG.error("vkspark executor {}: Vulkan device '{}' {}; later tasks open it again: {}", lost.executorId,
        lost.device.info().name(), reallyLost ? "was lost" : "hung", cause.getMessage());
    if (!reallyLost) {
      return;
    }
    Thread closer = new Thread(() -> {
      try {
        lost.semaphore.tryAcquire(lost.concurrentTasks, 60, TimeUnit.SECONDS); // every task of the old device is done
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      try {
        lost.runtime.close();
      } catch (RuntimeException e) {
        LOG.warn("vkspark: closing the lost device's column runtime: {}", e.toString());
      } finally {
        lost.device.close();
        lost.semaphore.release(Integer.MAX_VALUE / 2); // wake tasks still waiting: they find it closed
      }
    }, "vkspark-close-lost-device");
    closer.setDaemon(true);
    closer.start();
  }

  /** How many devices this JVM replaced after a loss or hang. */
  public static synchronized long devicesLost() {
    return devicesLost;
  }

  public GpuDevice device() {
    return device;
  }

  public ColumnRuntime runtime() {
    return runtime;
  }

  public Semaphore semaphore() {
    return semaphore;
  }

  /** Whether {@link #shutdown()} closed this device (tasks holding it must stop using it). */
  public boolean isClosed() {
    return closed;
  }
}
