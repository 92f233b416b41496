package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.internal.Closeables;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Column kernels on one device: loaded kernels and a pool of {@link BufferSet}s shared by every
 * {@link BatchRunner} on that device, so the second partition of a query loads and records
 * nothing new. A Spark executor holds one. Thread-safe.
 */
public final class ColumnRuntime implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ColumnRuntime.class);

  /** Idle buffer sets kept for reuse, at most this many bytes by default (least recently used go first). */
  public static final long DEFAULT_MAX_IDLE_BYTES = 256L << 20;

  private final GpuDevice device;
  private final long maxIdleBytes;
  private final Map<String, Kernel> kernels = new ConcurrentHashMap<>();
  private final Map<BufferSet.Key, Deque<BufferSet>> idle = new HashMap<>();
  /** Idle sets in the order they were released, oldest first. */
  private final java.util.LinkedHashSet<BufferSet> idleOrder = new java.util.LinkedHashSet<>();
  private final List<BufferSet> all = new ArrayList<>();
  /** Sets whose dispatch did not finish (aborted without stopping, device lost); closed last, if they can be. */
  private final List<BufferSet> abandoned = new ArrayList<>();
  private final AtomicLong setsCreated = new AtomicLong();
  private final AtomicLong setsReused = new AtomicLong();
  private long idleBytes;
  private boolean closed;

  public ColumnRuntime(GpuDevice device) {
    this(device, DEFAULT_MAX_IDLE_BYTES);
  }

  /**
   * @param maxIdleBytes device memory that idle buffer sets may keep between batches; beyond it the
   *     least recently used idle sets are freed (sets in use are never touched)
   */
  public ColumnRuntime(GpuDevice device, long maxIdleBytes) {
    this.device = device;
    this.maxIdleBytes = maxIdleBytes;
    device.loopLimit(); // probe now, not in the middle of the first batch
  }

  public GpuDevice device() {
    return device;
  }

  /**
   * A runner for {@code calls} over batches whose columns have {@code inputTypes}, with buffers
   * for {@code capacityRows} rows (rounded up to a multiple of 64 and capped by the device's
   * storage-buffer limit; larger batches are split).
   *
   * @throws GpuException UNSUPPORTED when a kernel needs a feature the device lacks
   */
  public BatchRunner runner(List<KernelCall> calls, List<SqlType> inputTypes, int capacityRows, BufferAllocator allocator) {
    synchronized (this) {
      ensureOpen();
    }
    if (calls.isEmpty()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a batch runner needs at least one kernel call.", "pass one or more KernelCalls.");
    }
    for (KernelCall call : calls) {
      call.check(inputTypes);
      call.kernel().unsupportedOn(device.info()).ifPresent(reason -> {
        throw GpuException.of(Code.UNSUPPORTED, "GPU UDF '" + call.kernel().signature().name() + "' cannot run on '"
            + device.info().name() + "': " + reason, "run it on a device with that feature, or let it fall back to the CPU.");
      });
    }
    return new BatchRunner(this, List.copyOf(calls), List.copyOf(inputTypes), capacity(calls, inputTypes, capacityRows), allocator);
  }

  /** Rows per buffer: the request rounded up to 64, within maxStorageBufferRange for the widest column. */
  int capacity(List<KernelCall> calls, List<SqlType> inputTypes, int requested) {
    if (requested <= 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "batch capacity " + requested + " is not positive.",
          "use a positive number of rows per batch (spark.vkspark.batchRows), e.g. 1048576.");
    }
    int widest = 1;
    for (SqlType t : inputTypes) {
      widest = Math.max(widest, t.byteWidth());
    }
    for (KernelCall c : calls) {
      widest = Math.max(widest, c.kernel().signature().result().byteWidth());
    }
    long limit = Math.min(device.info().maxStorageBufferRange() - 64, Integer.MAX_VALUE) / widest;
    long rows = Math.min(((long) requested + 63) / 64 * 64, limit / 64 * 64);
    return (int) rows;
  }

  Kernel kernel(ColumnKernel k) {
    return kernels.computeIfAbsent(k.id() + "@" + ColumnKernel.workgroupSize(device.info()),
        id -> device.load(k.program(ColumnKernel.workgroupSize(device.info()))));
  }

  synchronized BufferSet acquire(BufferSet.Key key) {
    ensureOpen();
    Deque<BufferSet> free = idle.get(key);
    if (free != null && !free.isEmpty()) {
      setsReused.incrementAndGet();
      BufferSet set = free.pop();
      idleOrder.remove(set);
      idleBytes -= set.deviceBytes;
      return set;
    }
    Map<ColumnKernel, Kernel> loaded = new HashMap<>();
    for (KernelCall c : key.calls()) {
      loaded.put(c.kernel(), kernel(c.kernel()));
    }
    BufferSet set;
    try {
      set = BufferSet.create(device, key, loaded);
    } catch (GpuException e) {
      if (e.code() != Code.OUT_OF_MEMORY || trim() == 0) {
        throw e;
      }
      LOG.info("device memory was short; freed idle buffer sets and retrying: {}", e.getMessage());
      set = BufferSet.create(device, key, loaded);
    }
    all.add(set);
    setsCreated.incrementAndGet();
    LOG.debug("recorded buffer set #{} for {} at {} rows ({} bytes)", all.size(), key.calls(), key.capacity(), set.deviceBytes);
    return set;
  }

  synchronized void release(BufferSet set) {
    if (closed) {
      set.close(); // returned after the runtime closed: nobody will take it again
      return;
    }
    idle.computeIfAbsent(set.key, k -> new ArrayDeque<>()).push(set);
    idleOrder.add(set);
    idleBytes += set.deviceBytes;
    while (idleBytes > maxIdleBytes && idleOrder.size() > 1) {
      BufferSet oldest = idleOrder.iterator().next();
      drop(oldest);
    }
  }

  /** Frees an idle set. */
  private void drop(BufferSet set) {
    idleOrder.remove(set);
    idle.get(set.key).remove(set);
    idleBytes -= set.deviceBytes;
    all.remove(set);
    set.close();
  }

  /**
   * Forgets a set whose dispatch may still be running (aborted without stopping, or its device
   * lost): it is never handed out again, and the device frees it when it closes.
   */
  synchronized void abandon(BufferSet set) {
    if (all.remove(set)) {
      abandoned.add(set);
      LOG.warn("vkspark: abandoned a buffer set of {} ({} bytes) whose dispatch did not finish", set.key.calls(),
          set.deviceBytes);
    }
  }

  /** The device's loop limit ({@link GpuDevice#loopLimit()}), probed once. */
  int loopLimit() {
    return device.loopLimit();
  }

  /** Buffer sets recorded so far. */
  public long bufferSetsCreated() {
    return setsCreated.get();
  }

  /** Buffer sets taken from the pool instead of recorded. */
  public long bufferSetsReused() {
    return setsReused.get();
  }

  /** Device memory held by buffer sets, in use or pooled. */
  public synchronized long deviceBytesHeld() {
    long bytes = 0;
    for (BufferSet s : all) {
      bytes += s.deviceBytes;
    }
    return bytes;
  }

  /** Frees pooled buffer sets (e.g. when memory is short); sets in use are not touched. */
  public synchronized int trim() {
    int n = 0;
    for (BufferSet s : new ArrayList<>(idleOrder)) {
      drop(s);
      n++;
    }
    return n;
  }

  /** Device memory held by idle (pooled) buffer sets. */
  public synchronized long idleBytes() {
    return idleBytes;
  }

  private void ensureOpen() {
    if (closed) {
      throw GpuException.of(Code.CLOSED, "the column runtime of '" + device.info().name() + "' is closed.",
          "create a new ColumnRuntime on an open device.");
    }
  }

  /**
   * Closes every buffer set and kernel; the device stays open. Runners must not be using sets at
   * that moment (the Spark executor takes every GPU permit first); one returned later is closed.
   * Every object is closed even when one fails; the first failure is thrown with the rest suppressed.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<AutoCloseable> parts = new ArrayList<>(all);
    parts.add(this::closeAbandonedThenKernels);
    all.clear();
    idle.clear();
    idleOrder.clear();
    idleBytes = 0;
    Closeables.closeAll(parts);
  }

  /** Closes the abandoned sets (logged, not thrown), then the kernels unless a dispatch still uses them. */
  private void closeAbandonedThenKernels() {
    boolean pending = false;
    for (BufferSet s : abandoned) {
      try {
        s.close(); // waits a bounded time for its dispatch
      } catch (RuntimeException e) {
        pending = true;
        LOG.warn("vkspark: a buffer set whose dispatch did not finish stays open until its device closes: {}", e.toString());
      }
    }
    abandoned.clear();
    List<Kernel> open = pending ? List.of() : List.copyOf(kernels.values());
    kernels.clear(); // if pending, a dispatch still uses their pipelines; the device closes them after waiting idle
    Closeables.closeAll(open);
  }
}
