package io.vkspark.spark.executor;

import io.vkspark.spark.conf.VkConf;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.DeviceType;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.spark.SparkEnv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CPU fallback of GLSL-only UDFs ({@code GlslUdf}): they have no Java {@code call()}, so where a
 * Java GPU UDF would run {@code call()}, their own SPIR-V runs on a CPU Vulkan device (Mesa's
 * lavapipe). Vulkan being vendor-neutral, the same compiled kernel runs there unchanged. The device
 * is this JVM's first Vulkan device of type CPU, opened on first use (whatever
 * {@code spark.vkspark.device} says: that setting picks the GPU) and closed with the executor.
 * Without one, the UDF fails with an error naming it, whose Fix is to install lavapipe.
 *
 * <p>Two ways in: {@code Task} evaluates a whole batch for the GPU node when it places a GLSL-only
 * call on the CPU, and {@code GlslRows.evalRow} evaluates one row for {@code call()} (calls Spark keeps in
 * its own operators, driver-side evaluation of local relations, verify mode). A row Spark evaluates
 * itself (in a join condition, a window, a grouping) runs on the JVM's own device when it has one
 * ({@link #rowDevice}): a GPU host needs no lavapipe for those. Verify mode's rows stay on the CPU
 * device ({@link #onCpuDevice}): checking the GPU against itself would prove nothing.
 */
public final class CpuVulkan {
  private static final Logger LOG = LoggerFactory.getLogger(CpuVulkan.class);
  private static ExecutorDevice device;
  private static GpuException unavailable;
  /** Rows this JVM computed on the CPU Vulkan device (batches and single rows). */
  private static final AtomicLong ROWS = new AtomicLong();
  /** Rows of {@code call()} this JVM computed on its own device ({@link ExecutorDevice}). */
  private static final AtomicLong OWN_DEVICE_ROWS = new AtomicLong();
  /** Set while verify mode runs {@code call()}: its rows must run on the CPU device. */
  private static final ThreadLocal<Boolean> CPU_ONLY = ThreadLocal.withInitial(() -> false);
  /** What closes with a device: the row runners of GLSL-only {@code call()}s ({@code glsl.GlslRows}). */
  private static final List<RowRunners> RUNNERS = new CopyOnWriteArrayList<>();

  private CpuVulkan() {}

  static final String FIX = "install Mesa's lavapipe (mesa-vulkan-drivers, libvulkan1) on every executor and on the "
      + "driver: it is the CPU Vulkan device that runs GLSL-only GPU UDFs where there is no usable GPU";

  /**
   * This JVM's CPU Vulkan device, opened on first use.
   *
   * @throws GpuException NO_DEVICE naming {@code udf} when there is no CPU Vulkan device
   */
  public static synchronized ExecutorDevice device(VkConf conf, String udf) {
    if (device != null && !device.isClosed()) {
      return device;
    }
    if (unavailable == null) {
      try {
        DeviceInfo cpu = rowDevice(Optional.empty(), devices(), d -> true).orElseThrow(() ->
            GpuException.of(Code.NO_DEVICE, "Vulkan has no CPU device (only " + devices().stream()
                .map(DeviceInfo::name).toList() + ")", FIX));
        device = ExecutorDevice.open(conf, String.valueOf(cpu.index()), executorId() + " (CPU Vulkan)");
        LOG.info("vkspark: GLSL-only GPU UDFs fall back to the CPU Vulkan device {}", cpu.summary());
        return device;
      } catch (GpuException | LinkageError e) {
        unavailable = e instanceof GpuException g ? g : GpuException.of(Code.NO_VULKAN, String.valueOf(e), FIX);
        LOG.warn("vkspark: no CPU Vulkan device for GLSL-only GPU UDFs: {}", e.getMessage());
      }
    }
    String why = cpuOnly() ? "verify mode checks its GPU rows against its SPIR-V run on a CPU Vulkan device"
        : "its call() runs its SPIR-V on a CPU Vulkan device where the GPU does not run it";
    throw new GpuException(Code.NO_DEVICE, "vkspark: GPU UDF '" + udf + "' is defined in GLSL only (no Java call()), so "
        + why + ", and this JVM has no CPU Vulkan device (Mesa's lavapipe; the GPU is not the missing piece): "
        + unavailable.what() + " Fix: " + FIX + ".", unavailable);
  }

  /**
   * Whether {@code e} (or a cause) is the error of {@link #device} finding no CPU Vulkan device:
   * verify mode then leaves GLSL-only rows unchecked rather than failing a query that runs without it.
   */
  public static boolean isMissing(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof GpuException g && g.code() == Code.NO_DEVICE && unavailable() != null) {
        return true;
      }
    }
    return false;
  }

  private static synchronized GpuException unavailable() {
    return unavailable;
  }

  /** Set by {@link #hideForTests}: the JVM's CPU Vulkan devices are not listed. */
  private static volatile boolean hidden;

  /**
   * For tests: {@code true} hides every CPU Vulkan device from this class, as on a GPU host without
   * Mesa's lavapipe (the NVIDIA H200); {@code false} shows them again. Closes the CPU device first.
   */
  public static void hideForTests(boolean on) {
    shutdown();
    synchronized (CpuVulkan.class) {
      hidden = on;
      hasCpuDevice = null;
    }
  }

  private static List<DeviceInfo> devices() {
    List<DeviceInfo> all = GpuDevices.list();
    return hidden ? all.stream().filter(d -> d.type() != DeviceType.CPU).toList() : all;
  }

  public static String executorId() {
    return SparkEnv.get() == null ? "driver" : SparkEnv.get().executorId();
  }

  /** Whether this JVM has a CPU Vulkan device, listed once. */
  private static Boolean hasCpuDevice;

  /**
   * Whether GLSL-only calls on {@code gpu} have a CPU path of their own: {@code gpu} is not itself a
   * CPU device, and this JVM has one (adaptive placement never moves them otherwise).
   */
  public static synchronized boolean besides(DeviceInfo gpu) {
    if (gpu.type() == DeviceType.CPU) {
      return false;
    }
    if (hasCpuDevice == null) {
      try {
        hasCpuDevice = devices().stream().anyMatch(d -> d.type() == DeviceType.CPU);
      } catch (GpuException | LinkageError e) {
        hasCpuDevice = false;
      }
    }
    return hasCpuDevice;
  }

  /** The CPU Vulkan device, if it is open. */
  public static synchronized Optional<ExecutorDevice> current() {
    return Optional.ofNullable(device);
  }

  /** Counts {@code n} rows computed on the CPU Vulkan device ({@code cpu}) or on the JVM's own device. */
  public static void count(boolean cpu, long n) {
    (cpu ? ROWS : OWN_DEVICE_ROWS).addAndGet(n);
  }

  /** Whether this thread runs verify mode's {@code call()}s, which must stay on the CPU device ({@link #onCpuDevice}). */
  public static boolean cpuOnly() {
    return CPU_ONLY.get();
  }

  /** Rows computed on the CPU Vulkan device in this JVM so far (for tests and logs). */
  public static long rows() {
    return ROWS.get();
  }

  /** Rows of {@code call()} computed on this JVM's own device so far (for tests and logs). */
  public static long ownDeviceRows() {
    return OWN_DEVICE_ROWS.get();
  }

  /** {@code body}, with any GLSL-only {@code call()} in it on the CPU Vulkan device (verify mode's reference). */
  public static <T> T onCpuDevice(Supplier<T> body) {
    boolean was = CPU_ONLY.get();
    CPU_ONLY.set(true);
    try {
      return body.get();
    } finally {
      CPU_ONLY.set(was);
    }
  }

  /**
   * Which device runs a row of {@code call()}: {@code own}, the JVM's own device (its GPU, or
   * lavapipe where that is the best it has), when it is open and has the kernel's features; else the
   * first CPU device of {@code devices}; empty when neither (the caller's error says to install lavapipe).
   */
  public static Optional<DeviceInfo> rowDevice(Optional<DeviceInfo> own, List<DeviceInfo> devices,
                                                   Predicate<DeviceInfo> runs) {
    if (own.isPresent() && runs.test(own.get())) {
      return own;
    }
    return devices.stream().filter(d -> d.type() == DeviceType.CPU && runs.test(d)).findFirst();
  }

  /**
   * Runners that hold buffers of a device: closed before that device closes, or before the CPU
   * device closes at shutdown (so a runner never outlives its device).
   */
  public interface RowRunners {
    /** Closes the runners on {@code dev} (its owner holds every permit, so none is running). */
    void closeOn(ExecutorDevice dev);

    /** Closes every runner (executor shutdown). */
    void closeAll();
  }

  /** Adds {@code r} to what closes with a device. */
  public static void register(RowRunners r) {
    RUNNERS.add(r);
  }

  /** Closes the row runners on {@code dev} before it closes (its owner holds every permit, so none is running). */
  static void beforeClose(ExecutorDevice dev) {
    RUNNERS.forEach(r -> r.closeOn(dev));
  }

  /** Closes the CPU Vulkan device (executor shutdown); the next use opens it again. */
  public static void shutdown() {
    // Runners first, without the class lock: they go before the device they run on.
    RUNNERS.forEach(RowRunners::closeAll);
    synchronized (CpuVulkan.class) {
      if (device != null) {
        device.close();
        device = null;
      }
      unavailable = null;
    }
  }

}
