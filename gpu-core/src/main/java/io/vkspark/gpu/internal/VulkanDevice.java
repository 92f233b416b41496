package io.vkspark.gpu.internal;

import static org.lwjgl.system.MemoryStack.stackPush;
import static org.lwjgl.util.vma.Vma.*;
import static org.lwjgl.vulkan.VK10.*;
import static org.lwjgl.vulkan.VK12.VK_API_VERSION_1_2;

import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.DeviceCounters;
import io.vkspark.gpu.DeviceFeatures;
import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.DispatchStep;
import io.vkspark.gpu.DoubleRounding;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.PrerecordedDispatch;
import io.vkspark.gpu.Program;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.LongBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.system.MemoryUtil;
import org.lwjgl.util.vma.VmaAllocatorCreateInfo;
import org.lwjgl.util.vma.VmaVulkanFunctions;
import org.lwjgl.vulkan.VkCommandPoolCreateInfo;
import org.lwjgl.vulkan.VkDevice;
import org.lwjgl.vulkan.VkDeviceCreateInfo;
import org.lwjgl.vulkan.VkDeviceQueueCreateInfo;
import org.lwjgl.vulkan.VkPhysicalDeviceFeatures2;
import org.lwjgl.vulkan.VkPhysicalDeviceVulkan11Features;
import org.lwjgl.vulkan.VkPhysicalDeviceVulkan12Features;
import org.lwjgl.vulkan.VkPipelineCacheCreateInfo;
import org.lwjgl.vulkan.VkQueue;
import org.lwjgl.vulkan.VkSubmitInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The Vulkan implementation of {@link GpuDevice}; see there for the contract. */
public final class VulkanDevice implements GpuDevice {
  private static final Logger LOG = LoggerFactory.getLogger(VulkanDevice.class);

  /** Something the device owns and closes at the latest when it closes itself. */
  interface Child {
    /** Lower closes first: recordings before kernels before buffers. */
    int closeOrder();

    void close();
  }

  private final DeviceOptions options;
  private final VulkanInstance instance;
  private final DeviceInfo info;
  final VkDevice handle;
  final VkQueue queue;
  final long allocator;
  final long commandPool;
  final long pipelineCache;
  final int timestampValidBits;
  final Counters counters = new Counters();
  private final Path pipelineCacheFile;
  private final Object queueLock = new Object();
  final Object poolLock = new Object();
  private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
  private final Set<Child> children = ConcurrentHashMap.newKeySet();
  private final Set<VulkanKernel> kernels = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;
  private final long validationErrorsBefore;
  private final int messagesBefore;
  private volatile String lost;
  private volatile int loopLimit = -1;
  /** Null while the probe runs (its kernels load unchanged), then what it found. */
  private volatile DoubleRounding doubleRounding;
  private volatile KernelPasses.Float32Mode float32Mode = KernelPasses.Float32Mode.NATIVE;
  private volatile boolean simulateFlush;
  private volatile long errorsAtClose;
  private volatile List<String> messagesAtClose;
  /** Made with the first device copies ({@link #copier}). */
  private DeviceCopier copier;

  private VulkanDevice(DeviceOptions options, VulkanInstance instance, VulkanInstance.Physical physical) {
    this.options = options;
    this.instance = instance;
    this.validationErrorsBefore = instance.validationErrors();
    this.messagesBefore = instance.messageCount();
    this.timestampValidBits = physical.timestampValidBits();
    DeviceFeatures has = physical.info().features();
    DeviceFeatures enabled = new DeviceFeatures(has.shaderInt64(), has.shaderFloat64(), has.storage8Bit(),
        has.storage16Bit(), has.robustBufferAccess() && options.robustBufferAccess(), has.hostQueryReset(),
        has.denormPreserveFloat32(), has.denormPreserveFloat64());
    DeviceInfo p = physical.info();
    this.info = new DeviceInfo(p.index(), p.name(), p.type(), p.uuid(), p.vendorId(), p.deviceId(),
        p.apiVersion(), p.driver(), p.subgroupSize(), p.maxWorkgroupCountX(), p.maxWorkgroupSizeX(),
        p.maxStorageBufferRange(), p.maxUniformBufferRange(), p.timestampPeriodNs(), enabled,
        p.directHostWrites(), p.deviceLocalBytes());
    try (MemoryStack stack = stackPush()) {
      VkDeviceQueueCreateInfo.Buffer qci = VkDeviceQueueCreateInfo.calloc(1, stack)
          .sType$Default()
          .queueFamilyIndex(physical.queueFamily())
          .pQueuePriorities(stack.floats(1f));
      VkPhysicalDeviceVulkan12Features f12 = VkPhysicalDeviceVulkan12Features.calloc(stack).sType$Default()
          .storageBuffer8BitAccess(enabled.storage8Bit())
          .hostQueryReset(enabled.hostQueryReset());
      VkPhysicalDeviceVulkan11Features f11 = VkPhysicalDeviceVulkan11Features.calloc(stack).sType$Default()
          .storageBuffer16BitAccess(enabled.storage16Bit())
          .pNext(f12.address());
      VkPhysicalDeviceFeatures2 f = VkPhysicalDeviceFeatures2.calloc(stack).sType$Default().pNext(f11.address());
      f.features()
          .shaderInt64(enabled.shaderInt64())
          .shaderFloat64(enabled.shaderFloat64())
          .robustBufferAccess(enabled.robustBufferAccess());
      VkDeviceCreateInfo ci = VkDeviceCreateInfo.calloc(stack).sType$Default()
          .pNext(f.address())
          .pQueueCreateInfos(qci);
      PointerBuffer pp = stack.mallocPointer(1);
      Vk.check(vkCreateDevice(physical.handle(), ci, null, pp), "vkCreateDevice");
      this.handle = new VkDevice(pp.get(0), physical.handle(), ci, physical.apiVersion());
      vkGetDeviceQueue(handle, physical.queueFamily(), 0, pp);
      this.queue = new VkQueue(pp.get(0), handle);

      VmaVulkanFunctions fns = VmaVulkanFunctions.calloc(stack).set(instance.handle, handle);
      VmaAllocatorCreateInfo aci = VmaAllocatorCreateInfo.calloc(stack)
          .physicalDevice(physical.handle())
          .device(handle)
          .instance(instance.handle)
          .pVulkanFunctions(fns)
          .vulkanApiVersion(VK_API_VERSION_1_2);
      Vk.check(vmaCreateAllocator(aci, pp), "vmaCreateAllocator");
      this.allocator = pp.get(0);

      LongBuffer pl = stack.mallocLong(1);
      VkCommandPoolCreateInfo pci = VkCommandPoolCreateInfo.calloc(stack).sType$Default()
          .flags(VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT) // a recording's copy buffer is recorded again
          .queueFamilyIndex(physical.queueFamily());
      Vk.check(vkCreateCommandPool(handle, pci, null, pl), "vkCreateCommandPool");
      this.commandPool = pl.get(0);

      this.pipelineCacheFile = options.shaderCacheDir() == null ? null
          : options.shaderCacheDir().resolve(String.format("pipeline-%04x-%04x-%s.bin", p.vendorId(), p.deviceId(), p.uuid()));
      this.pipelineCache = createPipelineCache(stack);
    }
  }

  /** Opens the device {@code options} select; see {@code GpuDevices.open}. */
  public static VulkanDevice open(DeviceOptions options) {
    VulkanInstance instance = VulkanInstance.acquire(options.validation());
    try {
      List<VulkanInstance.Physical> all = instance.physicalDevices();
      DeviceSelector.Choice choice = DeviceSelector.select(options.device(),
          all.stream().map(VulkanInstance.Physical::info).toList());
      VulkanInstance.Physical physical = all.get(choice.position());
      VulkanDevice device = new VulkanDevice(options, instance, physical);
      long probeStart = System.nanoTime();
      try {
        device.float32Mode = KernelPasses.Float32Mode.of(device.info.features(), device::probeFloatFlush);
        device.simulateFlush = Boolean.getBoolean(KernelPasses.SIMULATE_FLUSH_PROPERTY);
        device.doubleRounding = device.probeDoubleRounding();
      } catch (RuntimeException e) {
        device.close();
        throw e;
      }
      LOG.info("vkspark opened Vulkan device {} because {}; features: {}; {}; {} (probed in {} ms); transfers: {}{}",
          device.info.summary(), choice.reason(), device.info.features(), device.float32Mode, device.doubleRounding,
          (System.nanoTime() - probeStart) / 1_000_000, options.transfers(), options.validation() ? "; validation on" : "");
      if (!device.doubleRounding.refinedExact()) {
        LOG.warn("vkspark: Vulkan device '{}' does not round double / or sqrt as Java does, even with vkspark's "
            + "refinement ({}); GPU UDFs dividing doubles may differ from call() in the last bit", device.info.name(),
            device.doubleRounding);
      }
      return device;
    } catch (RuntimeException e) {
      instance.release();
      throw e;
    }
  }

  private long createPipelineCache(MemoryStack stack) {
    ByteBuffer initial = null;
    if (pipelineCacheFile != null && Files.isRegularFile(pipelineCacheFile)) {
      try {
        byte[] bytes = Files.readAllBytes(pipelineCacheFile);
        initial = MemoryUtil.memAlloc(bytes.length).put(bytes).flip();
      } catch (IOException e) {
        LOG.warn("ignoring unreadable pipeline cache {}: {}", pipelineCacheFile, e.toString());
      }
    }
    try {
      VkPipelineCacheCreateInfo ci = VkPipelineCacheCreateInfo.calloc(stack).sType$Default();
      if (initial != null) {
        ci.pInitialData(initial);
      }
      LongBuffer pl = stack.mallocLong(1);
      int r = vkCreatePipelineCache(handle, ci, null, pl);
      if (r != VK_SUCCESS && initial != null) {
        LOG.warn("the driver refused the pipeline cache {} ({}); starting empty", pipelineCacheFile, Vk.resultName(r));
        ci.pInitialData(null);
        r = vkCreatePipelineCache(handle, ci, null, pl);
      }
      Vk.check(r, "vkCreatePipelineCache");
      return pl.get(0);
    } finally {
      if (initial != null) {
        MemoryUtil.memFree(initial);
      }
    }
  }

  private void savePipelineCache() {
    if (pipelineCacheFile == null) {
      return;
    }
    try (MemoryStack stack = stackPush()) {
      PointerBuffer size = stack.mallocPointer(1);
      if (vkGetPipelineCacheData(handle, pipelineCache, size, null) != VK_SUCCESS || size.get(0) == 0) {
        return;
      }
      ByteBuffer data = MemoryUtil.memAlloc((int) size.get(0));
      try {
        Vk.check(vkGetPipelineCacheData(handle, pipelineCache, size, data), "vkGetPipelineCacheData");
        data.limit((int) size.get(0));
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        Files.createDirectories(pipelineCacheFile.getParent());
        Path tmp = Files.createTempFile(pipelineCacheFile.getParent(), "pipeline", ".tmp");
        Files.write(tmp, bytes);
        Files.move(tmp, pipelineCacheFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } finally {
        MemoryUtil.memFree(data);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("could not save the pipeline cache {}: {}", pipelineCacheFile, e.toString());
    }
  }

  // ---- lifecycle -----------------------------------------------------------------------------

  /** Runs {@code body} while the device cannot close; fails with CLOSED once it has. */
  <T> T use(String what, Supplier<T> body) {
    ReentrantReadWriteLock.ReadLock lock = lifecycle.readLock();
    lock.lock();
    try {
      ensureOpen(what);
      return body.get();
    } finally {
      lock.unlock();
    }
  }

  void ensureOpen(String what) {
    if (closed) {
      throw GpuException.of(Code.CLOSED, what + " on Vulkan device '" + info.name() + "', which is closed.",
          "open a new GpuDevice; objects of a closed device cannot be used.");
    }
  }

  /** The pipeline of device-to-device copies, made on first use. */
  synchronized DeviceCopier copier() {
    if (copier == null) {
      copier = DeviceCopier.create(this);
    }
    return copier;
  }

  void adopt(Child child) {
    children.add(child);
  }

  /**
   * Closes a child once: the first call runs {@code destroy}, later calls do nothing. Safe while
   * the device itself is closing (its thread holds the write lock, which admits readers).
   */
  void closeChild(Child child, Runnable destroy) {
    ReentrantReadWriteLock.ReadLock lock = lifecycle.readLock();
    lock.lock();
    try {
      if (children.remove(child)) {
        destroy.run();
      }
    } finally {
      lock.unlock();
    }
  }

  void submit(VkSubmitInfo submit, long fence, String what) {
    int r;
    synchronized (queueLock) { // checked under the lock: nothing is submitted once the device counts as lost
      ensureNotLost("vkQueueSubmit (" + what + ")");
      r = vkQueueSubmit(queue, submit, fence);
    }
    if (r == VK_ERROR_DEVICE_LOST) {
      markLost("vkQueueSubmit (" + what + ") returned VK_ERROR_DEVICE_LOST");
    }
    Vk.check(r, "vkQueueSubmit (" + what + ")");
    counters.dispatches.incrementAndGet();
  }

  /**
   * Waits up to {@code nanos} for {@code fence}: VK_SUCCESS, VK_TIMEOUT, or an error. A
   * VK_ERROR_DEVICE_LOST (real, or armed by {@link FaultInjection}) marks the device lost, and
   * every later wait and submission fails at once with DEVICE_LOST.
   */
  int waitFence(long fence, long nanos, String what) {
    if (lost != null) {
      return VK_ERROR_DEVICE_LOST;
    }
    if (FaultInjection.takeDeviceLoss()) {
      // A lost device runs nothing more; a simulated loss must not leave work running either, or a CPU
      // driver (lavapipe) keeps reading buffers that are freed once the device counts as lost.
      synchronized (queueLock) {
        markLost("fault injection while waiting for " + what);
        vkQueueWaitIdle(queue);
      }
      return VK_ERROR_DEVICE_LOST;
    }
    int r = vkWaitForFences(handle, fence, true, nanos);
    if (r == VK_ERROR_DEVICE_LOST) {
      markLost("vkWaitForFences for " + what + " returned VK_ERROR_DEVICE_LOST");
    }
    return r;
  }

  void markLost(String why) {
    if (lost == null) {
      lost = why;
      LOG.error("vkspark: Vulkan device '{}' is lost ({}); its work fails with DEVICE_LOST until it is reopened",
          info.name(), why);
    }
  }

  void ensureNotLost(String what) {
    String why = lost;
    if (why != null) {
      throw GpuException.of(Code.DEVICE_LOST, what + " on Vulkan device '" + info.name() + "', which is lost (" + why
          + "); its results are gone.", "close this GpuDevice and open a new one (a Spark executor does so for its "
          + "next task); check the driver log (dmesg) for the cause.");
    }
  }

  @Override
  public boolean isLost() {
    return lost != null;
  }

  @Override
  public int loopLimit() {
    int known = loopLimit;
    return known >= 0 ? known : probeLoopLimit();
  }

  /**
   * Runs {@link DoubleRoundingProbe} on a device with float64 ({@link DoubleRounding#PROPERTY} may
   * force or forbid the refinement). A probe that fails assumes the device is not exact: refining
   * costs time, never correctness.
   */
  private DoubleRounding probeDoubleRounding() {
    DoubleRounding.Mode mode = DoubleRounding.Mode.fromSystemProperty();
    if (!info.features().shaderFloat64()) {
      return DoubleRounding.NO_DOUBLES;
    }
    try {
      return use("probing double rounding", () -> DoubleRoundingProbe.measure(this, mode));
    } catch (GpuException e) {
      if (e.code() == Code.DEVICE_LOST || isLost()) {
        throw e;
      }
      LOG.warn("vkspark: the double-rounding probe failed on Vulkan device '{}' ({}); refining double / and sqrt",
          info.name(), e.getMessage());
      boolean on = mode != DoubleRounding.Mode.NATIVE;
      return new DoubleRounding(false, false, on, on, false, false, "");
    }
  }

  /** A case where this device flushed a 32-bit subnormal ({@link FloatFlushProbe}), empty when none; a failed probe assumes it flushes. */
  private String probeFloatFlush() {
    try {
      String flushed = use("probing float32 subnormals", () -> FloatFlushProbe.flushes(this));
      if (!flushed.isEmpty()) {
        LOG.info("vkspark: Vulkan device '{}' flushes 32-bit subnormal floats ({}); kernels compute float arithmetic "
            + "from the bits, as Java does", info.name(), flushed);
      }
      return flushed;
    } catch (GpuException e) {
      if (e.code() == Code.DEVICE_LOST || isLost()) {
        throw e;
      }
      LOG.warn("vkspark: the float32 subnormal probe failed on Vulkan device '{}' ({}); computing float arithmetic "
          + "from the bits", info.name(), e.getMessage());
      return "the probe failed";
    }
  }

  /** How 32-bit float arithmetic is compiled here; chosen when the device opens. */
  public KernelPasses.Float32Mode float32Mode() {
    return float32Mode;
  }

  /** Whether this device was opened to flush 32-bit subnormals like the H200 (tests). */
  boolean simulatesFlush() {
    return simulateFlush;
  }

  @Override
  public DoubleRounding doubleRounding() {
    return doubleRounding == null ? DoubleRounding.NO_DOUBLES : doubleRounding;
  }

  private synchronized int probeLoopLimit() {
    if (loopLimit < 0) {
      int limit = use("probing the loop limit", () -> LoopProbe.measure(this));
      if (limit > 0) {
        LOG.warn("vkspark: Vulkan device '{}' stops every loop after {} iterations (a driver loop limit); GPU UDF rows "
            + "that loop that long are recomputed on the CPU or fail, never returned cut short", info.name(), limit);
      } else {
        LOG.info("vkspark: Vulkan device '{}' ran a {}-iteration loop in full: no loop limit", info.name(),
            LoopProbe.ITERATIONS);
      }
      loopLimit = limit;
    }
    return loopLimit;
  }

  /** Every cached descriptor set that names this allocation is freed (the buffer is going away). */
  void forgetAllocation(long allocationId) {
    for (VulkanKernel k : kernels) {
      k.descriptors.evict(allocationId);
    }
  }

  void registerKernel(VulkanKernel k) {
    kernels.add(k);
  }

  void unregisterKernel(VulkanKernel k) {
    kernels.remove(k);
  }

  // ---- GpuDevice --------------------------------------------------------------------------------

  @Override
  public DeviceInfo info() {
    return info;
  }

  @Override
  public DeviceOptions options() {
    return options;
  }

  @Override
  public GpuBuffer createBuffer(long bytes, BufferRole role) {
    return use("creating a buffer", () -> VulkanBuffer.create(this, bytes, role));
  }

  @Override
  public Kernel load(Program program) {
    DoubleRounding r = doubleRounding;
    return use("loading program '" + program.name() + "'", () -> VulkanKernel.create(this, program, r));
  }

  /** Loads {@code program} as compiled, without the double-rounding rewrite (for the probe). */
  Kernel loadExactly(Program program) {
    return use("loading program '" + program.name() + "'", () -> VulkanKernel.create(this, program, null));
  }

  @Override
  public PrerecordedDispatch prerecord(List<DispatchStep> steps) {
    return use("recording a dispatch", () -> VulkanDispatch.record(this, steps, List.of()));
  }

  @Override
  public DeviceCounters counters() {
    return counters.snapshot();
  }

  /** Errors the validation layer reported while this device was open (the instance is shared). */
  @Override
  public long validationErrors() {
    List<String> frozen = messagesAtClose;
    return frozen != null ? errorsAtClose : instance.validationErrors() - validationErrorsBefore;
  }

  @Override
  public List<String> validationMessages() {
    List<String> frozen = messagesAtClose;
    return frozen != null ? frozen : instance.validationMessagesFrom(messagesBefore);
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    ReentrantReadWriteLock.WriteLock lock = lifecycle.writeLock();
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      int idle = vkDeviceWaitIdle(handle);
      if (idle == VK_ERROR_DEVICE_LOST) {
        markLost("vkDeviceWaitIdle while closing returned VK_ERROR_DEVICE_LOST");
      } else if (idle != VK_SUCCESS) {
        // Keep closing: destroying is allowed after a failed wait, and stopping here would leak the device.
        LOG.warn("vkspark: vkDeviceWaitIdle while closing Vulkan device '{}' failed with {}; closing anyway",
            info.name(), Vk.resultName(idle));
      }
      List<Child> open = new ArrayList<>(children);
      if (!open.isEmpty()) {
        LOG.warn("closing Vulkan device '{}' with {} object(s) still open; closing them first", info.name(), open.size());
        open.sort(Comparator.comparingInt(Child::closeOrder));
        for (Child c : open) {
          try {
            c.close();
          } catch (RuntimeException e) {
            LOG.warn("closing {} failed: {}", c, e.toString());
          }
        }
      }
      savePipelineCache(); // logs its failures
      vkDestroyPipelineCache(handle, pipelineCache, null);
      vkDestroyCommandPool(handle, commandPool, null);
      vmaDestroyAllocator(allocator);
      vkDestroyDevice(handle, null);
      DeviceCounters c = counters.snapshot();
      if (!c.nothingLive()) {
        LOG.warn("Vulkan device '{}' closed with live objects: {}", info.name(), c);
      }
      errorsAtClose = instance.validationErrors() - validationErrorsBefore;
      messagesAtClose = instance.validationMessagesFrom(messagesBefore);
      instance.release();
      LOG.info("vkspark closed Vulkan device '{}' (uuid {}) after {} dispatches, {} MiB written, {} ms device time",
          info.name(), info.uuid(), c.dispatchesSubmitted(), c.bytesWritten() >> 20, c.deviceNs() / 1_000_000);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String toString() {
    return "GpuDevice[" + info.summary() + (closed ? ", closed" : "") + "]";
  }
}
