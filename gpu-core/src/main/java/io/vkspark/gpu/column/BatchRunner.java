package io.vkspark.gpu.column;

import io.vkspark.gpu.DeviceInfo;
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
import org.apache.arrow.memory.util.MemoryUtil;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * Runs column kernels over a stream of batches of varying size on one device. For each batch it
 * copies each argument column into GPU input memory with one bulk copy, sets the row count,
 * replays the pre-recorded indirect dispatch, and reads each result into an Arrow vector whose
 * buffers are reused from the previous batch ({@link OutputSlots}: after the first batch, equal or
 * smaller batches reuse every slot). Batches above capacity run in several dispatches.
 *
 * <p>Null semantics are strict: a row with any null argument has a null result. The result's
 * validity is the AND of its arguments' validity, computed on the host a 64-bit word at a time,
 * and skipped for columns without nulls.
 *
 * <p>The returned vectors belong to the runner and stay valid until the next {@link #run} or
 * {@link #close()}. One runner serves one task (one thread).
 */
public final class BatchRunner implements AutoCloseable {
  private final ColumnRuntime runtime;
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
  private BatchStats stats = BatchStats.ZERO;
  private long oomSplits;
  private long bufferBytes;
  private static final int MIN_CAPACITY = 1024;
  private static final int MIN_SHAPE = 4096;
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(BatchRunner.class);
  private boolean closed;
  /**
   * Longest one dispatch may run (0: no limit); past it the kernel is aborted with a TIMEOUT error.
   * The device's fence timeout until {@link #bound} sets it.
   */
  private java.time.Duration kernelTimeout;
  private java.util.function.BooleanSupplier cancelled = () -> false;
  private final java.nio.ByteBuffer control =
      java.nio.ByteBuffer.allocateDirect(LoopGuard.CONTROL_BYTES).order(java.nio.ByteOrder.LITTLE_ENDIAN);
  /** How often a waiting task looks at its deadline and its cancellation. */
  static final java.time.Duration WAIT_SLICE = java.time.Duration.ofMillis(50);
  /** How long an aborted kernel may take to stop before the device counts as hung. */
  static final java.time.Duration ABORT_GRACE = java.time.Duration.ofSeconds(5);

  BatchRunner(ColumnRuntime runtime, List<KernelCall> calls, List<SqlType> inputTypes, int capacity, BufferAllocator allocator) {
    this.runtime = runtime;
    this.calls = calls;
    this.inputTypes = inputTypes;
    this.ceiling = capacity;
    DeviceInfo info = runtime.device().info();
    this.workgroupSize = ColumnKernel.workgroupSize(info);
    this.maxGroupsX = info.maxWorkgroupCountX();
    this.kernelTimeout = runtime.device().options().fenceTimeout();
    this.slots = new OutputSlots(allocator);
    this.lengths = new long[2 * calls.size()];
    this.params = allocator.buffer(ColumnKernel.PARAMS_BYTES);
    for (KernelCall call : calls) {
      SqlType t = call.kernel().signature().result();
      results.add(new Field(call.kernel().signature().name(), FieldType.nullable(t.arrowType()), null).createVector(allocator));
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
   * Evaluates every call over {@code rows} rows of {@code inputs}.
   *
   * @return one vector per call, in call order, owned by this runner
   */
  public List<FieldVector> run(List<InputColumn> inputs, int rows) {
    if (closed) {
      throw GpuException.of(Code.CLOSED, "batch runner used after close().", "create a new runner.");
    }
    check(inputs, rows);
    long t0 = System.nanoTime();
    for (int i = 0; i < calls.size(); i++) {
      lengths[2 * i] = SqlType.BOOLEAN.bytesFor(rows);
      lengths[2 * i + 1] = calls.get(i).kernel().signature().result().bytesFor(rows);
    }
    ReplacementStats slotStats = slots.prepare(lengths);
    long[] nullCounts = new long[calls.size()];
    for (int i = 0; i < calls.size(); i++) {
      nullCounts[i] = validity(calls.get(i), inputs, slots.slot(2 * i), rows);
    }
    long hostNs = System.nanoTime() - t0;
    long uploaded = 0;
    long read = 0;
    long deviceNs = 0;
    long waitNs = 0;
    long dispatches = 0;
    int wanted = shapeFor(rows);
    if (wanted > capacity) {
      if (set != null) {
        runtime.release(set);
        set = null;
      }
      capacity = wanted;
    }
    if (rows > 0) {
      if (set == null) {
        set = acquire();
        bufferBytes = Math.max(bufferBytes, set.deviceBytes);
      }
      for (int start = 0; start < rows; start += capacity) {
        int n = Math.min(capacity, rows - start);
        long h0 = System.nanoTime();
        for (int c = 0; c < set.inputs.length; c++) {
          if (set.inputs[c] != null) {
            long bytes = inputTypes.get(c).bytesFor(n);
            inputs.get(c).copyValues(start, n, set.inputs[c].hostAddress());
            set.inputs[c].flush(0, bytes);
            uploaded += bytes;
          }
        }
        Groups g = Groups.covering(n, workgroupSize, maxGroupsX);
        params.setInt(0, n);
        params.setInt(ColumnKernel.GROUPS_OFFSET, g.x());
        params.setInt(ColumnKernel.GROUPS_OFFSET + 4, g.y());
        params.setInt(ColumnKernel.GROUPS_OFFSET + 8, g.z());
        set.params.write(0, params.memoryAddress(), ColumnKernel.PARAMS_BYTES);
        int loopLimit = runtime.loopLimit();
        control.clear();
        control.putInt(LoopGuard.ABORT_OFFSET, 0)
            .putInt(LoopGuard.CANARY_OFFSET, loopLimit > 0 ? LoopGuard.CANARY_PASSES : 0)
            .putInt(LoopGuard.TRUNCATED_OFFSET, 0).putInt(12, 0);
        set.control.write(0, control);
        hostNs += System.nanoTime() - h0;
        TimedDispatch t = dispatchBounded();
        int cut = truncatedRows();
        if (cut > 0) {
          throw loopLimitError(cut, n, loopLimit);
        }
        dispatches++;
        waitNs += t.waitNs();
        deviceNs += t.deviceNs() == null ? 0 : t.deviceNs();
        long h1 = System.nanoTime();
        for (int i = 0; i < calls.size(); i++) {
          SqlType type = calls.get(i).kernel().signature().result();
          ArrowBuf data = slots.slot(2 * i + 1);
          long offset = type.isBitPacked() ? start / 8 : (long) start * type.byteWidth();
          long bytes = type.isBitPacked() ? (n + 7) / 8 : (long) n * type.byteWidth();
          set.outputs[i].read(0, data.memoryAddress() + offset, bytes);
          read += bytes;
        }
        hostNs += System.nanoTime() - h1;
      }
    }
    long h2 = System.nanoTime();
    for (int i = 0; i < calls.size(); i++) {
      results.get(i).loadFieldBuffers(new ArrowFieldNode(rows, nullCounts[i]), List.of(slots.slot(2 * i), slots.slot(2 * i + 1)));
    }
    hostNs += System.nanoTime() - h2;
    stats = stats.plus(new BatchStats(1, rows, dispatches, uploaded, read, deviceNs, waitNs, hostNs, slotStats));
    return results;
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
          + " s of being aborted (after " + ms + " ms) on '" + runtime.device().info().name()
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
    runtime.abandon(s);
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
        + "results were discarded.", udfNames(true), runtime.device().info().name(), cut, rows, loopLimit),
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
   * The buffer set for the current capacity. When the device runs out of memory, the capacity is
   * halved (down to 1,024 rows) and batches run in more, smaller dispatches instead of failing.
   */
  private BufferSet acquire() {
    while (true) {
      try {
        return runtime.acquire(new BufferSet.Key(calls, inputTypes, capacity));
      } catch (GpuException e) {
        if (e.code() != Code.OUT_OF_MEMORY || capacity <= MIN_CAPACITY) {
          throw e;
        }
        int smaller = Math.max(MIN_CAPACITY, capacity / 2 / 64 * 64);
        LOG.warn("out of device memory for {} rows per dispatch; splitting batches into {} rows: {}", capacity, smaller,
            e.getMessage());
        capacity = smaller;
        ceiling = Math.min(ceiling, smaller);
        oomSplits++;
      }
    }
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
      if (in.type() != inputTypes.get(c) || in.rows() < rows) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "column " + c + " is " + in.type().sqlName() + " with " + in.rows()
            + " rows; expected " + inputTypes.get(c).sqlName() + " with at least " + rows + ".",
            "pass columns of the runner's types holding every row of the batch.");
      }
    }
    if (rows < 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "batch of " + rows + " rows.", "pass 0 or more rows.");
    }
  }

  /** Writes the AND of the call's argument validity into {@code dst}; returns the null count. */
  private static long validity(KernelCall call, List<InputColumn> inputs, ArrowBuf dst, int rows) {
    long bytes = SqlType.BOOLEAN.bytesFor(rows);
    long address = dst.memoryAddress();
    MemoryUtil.setMemory(address, bytes, (byte) 0xff);
    boolean any = false;
    int[] cols = call.argColumns();
    for (int a = 0; a < cols.length; a++) {
      if (indexOf(cols, cols[a]) == a && inputs.get(cols[a]).hasNulls()) {
        inputs.get(cols[a]).andValidity(address, rows);
        any = true;
      }
    }
    if (!any) {
      return 0;
    }
    // Clear the bits past the last row so the count (and Arrow) see only real rows.
    int tail = rows & 63;
    if (tail != 0) {
      long last = address + 8L * (rows >>> 6);
      MemoryUtil.putLong(last, MemoryUtil.getLong(last) & ((1L << tail) - 1));
    }
    long valid = 0;
    for (long w = 0; w < bytes; w += 8) {
      valid += Long.bitCount(MemoryUtil.getLong(address + w));
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

  /**
   * Returns the GPU buffers to the runtime's pool until the next {@link #run}. A runner that only
   * holds them while it runs lets a few buffer sets serve many tasks, bounding device memory by the
   * number of tasks on the GPU at once rather than by the number of tasks.
   */
  public void releaseBuffers() {
    if (set != null && !set.dispatch.isInFlight()) {
      runtime.release(set);
      set = null;
    }
  }

  /** Totals over every batch so far. */
  public BatchStats stats() {
    return stats;
  }

  /** Returns the buffer set to the runtime's pool and frees the result vectors. */
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
        runtime.release(set);
        set = null;
      } else {
        abandonSet();
      }
    }
    results.forEach(FieldVector::close);
    slots.close();
    params.close();
  }
}
