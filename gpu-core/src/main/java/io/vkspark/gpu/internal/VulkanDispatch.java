package io.vkspark.gpu.internal;

import static org.lwjgl.system.MemoryStack.stackPush;
import static org.lwjgl.vulkan.VK10.*;

import io.vkspark.gpu.BufferCopy;
import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.DispatchStep;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.PrerecordedDispatch;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.TimedDispatch;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Stream;
import org.lwjgl.PointerBuffer;
import org.lwjgl.system.MemoryStack;
import org.lwjgl.system.MemoryUtil;
import org.lwjgl.vulkan.VkBufferCopy;
import org.lwjgl.vulkan.VkCommandBuffer;
import org.lwjgl.vulkan.VkCommandBufferAllocateInfo;
import org.lwjgl.vulkan.VkCommandBufferBeginInfo;
import org.lwjgl.vulkan.VkFenceCreateInfo;
import org.lwjgl.vulkan.VkMemoryBarrier;
import org.lwjgl.vulkan.VkQueryPoolCreateInfo;
import org.lwjgl.vulkan.VkSubmitInfo;

/**
 * A recorded command buffer with its fence and timestamp queries; see {@link PrerecordedDispatch}.
 *
 * <p>The recording: a barrier ordering this replay after the previous one, timestamp, copies of
 * staged inputs, output clears, a barrier, each step's bind and dispatch (with a barrier between
 * steps), a barrier, copies of staged outputs to their host twins, a host-read barrier, timestamp.
 *
 * <p>A replay given device copies ({@link #copyBeforeNextReplay}, {@link #copyAfterNextReplay})
 * submits, in the same {@code vkQueueSubmit}, a command buffer with those copies ahead of the
 * recording (as a shader, {@link DeviceCopier}), or after it; each is recorded again for each such
 * replay and freed with the recording.
 */
final class VulkanDispatch implements PrerecordedDispatch, VulkanDevice.Child {
  private final VulkanDevice device;
  private final VkCommandBuffer commandBuffer;
  private final long fence;
  private final long queryPool;
  private final List<VulkanBuffer> used;
  private final List<GpuBuffer> owned;
  private final List<GpuBuffer> outputs;
  private final String name;
  private volatile boolean inFlight;
  private volatile boolean closed;
  private long replays;
  private long replayStartNs;
  private long enqueueNs;
  /** Copies the next replay runs first ({@link #copyBeforeNextReplay}), and after the recording ({@link #copyAfterNextReplay}). */
  private List<BufferCopy> nextCopies = List.of();
  private List<BufferCopy> nextAfter = List.of();
  /** As {@link #copyBuffer}, for the copies after the recording; and those of the replay in flight (their buffers to invalidate). */
  private VkCommandBuffer afterBuffer;
  private List<BufferCopy> afterInFlight = List.of();
  /**
   * The command buffer of device copies, allocated with the first replay that has copies and
   * recorded again for each such replay (the pool resets command buffers one by one): a steady
   * stream of batches over cached columns creates no Vulkan object. Freed with the recording.
   */
  private VkCommandBuffer copyBuffer;
  /** Whether the replay in flight ran copies ({@link #copyBuffer}). */
  private boolean prelude;
  /** Two timestamps around the copies, made with the first copies (null handle without timestamps). */
  private long copyQueries = VK_NULL_HANDLE;
  private long lastCopyNs;
  /** The descriptor sets of the copies that run as a shader ({@link DeviceCopier}), made with the first copies. */
  private DeviceCopier.Sets copySets;

  private VulkanDispatch(VulkanDevice device, String name, VkCommandBuffer cb, long fence, long queryPool,
                         List<VulkanBuffer> used, List<GpuBuffer> owned, List<GpuBuffer> outputs) {
    this.device = device;
    this.name = name;
    this.commandBuffer = cb;
    this.fence = fence;
    this.queryPool = queryPool;
    this.used = used;
    this.owned = owned;
    this.outputs = List.copyOf(outputs);
  }

  /**
   * Validates and records {@code steps}. {@code owned} buffers are closed with the recording (or
   * immediately, if recording fails).
   */
  static VulkanDispatch record(VulkanDevice device, List<DispatchStep> steps, List<GpuBuffer> owned) {
    if (steps.isEmpty()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a recording needs at least one dispatch step.", "pass one or more DispatchSteps.");
    }
    List<List<Bindings.Bound>> boundSteps = new ArrayList<>();
    Set<VulkanBuffer> all = new LinkedHashSet<>();
    List<GpuBuffer> outputs = new ArrayList<>();
    StringBuilder name = new StringBuilder();
    for (DispatchStep step : steps) {
      if (!(step.kernel() instanceof VulkanKernel k) || k.device() != device) {
        throw GpuException.of(Code.BINDING, "a dispatch step uses a kernel this device did not load.",
            "load the program with this GpuDevice.");
      }
      k.ensureOpen("recording");
      List<Bindings.Bound> bound = Bindings.bind(device, k.program(), step.inputs(), step.outputs(), step.params());
      boundSteps.add(bound);
      bound.forEach(b -> all.add(b.buffer()));
      outputs.addAll(step.outputs());
      name.append(name.length() == 0 ? "" : "+").append(k.program().name());
    }
    VkCommandBuffer cb = null;
    long fence = VK_NULL_HANDLE;
    long queryPool = VK_NULL_HANDLE;
    try (MemoryStack stack = stackPush()) {
      LongBuffer pl = stack.mallocLong(1);
      synchronized (device.poolLock) {
        cb = allocateCommandBuffer(device, stack);
      }
      Vk.check(vkCreateFence(device.handle, VkFenceCreateInfo.calloc(stack).sType$Default(), null, pl), "vkCreateFence");
      fence = pl.get(0);
      if (device.info().timestamps()) {
        Vk.check(vkCreateQueryPool(device.handle, VkQueryPoolCreateInfo.calloc(stack).sType$Default()
            .queryType(VK_QUERY_TYPE_TIMESTAMP).queryCount(2), null, pl), "vkCreateQueryPool");
        queryPool = pl.get(0);
      }
      synchronized (device.poolLock) {
        recordCommands(device, cb, queryPool, steps, boundSteps, all, stack);
      }
    } catch (RuntimeException e) {
      destroy(device, cb, fence, queryPool);
      Closeables.closeAllAfter(e, owned);
      throw e;
    }
    all.forEach(VulkanBuffer::addRecording);
    VulkanDispatch d = new VulkanDispatch(device, name.toString(), cb, fence, queryPool, List.copyOf(all),
        List.copyOf(owned), outputs);
    device.adopt(d);
    return d;
  }

  private static void recordCommands(VulkanDevice device, VkCommandBuffer cb, long queryPool, List<DispatchStep> steps,
                                     List<List<Bindings.Bound>> boundSteps, Set<VulkanBuffer> all, MemoryStack stack) {
    Vk.check(vkBeginCommandBuffer(cb, VkCommandBufferBeginInfo.calloc(stack).sType$Default()), "vkBeginCommandBuffer");
    // Order this replay after everything the previous one did (write-after-read on inputs, etc.), and
    // after the device copies submitted ahead of it (DeviceCopier), which end with no barrier of their own.
    barrier(cb, stack, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
        VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    if (queryPool != VK_NULL_HANDLE) {
      vkCmdResetQueryPool(cb, queryPool, 0, 2);
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queryPool, 0);
    }
    boolean transfers = false;
    for (VulkanBuffer b : all) {
      if (b.isStaged() && b.role() != BufferRole.OUTPUT) {
        vkCmdCopyBuffer(cb, b.twin, b.buffer, VkBufferCopy.calloc(1, stack).size(b.paddedLength));
        transfers = true;
      }
    }
    Set<VulkanBuffer> cleared = new LinkedHashSet<>();
    for (int s = 0; s < steps.size(); s++) {
      if (((VulkanKernel) steps.get(s).kernel()).program().clearOutputs()) {
        for (Bindings.Bound b : boundSteps.get(s)) {
          if (b.decl().isOutput() && cleared.add(b.buffer())) {
            vkCmdFillBuffer(cb, b.buffer().buffer, 0, VK_WHOLE_SIZE, 0);
            transfers = true;
          }
        }
      }
    }
    if (transfers) {
      barrier(cb, stack, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_UNIFORM_READ_BIT
              | VK_ACCESS_INDIRECT_COMMAND_READ_BIT);
    }
    for (int s = 0; s < steps.size(); s++) {
      DispatchStep step = steps.get(s);
      VulkanKernel k = (VulkanKernel) step.kernel();
      Program program = k.program();
      List<Bindings.Bound> bound = boundSteps.get(s);
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
      for (int set = 0; set < k.setLayouts.length; set++) {
        List<DescriptorSetCache.Entry> entries = new ArrayList<>();
        for (Bindings.Bound b : bound) {
          if (b.decl().set() == set) {
            entries.add(new DescriptorSetCache.Entry(b.decl().binding(), VulkanKernel.descriptorType(b.decl()),
                b.buffer().buffer, b.buffer().allocationId(), b.buffer().paddedLength));
          }
        }
        long ds = k.descriptors.get(set, entries);
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipelineLayout, set, stack.longs(ds), null);
      }
      if (program.indirect().isPresent()) {
        Program.Indirect ind = program.indirect().get();
        VulkanBuffer count = bound.stream().filter(b -> b.decl().name().equals(ind.countBuffer()))
            .findFirst().orElseThrow().buffer();
        vkCmdDispatchIndirect(cb, count.buffer, ind.offset());
      } else {
        Groups g = step.groups();
        checkGroups(device, program, g);
        vkCmdDispatch(cb, g.x(), g.y(), g.z());
      }
      if (s + 1 < steps.size()) {
        barrier(cb, stack, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      }
    }
    boolean readbacks = all.stream().anyMatch(b -> b.isStaged() && b.role() == BufferRole.OUTPUT);
    barrier(cb, stack, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
        VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_HOST_READ_BIT);
    if (readbacks) {
      for (VulkanBuffer b : all) {
        if (b.isStaged() && b.role() == BufferRole.OUTPUT) {
          vkCmdCopyBuffer(cb, b.buffer, b.twin, VkBufferCopy.calloc(1, stack).size(b.paddedLength));
        }
      }
      barrier(cb, stack, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
          VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    }
    if (queryPool != VK_NULL_HANDLE) {
      vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queryPool, 1);
    }
    Vk.check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  }

  private static void checkGroups(VulkanDevice device, Program program, Groups g) {
    int max = device.info().maxWorkgroupCountX();
    if (Integer.toUnsignedLong(g.x()) > Integer.toUnsignedLong(max)) {
      throw GpuException.of(Code.SIZE, "dispatch of '" + program.name() + "' asks for " + g.x()
          + " workgroups in x, over device '" + device.info().name() + "''s limit of " + max + ".",
          "spread the groups over y with Groups.covering(elements, workgroupSize, maxWorkgroupCountX).");
    }
  }

  static void barrier(VkCommandBuffer cb, MemoryStack stack, int srcStage, int srcAccess, int dstStage, int dstAccess) {
    VkMemoryBarrier.Buffer mb = VkMemoryBarrier.calloc(1, stack).sType$Default()
        .srcAccessMask(srcAccess).dstAccessMask(dstAccess);
    vkCmdPipelineBarrier(cb, srcStage, dstStage, 0, mb, null, null);
  }

  // ---- replay ------------------------------------------------------------------------------------

  @Override
  public void replay() {
    long t0 = System.nanoTime();
    List<BufferCopy> copies = nextCopies; // given to this replay only, whether or not it is submitted
    List<BufferCopy> after = nextAfter;
    nextCopies = List.of();
    nextAfter = List.of();
    device.use("replaying '" + name + "'", () -> {
      ensureOpen("replaying");
      if (inFlight) {
        throw GpuException.of(Code.IN_FLIGHT, "replay of '" + name + "' was requested while its previous replay is "
            + "still in flight.", "call await() before replaying, or record one PrerecordedDispatch per batch in flight.");
      }
      VkCommandBuffer pre = copies.isEmpty() ? null : recordCopies(copies, false);
      VkCommandBuffer post = after.isEmpty() ? null : recordCopies(after, true);
      try (MemoryStack stack = stackPush()) {
        PointerBuffer buffers = stack.mallocPointer(3);
        Stream.of(pre, commandBuffer, post).filter(Objects::nonNull).forEach(buffers::put);
        device.submit(VkSubmitInfo.calloc(stack).sType$Default().pCommandBuffers(buffers.flip()), fence, name);
      }
      prelude = pre != null;
      afterInFlight = after;
      inFlight = true;
      return null;
    });
    replayStartNs = t0;
    enqueueNs = System.nanoTime() - t0;
  }

  @Override
  public void copyBeforeNextReplay(List<BufferCopy> copies) {
    for (BufferCopy c : checked(copies)) {
      if (c.dst().isStaged()) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "a device copy for '" + name + "' writes " + c.dst()
            + ", whose recording copies its host twin over it.", "write staged buffers through their host view.");
      }
    }
    nextCopies = List.copyOf(copies);
  }

  @Override
  public void copyAfterNextReplay(List<BufferCopy> copies) {
    for (BufferCopy c : checked(copies)) {
      if (c.dst().role() != BufferRole.OUTPUT) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "a device copy after '" + name + "' writes " + c.dst()
            + ", which the host does not read.", "copy into a buffer created with BufferRole.OUTPUT.");
      }
    }
    nextAfter = List.copyOf(copies);
  }

  /** {@code copies}, once their buffers are known to be open buffers of this device and no replay is in flight. */
  private List<BufferCopy> checked(List<BufferCopy> copies) {
    ensureOpen("adding device copies to");
    if (inFlight) {
      throw GpuException.of(Code.IN_FLIGHT, "device copies were given to '" + name + "' while a replay is in flight.",
          "await() the replay first.");
    }
    for (BufferCopy c : copies) {
      for (GpuBuffer b : List.of(c.src(), c.dst())) {
        if (!(b instanceof VulkanBuffer vb) || vb.device() != device) {
          throw GpuException.of(Code.BINDING, "a device copy for '" + name + "' uses a buffer of another device.",
              "copy between buffers created by this GpuDevice.");
        }
        vb.ensureOpen("copying with");
      }
    }
    return copies;
  }

  /**
   * {@code copies}' command buffer: {@link #copyBuffer}, timed, before the recording (as a shader,
   * {@link DeviceCopier}); {@code after} it, into host-read memory.
   */
  private VkCommandBuffer recordCopies(List<BufferCopy> copies, boolean after) {
    DeviceCopier copier = after ? null : device.copier(); // made outside the pool lock: the first one compiles its shader
    if (copier != null && copySets == null) {
      copySets = copier.new Sets();
    }
    try (MemoryStack stack = stackPush()) {
      if (!after && copyQueries == VK_NULL_HANDLE && queryPool != VK_NULL_HANDLE) {
        LongBuffer pl = stack.mallocLong(1);
        Vk.check(vkCreateQueryPool(device.handle, VkQueryPoolCreateInfo.calloc(stack).sType$Default()
            .queryType(VK_QUERY_TYPE_TIMESTAMP).queryCount(2), null, pl), "vkCreateQueryPool");
        copyQueries = pl.get(0);
      }
      synchronized (device.poolLock) {
        afterBuffer = after && afterBuffer == null ? allocateCommandBuffer(device, stack) : afterBuffer;
        copyBuffer = !after && copyBuffer == null ? allocateCommandBuffer(device, stack) : copyBuffer;
        VkCommandBuffer cb = after ? afterBuffer : copyBuffer;
        long queries = after ? VK_NULL_HANDLE : copyQueries;
        DeviceCopier.recordCommands(cb, copies, copier, copySets, queries, stack);
        return cb;
      }
    }
  }

  /** A primary command buffer of the device's pool, counted (the caller holds {@code device.poolLock}). */
  private static VkCommandBuffer allocateCommandBuffer(VulkanDevice device, MemoryStack stack) {
    PointerBuffer pp = stack.mallocPointer(1);
    Vk.check(vkAllocateCommandBuffers(device.handle, VkCommandBufferAllocateInfo.calloc(stack).sType$Default()
        .commandPool(device.commandPool).level(VK_COMMAND_BUFFER_LEVEL_PRIMARY).commandBufferCount(1), pp),
        "vkAllocateCommandBuffers");
    device.counters.commandBuffersCreated.incrementAndGet();
    device.counters.commandBuffersLive.incrementAndGet();
    return new VkCommandBuffer(pp.get(0), device.handle);
  }

  private void freeCommandBuffer(VkCommandBuffer cb) {
    if (cb != null) {
      synchronized (device.poolLock) {
        vkFreeCommandBuffers(device.handle, device.commandPool, cb);
      }
      device.counters.commandBuffersLive.decrementAndGet();
    }
  }

  @Override
  public TimedDispatch await() {
    Duration limit = device.options().fenceTimeout();
    TimedDispatch t = awaitFor(limit);
    if (t == null) {
      throw GpuException.of(Code.TIMEOUT, "'" + name + "' did not finish within " + limit + ".",
          "use smaller batches, raise the fence timeout, or check the kernel for an endless loop.");
    }
    return t;
  }

  @Override
  public TimedDispatch awaitFor(Duration limit) {
    long t0 = System.nanoTime();
    long nanos = Math.max(0, limit.toNanos());
    Long[] deviceNs = new Long[1];
    boolean done = device.use("waiting for '" + name + "'", () -> {
      ensureOpen("waiting for");
      if (!inFlight) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "await() on '" + name + "' with no replay in flight.",
            "call replay() first (or run(), which does both).");
      }
      int r = device.waitFence(fence, nanos, "'" + name + "'");
      if (r == VK_TIMEOUT) {
        return false;
      }
      if (r == VK_ERROR_DEVICE_LOST) {
        device.ensureNotLost("waiting for '" + name + "'");
      }
      Vk.check(r, "vkWaitForFences('" + name + "')");
      Vk.check(vkResetFences(device.handle, fence), "vkResetFences");
      inFlight = false;
      lastCopyNs = prelude && copyQueries != VK_NULL_HANDLE ? elapsedNs(copyQueries) : 0;
      prelude = false;
      replays++;
      for (GpuBuffer o : Stream.concat(outputs.stream(), afterInFlight.stream().map(BufferCopy::dst)).toList()) {
        VulkanBuffer vb = (VulkanBuffer) o;
        vb.invalidate(0, vb.paddedLength);
      }
      afterInFlight = List.of();
      deviceNs[0] = readTimestamps();
      return true;
    });
    if (!done) {
      return null;
    }
    long end = System.nanoTime();
    long start = replayStartNs == 0 ? t0 : replayStartNs;
    return new TimedDispatch(List.of(), end - start, deviceNs[0], enqueueNs, end - t0);
  }

  private Long readTimestamps() {
    if (queryPool == VK_NULL_HANDLE) {
      return null;
    }
    long ns = elapsedNs(queryPool);
    device.counters.deviceNs.addAndGet(ns);
    return ns;
  }

  /** Nanoseconds between the two timestamps of {@code pool}. */
  private long elapsedNs(long pool) {
    try (MemoryStack stack = stackPush()) {
      LongBuffer ticks = stack.mallocLong(2);
      int r = vkGetQueryPoolResults(device.handle, pool, 0, 2, ticks, 8,
          VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
      Vk.check(r, "vkGetQueryPoolResults");
      int bits = device.timestampValidBits;
      long mask = bits >= 64 ? -1L : (1L << bits) - 1;
      long delta = ((ticks.get(1) & mask) - (ticks.get(0) & mask)) & mask;
      return Math.round(delta * device.info().timestampPeriodNs());
    }
  }

  @Override
  public long lastCopyNs() {
    return lastCopyNs;
  }

  @Override
  public TimedDispatch run() {
    replay();
    return await();
  }

  @Override
  public boolean isInFlight() {
    return inFlight;
  }

  @Override
  public long replays() {
    return replays;
  }

  @Override
  public ByteBuffer readOutput(int index) {
    GpuBuffer out = output(index);
    ByteBuffer bytes = ByteBuffer.allocateDirect(Math.toIntExact(out.byteLength())).order(ByteOrder.LITTLE_ENDIAN);
    out.read(0, bytes);
    return bytes;
  }

  @Override
  public void readOutputInto(int index, ByteBuffer dst) {
    GpuBuffer out = output(index);
    long n = out.byteLength();
    dst.clear();
    if (dst.capacity() < n) {
      throw GpuException.of(Code.SIZE, "output " + index + " of '" + name + "' has " + n
          + " bytes but the caller's buffer holds " + dst.capacity() + ".", "pass a buffer of at least " + n + " bytes.");
    }
    if (dst.isDirect()) {
      out.read(0, MemoryUtil.memAddress(dst), n);
    } else {
      ByteBuffer tmp = ByteBuffer.allocateDirect((int) n);
      out.read(0, tmp);
      dst.put(tmp);
      dst.position(0);
    }
    dst.limit((int) n);
    dst.position(0);
  }

  private GpuBuffer output(int index) {
    ensureOpen("reading output of");
    if (inFlight) {
      throw GpuException.of(Code.IN_FLIGHT, "output " + index + " of '" + name + "' was read while a replay is in flight.",
          "call await() before reading outputs.");
    }
    if (index < 0 || index >= outputs.size()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "pre-recorded output index " + index + " is out of bounds for "
          + outputs.size() + " outputs of '" + name + "'.", "request an output produced by this dispatch.");
    }
    return outputs.get(index);
  }

  @Override
  public List<GpuBuffer> outputs() {
    return outputs;
  }

  private void ensureOpen(String what) {
    if (closed) {
      throw GpuException.of(Code.CLOSED, what + " '" + name + "', whose recording is closed.",
          "record a new dispatch.");
    }
    device.ensureOpen(what + " '" + name + "'");
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  @Override
  public int closeOrder() {
    return 1;
  }

  @Override
  public void close() {
    device.closeChild(this, () -> {
      closed = true;
      if (inFlight) {
        // A lost device may never signal; destroying its objects is allowed, so wait only briefly.
        long wait = device.isLost() ? 1_000_000_000L : device.options().fenceTimeout().toNanos();
        int r = vkWaitForFences(device.handle, fence, true, wait);
        if (r == VK_ERROR_DEVICE_LOST) {
          device.markLost("vkWaitForFences while closing '" + name + "' returned VK_ERROR_DEVICE_LOST");
        }
        if (r != VK_SUCCESS && !device.isLost()) {
          // Still pending: destroying now would be undefined. The device destroys it after waiting idle.
          closed = false;
          device.adopt(this);
          if (r == VK_TIMEOUT) {
            throw GpuException.of(Code.TIMEOUT, "a dispatch of '" + name + "' did not finish within "
                + device.options().fenceTimeout().toMillis() + " ms (the fence timeout) while closing it; its command buffer and buffers"
                + " stay allocated until the device closes.", "use smaller batches, raise the fence timeout, or"
                + " check the kernel for an endless loop; call await() before close() to wait as long as needed.");
          }
          throw Vk.error(r, "vkWaitForFences while closing '" + name + "'");
        }
        inFlight = false;
      }
      freeCommandBuffer(copyBuffer);
      freeCommandBuffer(afterBuffer);
      copyBuffer = null;
      afterBuffer = null;
      if (copySets != null) {
        copySets.close();
      }
      prelude = false;
      if (copyQueries != VK_NULL_HANDLE) {
        vkDestroyQueryPool(device.handle, copyQueries, null);
        copyQueries = VK_NULL_HANDLE;
      }
      destroy(device, commandBuffer, fence, queryPool);
      used.forEach(VulkanBuffer::removeRecording);
      Closeables.closeAll(owned);
    });
  }

  private static void destroy(VulkanDevice device, VkCommandBuffer cb, long fence, long queryPool) {
    if (cb != null) {
      synchronized (device.poolLock) {
        vkFreeCommandBuffers(device.handle, device.commandPool, cb);
      }
      device.counters.commandBuffersLive.decrementAndGet();
    }
    if (fence != VK_NULL_HANDLE) {
      vkDestroyFence(device.handle, fence, null);
    }
    if (queryPool != VK_NULL_HANDLE) {
      vkDestroyQueryPool(device.handle, queryPool, null);
    }
  }

  @Override
  public String toString() {
    return "PrerecordedDispatch[" + name + ", replays=" + replays + (closed ? ", closed" : "") + "]";
  }
}
