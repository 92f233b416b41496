package io.vkspark.spark.exec;

import io.vkspark.spark.api.SparkTypes;
import io.vkspark.spark.cache.CachedColumn;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.executor.GpuLease;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.ReplacementStats;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.cache.ResidentCopies;
import io.vkspark.gpu.column.BatchStats;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.run.DecimalOverflow;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.call.NodeMetrics;
import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.exec.call.VkMetric;
import io.vkspark.spark.exec.input.RowBytes;
import io.vkspark.spark.exec.input.SparkInputs;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The GPU side of one task of a GPU node: the runners of its GPU calls (the arguments they read are
 * the runners' input columns) and what every GPU batch shares: the GPU permit, the metrics, the
 * bounds a runner is made with, and what a failed dispatch means. Apart from the iterator so that
 * the plain evaluation and a fused aggregate's reduction share one path to the device.
 */
final class GpuBatchStep implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GpuBatchStep.class);

  private final ExecutorDevice gpu;
  private final List<GpuUdfCall> calls = new ArrayList<>();
  private final List<Integer> columns = new ArrayList<>();
  private final VkConf conf;
  private final NodeMetrics metrics;
  private final BufferAllocator allocator;
  /** A grouped reduction's key: its column, and its type as a runner input (-1 and null when none). */
  private final int keyOrdinal;
  private final SqlType keyType;
  /** The child's column types: the runner takes a column only a reduction's filter reads as its own type. */
  private final List<DataType> childTypes;
  /** What {@link #runner} reduces with, when the task reduces on the GPU (set before its first batch). */
  private ColumnReduction reduction;
  private BatchRunner runner;
  /** Evaluates, with the rows read back, the batches whose keys are too wide for a grouped reduction. */
  private BatchRunner rowRunner;
  private BatchStats reported = BatchStats.ZERO;
  /** What {@link #rowRunner}'s stats were when last reported (its totals are separate from the runner's). */
  private BatchStats rowReported = BatchStats.ZERO;
  private long taskBufferBytes;
  private boolean loopLimitLogged;
  /** {@link #neverRecomputes()}, found once. */
  private Boolean neverRecomputes;
  /** Rows per cause each runner had handed to call() when last counted ({@link #handedBack}). */
  private final Map<BatchRunner, long[]> causesSeen = new IdentityHashMap<>();

  /**
   * @param placed the node's calls as placed on this executor (those on the GPU run here)
   * @param gpu this executor's device; null when no call runs on it
   * @param keyOrdinal a grouped reduction's key column (a runner input whether or not a call reads
   *     it: the device reduces per key value); -1 for none
   * @param filterColumns the columns a reduction's absorbed filter reads (runner inputs too)
   */
  GpuBatchStep(List<GpuUdfCall> placed, ExecutorDevice gpu, List<DataType> childTypes, int keyOrdinal,
               List<Integer> filterColumns, VkConf conf, NodeMetrics metrics, BufferAllocator allocator) {
    this.gpu = gpu;
    this.childTypes = childTypes;
    this.conf = conf;
    this.metrics = metrics;
    this.allocator = allocator;
    for (GpuUdfCall c : placed) {
      if (c.onGpu()) {
        calls.add(c);
        for (int o : c.argOrdinals()) {
          if (o >= 0 && !columns.contains(o)) { // -1: a constant argument reads no column
            columns.add(o);
          }
        }
      }
    }
    if (keyOrdinal >= 0 && !calls.isEmpty()) {
      this.keyOrdinal = keyOrdinal;
      this.keyType = SparkTypes.of(childTypes.get(keyOrdinal)).orElseThrow();
      if (!columns.contains(keyOrdinal)) {
        columns.add(keyOrdinal);
      }
    } else {
      this.keyOrdinal = -1;
      this.keyType = null;
    }
    for (int o : calls.isEmpty() ? List.<Integer>of() : filterColumns) {
      if (!columns.contains(o)) {
        columns.add(o);
      }
    }
  }

  /** The calls that run on the GPU, in the node's order. */
  List<GpuUdfCall> calls() {
    return calls;
  }

  ExecutorDevice gpu() {
    return gpu;
  }

  /** The runner input that holds column {@code ordinal} of the child, -1 for none. */
  int inputOf(int ordinal) {
    return columns.indexOf(ordinal);
  }

  /** Makes this task's runner reduce with {@code r}: called before its first batch. */
  void reduceWith(ColumnReduction r) {
    this.reduction = r;
  }

  /** This task's batch runner, made on its first GPU batch (while it holds the GPU permit). */
  BatchRunner runner() {
    if (runner == null) {
      runner = newRunner(reduction);
    }
    return runner;
  }

  /** The runner that reads the calls' rows back: a reducing task's plain one (its too-wide batches), else {@link #runner}. */
  BatchRunner rowsRunner() {
    if (reduction == null) {
      return runner();
    }
    if (rowRunner == null) {
      rowRunner = newRunner(null);
    }
    return rowRunner;
  }

  /** One GPU run of a runner over a batch's input columns: its outcome (a GpuException it throws is turned into one). */
  @FunctionalInterface
  interface GpuRun<T> {
    GpuOutcome<T> run(BatchRunner runner, List<InputColumn> inputs);
  }

  /**
   * Runs {@code run} on the runner {@code which} gives, over {@code in}'s GPU input columns, while
   * holding the GPU permit, with what every GPU batch shares: the permit's wait, the buffer sets
   * recorded, the batch's statistics and the task's peak device memory go to the metrics, and the
   * runner's buffer set is released before the permit (the next task may take it), also when
   * {@code run} throws. A {@link GpuException} that {@code call()} can answer becomes the outcome
   * ({@link #onGpuFailure}); any other fails the task. The metrics are added only when an outcome
   * comes back.
   */
  <T> GpuOutcome<T> underLease(ColumnarBatch in, int rows, Supplier<BatchRunner> which, GpuRun<T> run) {
    List<InputColumn> inputs = inputs(in, rows);
    try (GpuLease lease = gpu.lease()) {
      metrics.add(VkMetric.SEMAPHORE_WAIT_TIME, lease.waitNs());
      BatchRunner r = null;
      try {
        r = which.get();
        long before = gpu.runtime().bufferSetsCreated();
        long hits = r.residentHits();
        long uploads = r.residentUploads();
        long copyNs = r.residentCopyNs();
        GpuOutcome<T> out;
        try {
          out = run.run(r, inputs);
        } catch (GpuException e) {
          out = onGpuFailure(e); // recomputed on the CPU once the permit is released
        }
        metrics.add(VkMetric.BUFFER_SETS_RECORDED, gpu.runtime().bufferSetsCreated() - before);
        metrics.add(VkMetric.DEVICE_CACHE_HITS, r.residentHits() - hits);
        metrics.add(VkMetric.DEVICE_CACHE_UPLOADS, r.residentUploads() - uploads);
        metrics.add(VkMetric.DEVICE_CACHE_COPY_TIME, r.residentCopyNs() - copyNs);
        report(r);
        if (r.bufferBytes() > taskBufferBytes) {
          metrics.add(VkMetric.PEAK_DEVICE_MEMORY, r.bufferBytes() - taskBufferBytes);
          taskBufferBytes = r.bufferBytes();
        }
        return out;
      } finally {
        if (r != null) {
          r.releaseBuffers(); // before the permit: the next task may take this buffer set
        }
      }
    }
  }

  /** The GPU calls over {@code in} on the GPU, their results read back (a reducing task uses its plain runner). */
  GpuOutcome<List<FieldVector>> evaluate(ColumnarBatch in, int rows) {
    return underLease(in, rows, this::rowsRunner, (r, inputs) -> new GpuOutcome.Done<>(r.run(inputs, rows)));
  }

  /**
   * Whether a batch's GPU run can only succeed or fail the task, never hand the batch back to be
   * recomputed with {@code call()}: no call has loops (LOOP_LIMIT) or may throw rows (RECOMPUTE,
   * translated UDFs), and every argument is fixed-width (no row too wide to stage). Only then may
   * child batches go straight into the GPU buffers with no host copy of their arguments: a
   * recomputation would need rows the child has overwritten.
   */
  boolean neverRecomputes() {
    if (neverRecomputes == null) {
      neverRecomputes = calls.stream().noneMatch(c -> c.translated() || c.kernel().hasLoops() || c.kernel().mayRecompute())
          && columns.stream().noneMatch(o -> inputType(o).isVariableWidth());
    }
    return neverRecomputes;
  }

  /**
   * Whether a GPU run of {@code in} would read some of its columns from their device copies
   * ({@code spark.vkspark.cache.device}): a column of vkspark's cache of a type the device cache
   * serves. Such a batch must reach the runner as it is (or be appended to it), not be copied into
   * the coalescer's host vectors first: a copy is no cached column, so it would be uploaded again.
   */
  boolean readsDeviceCopies(ColumnarBatch in) {
    if (gpu == null || calls.isEmpty() || !gpu.cachesColumns(conf)) {
      return false;
    }
    for (int o : columns) {
      if (in.column(o) instanceof CachedColumn && ResidentCopies.serves(inputType(o))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Appends {@code in}'s argument columns to this task's runner, straight from the child's vectors
   * into the GPU input buffers (the one copy), under the GPU permit (the runner may take a buffer
   * set or dispatch when it fills); its rows wait there for the next {@link #underLease} run, which
   * dispatches them with its own. The runner keeps its buffer set while rows wait in it.
   */
  void append(ColumnarBatch in) {
    int rows = in.numRows();
    List<InputColumn> inputs = inputs(in, rows);
    try (GpuLease lease = gpu.lease()) {
      metrics.add(VkMetric.SEMAPHORE_WAIT_TIME, lease.waitNs());
      BatchRunner r = runner();
      long hits = r.residentHits();
      long uploads = r.residentUploads();
      r.append(inputs, rows);
      // the device copies it reads are counted here, where it stages them (its copy time with the dispatch)
      metrics.add(VkMetric.DEVICE_CACHE_HITS, r.residentHits() - hits);
      metrics.add(VkMetric.DEVICE_CACHE_UPLOADS, r.residentUploads() - uploads);
    }
  }

  private List<InputColumn> inputs(ColumnarBatch in, int rows) {
    List<InputColumn> inputs = new ArrayList<>(columns.size());
    for (int o : columns) {
      SqlType t = SparkTypes.of(in.column(o).dataType()).orElseThrow();
      inputs.add(SparkInputs.of(in.column(o), t, rows));
    }
    return inputs;
  }

  /** The most GPU-argument bytes one row may hold: what one batch stages, and what one dispatch can. */
  long rowLimit() {
    return Math.min(conf.batchBytes(), BatchRunner.MAX_VAR_ELEMENTS);
  }

  /** The most bytes of variable-width GPU arguments (strings, binary, arrays) one row of {@code in} holds. */
  long widestRow(ColumnarBatch in, int rows) {
    List<Integer> wide = columns.stream().filter(o -> inputType(o).isVariableWidth()).toList();
    long widest = 0;
    for (int r = 0; wide.size() > 0 && r < rows; r++) {
      long row = 0;
      for (int o : wide) {
        row += RowBytes.value(in.column(o), in.column(o).dataType(), r);
      }
      widest = Math.max(widest, row);
    }
    return widest;
  }

  /**
   * What a failed dispatch means for this task. OVERFLOW (a decimal result under ANSI): the batch is
   * recomputed with call() for Spark's own error. LOOP_LIMIT: the device cut loops short and the
   * batch's GPU results were discarded; with fallback on, the batch's GPU calls are recomputed with
   * call(), otherwise the task fails with the error. RECOMPUTE: a translated UDF's row threw or
   * returned null; call() gives the rows' exceptions or nulls. CANCELLED: the task was killed;
   * Spark's own TaskKilledException is thrown. DEVICE_LOST: the executor opens its device again for
   * later tasks, and this one fails.
   */
  private <T> GpuOutcome<T> onGpuFailure(GpuException e) {
    switch (e.code()) {
      case OVERFLOW -> {
        return new GpuOutcome.Overflow<>(e);
      }
      case LOOP_LIMIT -> {
        if (!conf.fallback()) {
          throw e;
        }
        if (!loopLimitLogged) {
          loopLimitLogged = true;
          Placement p = Placement.cpu(Placement.Cause.LOOP_LIMIT, Placement.DecidedBy.EXECUTOR, e);
          LOG.warn("vkspark: {}", p.describe(String.join(", ", calls.stream().map(GpuUdfCall::name).toList())));
        }
        metrics.add(VkMetric.LOOP_LIMIT_BATCHES, 1);
        return new GpuOutcome.Recompute<>(Placement.Cause.LOOP_LIMIT, e.what());
      }
      case RECOMPUTE -> { // semantics, not a fallback: call() gives the rows' exceptions or nulls
        metrics.add(VkMetric.RECOMPUTED_BATCHES, 1);
        return new GpuOutcome.Recompute<>(Placement.Cause.RECOMPUTE, e.what());
      }
      case CANCELLED -> {
        TaskContext task = TaskContext.get();
        if (task != null) {
          task.killTaskIfInterrupted();
        }
        throw e;
      }
      case DEVICE_LOST -> {
        ExecutorDevice.deviceLost(gpu, e);
        throw e;
      }
      default -> throw e;
    }
  }

  /**
   * The rows of GPU call {@code g}'s last batch from {@link #rowsRunner} that its kernel handed to
   * {@code call()} (ascending), with the runner's new rows per cause added to the metrics.
   */
  int[] handedBack(int g) {
    BatchRunner r = rowsRunner();
    long[] causes = r.cpuRowCauses();
    long[] seen = causesSeen.computeIfAbsent(r, k -> new long[causes.length]);
    VkMetric[] metric = {VkMetric.HANDED_BACK_BY_BODY, VkMetric.HANDED_BACK_NON_ASCII, VkMetric.HANDED_BACK_MALFORMED,
        VkMetric.HANDED_BACK_OVERFLOW}; // CpuCause order
    for (int k = 0; k < causes.length; k++) {
      metrics.add(metric[k], causes[k] - seen[k]);
      seen[k] = causes[k];
    }
    return r.cpuRows(g);
  }

  /** Column {@code ordinal}'s type as a runner input: the declared argument type of a call that reads it, or the key's. */
  SqlType inputType(int ordinal) {
    for (GpuUdfCall c : calls) {
      List<Integer> args = c.argOrdinals();
      for (int a = 0; a < args.size(); a++) {
        if (args.get(a) == ordinal) {
          return c.kernel().signature().args().get(a).type();
        }
      }
    }
    if (keyType != null && ordinal == keyOrdinal) {
      return keyType; // a grouped reduction's key that no call reads
    }
    if (columns.contains(ordinal)) {
      return SparkTypes.of(childTypes.get(ordinal)).orElseThrow(); // read by an absorbed filter alone
    }
    throw new IllegalStateException("column " + ordinal);
  }

  /** A runner of this task's GPU calls (reducing with {@code reduction} when not null), bounded as the task is. */
  private BatchRunner newRunner(ColumnReduction reduction) {
    long before = gpu.runtime().bufferSetsCreated();
    BatchRunner r = gpu.runtime().runner(kernelCalls(), columns.stream().map(this::inputType).toList(),
        conf.batchRows(), allocator, reduction);
    metrics.add(VkMetric.BUFFER_SETS_RECORDED, gpu.runtime().bufferSetsCreated() - before);
    TaskContext task = TaskContext.get();
    r.bound(conf.kernelTimeout(), task == null ? () -> false : task::isInterrupted);
    // as Spark converts a UDF's BigDecimal result (CatalystTypeConverters: toPrecision, null on overflow unless ANSI)
    r.onDecimalOverflow(ansiEnabled() ? DecimalOverflow.ERROR : DecimalOverflow.NULL);
    if (gpu.cachesColumns(conf)) {
      r.readResident(gpu.deviceCache()); // cached columns from their device copies
    }
    return r;
  }

  /** Spark's ANSI mode in this task: a decimal result too wide for its type fails rather than giving null. */
  private static boolean ansiEnabled() {
    return SQLConf.get().ansiEnabled();
  }

  private List<KernelCall> kernelCalls() {
    List<KernelCall> out = new ArrayList<>();
    for (GpuUdfCall c : calls) {
      int[] cols = new int[c.argOrdinals().size()];
      for (int a = 0; a < cols.length; a++) {
        cols[a] = c.argOrdinals().get(a) < 0 ? -1 : columns.indexOf(c.argOrdinals().get(a));
      }
      out.add(new KernelCall(c.kernel(), cols, c.literals()));
    }
    return out;
  }

  private void report(BatchRunner runner) {
    BatchStats s = runner.stats();
    BatchStats reported = runner == rowRunner ? rowReported : this.reported;
    BatchStats d = new BatchStats(s.batches() - reported.batches(), s.rows() - reported.rows(),
        s.dispatches() - reported.dispatches(), s.bytesUploaded() - reported.bytesUploaded(),
        s.bytesRead() - reported.bytesRead(), s.deviceNs() - reported.deviceNs(), s.waitNs() - reported.waitNs(),
        s.hostNs() - reported.hostNs(), ReplacementStats.ZERO);
    metrics.add(VkMetric.GPU_DISPATCHES, d.dispatches());
    metrics.add(VkMetric.GPU_ROWS, d.rows());
    metrics.add(VkMetric.UPLOAD_BYTES, d.bytesUploaded());
    metrics.add(VkMetric.READBACK_BYTES, d.bytesRead());
    metrics.add(VkMetric.DEVICE_TIME, d.deviceNs());
    metrics.add(VkMetric.WAIT_TIME, d.waitNs());
    metrics.add(VkMetric.HOST_TIME, d.hostNs());
    metrics.add(VkMetric.REUSED_SLOTS, s.slots().slots().reusedSlots() - reported.slots().slots().reusedSlots());
    metrics.add(VkMetric.MOVED_SLOTS, s.slots().slots().movedSlots() - reported.slots().slots().movedSlots());
    metrics.add(VkMetric.APPENDED_SLOTS, s.slots().slots().appendedSlots() - reported.slots().slots().appendedSlots());
    if (runner == rowRunner) {
      rowReported = s;
    } else {
      this.reported = s;
    }
  }

  @Override
  public void close() {
    try {
      if (runner != null) {
        runner.close();
      }
    } finally {
      if (rowRunner != null) {
        rowRunner.close();
      }
    }
  }
}
