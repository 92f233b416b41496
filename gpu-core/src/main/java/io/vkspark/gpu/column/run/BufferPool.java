package io.vkspark.gpu.column.run;

import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.StringGlsl;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.internal.Closeables;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link BufferSet}s of one device, shared by every {@link BatchRunner} on it: a set is taken
 * for a batch and given back after it, so a few sets serve many tasks. Idle sets are kept up to a
 * byte cap, least recently used freed first. The whole out-of-memory policy lives here: when the
 * device is short, idle sets are freed and the set retried; if it still does not fit, smaller
 * sets are tried (halving the rows, down to {@link #MIN_CAPACITY}) and the caller sees the
 * capacity it got, so it splits its batches instead of failing. Thread-safe.
 */
final class BufferPool implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BufferPool.class);

  /** Fewest rows per buffer set the out-of-memory policy halves down to. */
  static final int MIN_CAPACITY = 1024;

  private final GpuDevice device;
  private final long maxIdleBytes;
  /** Idle sets kept whatever their bytes: as many as may be in use at once (the GPU permits). */
  private final int keepSets;
  private final Function<ColumnKernel, Kernel> kernels;
  private final Function<ColumnReduction, List<Kernel>> reductions;
  /** The loaded passes of the prefix sum of string results ({@link StringScan}). */
  private final Supplier<List<Kernel>> scans;
  private final Map<BufferSet.Key, Deque<BufferSet>> idle = new HashMap<>();
  /** Idle sets in the order they were released, oldest first. */
  private final LinkedHashSet<BufferSet> idleOrder = new LinkedHashSet<>();
  private final List<BufferSet> all = new ArrayList<>();
  /** Sets whose dispatch did not finish (aborted without stopping, device lost); closed last, if they can be. */
  private final List<BufferSet> abandoned = new ArrayList<>();
  private final AtomicLong created = new AtomicLong();
  private final AtomicLong reused = new AtomicLong();
  private long idleBytes;
  private boolean closed;
  /** Whether closing left an abandoned set open because its dispatch still runs. */
  private boolean dispatchPending;

  /**
   * @param maxIdleBytes device memory idle sets may keep; beyond it the least recently used go
   * @param keepSets idle sets kept even past {@code maxIdleBytes} (at least 1): as many as the
   *     callers use at once, so a steady workload records nothing after its first query
   * @param kernels the loaded kernel of each column kernel (the runtime's cache)
   */
  BufferPool(GpuDevice device, long maxIdleBytes, int keepSets, Function<ColumnKernel, Kernel> kernels,
             Function<ColumnReduction, List<Kernel>> reductions) {
    this(device, maxIdleBytes, keepSets, kernels, reductions, List::of);
  }

  /** With {@code scans}: the loaded passes of the prefix sum of string and binary results. */
  BufferPool(GpuDevice device, long maxIdleBytes, int keepSets, Function<ColumnKernel, Kernel> kernels,
             Function<ColumnReduction, List<Kernel>> reductions, Supplier<List<Kernel>> scans) {
    this.scans = scans;
    this.device = device;
    this.maxIdleBytes = maxIdleBytes;
    this.keepSets = Math.max(1, keepSets);
    this.kernels = kernels;
    this.reductions = reductions;
  }

  /**
   * A set for {@code key}: an idle one if there is one, else a new one. When the device runs out
   * of memory, idle sets are freed and the set tried again; then sets of half the rows (to
   * {@link #MIN_CAPACITY}). The returned set's {@code key.capacity()} may thus be below the one
   * asked for: the caller must split its batches to it.
   *
   * @throws GpuException OUT_OF_MEMORY when not even {@link #MIN_CAPACITY} rows fit
   */
  synchronized BufferSet acquire(BufferSet.Key key) {
    ensureOpen();
    BufferSet.Key k = key;
    while (true) {
      try {
        return take(k);
      } catch (GpuException e) {
        if (e.code() != Code.OUT_OF_MEMORY || k.capacity() <= MIN_CAPACITY) {
          throw e;
        }
        int smaller = smaller(k.capacity());
        LOG.warn("out of device memory for {} rows per dispatch; splitting batches into {} rows: {}", k.capacity(),
            smaller, e.getMessage());
        k = k.withCapacity(smaller);
      }
    }
  }

  /** The next capacity the out-of-memory policy tries: half, a multiple of 64, at least {@link #MIN_CAPACITY}. */
  static int smaller(int capacity) {
    return Math.max(MIN_CAPACITY, capacity / 2 / 64 * 64);
  }

  /** An idle set of exactly {@code key}, or a new one (freeing every idle set once if memory is short). */
  private BufferSet take(BufferSet.Key key) {
    Deque<BufferSet> free = idle.get(key);
    if (free != null && !free.isEmpty()) {
      reused.incrementAndGet();
      BufferSet set = free.pop();
      idleOrder.remove(set);
      idleBytes -= set.deviceBytes;
      return set;
    }
    Map<ColumnKernel, Kernel> loaded = new HashMap<>();
    for (KernelCall c : key.calls()) {
      loaded.put(c.kernel(), kernels.apply(c.kernel()));
    }
    List<Kernel> reduction = key.reduction() == null ? List.of() : reductions.apply(key.reduction());
    List<Kernel> scan = key.calls().stream().anyMatch(c -> StringGlsl.varResult(c.kernel().signature())) ? scans.get()
        : List.of();
    BufferSet set;
    try {
      set = BufferSet.create(device, key, loaded, reduction, scan);
    } catch (GpuException e) {
      if (e.code() != Code.OUT_OF_MEMORY || trim() == 0) {
        throw e;
      }
      LOG.info("device memory was short; freed idle buffer sets and retrying: {}", e.getMessage());
      set = BufferSet.create(device, key, loaded, reduction, scan);
    }
    all.add(set);
    created.incrementAndGet();
    LOG.debug("recorded buffer set #{} for {} at {} rows ({} bytes)", all.size(), key.calls(), key.capacity(), set.deviceBytes);
    return set;
  }

  /** Gives a set back for reuse (its dispatch must have finished); frees the oldest idle sets past the cap. */
  synchronized void release(BufferSet set) {
    if (closed) {
      set.close(); // returned after the pool closed: nobody will take it again
      return;
    }
    idle.computeIfAbsent(set.key, k -> new ArrayDeque<>()).push(set);
    idleOrder.add(set);
    idleBytes += set.deviceBytes;
    while (idleBytes > maxIdleBytes && idleOrder.size() > keepSets) {
      drop(idleOrder.iterator().next());
    }
  }

  /**
   * Forgets a set whose dispatch may still be running (aborted without stopping, or its device
   * lost): it is never handed out again, and is closed with the pool, if it can be.
   */
  synchronized void abandon(BufferSet set) {
    if (all.remove(set)) {
      abandoned.add(set);
      LOG.warn("vkspark: abandoned a buffer set of {} ({} bytes) whose dispatch did not finish", set.key.calls(),
          set.deviceBytes);
    }
  }

  /** Frees every idle set; sets in use are not touched. Returns how many were freed. */
  synchronized int trim() {
    int n = 0;
    for (BufferSet s : new ArrayList<>(idleOrder)) {
      drop(s);
      n++;
    }
    return n;
  }

  private void drop(BufferSet set) {
    idleOrder.remove(set);
    idle.get(set.key).remove(set);
    idleBytes -= set.deviceBytes;
    all.remove(set);
    set.close();
  }

  long created() {
    return created.get();
  }

  long reused() {
    return reused.get();
  }

  synchronized long idleBytes() {
    return idleBytes;
  }

  long maxIdleBytes() {
    return maxIdleBytes;
  }

  int keepSets() {
    return keepSets;
  }

  synchronized int idleSets() {
    return idleOrder.size();
  }

  /** Device memory of every set, in use or idle. */
  synchronized long deviceBytes() {
    long bytes = 0;
    for (BufferSet s : all) {
      bytes += s.deviceBytes;
    }
    return bytes;
  }

  /** After {@link #close()}: whether an abandoned set's dispatch still runs (its kernels must stay open). */
  synchronized boolean dispatchPending() {
    return dispatchPending;
  }

  private void ensureOpen() {
    if (closed) {
      throw GpuException.of(Code.CLOSED, "the buffer pool of '" + device.info().name() + "' is closed.",
          "create a new ColumnRuntime on an open device.");
    }
  }

  /**
   * Closes every set, then the abandoned ones (a bounded wait each; one that will not close is
   * logged and left to its device). Every set is closed even when one fails; the first failure is
   * thrown with the rest suppressed. A set released later is closed then.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<AutoCloseable> parts = new ArrayList<>(all);
    parts.add(this::closeAbandoned);
    all.clear();
    idle.clear();
    idleOrder.clear();
    idleBytes = 0;
    Closeables.closeAll(parts);
  }

  private void closeAbandoned() {
    for (BufferSet s : abandoned) {
      try {
        s.close(); // waits a bounded time for its dispatch
      } catch (RuntimeException e) {
        dispatchPending = true;
        LOG.warn("vkspark: a buffer set whose dispatch did not finish stays open until its device closes: {}", e.toString());
      }
    }
    abandoned.clear();
  }
}
