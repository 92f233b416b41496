package io.vkspark.gpu.column;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.OutputSlots;
import io.vkspark.gpu.ReplacementStats;
import io.vkspark.gpu.TimedDispatch;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

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
 * <p>The returned vectors belong to the runner and stay valid until the next {@link #append} (or
 * {@link #run}) or {@link #close()}. One runner serves one task (one thread).
 */
public final class BatchRunner implements AutoCloseable {
  private final BufferPool pool;
  private final GpuDevice device;
  private final List<KernelCall> calls;
  private final List<SqlType> inputTypes;
  /** Most rows per dispatch: the configured batch size, lowered when the device runs out of memory. */
  private int ceiling;
  /** Rows the current buffer set holds: grows in powers of two with the batches seen, up to the ceiling. */
  private int capacity;
  private final int workgroupSize;
  private final int maxGroupsX;
  private final OutputSlots slots;
  private final List<FieldVector> results = new ArrayList<>();
  private final ArrowBuf params;
  private final long[] lengths;
  private BufferSet set;
  /** Input columns of a variable-width type that some call reads. */
  private final int[] varColumns;
  /** Elements each variable-width column's data buffer holds (grows in powers of two with the rows seen). */
  private long varCapacity;
  /** Elements of each variable-width column staged in the buffer set for the rows not yet dispatched. */
  private final long[] varUsed;
  /**
   * Host copy of each array column's element validity for the pending rows: bits are assembled here
   * and written to the device with a plain copy, because reading device memory from the CPU (as a
   * read-modify-write of a shared word would) is very slow on discrete GPUs.
   */
  private final ArrowBuf[] varValidHost;
  /** Fewest elements per variable-width data buffer. */
  static final long MIN_VAR_ELEMENTS = 1L << 16;
  /** Most elements per variable-width data buffer (1 GiB of doubles). */
  public static final long MAX_VAR_ELEMENTS = 1L << 27;
  private BatchStats stats = BatchStats.ZERO;
  private long oomSplits;
  private long bufferBytes;
  private static final int MIN_SHAPE = 4096;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(BatchRunner.class);
  private boolean closed;
  private DecimalOverflow decimalOverflow = DecimalOverflow.ERROR;
  /**
   * Longest one dispatch may run (0: no limit); past it the kernel is aborted with a TIMEOUT error.
   * The device's fence timeout until {@link #bound} sets it.
   */
  private java.time.Duration kernelTimeout;
  private java.util.function.BooleanSupplier cancelled = () -> false;
  private final java.nio.ByteBuffer control =
      java.nio.ByteBuffer.allocateDirect(LoopGuard.CONTROL_BYTES).order(java.nio.ByteOrder.LITTLE_ENDIAN);
  /** Host memory for bit-packed columns that start or land off a 64-row boundary; grown on demand. */
  private ArrowBuf scratch;
  private final BufferAllocator allocator;
  /** Reduces the results on the device ({@link #runReduced}); null for a runner that reads them back. */
  private final ColumnReduction reduction;
  /** The staged batch's reduced values so far (one per aggregate); null before its first dispatch. */
  private ColumnReduction.Value[] reduced;
  /** Grouped: the staged batch's values so far per key slot; null before its first dispatch. */
  private ColumnReduction.Value[][] reducedByKey;
  /** Grouped: the staged batch's key range (slot s is key keyBase + s) and null keys' slot, if it has any. */
  private long keyBase;
  private int keyNullSlot;
  private boolean keyNulls;
  /** Grouped: host copy of the staged batch's key validity (uploaded per dispatch when it has null keys). */
  private ArrowBuf keyValidHost;
  /** Grouped: host side of the key parameters written before each dispatch. */
  private ArrowBuf keyParams;
  /** Grouped: batches whose key range did not fit the slots (left to the caller). */
  private long wideBatches;

  // The batch being staged: rows [0, dispatched) are read back into the slots, rows
  // [dispatched, staged) wait in the buffer set's inputs (at device rows [0, staged - dispatched)).
  private boolean begun;
  private int staged;
  private int dispatched;
  /** Null count of each call's result over the staged rows. */
  private final long[] nullCounts;
  private ReplacementStats batchSlots = ReplacementStats.ZERO;
  private long batchUploaded;
  private long batchRead;
  private long batchDeviceNs;
  private long batchWaitNs;
  private long batchHostNs;
  private long batchDispatches;

  /** How often a waiting task looks at its deadline and its cancellation. */
  static final java.time.Duration WAIT_SLICE = java.time.Duration.ofMillis(50);
  /** How long an aborted kernel may take to stop before the device counts as hung. */
  static final java.time.Duration ABORT_GRACE = java.time.Duration.ofSeconds(5);

  BatchRunner(BufferPool pool, GpuDevice device, List<KernelCall> calls, List<SqlType> inputTypes, int capacity,
              BufferAllocator allocator, ColumnReduction reduction) {
    this.pool = pool;
    this.reduction = reduction;
    this.device = device;
    this.calls = calls;
    this.inputTypes = inputTypes;
    this.ceiling = capacity;
    this.allocator = allocator;
    DeviceInfo info = device.info();
    this.workgroupSize = ColumnKernel.workgroupSize(info);
    this.maxGroupsX = info.maxWorkgroupCountX();
    this.kernelTimeout = device.options().fenceTimeout();
    this.slots = new OutputSlots(allocator);
    this.lengths = new long[2 * calls.size()];
    this.nullCounts = new long[calls.size()];
    this.params = allocator.buffer(ColumnKernel.PARAMS_BYTES);
    java.util.Set<Integer> read = new java.util.TreeSet<>();
    calls.forEach(c -> java.util.Arrays.stream(c.argColumns()).filter(i -> inputTypes.get(i).isVariableWidth()).forEach(read::add));
    this.varColumns = read.stream().mapToInt(Integer::intValue).toArray();
    this.varUsed = new long[inputTypes.size()];
    this.varValidHost = new ArrowBuf[inputTypes.size()];
    for (KernelCall call : calls) {
      KernelSignature sig = call.kernel().signature();
      results.add(new Field(sig.name(), FieldType.nullable(sig.resultArrowType()), null).createVector(allocator));
    }
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
  public void bound(java.time.Duration kernelTimeout, java.util.function.BooleanSupplier cancelled) {
    if (kernelTimeout == null || kernelTimeout.isNegative()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "kernel timeout " + kernelTimeout + " is negative or missing.",
          "use a positive duration, or zero for no limit.");
    }
    this.kernelTimeout = kernelTimeout;
    this.cancelled = cancelled == null ? () -> false : cancelled;
  }

  /** Most rows per dispatch (larger batches are split). */
  public int capacity() {
    return ceiling;
  }

  /**
   * Rows per dispatch of the buffers in use: the smallest power of two (at least 4,096) that holds
   * the largest batch so far, at most {@link #capacity()}. Small batches thus get small buffers.
   */
  public int currentCapacity() {
    return capacity;
  }

  private int shapeFor(int rows) {
    int pow2 = Integer.highestOneBit(Math.max(rows, MIN_SHAPE) - 1) << 1;
    return Math.min(ceiling, pow2 <= 0 ? Integer.MAX_VALUE : pow2);
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
    if (reduction != null && reduction.grouped()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, what + " on a runner with a grouped reduction.",
          "pass each whole batch to runGrouped(), which finds its key range first.");
    }
  }

  private void stage(List<InputColumn> given, int rows) {
    check(given, rows);
    if (rows > Integer.MAX_VALUE - staged) {
      throw GpuException.of(Code.SIZE, "appending " + rows + " rows to " + staged + " staged rows exceeds "
          + Integer.MAX_VALUE + " rows.", "take the results() of the staged rows first.");
    }
    try {
      long t0 = System.nanoTime();
      List<InputColumn> inputs = DecodedStrings.of(given, rows); // the body sees the string call() gets
      int base = staged;
      int total = staged + rows;
      sizeSlots(base, total);
      for (int i = 0; i < calls.size(); i++) {
        nullCounts[i] += validity(i, inputs, base, rows);
      }
      batchHostNs += System.nanoTime() - t0;
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
    if (reduction != null) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "results() of a runner that reduces on the device: its per-row "
          + "results never leave the device.", "call runReduced(), or make a runner without a reduction.");
    }
    finishDispatches();
    long h = System.nanoTime();
    for (int i = 0; i < calls.size(); i++) {
      results.get(i).loadFieldBuffers(new ArrowFieldNode(staged, nullCounts[i]), List.of(slots.slot(2 * i), slots.slot(2 * i + 1)));
    }
    batchHostNs += System.nanoTime() - h;
    recordStats();
    discard();
    return results;
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
    if (reduction == null) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "runReduced() on a runner without a reduction.",
          "make the runner with ColumnRuntime.runner(..., reduction).");
    }
    if (reduction.grouped()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "runReduced() on a runner that groups by a key.",
          "call runGrouped(), or make the runner with an ungrouped reduction (ColumnReduction.of).");
    }
    append(inputs, rows);
    finishDispatches();
    ColumnReduction.Result r = new ColumnReduction.Result(staged,
        List.of(reduced == null ? reduction.empty() : reduced));
    recordStats();
    discard();
    return r;
  }

  /**
   * Evaluates every call over {@code rows} rows of {@code inputs} and reduces the results per value
   * of the reduction's key ({@link ColumnReduction#grouped}) on the device, in the same submission:
   * the per-row results stay on the device and only one partial per aggregate and key slot the
   * batch's range spans comes back per dispatch. The key's range is found on the host first (one pass over the key column);
   * when its values, plus one slot for null keys, do not fit the reduction's slots, nothing is
   * staged or dispatched and the result is empty: the caller evaluates the batch another way
   * (e.g. with a plain runner, folding the rows on the host).
   *
   * @return the batch's groups, or empty when its key range is too wide for the slots
   * @throws GpuException INVALID_ARGUMENT on a runner without a grouped reduction, or with rows
   *     staged by {@link #append} (a grouped batch is taken in one call)
   */
  public java.util.Optional<ColumnReduction.Grouped> runGrouped(List<InputColumn> inputs, int rows) {
    ensureOpen();
    if (reduction == null || !reduction.grouped()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "runGrouped() on a runner without a grouped reduction.",
          "make the runner with ColumnRuntime.runner(..., ColumnReduction.grouped(...)).");
    }
    if (staged > 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "runGrouped() with " + staged + " rows staged by append().",
          "pass the whole batch to runGrouped(); a grouped batch's key range is found before it is staged.");
    }
    check(inputs, rows);
    long h = System.nanoTime();
    boolean fits = keyRange(inputs.get(reduction.keyColumn()), rows);
    batchHostNs += System.nanoTime() - h;
    if (!fits) {
      wideBatches++;
      batchHostNs = 0;
      return java.util.Optional.empty();
    }
    stage(inputs, rows);
    finishDispatches();
    ColumnReduction.Value[][] acc = reducedByKey;
    if (acc == null) {
      acc = new ColumnReduction.Value[reduction.slots()][];
      for (int s = 0; s < acc.length; s++) {
        acc[s] = reduction.empty();
      }
    }
    ColumnReduction.Grouped g = reduction.groups(staged, acc, keyBase, keyNullSlot, keyNulls);
    recordStats();
    discard();
    return java.util.Optional.of(g);
  }

  /** Grouped batches whose key range was too wide for the slots (runGrouped gave empty). */
  public long wideBatches() {
    return wideBatches;
  }

  /**
   * Finds the key's range over {@code rows} rows (sets keyBase, keyNullSlot, keyNulls and the host
   * copy of the key validity); whether its values, plus a slot for null keys, fit the slots.
   */
  private boolean keyRange(InputColumn key, int rows) {
    long vbytes = SqlType.BOOLEAN.bytesFor(rows);
    if (keyValidHost == null || keyValidHost.capacity() < vbytes) {
      if (keyValidHost != null) {
        keyValidHost.close();
      }
      keyValidHost = allocator.buffer(Math.max(vbytes, 64));
    }
    long valid = keyValidHost.memoryAddress();
    RawMemory.memSet(valid, 0xff, vbytes);
    boolean nulls = false;
    if (key.hasNulls() && rows > 0) {
      key.andValidity(valid, rows);
      nulls = nullCount(valid, vbytes, rows) > 0;
    }
    boolean wide = reduction.keyType() == SqlType.BIGINT;
    int width = wide ? 8 : 4;
    ArrowBuf s = scratch((long) rows * width);
    long at = s.memoryAddress();
    if (rows > 0) {
      key.copyValues(0, rows, at);
    }
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    for (int r = 0; r < rows; r++) {
      if (nulls && (RawMemory.memGetLong(valid + 8L * (r >>> 6)) & (1L << (r & 63))) == 0) {
        continue;
      }
      long v = wide ? RawMemory.memGetLong(at + 8L * r) : RawMemory.memGetInt(at + 4L * r);
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    long values = 0;
    if (min <= max) {
      long span = max - min; // may overflow for bigints far apart: then the range is too wide
      if (span < 0 || span >= reduction.slots()) {
        return false;
      }
      values = span + 1;
    }
    if (values + (nulls ? 1 : 0) > reduction.slots()) {
      return false;
    }
    keyBase = min <= max ? min : 0;
    keyNullSlot = (int) values;
    keyNulls = nulls;
    return true;
  }

  /** Dispatches what is pending for the batch being taken (slots sized even for no rows); discards the batch on failure. */
  private void finishDispatches() {
    try {
      if (!begun) {
        sizeSlots(0, 0);
      }
      dispatchPending();
    } catch (RuntimeException e) {
      discard();
      throw e;
    }
  }

  /** The reduction this runner computes on the device, or null when it reads results back. */
  public ColumnReduction reduction() {
    return reduction;
  }

  /** Sizes the output slots for {@code total} staged rows: fresh for a new batch, grown keeping their bytes otherwise. */
  private void sizeSlots(int base, int total) {
    for (int i = 0; i < calls.size(); i++) {
      lengths[2 * i] = SqlType.BOOLEAN.bytesFor(total);
      // reducing: only the validity is kept on the host (the device needs it); results stay on the device
      lengths[2 * i + 1] = reduction != null ? 0 : calls.get(i).kernel().signature().result().arrowBytesFor(total);
    }
    if (!begun) {
      batchSlots = slots.prepare(lengths);
      begun = true;
      return;
    }
    for (int j = 0; j < lengths.length; j++) {
      slots.grow(j, lengths[j]);
    }
  }

  /** Copies {@code rows} rows into the inputs, dispatching whenever the buffer set is full. */
  private void upload(List<InputColumn> inputs, int rows, int total) {
    int wanted = shapeFor(total);
    long wantedVar = varShapeFor(inputs, Math.min(rows, Math.max(wanted, capacity)));
    if (wanted > capacity || wantedVar > varCapacity) {
      if (set != null) {
        dispatchPending(); // the staged rows live in the smaller set
        pool.release(set);
        set = null;
      }
      capacity = Math.max(capacity, wanted);
      varCapacity = Math.max(varCapacity, wantedVar);
    }
    if (set == null) {
      acquireSet();
    }
    for (int done = 0; done < rows; ) {
      int pending = staged + done - dispatched;
      if (pending == capacity) {
        dispatchPending(staged + done);
        continue;
      }
      int n = Math.min(capacity - pending, rows - done);
      if (varColumns.length > 0) {
        n = fitVar(inputs, done, n);
        if (n == 0 && pending > 0) { // the data buffers are full: dispatch what they hold
          dispatchPending(staged + done);
          continue;
        }
        if (n == 0) { // one row's elements exceed the empty data buffers: larger ones
          growVar(varNeed(inputs, done, 1));
          continue;
        }
      }
      long h0 = System.nanoTime();
      uploadRows(inputs, done, n, pending);
      batchHostNs += System.nanoTime() - h0;
      done += n;
    }
  }

  /**
   * Elements the data buffers should hold for the first {@code rows} rows of this append behind
   * what is staged: a power of two, at least {@link #MIN_VAR_ELEMENTS}, at most
   * {@link #MAX_VAR_ELEMENTS}; 0 without variable-width columns.
   */
  private long varShapeFor(List<InputColumn> inputs, int rows) {
    if (varColumns.length == 0) {
      return 0;
    }
    long need = Math.max(MIN_VAR_ELEMENTS, varNeed(inputs, 0, rows));
    return Math.min(MAX_VAR_ELEMENTS, Long.highestOneBit(need - 1) << 1);
  }

  /** The most elements any variable-width column needs for rows {@code [from, from + n)} behind those staged. */
  private long varNeed(List<InputColumn> inputs, int from, int n) {
    long need = 0;
    for (int c : varColumns) {
      VarColumn v = (VarColumn) inputs.get(c);
      need = Math.max(need, varUsed[c] + v.offset(from + n) - v.offset(from));
    }
    return need;
  }

  /** The most rows from {@code from}, up to {@code n}, whose elements fit every data buffer behind what is staged. */
  private int fitVar(List<InputColumn> inputs, int from, int n) {
    for (int c : varColumns) {
      VarColumn v = (VarColumn) inputs.get(c);
      long room = varCapacity - varUsed[c];
      int base = v.offset(from);
      if (v.offset(from + n) - base <= room) {
        continue;
      }
      int lo = 0;
      int hi = n; // offset(from + lo) fits, offset(from + hi) does not
      while (hi - lo > 1) {
        int mid = (lo + hi) >>> 1;
        if (v.offset(from + mid) - base <= room) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      n = lo;
    }
    return n;
  }

  /** Takes a buffer set whose data buffers hold {@code need} elements (nothing is pending in the current one). */
  private void growVar(long need) {
    if (need > MAX_VAR_ELEMENTS) {
      throw GpuException.of(Code.SIZE, "one row of an argument of GPU UDF(s) " + udfNames(false) + " holds " + need
          + " elements (bytes of a string or binary, values of an array), more than the " + MAX_VAR_ELEMENTS
          + " one dispatch stages per argument.", "keep strings, binaries and arrays passed to GPU UDFs below "
          + MAX_VAR_ELEMENTS + " elements per row, or call the UDF's Java code for such rows.");
    }
    pool.release(set);
    set = null;
    varCapacity = Math.min(MAX_VAR_ELEMENTS, Long.highestOneBit(Math.max(need, MIN_VAR_ELEMENTS) - 1) << 1);
    acquireSet();
  }

  /**
   * Copies rows {@code [from, from + n)} of variable-width column {@code c} to device row
   * {@code at}: the offsets rebased behind the elements already staged, the elements and, for
   * arrays, their validity.
   */
  private void uploadVar(int c, VarColumn v, int from, int n, int at) {
    SqlType t = inputTypes.get(c);
    GpuBuffer offsets = set.inputs[c];
    int base = v.offset(from);
    long used = varUsed[c];
    long address = offsets.hostAddress();
    for (int k = 0; k <= n; k++) {
      RawMemory.memPutInt(address + 4L * (at + k), (int) (used + v.offset(from + k) - base));
    }
    offsets.flush(4L * at, 4L * (n + 1));
    batchUploaded += 4L * (n + 1);
    int elements = v.offset(from + n) - base;
    if (elements == 0) {
      return;
    }
    int width = VarArgs.elementBytes(t);
    GpuBuffer data = set.varData[c];
    v.copyElements(base, elements, data.hostAddress() + used * width);
    data.flush(used * width, (long) elements * width);
    batchUploaded += (long) elements * width;
    GpuBuffer valid = set.varValid[c];
    if (valid != null) {
      long host = validHost(c).memoryAddress();
      if (v.hasElementNulls()) {
        v.copyElementValidity(base, elements, host, used);
      } else {
        Bits.fill(host, used, elements);
      }
      long first = (used >>> 6) << 3;
      long end = ((used + elements + 63) >>> 6) << 3;
      RawMemory.memCopy(host + first, valid.hostAddress() + first, end - first);
      valid.flush(first, end - first);
      batchUploaded += end - first;
    }
    varUsed[c] = used + elements;
  }

  /** The host bitmap of array column {@code c}'s element validity, holding the data buffers' elements. */
  private ArrowBuf validHost(int c) {
    long bytes = SqlType.BOOLEAN.bytesFor(varCapacity);
    if (varValidHost[c] == null || varValidHost[c].capacity() < bytes) {
      if (varValidHost[c] != null) {
        varValidHost[c].close();
      }
      varValidHost[c] = allocator.buffer(bytes);
    }
    return varValidHost[c];
  }

  /** Copies rows {@code [from, from + n)} of every column read to device row {@code at} of its input buffer. */
  private void uploadRows(List<InputColumn> inputs, int from, int n, int at) {
    for (int c = 0; c < set.inputs.length; c++) {
      GpuBuffer buf = set.inputs[c];
      if (buf == null) {
        continue;
      }
      SqlType t = inputTypes.get(c);
      InputColumn in = inputs.get(c);
      if (t.isVariableWidth()) {
        uploadVar(c, (VarColumn) in, from, n, at);
      } else if (!t.isBitPacked()) {
        long offset = (long) at * t.byteWidth();
        long bytes = (long) n * t.byteWidth(); // tinyints and smallints land mid-word: no rounding up to the word
        in.copyValues(from, n, buf.hostAddress() + offset);
        buf.flush(offset, bytes);
        batchUploaded += bytes;
      } else if ((from & 63) == 0 && (at & 63) == 0) {
        long bytes = t.bytesFor(n);
        in.copyValues(from, n, buf.hostAddress() + at / 8);
        buf.flush(at / 8, bytes);
        batchUploaded += bytes;
      } else {
        // Bits off a 64-row boundary: copy whole words from the aligned start, then shift them into place.
        int lead = from & 63;
        ArrowBuf s = scratch(t.bytesFor(lead + n));
        in.copyValues(from - lead, lead + n, s.memoryAddress());
        Bits.copy(s.memoryAddress(), lead, buf.hostAddress(), at, n);
        long first = (long) (at >>> 6) << 3;
        long bytes = t.bytesFor(at + n) - first;
        buf.flush(first, bytes);
        batchUploaded += bytes;
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
    long h0 = System.nanoTime();
    Groups g = Groups.covering(n, workgroupSize, maxGroupsX);
    params.setInt(0, n);
    params.setInt(4, reduction == null ? 0 : uploadValidity(n)); // which validity buffers the reduction reads
    params.setInt(ColumnKernel.GROUPS_OFFSET, g.x());
    params.setInt(ColumnKernel.GROUPS_OFFSET + 4, g.y());
    params.setInt(ColumnKernel.GROUPS_OFFSET + 8, g.z());
    set.params.write(0, params.memoryAddress(), ColumnKernel.PARAMS_BYTES);
    if (reduction != null && reduction.grouped()) {
      writeKeyParams(n);
    }
    int loopLimit = device.loopLimit();
    control.clear();
    control.putInt(LoopGuard.ABORT_OFFSET, 0)
        .putInt(LoopGuard.CANARY_OFFSET, loopLimit > 0 ? LoopGuard.CANARY_PASSES : 0)
        .putInt(LoopGuard.TRUNCATED_OFFSET, 0).putInt(12, 0);
    set.control.write(0, control);
    batchHostNs += System.nanoTime() - h0;
    TimedDispatch t = dispatchBounded();
    int cut = truncatedRows();
    if (cut > 0) {
      throw loopLimitError(cut, n, loopLimit);
    }
    batchDispatches++;
    batchWaitNs += t.waitNs();
    batchDeviceNs += t.deviceNs() == null ? 0 : t.deviceNs();
    long h1 = System.nanoTime();
    if (reduction == null) {
      readback(dispatched, n);
    } else {
      foldPartials(n);
    }
    batchHostNs += System.nanoTime() - h1;
    dispatched = upTo;
    java.util.Arrays.fill(varUsed, 0L); // the data buffers are free again
  }

  /**
   * Writes the validity of the {@code n} rows being dispatched to the device for each call the
   * reduction reads that has nulls among them; returns a bit per such call (the params' word at
   * byte 4), so calls without nulls upload nothing.
   */
  private int uploadValidity(int n) {
    int mask = 0;
    long bytes = SqlType.BOOLEAN.bytesFor(n);
    for (int c : reduction.reads()) {
      if (nullCounts[c] == 0) {
        continue;
      }
      ArrowBuf s = scratch(bytes);
      Bits.copy(slots.slot(2 * c).memoryAddress(), dispatched, s.memoryAddress(), 0, n);
      long valid = 0;
      for (long w = 0; w < bytes; w += 8) {
        valid += Long.bitCount(RawMemory.memGetLong(s.memoryAddress() + w));
      }
      if (valid < n) {
        set.valid[c].write(0, s.memoryAddress(), bytes);
        batchUploaded += bytes;
        mask |= 1 << c;
      }
    }
    return mask;
  }

  /**
   * Grouped: writes the key parameters (base, null slot, whether keys are null, the first pass's
   * group counts and their total) and, when the batch has null keys, the key validity of the
   * {@code n} rows being dispatched.
   */
  private void writeKeyParams(int n) {
    if (keyParams == null) {
      keyParams = allocator.buffer(ColumnReduction.KEY_PARAMS_BYTES);
    }
    long perGroup = (long) set.keyChunks * workgroupSize;
    Groups g = Groups.covering(n, (int) perGroup, maxGroupsX);
    keyParams.setLong(0, keyBase);
    keyParams.setInt(8, keyNullSlot);
    keyParams.setInt(12, keyNulls ? 1 : 0);
    keyParams.setInt(ColumnReduction.KEY_GROUPS_OFFSET, g.x());
    keyParams.setInt(ColumnReduction.KEY_GROUPS_OFFSET + 4, g.y());
    keyParams.setInt(ColumnReduction.KEY_GROUPS_OFFSET + 8, g.z());
    keyParams.setInt(28, (int) ((n + perGroup - 1) / perGroup));
    keyParams.setInt(32, keyNullSlot + (keyNulls ? 1 : 0)); // the slots in use
    keyParams.setInt(36, set.keyChunks);
    keyParams.setLong(40, 0);
    set.keyParams.write(0, keyParams.memoryAddress(), ColumnReduction.KEY_PARAMS_BYTES);
    if (keyNulls) {
      long bytes = SqlType.BOOLEAN.bytesFor(n);
      ArrowBuf s = scratch(bytes);
      Bits.copy(keyValidHost.memoryAddress(), dispatched, s.memoryAddress(), 0, n);
      set.keyValid.write(0, s.memoryAddress(), bytes);
      batchUploaded += bytes;
    }
  }

  /** Reads the partials of the {@code n} rows just dispatched and folds them, in row order, into {@link #reduced}. */
  private void foldPartials(int n) {
    if (reduction.grouped()) {
      int used = keyNullSlot + (keyNulls ? 1 : 0); // the slots the batch's key range spans: only they are read
      long bytes = reduction.keyedResultBytes(used);
      ArrowBuf s = scratch(bytes);
      set.keyed.read(0, s.memoryAddress(), bytes);
      batchRead += bytes;
      if (reducedByKey == null) {
        reducedByKey = new ColumnReduction.Value[reduction.slots()][];
        for (int k = 0; k < reducedByKey.length; k++) {
          reducedByKey[k] = reduction.empty();
        }
      }
      reduction.foldKeyed(s.memoryAddress(), used, reducedByKey);
      return;
    }
    int groups = (int) ((n + (long) workgroupSize - 1) / workgroupSize);
    long bytes = reduction.partialBytes(groups);
    ArrowBuf s = scratch(bytes);
    set.partials.read(0, s.memoryAddress(), bytes);
    batchRead += bytes;
    if (reduced == null) {
      reduced = reduction.empty();
    }
    reduction.fold(s.memoryAddress(), groups, reduced);
  }

  /** Reads {@code n} result rows of every call into its data slot at row {@code at}. */
  private void readback(int at, int n) {
    for (int i = 0; i < calls.size(); i++) {
      SqlType type = calls.get(i).kernel().signature().result();
      ArrowBuf data = slots.slot(2 * i + 1);
      if (type == SqlType.DECIMAL) {
        long bytes = (long) n * type.byteWidth();
        ArrowBuf s = scratch(bytes);
        set.outputs[i].read(0, s.memoryAddress(), bytes);
        widenDecimals(i, s.memoryAddress(), data.memoryAddress(), at, n);
        batchRead += bytes;
      } else if (!type.isBitPacked()) {
        long bytes = (long) n * type.byteWidth();
        set.outputs[i].read(0, data.memoryAddress() + (long) at * type.byteWidth(), bytes);
        batchRead += bytes;
      } else if ((at & 63) == 0) {
        long bytes = (n + 7) / 8;
        set.outputs[i].read(0, data.memoryAddress() + at / 8, bytes);
        batchRead += bytes;
      } else {
        long bytes = type.bytesFor(n);
        ArrowBuf s = scratch(bytes);
        set.outputs[i].read(0, s.memoryAddress(), bytes);
        Bits.copy(s.memoryAddress(), 0, data.memoryAddress(), at, n);
        batchRead += bytes;
      }
    }
  }

  /**
   * Writes call {@code i}'s {@code n} unscaled int64 results at {@code src} as Arrow Decimal128
   * (sign-extended) into its data slot from row {@code at}; a non-null value with more digits than
   * the result's precision becomes null ({@link DecimalOverflow#NULL}) or fails the batch
   * ({@link DecimalOverflow#ERROR}).
   */
  private void widenDecimals(int i, long src, long dst, int at, int n) {
    KernelSignature sig = calls.get(i).kernel().signature();
    long max = sig.resultDecimal().maxUnscaled();
    long validity = slots.slot(2 * i).memoryAddress();
    for (int r = 0; r < n; r++) {
      long v = RawMemory.memGetLong(src + 8L * r);
      int row = at + r;
      if ((v > max || v < -max) && Bits.get(validity, row)) {
        if (decimalOverflow == DecimalOverflow.ERROR) {
          throw GpuException.of(Code.OVERFLOW, "GPU UDF '" + sig.name() + "' returned " + sig.resultDecimal().value(v)
                  + " for row " + row + " of the batch, which does not fit its result type " + sig.resultSqlName() + ".",
              "return values of at most " + sig.resultDecimal().precision() + " digits from '" + sig.name()
                  + "', declare a wider decimal result, or let overflow give null (spark.sql.ansi.enabled=false).");
        }
        Bits.clear(validity, row);
        nullCounts[i]++;
        v = 0;
      }
      long d = dst + 16L * row;
      RawMemory.memPutLong(d, v);
      RawMemory.memPutLong(d + 8, v >> 63);
    }
  }

  /**
   * What a decimal result too wide for its precision gives: null, or (the default) an OVERFLOW
   * error. Spark's rule for a UDF's {@code BigDecimal} result is null with
   * {@code spark.sql.ansi.enabled=false}, an error with it on.
   */
  public void onDecimalOverflow(DecimalOverflow policy) {
    this.decimalOverflow = java.util.Objects.requireNonNull(policy, "policy");
  }

  /** Adds the finished batch to the totals the metrics read. */
  private void recordStats() {
    stats = stats.plus(new BatchStats(1, staged, batchDispatches, batchUploaded, batchRead, batchDeviceNs, batchWaitNs,
        batchHostNs, batchSlots));
  }

  /** Forgets the staged batch (taken, or failed). The buffer set stays. */
  private void discard() {
    begun = false;
    staged = 0;
    dispatched = 0;
    java.util.Arrays.fill(nullCounts, 0);
    java.util.Arrays.fill(varUsed, 0L);
    reduced = null;
    reducedByKey = null;
    batchSlots = ReplacementStats.ZERO;
    batchUploaded = 0;
    batchRead = 0;
    batchDeviceNs = 0;
    batchWaitNs = 0;
    batchHostNs = 0;
    batchDispatches = 0;
  }

  private ArrowBuf scratch(long bytes) {
    if (scratch == null || scratch.capacity() < bytes) {
      if (scratch != null) {
        scratch.close();
      }
      scratch = allocator.buffer(Math.max(bytes, 1024));
    }
    return scratch;
  }

  private TimedDispatch dispatchBounded() {
    try {
      set.dispatch.replay();
      long start = System.nanoTime();
      while (true) {
        TimedDispatch t = set.dispatch.awaitFor(WAIT_SLICE);
        if (t != null) {
          return t;
        }
        boolean cancel = Thread.currentThread().isInterrupted() || cancelled.getAsBoolean();
        boolean late = !kernelTimeout.isZero() && System.nanoTime() - start >= kernelTimeout.toNanos();
        if (cancel || late) {
          throw abort(cancel, start);
        }
      }
    } catch (GpuException e) {
      if (e.code() == Code.DEVICE_LOST && set != null) {
        abandonSet();
      }
      throw e;
    }
  }

  /** Sets the abort word and waits a bounded grace for the kernel to stop. */
  private GpuException abort(boolean cancel, long start) {
    control.clear();
    control.putInt(0, 1).limit(4);
    set.control.write(LoopGuard.ABORT_OFFSET, control);
    long aborted = System.nanoTime();
    TimedDispatch stopped = set.dispatch.awaitFor(ABORT_GRACE);
    long ms = (System.nanoTime() - start) / 1_000_000;
    long stopMs = (System.nanoTime() - aborted) / 1_000_000;
    String udfs = udfNames(false);
    if (stopped == null) {
      abandonSet();
      return GpuException.of(Code.DEVICE_LOST, "GPU UDF(s) " + udfs + " did not stop within " + ABORT_GRACE.toSeconds()
          + " s of being aborted (after " + ms + " ms) on '" + device.info().name()
          + "'; the device is treated as hung.", "nothing to do for this query (a Spark executor opens its device "
          + "again for later tasks); if it repeats, bound the UDF's loops or lower spark.vkspark.batchRows.");
    }
    LOG.warn("vkspark: aborted GPU UDF(s) {} after {} ms ({}); the kernel stopped {} ms after the abort", udfs, ms,
        cancel ? "task cancelled" : "kernel timeout " + kernelTimeout, stopMs);
    if (cancel) {
      return GpuException.of(Code.CANCELLED, "GPU UDF(s) " + udfs + " were cancelled after " + ms
          + " ms (the task was killed); the kernel was aborted and the GPU released.",
          "nothing to do: the task was cancelled on purpose.");
    }
    return GpuException.of(Code.TIMEOUT, "GPU UDF(s) " + udfs + " ran longer than the kernel timeout of "
        + kernelTimeout.toMillis() + " ms on one batch of up to " + capacity + " rows; the kernel was aborted after "
        + ms + " ms.", "check the UDF's loops for one that never ends, or raise spark.vkspark.kernelTimeout "
        + "(0 for no limit), or lower spark.vkspark.batchRows.");
  }

  /** A set whose dispatch may still run: never reused; the device closes it. */
  private void abandonSet() {
    BufferSet s = set;
    set = null;
    pool.abandon(s);
  }

  private int truncatedRows() {
    control.clear();
    control.limit(4);
    set.control.read(LoopGuard.TRUNCATED_OFFSET, control);
    return control.getInt(0);
  }

  private GpuException loopLimitError(int cut, int rows, int loopLimit) {
    return GpuException.of(Code.LOOP_LIMIT, String.format("GPU UDF(s) %s ran into the loop limit of device '%s' in up "
        + "to %,d of %,d rows: its driver stops loops after %,d iterations in total per invocation (all loops of a "
        + "SIMD group together; lavapipe/llvmpipe does) and carries on with the values it has, so the batch's GPU "
        + "results were discarded.", udfNames(true), device.info().name(), cut, rows, loopLimit),
        "let such batches run on the CPU with the UDF's call() (spark.vkspark.fallback=true), run on a GPU "
            + "without a loop limit, or keep the UDF's loops well below " + loopLimit + " iterations per row in total.");
  }

  private String udfNames(boolean loopsOnly) {
    List<String> names = new ArrayList<>();
    for (KernelCall c : calls) {
      if (!loopsOnly || c.kernel().hasLoops()) {
        names.add("'" + c.kernel().signature().name() + "'");
      }
    }
    return String.join(", ", names.isEmpty() ? List.of("?") : names);
  }

  /**
   * Takes a buffer set of the current capacity from the pool. The pool may hand out a smaller one
   * when device memory is short: batches then run in more, smaller dispatches instead of failing.
   */
  private void acquireSet() {
    set = pool.acquire(new BufferSet.Key(calls, inputTypes, capacity, varCapacity, reduction));
    int got = set.key.capacity();
    while (capacity > got) {
      capacity = BufferPool.smaller(capacity);
      oomSplits++;
    }
    capacity = got;
    ceiling = Math.min(ceiling, got);
    bufferBytes = Math.max(bufferBytes, set.deviceBytes);
  }

  /** Device memory of the largest buffer set this runner used (inputs, outputs, parameters). */
  public long bufferBytes() {
    return bufferBytes;
  }

  /** How often this runner halved its capacity because the device ran out of memory. */
  public long outOfMemorySplits() {
    return oomSplits;
  }

  private void check(List<InputColumn> inputs, int rows) {
    if (inputs.size() != inputTypes.size()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "batch has " + inputs.size() + " columns but the runner expects "
          + inputTypes.size() + ".", "pass the columns the runner was created with, in order.");
    }
    for (int c = 0; c < inputs.size(); c++) {
      InputColumn in = inputs.get(c);
      if (in.type() != inputTypes.get(c) || in.rows() < rows || (in.type().isVariableWidth() && !(in instanceof VarColumn))) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "column " + c + " is " + in.type().sqlName() + " with " + in.rows()
            + " rows; expected " + inputTypes.get(c).sqlName() + " with at least " + rows + ".",
            "pass columns of the runner's types holding every row of the batch.");
      }
    }
    if (rows < 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "batch of " + rows + " rows.", "pass 0 or more rows.");
    }
  }

  /**
   * Writes the AND of call {@code i}'s argument validity for {@code rows} rows into its validity
   * slot at row {@code at}; returns the null count.
   */
  private long validity(int i, List<InputColumn> inputs, int at, int rows) {
    ArrowBuf slot = slots.slot(2 * i);
    if ((at & 63) == 0) {
      return validity(calls.get(i), inputs, slot.memoryAddress() + at / 8, rows);
    }
    ArrowBuf s = scratch(SqlType.BOOLEAN.bytesFor(rows));
    long nulls = validity(calls.get(i), inputs, s.memoryAddress(), rows);
    Bits.copy(s.memoryAddress(), 0, slot.memoryAddress(), at, rows);
    return nulls;
  }

  /** Writes the AND of the call's argument validity to {@code address}; returns the null count. */
  private static long validity(KernelCall call, List<InputColumn> inputs, long address, int rows) {
    long bytes = SqlType.BOOLEAN.bytesFor(rows);
    RawMemory.memSet(address, 0xff, bytes);
    boolean any = false;
    int[] cols = call.argColumns();
    for (int a = 0; a < cols.length; a++) {
      if (indexOf(cols, cols[a]) == a && inputs.get(cols[a]).hasNulls()) {
        inputs.get(cols[a]).andValidity(address, rows);
        any = true;
      }
    }
    return any ? nullCount(address, bytes, rows) : 0;
  }

  /**
   * The null count of a validity bitmap of {@code rows} rows ({@code bytes}, whole 64-bit words) at
   * {@code address}; clears the bits past the last row first, so the count (and Arrow) see only real rows.
   */
  private static long nullCount(long address, long bytes, int rows) {
    int tail = rows & 63;
    if (tail != 0) {
      long last = address + 8L * (rows >>> 6);
      RawMemory.memPutLong(last, RawMemory.memGetLong(last) & ((1L << tail) - 1));
    }
    long valid = 0;
    for (long w = 0; w < bytes; w += 8) {
      valid += Long.bitCount(RawMemory.memGetLong(address + w));
    }
    return rows - valid;
  }

  private static int indexOf(int[] a, int v) {
    for (int i = 0; i < a.length; i++) {
      if (a[i] == v) {
        return i;
      }
    }
    return -1;
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
    if (set != null && staged == dispatched && !set.dispatch.isInFlight()) {
      pool.release(set);
      set = null;
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
    if (set != null) {
      boolean idle = !set.dispatch.isInFlight();
      if (!idle) {
        try {
          idle = set.dispatch.awaitFor(ABORT_GRACE) != null;
        } catch (GpuException e) {
          LOG.warn("vkspark: waiting for the last dispatch while closing: {}", e.getMessage());
        }
      }
      if (idle) {
        pool.release(set);
        set = null;
      } else {
        abandonSet();
      }
    }
    results.forEach(FieldVector::close);
    slots.close();
    params.close();
    if (scratch != null) {
      scratch.close();
    }
    if (keyValidHost != null) {
      keyValidHost.close();
    }
    if (keyParams != null) {
      keyParams.close();
    }
    for (ArrowBuf b : varValidHost) {
      if (b != null) {
        b.close();
      }
    }
  }
}
