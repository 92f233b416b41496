package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.reduce.ReductionPasses;
import io.vkspark.gpu.internal.Closeables;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Column kernels on one device: loaded kernels and the {@link BufferPool} shared by every
 * {@link BatchRunner} on that device, so the second partition of a query loads and records
 * nothing new. A Spark executor holds one. Thread-safe.
 */
public final class ColumnRuntime implements AutoCloseable {
  /** Idle buffer sets kept for reuse, at most this many bytes by default (least recently used go first). */
  public static final long DEFAULT_MAX_IDLE_BYTES = 256L << 20;

  private final GpuDevice device;
  private final Map<String, Kernel> kernels = new ConcurrentHashMap<>();
  private final BufferPool pool;
  private boolean closed;

  public ColumnRuntime(GpuDevice device) {
    this(device, DEFAULT_MAX_IDLE_BYTES);
  }

  /**
   * @param maxIdleBytes device memory that idle buffer sets may keep between batches; beyond it the
   *     least recently used idle sets are freed (sets in use are never touched)
   */
  public ColumnRuntime(GpuDevice device, long maxIdleBytes) {
    this(device, maxIdleBytes, 1);
  }

  /**
   * @param maxIdleBytes as above
   * @param keepSets idle sets kept even past {@code maxIdleBytes}: as many as may be in use at once
   *     (a Spark executor's GPU permits). With fewer, {@code n} concurrent tasks whose sets together
   *     exceed the budget free some at each query's end and record them again in the next (seen on
   *     the H200: 16 tasks of 48 MiB Black-Scholes sets against 256 MiB). Device memory stays bounded
   *     by the device's limit: when it runs out, idle sets are freed first.
   */
  public ColumnRuntime(GpuDevice device, long maxIdleBytes, int keepSets) {
    this.device = device;
    this.pool = new BufferPool(device, maxIdleBytes, keepSets, this::kernel, this::reduction, this::stringScan);
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
    return runner(calls, inputTypes, capacityRows, allocator, null);
  }

  /**
   * A runner that reduces its calls' results on the device ({@link BatchRunner#runReduced}) instead
   * of reading them back; {@code reduction} null for a plain runner.
   *
   * @throws GpuException UNSUPPORTED when a kernel or the reduction needs a feature the device
   *     lacks (check {@link ColumnReduction#unsupportedOn} first to fold on the host instead);
   *     INVALID_ARGUMENT when the reduction's call types are not the calls' result types
   */
  public BatchRunner runner(List<KernelCall> calls, List<SqlType> inputTypes, int capacityRows, BufferAllocator allocator,
                            ColumnReduction reduction) {
    if (reduction != null) {
      List<SqlType> results = calls.stream().map(c -> c.kernel().signature().result()).toList();
      if (!reduction.callTypes().equals(results)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "the reduction reads calls of types " + reduction.callTypes()
            + " but the calls return " + results + ".", "make the reduction with ColumnReduction.of(aggregates, "
            + "the calls' result types in call order).");
      }
      if (reduction.grouped() && reduction.keyColumn() >= 0 && (reduction.keyColumn() >= inputTypes.size()
          || inputTypes.get(reduction.keyColumn()) != reduction.keyType())) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "the reduction groups by input column " + reduction.keyColumn()
            + " of type " + reduction.keyType().sqlName() + " but the runner's inputs are " + inputTypes + ".",
            "pass the key column among the runner's input columns, with its type.");
      }
      reduction.unsupportedOn(device.info()).ifPresent(reason -> {
        throw GpuException.of(Code.UNSUPPORTED, reason + ".", "fold the results on the host on this device.");
      });
    }
    synchronized (this) {
      ensureOpen();
    }
    if (calls.isEmpty()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a batch runner needs at least one kernel call.", "pass one or more KernelCalls.");
    }
    for (KernelCall call : calls) {
      call.check(inputTypes);
      call.kernel().unsupportedOn(device.info()).ifPresent(reason -> {
        throw GpuException.of(Code.UNSUPPORTED, reason + ".", "run it on a device with that feature, or let it fall back to the CPU.");
      });
    }
    int capacity = capacity(calls, inputTypes, capacityRows);
    if (reduction != null && reduction.grouped()) {
      // the first pass's partials within one storage buffer, counted as if each first-pass workgroup
      // took one chunk of rows (it takes at least one); on a device with a loop limit, the second
      // pass's loop over those workgroups stays within half of it
      long perGroup = reduction.passes().keyedPartialBytes(1);
      long groups = Math.max(1, (device.info().maxStorageBufferRange() - 64) / perGroup);
      if (device.loopLimit() > 0) {
        groups = Math.min(groups, Math.max(1, device.loopLimit() / 2));
      }
      long rows = groups * ColumnKernel.workgroupSize(device.info());
      capacity = (int) Math.max(64, Math.min(capacity, rows / 64 * 64));
    }
    return new BatchRunner(pool, device, List.copyOf(calls), List.copyOf(inputTypes), capacity, allocator, reduction);
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

  /** The loaded passes of {@code r}: its one pass, or a grouped reduction's two. */
  List<Kernel> reduction(ColumnReduction r) {
    int wg = ColumnKernel.workgroupSize(device.info());
    ReductionPasses p = r.passes();
    Kernel first = kernels.computeIfAbsent(p.id() + "@" + wg, id -> device.load(p.program(wg)));
    if (!r.grouped()) {
      return List.of(first);
    }
    return List.of(first, kernels.computeIfAbsent(p.secondId() + "@" + wg, id -> device.load(p.secondProgram(wg))));
  }


  /** The loaded passes of the prefix sum of string and binary results: the block pass, the top pass. */
  List<Kernel> stringScan() {
    int wg = ColumnKernel.workgroupSize(device.info());
    return List.of(kernels.computeIfAbsent(StringScan.id(false) + "@" + wg, id -> device.load(StringScan.blocksProgram(wg))),
        kernels.computeIfAbsent(StringScan.id(true) + "@" + wg, id -> device.load(StringScan.topsProgram(wg))));
  }

  /** Buffer sets recorded so far. */
  public long bufferSetsCreated() {
    return pool.created();
  }

  /** Buffer sets taken from the pool instead of recorded. */
  public long bufferSetsReused() {
    return pool.reused();
  }

  /** Device memory held by buffer sets, in use or pooled. */
  public long deviceBytesHeld() {
    return pool.deviceBytes();
  }

  /** Frees pooled buffer sets (e.g. when memory is short); sets in use are not touched. */
  public int trim() {
    return pool.trim();
  }

  /** Device memory held by idle (pooled) buffer sets. */
  public long idleBytes() {
    return pool.idleBytes();
  }

  /**
   * The budget of {@link #idleBytes()}: idle sets past it are freed, least recently used first
   * ({@link #keepSets()} idle sets are kept even when they alone are larger).
   */
  public long maxIdleBytes() {
    return pool.maxIdleBytes();
  }

  /** Idle sets kept even past {@link #maxIdleBytes()}. */
  public int keepSets() {
    return pool.keepSets();
  }

  /** Idle (pooled) buffer sets. */
  public int idleSets() {
    return pool.idleSets();
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
    Closeables.closeAll(pool, this::closeKernels);
  }

  /** Closes the kernels, unless an abandoned dispatch still uses their pipelines (the device closes them then). */
  private void closeKernels() {
    List<Kernel> open = pool.dispatchPending() ? List.of() : List.copyOf(kernels.values());
    kernels.clear();
    Closeables.closeAll(open);
  }
}
