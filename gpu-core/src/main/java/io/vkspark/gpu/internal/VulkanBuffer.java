package io.vkspark.gpu.internal;

import static org.lwjgl.system.MemoryStack.stackPush;
import static org.lwjgl.util.vma.Vma.*;
import static org.lwjgl.vulkan.VK10.*;

import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.Sizes;
import io.vkspark.gpu.TransferMode;
import java.nio.ByteBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.system.MemoryUtil;
import org.lwjgl.util.vma.VmaAllocationCreateInfo;
import org.lwjgl.util.vma.VmaAllocationInfo;
import org.lwjgl.vulkan.VkBufferCreateInfo;
import org.lwjgl.vulkan.VkPhysicalDeviceMemoryProperties;

/**
 * A VMA buffer and, when staged, its host twin. Inputs ask VMA for sequential host writes with
 * "transfer instead" allowed: on ReBAR or unified memory that gives mapped device memory the host
 * writes directly; otherwise a staging buffer takes the writes and recordings copy. Outputs are
 * host-cached memory the shader writes (AUTO) or device memory copied back (STAGED).
 */
final class VulkanBuffer implements GpuBuffer, VulkanDevice.Child {
  private static final AtomicLong IDS = new AtomicLong();
  /** Bindings are padded to this many bytes; Vulkan forbids empty buffers. */
  static final long PADDING = 16;

  private final VulkanDevice device;
  private final long id = IDS.incrementAndGet();
  private final long byteLength;
  final long paddedLength;
  private final BufferRole role;
  final long buffer;
  private final long allocation;
  final long twin;
  private final long twinAllocation;
  private final long hostAddress;
  private final long hostAllocation;
  private final AtomicInteger recordings = new AtomicInteger();
  private volatile boolean closed;

  private VulkanBuffer(VulkanDevice device, long byteLength, long paddedLength, BufferRole role, long buffer,
                       long allocation, long twin, long twinAllocation, long hostAddress) {
    this.device = device;
    this.byteLength = byteLength;
    this.paddedLength = paddedLength;
    this.role = role;
    this.buffer = buffer;
    this.allocation = allocation;
    this.twin = twin;
    this.twinAllocation = twinAllocation;
    this.hostAddress = hostAddress;
    this.hostAllocation = twin != VK_NULL_HANDLE ? twinAllocation : allocation;
  }

  static VulkanBuffer create(VulkanDevice device, long bytes, BufferRole role) {
    if (bytes < 0) {
      throw GpuException.of(Code.SIZE, "a buffer of " + bytes + " bytes was requested.", "request 0 or more bytes.");
    }
    long padded = Math.max(PADDING, Sizes.alignUp(bytes, PADDING, "buffer size"));
    // Control words must be seen by a running shader: never staged, whatever the transfer mode.
    boolean staged = device.options().transfers() == TransferMode.STAGED && role != BufferRole.CONTROL
        && role != BufferRole.SCRATCH;
    // Reserve the bytes before allocating, so concurrent allocations cannot pass the limit together.
    long limit = device.options().memoryLimit();
    long reserved = staged ? Sizes.multiply(padded, 2, "buffer size") : padded;
    long held = device.counters.bufferBytesLive.addAndGet(reserved);
    if (limit > 0 && held > limit) {
      device.counters.bufferBytesLive.addAndGet(-reserved);
      throw GpuException.of(Code.OUT_OF_MEMORY, String.format(
          "a %s buffer of %,d bytes would exceed the device memory limit of %,d bytes (%,d held in %d buffers).",
          role, padded, limit, held - reserved, device.counters.buffersLive.get()),
          "use smaller batches (spark.vkspark.batchRows), fewer concurrent GPU tasks, or a higher limit.");
    }
    try {
      return allocate(device, bytes, padded, role, staged, reserved);
    } catch (RuntimeException e) {
      device.counters.bufferBytesLive.addAndGet(-reserved);
      throw e;
    }
  }

  private static VulkanBuffer allocate(VulkanDevice device, long bytes, long padded, BufferRole role, boolean staged,
                                       long reserved) {
    int usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT
        | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (role == BufferRole.PARAMS) {
      usage |= VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;
    }
    int hostFlags;
    if (staged || role == BufferRole.SCRATCH) {
      hostFlags = 0;
    } else if (role == BufferRole.OUTPUT) {
      hostFlags = VMA_ALLOCATION_CREATE_HOST_ACCESS_RANDOM_BIT | VMA_ALLOCATION_CREATE_MAPPED_BIT;
    } else {
      hostFlags = VMA_ALLOCATION_CREATE_HOST_ACCESS_SEQUENTIAL_WRITE_BIT
          | VMA_ALLOCATION_CREATE_HOST_ACCESS_ALLOW_TRANSFER_INSTEAD_BIT | VMA_ALLOCATION_CREATE_MAPPED_BIT;
    }
    if (role == BufferRole.CONTROL) {
      hostFlags = VMA_ALLOCATION_CREATE_HOST_ACCESS_RANDOM_BIT | VMA_ALLOCATION_CREATE_MAPPED_BIT;
    }
    long[] main = allocate(device, padded, usage, hostFlags,
        staged || role == BufferRole.SCRATCH ? VMA_MEMORY_USAGE_AUTO_PREFER_DEVICE
            : role == BufferRole.CONTROL ? VMA_MEMORY_USAGE_AUTO_PREFER_HOST : VMA_MEMORY_USAGE_AUTO, role);
    long mapped = main[2];
    boolean hostVisible = !staged && (memoryFlags(device, main[1]) & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0 && mapped != 0;
    long twin = VK_NULL_HANDLE;
    long twinAlloc = VK_NULL_HANDLE;
    if (!hostVisible && role == BufferRole.CONTROL) {
      vmaDestroyBuffer(device.allocator, main[0], main[1]);
      throw GpuException.of(Code.VULKAN, "the device gave a CONTROL buffer memory the host cannot map.",
          "this is a driver or vkspark bug; report the device and driver.");
    }
    if (role == BufferRole.SCRATCH) {
      mapped = 0; // the host never sees it: no twin, no mapping
    } else if (!hostVisible) {
      int twinUsage = role == BufferRole.OUTPUT ? VK_BUFFER_USAGE_TRANSFER_DST_BIT : VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
      int twinFlags = (role == BufferRole.OUTPUT ? VMA_ALLOCATION_CREATE_HOST_ACCESS_RANDOM_BIT
          : VMA_ALLOCATION_CREATE_HOST_ACCESS_SEQUENTIAL_WRITE_BIT) | VMA_ALLOCATION_CREATE_MAPPED_BIT;
      long[] t;
      try {
        t = allocate(device, padded, twinUsage, twinFlags, VMA_MEMORY_USAGE_AUTO_PREFER_HOST, role);
      } catch (RuntimeException e) {
        vmaDestroyBuffer(device.allocator, main[0], main[1]);
        throw e;
      }
      twin = t[0];
      twinAlloc = t[1];
      mapped = t[2];
    }
    VulkanBuffer b = new VulkanBuffer(device, bytes, padded, role, main[0], main[1], twin, twinAlloc, mapped);
    long total = twin == VK_NULL_HANDLE ? padded : 2 * padded;
    device.counters.buffersCreated.incrementAndGet();
    device.counters.buffersLive.incrementAndGet();
    device.counters.bufferBytesLive.addAndGet(total - reserved);
    device.adopt(b);
    return b;
  }

  /** Returns {buffer, allocation, mappedAddress}. */
  private static long[] allocate(VulkanDevice device, long size, int usage, int flags, int memoryUsage, BufferRole role) {
    try (MemoryStack stack = stackPush()) {
      VkBufferCreateInfo bci = VkBufferCreateInfo.calloc(stack).sType$Default()
          .size(size).usage(usage).sharingMode(VK_SHARING_MODE_EXCLUSIVE);
      VmaAllocationCreateInfo aci = VmaAllocationCreateInfo.calloc(stack).usage(memoryUsage).flags(flags);
      if (role == BufferRole.CONTROL) {
        // Every Vulkan device has a host-visible, host-coherent memory type (spec guarantee).
        aci.requiredFlags(VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        int mask = controlMemoryTypes(device);
        if (mask != 0) {
          aci.memoryTypeBits(mask);
        }
      }
      LongBuffer pb = stack.mallocLong(1);
      PointerBuffer pa = stack.mallocPointer(1);
      VmaAllocationInfo ai = VmaAllocationInfo.calloc(stack);
      int r = vmaCreateBuffer(device.allocator, bci, aci, pb, pa, ai);
      if (r != VK_SUCCESS) {
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
          throw GpuException.of(Code.OUT_OF_MEMORY, String.format(
              "the device could not allocate a %s buffer of %,d bytes (%s); %,d bytes are held in %d live buffers.",
              role, size, Vk.resultName(r), device.counters.bufferBytesLive.get(), device.counters.buffersLive.get()),
              "use smaller batches (spark.vkspark.batchRows) or fewer concurrent GPU tasks (spark.vkspark.concurrentGpuTasks).");
        }
        throw Vk.error(r, "vmaCreateBuffer(" + size + " bytes)");
      }
      return new long[] {pb.get(0), pa.get(0), ai.pMappedData()};
    }
  }

  /**
   * Memory types the CONTROL buffer may use: device-local and host-visible where the device has
   * such a type (ReBAR or the 256 MiB BAR window; the buffer is 16 bytes). Measured on the H200
   * (2026-11-30): a running kernel saw the host's abort word within 1 ms in device-local memory and
   * never in system memory, host-cached or not, read volatile or atomically (the GPU's L2 keeps the
   * system-memory line it read first). {@code -Dvkspark.controlMemory=cached|uncached|device}
   * overrides the choice, to diagnose a device; 0 means any host-coherent type.
   */
  private static int controlMemoryTypes(VulkanDevice device) {
    String want = System.getProperty("vkspark.controlMemory", "device");
    int mask = 0;
    try (MemoryStack stack = stackPush()) {
      VkPhysicalDeviceMemoryProperties mp = VkPhysicalDeviceMemoryProperties.malloc(stack);
      vkGetPhysicalDeviceMemoryProperties(device.handle.getPhysicalDevice(), mp);
      int coherent = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      for (int t = 0; t < mp.memoryTypeCount(); t++) {
        int f = mp.memoryTypes(t).propertyFlags();
        boolean local = (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0;
        boolean cached = (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) != 0;
        boolean ok = (f & coherent) == coherent && switch (want) {
          case "cached" -> !local && cached;
          case "uncached" -> !local && !cached;
          default -> local;
        };
        if (ok) {
          mask |= 1 << t;
        }
      }
    }
    return mask;
  }

  private static int memoryFlags(VulkanDevice device, long allocation) {
    try (MemoryStack stack = stackPush()) {
      IntBuffer flags = stack.mallocInt(1);
      vmaGetAllocationMemoryProperties(device.allocator, allocation, flags);
      return flags.get(0);
    }
  }

  VulkanDevice device() {
    return device;
  }

  void addRecording() {
    recordings.incrementAndGet();
  }

  void removeRecording() {
    recordings.decrementAndGet();
  }

  @Override
  public long byteLength() {
    return byteLength;
  }

  @Override
  public long allocationId() {
    return id;
  }

  @Override
  public BufferRole role() {
    return role;
  }

  @Override
  public boolean isStaged() {
    return twin != VK_NULL_HANDLE;
  }

  @Override
  public long hostAddress() {
    ensureOpen("reading the host address of");
    return hostAddress;
  }

  @Override
  public void write(long offset, ByteBuffer src) {
    write(offset, MemoryUtil.memAddress(requireDirect(src)), src.remaining());
  }

  @Override
  public void write(long offset, long srcAddress, long bytes) {
    ensureOpen("writing to");
    if (role == BufferRole.OUTPUT || role == BufferRole.SCRATCH) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "host write to " + (role == BufferRole.OUTPUT ? "output" : "device-only SCRATCH")
          + " buffer #" + id + ".", "write inputs and parameters; outputs and scratch are written by the device.");
    }
    checkRange(offset, bytes, "write");
    if (bytes == 0) {
      return;
    }
    MemoryUtil.memCopy(srcAddress, hostAddress + offset, bytes);
    flushRange(offset, bytes);
    device.counters.bytesWritten.addAndGet(bytes);
  }

  @Override
  public void flush(long offset, long bytes) {
    ensureOpen("flushing");
    if (role == BufferRole.SCRATCH) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "host flush of SCRATCH buffer #" + id + ".",
          "SCRATCH buffers are device-only: write inputs to INPUT buffers.");
    }
    checkRange(offset, bytes, "flush");
    if (bytes > 0) {
      flushRange(offset, bytes);
      device.counters.bytesWritten.addAndGet(bytes);
    }
  }

  @Override
  public void read(long offset, ByteBuffer dst) {
    read(offset, MemoryUtil.memAddress(requireDirect(dst)), dst.remaining());
  }

  @Override
  public void read(long offset, long dstAddress, long bytes) {
    ensureOpen("reading from");
    if (role != BufferRole.OUTPUT && role != BufferRole.CONTROL) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "host read from " + role + " buffer #" + id + ".",
          "read only OUTPUT and CONTROL buffers: input memory may be device-local, which the CPU reads at ~0.03 GB/s.");
    }
    checkRange(offset, bytes, "read");
    if (bytes == 0) {
      return;
    }
    invalidate(offset, bytes);
    MemoryUtil.memCopy(hostAddress + offset, dstAddress, bytes);
    device.counters.bytesRead.addAndGet(bytes);
  }

  /** Makes device writes visible to the host view (a no-op on coherent memory). */
  void invalidate(long offset, long bytes) {
    // LWJGL binds vmaInvalidateAllocation as void; the plural form returns the VkResult.
    try (MemoryStack stack = stackPush()) {
      Vk.check(vmaInvalidateAllocations(device.allocator, stack.pointers(hostAllocation), stack.longs(offset),
          stack.longs(bytes)), "vmaInvalidateAllocations");
    }
  }

  /** Makes host writes visible to the device (a no-op on coherent memory). */
  private void flushRange(long offset, long bytes) {
    // LWJGL binds vmaFlushAllocation as void; the plural form returns the VkResult.
    try (MemoryStack stack = stackPush()) {
      Vk.check(vmaFlushAllocations(device.allocator, stack.pointers(hostAllocation), stack.longs(offset),
          stack.longs(bytes)), "vmaFlushAllocations");
    }
  }

  private static ByteBuffer requireDirect(ByteBuffer b) {
    if (!b.isDirect()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a heap ByteBuffer was passed where native memory is needed.",
          "use ByteBuffer.allocateDirect(...) or MemoryUtil.memAlloc(...).");
    }
    return b;
  }

  private void checkRange(long offset, long bytes, String what) {
    if (offset < 0 || bytes < 0 || bytes > byteLength || offset > byteLength - bytes) {
      throw GpuException.of(Code.SIZE, String.format(
          "%s of %,d bytes at offset %,d is outside buffer #%d of %,d bytes.", what, bytes, offset, id, byteLength),
          "create a larger buffer or split the data.");
    }
  }

  void ensureOpen(String what) {
    if (closed) {
      throw GpuException.of(Code.CLOSED, what + " buffer #" + id + ", which is closed.",
          "create a new buffer; a closed buffer's memory is gone.");
    }
    device.ensureOpen(what + " buffer #" + id);
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public int closeOrder() {
    return 3;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    int users = recordings.get();
    if (users > 0 && !device.isClosed()) {
      throw GpuException.of(Code.INVALID_ARGUMENT,
          "buffer #" + id + " is still bound in " + users + " recorded dispatch(es).",
          "close the PrerecordedDispatch objects that use it before closing the buffer.");
    }
    device.closeChild(this, () -> {
      closed = true;
      device.forgetAllocation(id);
      vmaDestroyBuffer(device.allocator, buffer, allocation);
      if (twin != VK_NULL_HANDLE) {
        vmaDestroyBuffer(device.allocator, twin, twinAllocation);
      }
      device.counters.buffersLive.decrementAndGet();
      device.counters.bufferBytesLive.addAndGet(-(twin == VK_NULL_HANDLE ? paddedLength : 2 * paddedLength));
    });
    closed = true;
  }

  @Override
  public String toString() {
    return "GpuBuffer#" + id + "[" + role + ", " + byteLength + " bytes" + (isStaged() ? ", staged" : "") + "]";
  }
}
