package io.vkspark.gpu.column.run;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.OutputSlots;
import io.vkspark.gpu.TimedDispatch;
import io.vkspark.gpu.column.BatchMeter;
import io.vkspark.gpu.column.BatchStats;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.cache.DeviceColumnCache;
import io.vkspark.gpu.column.cache.ResidentColumn;
import io.vkspark.gpu.column.cache.ResidentCopies;
import io.vkspark.gpu.column.input.DecodedStrings;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.input.VarColumn;
import io.vkspark.gpu.column.reduce.BatchReducer;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
/**
 * Runs column kernels over a stream of batches of varying size on one device, in three steps:
 * {@link #append} copies rows of the argument columns into the GPU input buffers (one bulk copy
 * per column) behind the rows already staged, {@link #dispatch} replays the pre-recorded indirect
 * dispatch over the staged rows and reads the results back into Arrow buffers reused from the
 * previous batch ({@link OutputSlots}), and {@link #results} hands out one vector per call over
 * every row appended since the last {@code results()}. {@link #run} is the three in a row for one
 * batch. Several small batches appended before one {@code results()} share one dispatch; rows
 * beyond the buffer set's capacity are dispatched as the buffers fill, so a batch of any size runs.
 *
 * <p>Buffer sets come from the device's {@link BufferPool}, which also decides what happens when
 * device memory is short (the runner then gets a smaller set and dispatches more often).
 *
 * <p>Null semantics are strict: a row with any null argument has a null result. The result's
 * validity is the AND of its arguments' validity, computed on the host a 64-bit word at a time,
 * and skipped for columns without nulls.
 *
 * <p>A runner made with a {@link ColumnReduction} reduces the results on the device instead of
 * reading them back ({@link #runReduced}, {@link #runGrouped}): its {@link BatchReducer} works
 * around each dispatch. Bounded waiting lives in {@link DispatchGuard}, variable-width staging in
 * {@link VarStaging}, the results' slots and readback in {@link BatchResults}.
 *
 * <p>The returned vectors belong to the runner and stay valid until the next {@link #append} (or
 * {@link #run}) or {@link #close()}. One runner serves one task (one thread).
 */
public final class BatchRunner implements AutoCloseable {
  private final List<KernelCall> calls;
  private final List<SqlType> inputTypes;
  /** The buffer set on loan, its rows per dispatch and their ceiling. */
  private final BufferLease lease;
  private final int workgroupSize;
  private final int maxGroupsX;
  private final long maxBufferBytes;
  private final ArrowBuf params;
  private final VarStaging var;
  /** The results of the batch being built: output slots, validity, readback, string results. */
  private final BatchResults results;
  /** Most elements per variable-width data buffer (1 GiB of doubles). */
  public static final long MAX_VAR_ELEMENTS = 1L << 27;
  private BatchStats stats = BatchStats.ZERO;
  private boolean closed;
  private final DispatchGuard guard;
  /** Host memory for rows that start or land off a 64-row boundary. */
  private final Scratch scratch;
  /** Reduces the results on the device ({@link #runReduced}); null for a runner that reads them back. */
  private final BatchReducer reducer;

  // The batch being staged: rows [0, dispatched) are read back into the slots, rows
  // [dispatched, staged) wait in the buffer set's inputs (at device rows [0, staged - dispatched)).
  private int staged;
  private int dispatched;
  private final BatchMeter meter = new BatchMeter();
  /** Cached columns copied on the device from their device copies ({@link #readResident}); without a cache, none. */
  private ResidentCopies resident = new ResidentCopies(null);

  BatchRunner(BufferPool pool, GpuDevice device, List<KernelCall> calls, List<SqlType> inputTypes, int capacity,
              BufferAllocator allocator, ColumnReduction reduction) {
    BatchColumns.checkReduced(calls, reduction); // a kernel computing its null rows keeps its results' validity on the device
    this.lease = new BufferLease(pool, calls, inputTypes, reduction, capacity);
    this.calls = calls;
    this.inputTypes = inputTypes;
    this.scratch = new Scratch(allocator);
    DeviceInfo info = device.info();
    this.workgroupSize = ColumnKernel.workgroupSize(info);
    this.maxGroupsX = info.maxWorkgroupCountX();
    this.maxBufferBytes = info.maxStorageBufferRange() - 64;
    this.guard = new DispatchGuard(device, calls);
    this.params = allocator.buffer(ColumnKernel.PARAMS_BYTES);
    this.var = new VarStaging(calls, inputTypes, allocator);
    this.results = new BatchResults(calls, allocator, reduction == null ? null : new ReducedSample(device, calls,
        allocator, meter), scratch, meter);
    this.reducer = reduction == null ? null
        : new BatchReducer(reduction, allocator, meter, scratch, workgroupSize, maxGroupsX);
  }

  /**
   * Bounds the time of each dispatch. The task waits on the GPU in slices of 50 ms; past
   * {@code kernelTimeout}, or once {@code cancelled} (or the thread's interrupt flag) says so, it
   * sets the kernel's abort word, which ends every loop of the kernel within 1,024 iterations, and
   * throws TIMEOUT or CANCELLED; the buffers stay usable. A kernel that does not stop within 5 s of
   * the abort leaves its device hung: DEVICE_LOST.
   *
   * @param kernelTimeout longest dispatch; zero for no limit
   * @param cancelled polled while waiting, e.g. {@code TaskContext::isInterrupted}
   */
  public void bound(Duration kernelTimeout, BooleanSupplier cancelled) {
    guard.bound(kernelTimeout, cancelled);
  }

  /**
   * Reads {@link ResidentColumn}s (cached columns) from their device copies in {@code cache}: the
   * first use writes the host copy there once, later uses copy on the device into the input buffer,
   * in the dispatch's own submission, instead of copying from the host. {@code null} reads every
   * column from the host again. Set between batches.
   */
  public void readResident(DeviceColumnCache cache) {
    ensureOpen();
    if (staged > 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "readResident() with " + staged + " rows staged.",
          "call it before append(), or after results().");
    }
    this.resident = new ResidentCopies(cache);
  }

  /** Uses of cached columns read from a device copy already on the device (since {@link #readResident}). */
  public long residentHits() {
    return resident.hits();
  }

  /**
   * Device time of the copies from device copies into the input buffers (since {@link #readResident};
   * GPU timestamps, 0 without them): what binding the device copies by address would save at most.
   */
  public long residentCopyNs() {
    return resident.copyNs();
  }

  /** Uses of cached columns that wrote their device copy first (since {@link #readResident}). */
  public long residentUploads() {
    return resident.uploads();
  }

  /** Most rows per dispatch (larger batches are split). */
  public int capacity() {
    return lease.ceiling();
  }

  /**
   * Rows per dispatch of the buffers in use: the smallest power of two (at least 4,096) that holds
   * the largest batch so far, at most {@link #capacity()}. Small batches thus get small buffers.
   */
  public int currentCapacity() {
    return lease.capacity();
  }

  public List<KernelCall> calls() {
    return calls;
  }

  /**
   * Evaluates every call over {@code rows} rows of {@code inputs}: {@link #append}, then
   * {@link #results}. Rows staged earlier and not yet taken with {@code results()} come first.
   *
   * @return one vector per call, in call order, owned by this runner
   */
  public List<FieldVector> run(List<InputColumn> inputs, int rows) {
    append(inputs, rows);
    return results();
  }

  /** Rows appended since the last {@link #results} (dispatched or not). */
  public int stagedRows() {
    return staged;
  }

  /**
   * Stages rows {@code [0, rows)} of {@code inputs} behind the rows already staged: their values go
   * into the buffer set's inputs and their validity into the results' bitmaps. When the buffers
   * fill, the rows they hold are dispatched and read back, and staging goes on from their start;
   * the buffers grow (up to {@link #capacity()}) with the rows of the batch being built. The
   * vectors of the previous {@link #results} are no longer valid once a new batch is begun. Columns
   * that do not match the runner are refused before anything changes; any later error drops the
   * staged batch.
   */
  public void append(List<InputColumn> inputs, int rows) {
    ensureOpen();
    refuseGrouped("append()");
    stage(inputs, rows);
  }

  /** A grouped runner stages and dispatches only within {@link #runGrouped} (the key range is set there). */
  private void refuseGrouped(String what) {
    if (reducer != null && reducer.reduction().grouped()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, what + " on a runner with a grouped reduction.",
          "pass each whole batch to runGrouped(), which finds its key range first.");
    }
  }

  private void stage(List<InputColumn> given, int rows) {
    BatchColumns.check(inputTypes, given, rows);
    if (rows > Integer.MAX_VALUE - staged) {
      throw GpuException.of(Code.SIZE, "appending " + rows + " rows to " + staged + " staged rows exceeds "
          + Integer.MAX_VALUE + " rows.", "take the results() of the staged rows first.");
    }
    try {
      long t0 = System.nanoTime();
      List<InputColumn> inputs = DecodedStrings.of(given, rows); // the body sees the string call() gets
      int base = staged;
      int total = staged + rows;
      results.size(total);
      results.stageValidity(inputs, base, rows);
      if (reducer != null) {
        reducer.staged(inputs, base, rows); // a row filter's input validity
      }
      meter.hostSince(t0);
      if (rows > 0) {
        upload(inputs, rows, total);
      }
      staged = total;
    } catch (RuntimeException e) {
      discard();
      throw e;
    }
  }

  /**
   * Runs the kernels over the staged rows not yet dispatched and reads their results back (a no-op
   * when there are none). On an error the staged batch is dropped.
   */
  public void dispatch() {
    ensureOpen();
    refuseGrouped("dispatch()");
    try {
      dispatchPending();
    } catch (RuntimeException e) {
      discard();
      throw e;
    }
  }

  /**
   * Dispatches what is still pending and returns one vector per call over every row appended
   * since the last {@code results()}; the next {@link #append} begins a new batch.
   *
   * @return one vector per call, in call order, owned by this runner
   */
  public List<FieldVector> results() {
    ensureOpen();
    if (reducer != null) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "results() of a runner that reduces on the device: its per-row "
          + "results never leave the device.", "call runReduced(), or make a runner without a reduction.");
    }
    finishDispatches();
    long h = System.nanoTime();
    List<FieldVector> vectors = results.vectors(staged);
    meter.hostSince(h);
    recordStats();
    discard();
    return vectors;
  }

  /**
   * Evaluates every call over {@code rows} rows of {@code inputs} and reduces the results on the
   * device, in the same submission, without reading the per-row results back: only each
   * workgroup's partials come back, folded here in row order. Rows staged earlier with
   * {@link #append} come first. A row counts for an aggregate when its call's result is not null
   * (its arguments are all non-null); {@code COUNT(*)} counts every row.
   *
   * @return one value per aggregate of the runner's {@link ColumnReduction}, over every row since
   *     the last batch taken
   * @throws GpuException INVALID_ARGUMENT on a runner without a reduction
   */
  public ColumnReduction.Result runReduced(List<InputColumn> inputs, int rows) {
    ensureOpen();
    if (reducer == null) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "runReduced() on a runner without a reduction.",
          "make the runner with ColumnRuntime.runner(..., reduction).");
    }
    if (reducer.reduction().grouped()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "runReduced() on a runner that groups by a key.",
          "call runGrouped(), or make the runner with an ungrouped reduction (ColumnReduction.of).");
    }
    append(inputs, rows);
    finishDispatches();
    ColumnReduction.Result r = reducer.result(staged);
    results.takeSample();
    recordStats();
    discard();
    return r;
  }

  /**
   * Evaluates every call over {@code rows} rows of {@code inputs} and reduces the results per value
   * of the reduction's key ({@link ColumnReduction#grouped}) on the device, in the same submission:
   * the per-row results stay on the device and only one partial per aggregate and key slot the
   * batch's range spans comes back per dispatch. The key's range is bounded first (by its expression
   * or one pass over its source on the host); when its values, plus a slot for null keys, do not fit
   * the slots, nothing is staged or dispatched and the result is empty: the caller evaluates the batch another way
   * (e.g. with a plain runner, folding the rows on the host).
   *
   * @return the batch's groups, or empty when its key range is too wide for the slots
   * @throws GpuException INVALID_ARGUMENT on a runner without a grouped reduction, or with rows
   *     staged by {@link #append} (a grouped batch is taken in one call)
   */
  public Optional<ColumnReduction.Grouped> runGrouped(List<InputColumn> inputs, int rows) {
    ensureOpen();
    if (reducer == null || !reducer.reduction().grouped()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "runGrouped() on a runner without a grouped reduction.",
          "make the runner with ColumnRuntime.runner(..., ColumnReduction.grouped(...)).");
    }
    if (staged > 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "runGrouped() with " + staged + " rows staged by append().",
          "pass the whole batch to runGrouped(); a grouped batch's key range is found before it is staged.");
    }
    BatchColumns.check(inputTypes, inputs, rows);
    long h = System.nanoTime();
    boolean fits = reducer.admit(inputs, rows);
    meter.hostSince(h);
    if (!fits) {
      meter.clearHost();
      return Optional.empty();
    }
    stage(inputs, rows);
    finishDispatches();
    ColumnReduction.Grouped g = reducer.grouped(staged);
    results.takeSample();
    recordStats();
    discard();
    return Optional.of(g);
  }

  /** Grouped batches whose key range was too wide for the slots (runGrouped gave empty). */
  public long wideBatches() {
    return reducer == null ? 0 : reducer.wideBatches();
  }

  /** Dispatches what is pending for the batch being taken (slots sized even for no rows); discards the batch on failure. */
  private void finishDispatches() {
    try {
      if (!results.begun()) {
        results.size(0);
      }
      dispatchPending();
    } catch (RuntimeException e) {
      discard();
      throw e;
    }
  }

  /** A reducing runner's sample of its batches' first per-row results ({@link ReducedSample}); null for one that reads them back. */
  public ReducedSample sample() {
    return results.sample();
  }

  /** The reduction this runner computes on the device, or null when it reads results back. */
  public ColumnReduction reduction() {
    return reducer == null ? null : reducer.reduction();
  }

  /** Copies {@code rows} rows into the inputs, dispatching whenever the buffer set is full. */
  private void upload(List<InputColumn> inputs, int rows, int total) {
    int wanted = lease.shapeFor(total);
    long wantedVar = var.shapeFor(inputs, Math.min(rows, Math.max(wanted, lease.capacity())));
    if (wanted > lease.capacity() || wantedVar > var.capacity()) {
      if (lease.set() != null) {
        dispatchPending(); // the staged rows live in the smaller set
        lease.release();
      }
      lease.grow(wanted);
      var.capacity(Math.max(var.capacity(), wantedVar));
    }
    if (lease.set() == null) {
      lease.acquire(var.capacity());
    }
    for (int done = 0; done < rows; ) {
      int pending = staged + done - dispatched;
      if (pending == lease.capacity()) {
        dispatchPending(staged + done);
        continue;
      }
      int n = Math.min(lease.capacity() - pending, rows - done);
      if (var.any()) {
        n = var.fit(inputs, done, n);
        if (n == 0 && pending > 0) { // the data buffers are full: dispatch what they hold
          dispatchPending(staged + done);
          continue;
        }
        if (n == 0) { // one row's elements exceed the empty data buffers: larger ones
          growVar(var.need(inputs, done, 1));
          continue;
        }
      }
      long h0 = System.nanoTime();
      uploadRows(inputs, done, n, pending);
      meter.hostSince(h0);
      done += n;
    }
  }

  /** Takes a buffer set whose data buffers hold {@code need} elements (nothing is pending in the current one). */
  private void growVar(long need) {
    VarStaging.checkRow(need, guard.udfNames(false));
    lease.release();
    var.capacity(VarStaging.shape(need));
    lease.acquire(var.capacity());
  }

  /** Copies rows {@code [from, from + n)} of every column read to device row {@code at} of its input buffer. */
  private void uploadRows(List<InputColumn> inputs, int from, int n, int at) {
    BufferSet set = lease.set();
    for (int c = 0; c < set.inputs.length; c++) {
      GpuBuffer buf = set.inputs[c];
      if (buf == null) {
        continue;
      }
      SqlType t = inputTypes.get(c);
      InputColumn in = inputs.get(c);
      if (t.isVariableWidth()) {
        var.upload(set, c, (VarColumn) in, from, n, at, meter);
      } else {
        int onDevice = resident.copy(in, t, buf, from, n, at);
        if (onDevice < n) {
          meter.uploaded(BatchColumns.copy(in, t, buf, from + onDevice, n - onDevice, at + onDevice, scratch));
        }
        if (set.valid[c] != null) { // a call computes its null rows: the column's validity bits (NullFlags)
          meter.uploaded(BatchColumns.copyValidity(in, set.valid[c], from, n, at, scratch));
        }
      }
    }
  }

  /** Dispatches the rows waiting in the buffer set, if any. */
  private void dispatchPending() {
    dispatchPending(staged);
  }

  /** Runs the kernels over device rows {@code [0, upTo - dispatched)} and reads them back behind the dispatched rows. */
  private void dispatchPending(int upTo) {
    int n = upTo - dispatched;
    if (n == 0) {
      return;
    }
    BufferSet set = lease.set();
    long h0 = System.nanoTime();
    Groups g = Groups.covering(n, workgroupSize, maxGroupsX);
    params.setInt(0, n);
    // which validity buffers the reduction reads; grouped, the key parameters too
    params.setInt(4, reducer == null ? 0
        : reducer.beforeDispatch(set.reduction, dispatched, n, results.nullCounts(), results::validityAddress));
    params.setInt(8, reducer == null ? 0 : reducer.filterNullMask()); // and of the row filter's inputs
    params.setInt(ColumnKernel.GROUPS_OFFSET, g.x());
    params.setInt(ColumnKernel.GROUPS_OFFSET + 4, g.y());
    params.setInt(ColumnKernel.GROUPS_OFFSET + 8, g.z());
    set.params.write(0, params.memoryAddress(), ColumnKernel.PARAMS_BYTES);
    guard.arm(set);
    results.beforeDispatch(set, dispatched, n);
    meter.hostSince(h0);
    resident.beforeDispatch(set.dispatch);
    TimedDispatch t;
    try {
      t = dispatchBounded();
      resident.afterDispatch(set.dispatch);
    } finally {
      resident.release();
    }
    while (results.strings().grow(set, maxBufferBytes, guard.udfNames(false))) { // results outgrew a data buffer: the same rows again
      guard.arm(set);
      results.strings().beforeDispatch(set);
      t = dispatchBounded();
    }
    guard.checkLoops(set, n);
    guard.checkThrown(set, n);
    meter.dispatched(t);
    long h1 = System.nanoTime();
    if (reducer == null) {
      results.read(set, dispatched, n);
    } else {
      reducer.afterDispatch(set.reduction, n);
    }
    meter.hostSince(h1);
    dispatched = upTo;
    var.reset(); // the data buffers are free again
  }

  /**
   * What a decimal result too wide for its precision gives: null, or (the default) an OVERFLOW
   * error. Spark's rule for a UDF's {@code BigDecimal} result is null with
   * {@code spark.sql.ansi.enabled=false}, an error with it on.
   */
  public void onDecimalOverflow(DecimalOverflow policy) {
    results.onDecimalOverflow(Objects.requireNonNull(policy, "policy"));
  }

  /** Adds the finished batch to the totals the metrics read. */
  private void recordStats() {
    stats = stats.plus(meter.batch(staged));
  }

  /** Forgets the staged batch (taken, or failed). The buffer set stays. */
  private void discard() {
    staged = 0;
    dispatched = 0;
    results.reset();
    var.reset();
    resident.release();
    if (reducer != null) {
      reducer.discard();
    }
    meter.reset();
  }

  private TimedDispatch dispatchBounded() {
    try {
      return guard.run(lease.set(), lease.capacity());
    } catch (GpuException e) {
      if (e.code() == Code.DEVICE_LOST && lease.set() != null) {
        lease.abandon();
      }
      throw e;
    }
  }

  /** Device memory of the largest buffer set this runner used (inputs, outputs, parameters). */
  public long bufferBytes() {
    return lease.bufferBytes();
  }

  /** How often this runner halved its capacity because the device ran out of memory. */
  public long outOfMemorySplits() {
    return lease.outOfMemorySplits();
  }

  private void ensureOpen() {
    if (closed) {
      throw GpuException.of(Code.CLOSED, "batch runner used after close().", "create a new runner.");
    }
  }

  /**
   * Returns the GPU buffers to the pool until the next {@link #append}. A runner that only holds
   * them while it runs lets a few buffer sets serve many tasks, bounding device memory by the
   * number of tasks on the GPU at once rather than by the number of tasks. Kept while staged rows
   * wait in them (call it after {@link #results}).
   */
  public void releaseBuffers() {
    if (lease.set() != null && staged == dispatched && !lease.set().dispatch.isInFlight()) {
      lease.release();
    }
  }

  /** Totals over every batch so far. */
  public BatchStats stats() {
    return stats;
  }

  /** Returns the buffer set to the pool and frees the result vectors. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    resident.release();
    lease.close();
    results.close();
    params.close();
    scratch.close();
    if (reducer != null) {
      reducer.close();
    }
    var.close();
  }

  /**
   * The rows of call {@code call} in the last {@link #results()} that its kernel handed to
   * {@code call()} (ascending; null in the result vector until the caller fills them): rows whose
   * body called {@code vk_to_cpu}, needed ASCII and did not get it, or whose string result could
   * not be Java's ({@link CpuCause}). Empty for most batches.
   */
  public int[] cpuRows(int call) {
    return results.strings().cpuRows(call);
  }

  /** Rows handed to {@code call()} so far, per {@link CpuCause} (indexed by its ordinal). */
  public long[] cpuRowCauses() {
    return results.strings().causeCounts();
  }
}
