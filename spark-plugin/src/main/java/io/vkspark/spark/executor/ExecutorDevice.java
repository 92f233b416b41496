package io.vkspark.spark.executor;

import io.vkspark.spark.conf.VkConf;

import io.vkspark.gpu.DeviceType;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.column.cache.DeviceColumnCache;
import io.vkspark.gpu.vulkan.GpuDevices;
import io.vkspark.spark.cache.CacheMemory;
import io.vkspark.spark.conf.Setting;
import io.vkspark.spark.conf.Settings;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor's one Vulkan device, its column runtime and the permits that bound concurrent GPU
 * tasks ({@link #lease()}). Opened by the executor plugin ({@code VkSparkPlugin}), or on first use where the
 * plugin did not run; when the device cannot be opened, the reason is kept so every GPU UDF can
 * fall back to the CPU saying why, while the executor keeps running.
 */
public final class ExecutorDevice {
  private static final Logger LOG = LoggerFactory.getLogger(ExecutorDevice.class);
  private static ExecutorDevice current;
  private static String unavailable;
  private static boolean initialized;
  /** Spark's gpu resource address given to {@link #init}, kept to reopen the same device after a loss. */
  private static String lastGpuAddress;
  private static long devicesLost;

  private final GpuDevice device;
  private final ColumnRuntime runtime;
  private final GpuPermits permits;
  private final String executorId;
  /** {@code spark.vkspark.cache.deviceMemory} of the settings the device was opened with (static). */
  private final Setting.Share.Amount cacheMemory;
  /** How long closing waits for running GPU tasks to give their permits back. */
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(60);
  /** The same at JVM exit: a Worker sends SIGKILL 10 s after its SIGTERM. */
  private static final Duration EXIT_CLOSE_WAIT = Duration.ofSeconds(5);
  private static boolean exitHookAdded;
  /** Device copies of cached columns ({@code spark.vkspark.cache.device}), made on first use; null until then. */
  private DeviceColumnCache deviceCache;
  /** Removes {@link #deviceCache}'s listener for freed cached batches. */
  private Runnable stopListening;

  private ExecutorDevice(GpuDevice device, VkConf conf, String executorId) {
    int concurrentTasks = conf.concurrentGpuTasks();
    this.device = device;
    this.runtime = new ColumnRuntime(device, ColumnRuntime.DEFAULT_MAX_IDLE_BYTES, concurrentTasks); // a set per permit stays
    this.permits = new GpuPermits(concurrentTasks);
    this.executorId = executorId;
    this.cacheMemory = conf.cacheDeviceMemory();
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
    if (!exitHookAdded) {
      // Spark ends an executor with "shutdown" from the driver and a SIGTERM from the Worker at the
      // same moment: Executor.stop() then runs on its own thread while the JVM exits, and the stop
      // hook Spark registers returns at once because a stop is already under way. A JVM that exits
      // with the device open (or half closed) dies in NVIDIA's driver (SIGABRT, exit status 134,
      // seen on the two-GPU H200 cluster run); this hook closes the device, or waits for the close
      // in progress (shutdown() is synchronized), before the JVM halts.
      Runtime.getRuntime().addShutdownHook(new Thread(() -> shutdown(EXIT_CLOSE_WAIT), "vkspark-executor-gpu-exit"));
      exitHookAdded = true;
    }
    String selector = gpuAddress != null && !gpuAddress.isBlank() ? gpuAddress : conf.device();
    try {
      GpuDevice device = GpuDevices.open(conf.deviceOptions(selector));
      current = new ExecutorDevice(device, conf, executorId);
      LOG.info("vkspark executor {} uses Vulkan device {} ({} concurrent GPU tasks)", executorId,
          device.info().summary(), conf.concurrentGpuTasks());
    } catch (GpuException | LinkageError e) {
      unavailable = e instanceof GpuException g ? g.what() : String.valueOf(e.getMessage());
      LOG.warn("vkspark executor {} has no usable Vulkan device; GPU UDFs will run on the CPU: {}", executorId, e.getMessage());
    }
  }

  /**
   * A device of this JVM besides the executor's own, selected by {@code selector} (the CPU Vulkan
   * device of GLSL-only UDFs, {@link CpuVulkan}); its owner closes it with {@link #close()}.
   */
  static ExecutorDevice open(VkConf conf, String selector, String executorId) {
    GpuDevice device = GpuDevices.open(conf.deviceOptions(selector));
    return new ExecutorDevice(device, conf, executorId);
  }

  /** Closes a device made by {@link #open} once its tasks have given their permits back. */
  void close() {
    permits.closeWhenIdle(CLOSE_WAIT, this::closeRuntimeAndDevice);
  }

  /** The device of this JVM, opening it with {@code conf} if nothing has yet. */
  public static synchronized Optional<ExecutorDevice> get(VkConf conf, String executorId) {
    if (!initialized) {
      init(conf, executorId, lastGpuAddress);
    }
    return Optional.ofNullable(current);
  }

  /** The device of this JVM, if one is open (does not open one). */
  public static synchronized Optional<ExecutorDevice> current() {
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
  public static void shutdown() {
    shutdown(CLOSE_WAIT);
  }

  private static synchronized void shutdown(Duration wait) {
    if (current != null) {
      ExecutorDevice g = current;
      current = null;
      boolean quiet = g.permits.closeWhenIdle(wait, g::closeRuntimeAndDevice);
      if (!quiet) {
        LOG.warn("vkspark executor {}: GPU tasks still running after {} s; closed the device anyway", g.executorId,
            wait.toSeconds());
      }
    }
    unavailable = null;
    initialized = false;
  }

  /** Closes the row runners on it, the cached columns' copies, the column runtime, then the device (even when the runtime fails to close). */
  private void closeRuntimeAndDevice() {
    try {
      closeDeviceCache();
      CpuVulkan.beforeClose(this); // row runners of GLSL-only call()s made on this device
      runtime.close();
    } catch (RuntimeException e) {
      LOG.warn("vkspark executor {}: closing the column runtime failed: {}", executorId, e.toString());
    } finally {
      device.close();
      LOG.info("vkspark executor {} closed its Vulkan device", executorId);
    }
  }

  /**
   * The device of {@code lost} failed with DEVICE_LOST (or hung): the next task opens the device
   * again. Tasks still using the old one fail with DEVICE_LOST themselves (a lost device fails
   * every wait at once). A lost device is closed in the background once its tasks are gone; a hung
   * one (its kernel would not stop) is left open, since closing it would wait on the hang.
   */
  public static synchronized void deviceLost(ExecutorDevice lost, GpuException cause) {
    if (current != lost) {
      return; // already replaced
    }
    devicesLost++;
    current = null;
    initialized = false;
    lost.permits.markClosed();
    boolean reallyLost = lost.device.isLost();
    LOG.error("vkspark executor {}: Vulkan device '{}' {}; later tasks open it again: {}", lost.executorId,
        lost.device.info().name(), reallyLost ? "was lost" : "hung", cause.getMessage());
    if (!reallyLost) {
      return;
    }
    // Once every task of the old device is done (or after CLOSE_WAIT).
    Thread closer = new Thread(() -> lost.permits.closeWhenIdle(CLOSE_WAIT, lost::closeRuntimeAndDevice),
        "vkspark-close-lost-device");
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

  /**
   * Whether GPU UDFs over vkspark's cached columns read them from device copies
   * ({@code spark.vkspark.cache.device} of {@code conf}). Unset, a GPU does: a query then reads its
   * columns from device memory instead of copying them over PCIe. A CPU Vulkan device (lavapipe)
   * does not, as its device memory is host memory: a copy would double the cache's footprint for a
   * memcpy saved.
   */
  public boolean cachesColumns(VkConf conf) {
    return conf.cacheDevice() != null ? conf.cacheDevice() : device.info().type() != DeviceType.CPU;
  }

  /**
   * The device copies of cached columns on this device, made on first use with the budget
   * {@code spark.vkspark.cache.deviceMemory} (static: the application's conf, as the device was opened) sets. The copies of a
   * cached batch are freed with its host memory (unpersist, eviction), and all of them with the
   * device (executor shutdown, a lost device); a new device starts empty.
   */
  public synchronized DeviceColumnCache deviceCache() {
    if (deviceCache == null) {
      long deviceBytes = device.info().deviceLocalBytes();
      long limit = device.options().memoryLimit();
      long budget = cacheMemory.of(limit > 0 ? Math.min(limit, deviceBytes) : deviceBytes);
      deviceCache = new DeviceColumnCache(device, budget);
      stopListening = CacheMemory.onFree(deviceCache::drop);
      LOG.info("vkspark executor {}: cached columns may take {} bytes of device memory ({})", executorId, budget,
          Settings.CACHE_DEVICE_MEMORY.key());
    }
    return deviceCache;
  }

  private synchronized void closeDeviceCache() {
    if (deviceCache != null) {
      stopListening.run();
      deviceCache.close();
    }
  }

  /**
   * One GPU permit for this task, for try-with-resources: {@code try (GpuLease lease = gpu.lease())}.
   * Waits while {@code spark.vkspark.concurrentGpuTasks} tasks hold one.
   *
   * @throws io.vkspark.gpu.GpuException CANCELLED when the waiting task is killed; CLOSED when this
   *     device was closed meanwhile (executor shutdown, or the device was lost)
   */
  public GpuLease lease() {
    return permits.lease();
  }

  /** GPU permits free now. */
  public int availablePermits() {
    return permits.available();
  }

  /** Whether this device was closed or given up after a loss (tasks holding it must stop using it). */
  public boolean isClosed() {
    return permits.isClosed();
  }
}
