package io.vkspark.spark.exec;

import io.vkspark.spark.executor.ExecutorGpu;
import io.vkspark.spark.executor.GpuLease;
import io.vkspark.spark.agg.GpuReduction;
import io.vkspark.spark.api.SparkTypes;
import io.vkspark.spark.conf.VerifySettings;
import io.vkspark.spark.conf.VkConf;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.ReplacementStats;
import io.vkspark.gpu.column.BatchRunner;
import io.vkspark.gpu.column.BatchStats;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.DecimalOverflow;
import io.vkspark.gpu.column.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.SqlType;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.util.ArrowUtils$;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.TaskCompletionListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One partition through a {@link VkGpuEvalExec}: for each batch, the GPU calls go through the
 * executor's batch runner and the CPU calls through the UDF's own {@code call()}; the output batch
 * is the batch's vectors plus one Arrow vector per call, reused from batch to batch.
 *
 * <p>A batch is a child batch as it came (zero copy), or, with {@code spark.vkspark.coalesce}, several
 * consecutive small child batches copied into one ({@link BatchCoalescer}) so that one GPU dispatch
 * serves them all; the node then outputs one combined batch for them. Combined rather than one
 * output batch per child batch: the child's vectors are overwritten by the time the dispatch runs,
 * so the pass-through columns are copies either way, and Spark's operators above take batches of
 * any size; per-child views would only add an offset to every read.
 */
public final class GpuEvalIterator implements Iterator<ColumnarBatch> {
  private static final Logger LOG = LoggerFactory.getLogger(GpuEvalIterator.class);

  private final Iterator<ColumnarBatch> input;
  private final List<GpuUdfCall> calls;
  private final int childColumns;
  private final VkConf conf;
  private final NodeMetrics metrics;
  private final BufferAllocator allocator;
  /** GPU calls grouped into one runner; the arguments they read are its input columns. */
  private final List<GpuUdfCall> gpuCalls = new ArrayList<>();
  private final List<Integer> gpuColumns = new ArrayList<>();
  private final ColumnVector[] results;
  private final FieldVector[] cpuVectors;
  /** GLSL-only calls on the CPU: their SPIR-V on the CPU Vulkan device (null until the first such batch). */
  private CpuVulkanTask cpuVulkan;
  /** Each GPU call's result column over the runner's vector (results[i] points here or at a CPU recomputation). */
  private final ColumnVector[] gpuResults;
  private boolean loopLimitLogged;
  private boolean wideLogged;
  /** A decimal result overflowed on the GPU with ANSI on: the batch is recomputed with call() for Spark's own error. */
  private GpuException overflow;
  private BatchRunner runner;
  private ExecutorGpu gpu;
  private BatchStats reported = BatchStats.ZERO;
  /** What {@link #rowRunner}'s stats were when last reported (its totals are separate from the runner's). */
  private BatchStats rowReported = BatchStats.ZERO;
  private long taskBufferBytes;
  private boolean closed;
  /** spark.vkspark.verify: re-checks a sample of GPU rows with call() (see GpuVerifier). */
  private final GpuVerifier verifier;
  /** Stages small child batches (null: every child batch is evaluated as it comes). */
  private final BatchCoalescer coalescer;
  /** A child batch pulled but not yet evaluated (it did not fit the coalesced batch); valid until the child advances. */
  private ColumnarBatch pending;

  /** The fused aggregate's GPU reduction (null: a plain GPU node). */
  private final GpuReduction reduction;
  /** Whether this task reduces on the GPU: decided on its first batch (null before). */
  private Boolean reducing;
  /** A grouped reduction's key: its type as a runner input (null when ungrouped). */
  private final SqlType keyType;
  /** Evaluates, with the rows read back, the batches whose keys are too wide for a grouped reduction. */
  private BatchRunner rowRunner;
  /** Whether the last {@link #reduce} found the batch's keys too wide for the slots. */
  private boolean wide;
  /** Consecutive batches of this task whose keys were too wide; at {@link #WIDE_LIMIT} it stops trying. */
  private int wideRun;
  /** Whether this task's keys proved too many for the slots: its batches fold on the host without trying. */
  private boolean keysTooWide;
  /** Consecutive too-wide batches after which a task stops reducing by key on the GPU. */
  static final int WIDE_LIMIT = 8;
  private long reportedRead;

  public GpuEvalIterator(Iterator<ColumnarBatch> input, List<GpuUdfCall> planned, List<DataType> childTypes, VkConf conf,
                  NodeMetrics metrics, VerifySettings verify) {
    this(input, planned, childTypes, conf, metrics, verify, null);
  }

  /**
   * @param reduction the fused aggregate's reduction, read through {@link #nextStep()}; null for a
   *     plain GPU node
   */
  public GpuEvalIterator(Iterator<ColumnarBatch> input, List<GpuUdfCall> planned, List<DataType> childTypes, VkConf conf,
                  NodeMetrics metrics, VerifySettings verify, GpuReduction reduction) {
    this.input = input;
    this.reduction = reduction;
    this.childColumns = childTypes.size();
    this.conf = conf;
    this.metrics = metrics;
    TaskContext task = TaskContext.get();
    this.verifier = new GpuVerifier(verify, metrics, task == null ? 0 : task.partitionId());
    this.allocator = ArrowUtils$.MODULE$.rootAllocator().newChildAllocator(
        "vkspark-task-" + (task == null ? "driver" : task.taskAttemptId()), 0, Long.MAX_VALUE);
    this.results = new ColumnVector[planned.size()];
    this.cpuVectors = new FieldVector[planned.size()];
    this.gpuResults = new ColumnVector[planned.size()];
    if (task != null) {
      task.addTaskCompletionListener((TaskCompletionListener) ctx -> close());
    }
    this.calls = decideOnExecutor(planned);
    for (GpuUdfCall c : calls) {
      if (c.onGpu()) {
        gpuCalls.add(c);
        for (int o : c.argOrdinals()) {
          if (!gpuColumns.contains(o)) {
            gpuColumns.add(o);
          }
        }
      }
    }
    if (reduction != null && reduction.grouped() && !gpuCalls.isEmpty()) {
      // the key is a runner input whether or not a call reads it: the device reduces per key value
      this.keyType = SparkTypes.of(childTypes.get(reduction.keyOrdinal())).orElseThrow();
      if (!gpuColumns.contains(reduction.keyOrdinal())) {
        gpuColumns.add(reduction.keyOrdinal());
      }
    } else {
      this.keyType = null;
    }
    // Only GPU calls gain from larger batches; the CPU calls run row by row either way.
    this.coalescer = conf.coalesce() && !gpuCalls.isEmpty()
        ? BatchCoalescer.forColumns(childTypes, conf.batchRows(), conf.batchBytes()).orElse(null) : null;
  }

  /** Calls planned for the GPU fall back here when this executor has no device for them. */
  private List<GpuUdfCall> decideOnExecutor(List<GpuUdfCall> planned) {
    if (planned.stream().noneMatch(GpuUdfCall::onGpu)) {
      return planned;
    }
    String executor = org.apache.spark.SparkEnv.get() == null ? "driver" : org.apache.spark.SparkEnv.get().executorId();
    gpu = ExecutorGpu.get(conf, executor).orElse(null);
    List<GpuUdfCall> out = new ArrayList<>();
    for (GpuUdfCall c : planned) {
      Placement p = c.onGpu() ? onThisExecutor(c, executor).strict(conf, c.name()) : c.placement();
      if (c.onGpu() && !p.onGpu()) {
        LOG.warn("vkspark: {} (decided on executor {})", p.describe(c.name()), executor);
        c = c.placed(p);
      }
      out.add(c);
    }
    return out;
  }

  /** Where a call planned for the GPU runs on this executor: on its device, if it has one with the kernel's features. */
  private Placement onThisExecutor(GpuUdfCall c, String executor) {
    if (gpu == null) {
      return Placement.cpu(Placement.Cause.NO_DEVICE_ON_EXECUTOR, Placement.DecidedBy.EXECUTOR, executor,
          ExecutorGpu.unavailableReason().orElse("not opened"));
    }
    return c.kernel().unsupportedOn(gpu.device().info())
        .map(missing -> Placement.cpu(Placement.Cause.FEATURE_MISSING, Placement.DecidedBy.EXECUTOR, missing))
        .orElse(c.placement());
  }

  @Override
  public boolean hasNext() {
    // With a batch pending, the child must not be asked: a file reader's hasNext() overwrites its vectors.
    return pending != null || input.hasNext();
  }

  @Override
  public ColumnarBatch next() {
    return evaluate(gather());
  }

  /** One input batch evaluated for a fused aggregate: its aggregates reduced on the GPU, or its rows with the results. */
  public sealed interface Step permits Reduced, ReducedByKey, Rows {}

  /** The batch's aggregates, reduced on the GPU; {@code readbackBytes} of partials came back for it. */
  public record Reduced(ColumnReduction.Result result, long readbackBytes) implements Step {}

  /** The batch's aggregates per key value, reduced on the GPU; {@code readbackBytes} of partials came back for it. */
  public record ReducedByKey(ColumnReduction.Grouped result, long readbackBytes) implements Step {}

  /** The batch with the calls' results, for the host fold. */
  public record Rows(ColumnarBatch batch) implements Step {}

  /**
   * The next input batch (coalesced as for {@link #next()}) for a fused aggregate: reduced on the
   * GPU when this task can (every call on its GPU, a device with the features, verify off), else
   * evaluated as {@link #next()} does, as is a batch whose GPU run fell back to the CPU and, for
   * a grouped reduction, a batch whose keys span more values than its slots (its UDFs still run
   * on the GPU, their results read back).
   */
  public Step nextStep() {
    ColumnarBatch in = gather();
    if (!reducing() || keysTooWide || widestRow(in, in.numRows()) > rowLimit()) {
      return new Rows(evaluate(in));
    }
    Step r = reduce(in, in.numRows());
    wideRun = wide ? wideRun + 1 : 0;
    if (wideRun >= WIDE_LIMIT) {
      keysTooWide = true; // a high-cardinality key: finding each batch's range only to fold it on the host
      LOG.info("vkspark: {} consecutive batches' keys spanned more than {} values; this task folds the rest on the host",
          wideRun, reduction.slots());
    }
    if (r != null) {
      return r;
    }
    return new Rows(wide ? evaluate(in) : fallback(in, in.numRows()));
  }

  /** Whether this task reduces on the GPU (decided once). */
  private boolean reducing() {
    if (reducing == null) {
      boolean can = reduction != null && !verifier.on() && !calls.isEmpty() && gpuCalls.size() == calls.size()
          && (!reduction.grouped() || ColumnReduction.groupable(inputType(reduction.keyOrdinal())));
      if (can) {
        Optional<String> why;
        try {
          why = reductionFor().unsupportedOn(gpu.device().info());
        } catch (GpuException e) { // e.g. a grouped shader past the compiler's size limit
          why = Optional.of(e.getMessage());
        }
        if (why.isPresent()) {
          LOG.info("vkspark: fused aggregate folds on the host: {}", why.get());
          can = false;
        }
      }
      reducing = can;
    }
    return reducing;
  }

  private ColumnReduction reductionFor() {
    List<SqlType> types = gpuCalls.stream().map(GpuUdfCall::resultType).toList();
    if (reduction.grouped()) {
      // the key's type as the runner takes it (a UDF's declared argument type where one reads it)
      return ColumnReduction.grouped(reduction.aggregates(), types, gpuColumns.indexOf(reduction.keyOrdinal()),
          inputType(reduction.keyOrdinal()), reduction.slots());
    }
    return ColumnReduction.of(reduction.aggregates(), types);
  }

  /**
   * Runs the calls and the reduction over {@code in} on the GPU; null when the GPU run failed in a
   * way that lets the batch be recomputed on the CPU (loop limit with fallback on), or when a
   * grouped batch's keys are too wide for the slots ({@link #wide}: nothing ran).
   */
  private Step reduce(ColumnarBatch in, int rows) {
    wide = false;
    Step step = underLease(in, rows, this::runner, (r, inputs) -> {
      try {
        if (reduction.grouped()) {
          ColumnReduction.Grouped grouped = r.runGrouped(inputs, rows).orElse(null);
          wide = grouped == null;
          return grouped == null ? null : new ReducedByKey(grouped, 0);
        }
        return new Reduced(r.runReduced(inputs, rows), 0);
      } catch (GpuException e) {
        if (!onGpuFailure(e)) {
          throw e;
        }
        return null;
      }
    });
    long read = runner.stats().bytesRead() - reportedRead; // underLease made the runner before it ran
    reportedRead = runner.stats().bytesRead();
    if (step == null) {
      return null;
    }
    metrics.add(VkMetric.NUM_OUTPUT_ROWS, rows);
    metrics.add(VkMetric.NUM_OUTPUT_BATCHES, 1);
    return step instanceof ReducedByKey k ? new ReducedByKey(k.result(), read)
        : new Reduced(((Reduced) step).result(), read);
  }

  /** One GPU run of a runner over a batch's input columns (its result, or null to recompute on the CPU). */
  @FunctionalInterface
  private interface GpuRun<T> {
    T run(BatchRunner runner, List<InputColumn> inputs);
  }

  /**
   * Runs {@code run} on the runner {@code which} gives, over {@code in}'s GPU input columns, while
   * holding the GPU permit, with what every GPU batch shares: the permit's wait, the buffer sets
   * recorded, the batch's statistics and the task's peak device memory go to the metrics, and the
   * runner's buffer set is released before the permit (the next task may take it), also when
   * {@code run} throws. The metrics are added only when {@code run} returns.
   */
  private <T> T underLease(ColumnarBatch in, int rows, java.util.function.Supplier<BatchRunner> which, GpuRun<T> run) {
    List<InputColumn> inputs = new ArrayList<>(gpuColumns.size());
    for (int o : gpuColumns) {
      SqlType t = SparkTypes.of(in.column(o).dataType()).orElseThrow();
      inputs.add(SparkInputs.of(in.column(o), t, rows));
    }
    try (GpuLease lease = gpu.lease()) {
      metrics.add(VkMetric.SEMAPHORE_WAIT_TIME, lease.waitNs());
      BatchRunner r = null;
      try {
        r = which.get();
        long before = gpu.runtime().bufferSetsCreated();
        T out = run.run(r, inputs);
        metrics.add(VkMetric.BUFFER_SETS_RECORDED, gpu.runtime().bufferSetsCreated() - before);
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

  /** The node's output batch: {@code in}'s columns, then each call's results (counted in the metrics). */
  private ColumnarBatch output(ColumnarBatch in, int rows) {
    ColumnVector[] columns = new ColumnVector[childColumns + calls.size()];
    for (int c = 0; c < childColumns; c++) {
      columns[c] = in.column(c);
    }
    System.arraycopy(results, 0, columns, childColumns, results.length);
    metrics.add(VkMetric.NUM_OUTPUT_ROWS, rows);
    metrics.add(VkMetric.NUM_OUTPUT_BATCHES, 1);
    return new ColumnarBatch(columns, rows);
  }

  /** {@code in} with every call computed on the CPU: a batch whose GPU reduction could not run. */
  private ColumnarBatch fallback(ColumnarBatch in, int rows) {
    for (int i = 0; i < calls.size(); i++) {
      runOnCpu(i, in, rows);
    }
    return output(in, rows);
  }

  /** The next child batch, or several small ones coalesced (see {@link BatchCoalescer}). */
  private ColumnarBatch gather() {
    ColumnarBatch in = pullChild();
    if (coalescer != null) {
      coalescer.reset(); // the previous output batch has been consumed
    }
    if (coalescer == null || !coalescer.fits(in)) {
      return in; // zero copy: a batch large enough on its own
    }
    coalescer.add(in); // copied before the child is asked for more
    while (coalescer.rows() < conf.batchRows() && input.hasNext()) {
      ColumnarBatch b = pullChild();
      if (!coalescer.fits(b)) {
        pending = b; // evaluated by the next call, before the child advances
        break;
      }
      coalescer.add(b);
    }
    return coalescer.batch();
  }

  private ColumnarBatch pullChild() {
    ColumnarBatch b = pending;
    pending = null;
    if (b == null) {
      b = input.next();
      metrics.add(VkMetric.INPUT_BATCHES, 1);
    }
    return b;
  }

  /** Runs every call over {@code in} (a child batch, or the coalesced one) and returns it with the results. */
  private ColumnarBatch evaluate(ColumnarBatch in) {
    int rows = in.numRows();
    if (!gpuCalls.isEmpty()) {
      runOnGpu(in, rows);
      if (verifier.on()) {
        verifier.check(in, rows, calls, results);
      }
    }
    for (int i = 0; i < calls.size(); i++) {
      if (!calls.get(i).onGpu()) {
        runOnCpu(i, in, rows);
      }
    }
    return output(in, rows);
  }

  private void runOnGpu(ColumnarBatch in, int rows) {
    overflow = null;
    if (wideOnCpu(in, rows)) {
      return;
    }
    // a task that reduces on the GPU evaluates its too-wide batches with a plain runner
    java.util.function.Supplier<BatchRunner> which = Boolean.TRUE.equals(reducing) ? this::rowRunner : this::runner;
    List<FieldVector> out = underLease(in, rows, which, (r, inputs) -> {
      try {
        return r.run(inputs, rows);
      } catch (GpuException e) {
        if (e.code() == Code.OVERFLOW) {
          overflow = e; // ANSI: call() on the CPU raises Spark's own error for the row
        } else if (!onGpuFailure(e)) {
          throw e;
        }
        return null; // recomputed on the CPU, once the GPU permit is released
      }
    });
    if (out != null) {
      for (int i = 0, g = 0; i < calls.size(); i++) {
        if (calls.get(i).onGpu()) {
          FieldVector v = out.get(g++);
          if (gpuResults[i] == null) {
            gpuResults[i] = column(v);
          }
          results[i] = gpuResults[i];
        }
      }
      return;
    }
    for (int i = 0; i < calls.size(); i++) {
      if (calls.get(i).onGpu()) {
        runOnCpu(i, in, rows);
      }
    }
    if (overflow != null) {
      throw overflow; // call() did not overflow where the GPU did: the GPU's error, naming the UDF and the row
    }
  }

  /** The most GPU-argument bytes one row may hold: what one batch stages, and what one dispatch can. */
  private long rowLimit() {
    return Math.min(conf.batchBytes(), BatchRunner.MAX_VAR_ELEMENTS);
  }

  /** The most bytes of variable-width GPU arguments (strings, binary, arrays) one row of {@code in} holds. */
  private long widestRow(ColumnarBatch in, int rows) {
    List<Integer> wide = gpuColumns.stream().filter(o -> inputType(o).isVariableWidth()).toList();
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
   * A batch with a row wider than {@link #rowLimit()} is never staged: its GPU calls run with
   * {@code call()} (true), or, without fallback or for a GLSL-only UDF (it has no {@code call()}),
   * the task fails with SIZE before anything is allocated for it.
   */
  private boolean wideOnCpu(ColumnarBatch in, int rows) {
    long widest = widestRow(in, rows);
    if (widest <= rowLimit()) {
      return false;
    }
    String names = String.join(", ", gpuCalls.stream().map(GpuUdfCall::name).toList());
    boolean glsl = gpuCalls.stream().anyMatch(GpuUdfCall::glslOnly);
    if (!conf.fallback() || glsl) {
      throw GpuException.of(Code.SIZE, "a row holds " + widest + " bytes of arguments of GPU UDF(s) " + names
          + ", more than the " + rowLimit() + " bytes one GPU batch may stage (" + VkConf.BATCH_BYTES + " is "
          + conf.batchBytes() + ", and one dispatch stages at most " + BatchRunner.MAX_VAR_ELEMENTS + " per argument).",
          glsl ? "keep the values passed to GLSL-only UDFs below " + rowLimit() + " bytes per row (a GLSL-only UDF has "
              + "no call() to run such rows on the CPU), or raise " + VkConf.BATCH_BYTES + " if it is below that."
              : "set " + VkConf.FALLBACK + "=true to run such rows with the UDF's call() on the CPU, keep the values "
              + "below " + rowLimit() + " bytes per row, or raise " + VkConf.BATCH_BYTES + " if it is below that.");
    }
    if (!wideLogged) {
      wideLogged = true;
      LOG.warn("vkspark: a row holds {} bytes of arguments of GPU UDF(s) {}, more than {} = {}: its batch runs with "
          + "call() on the CPU", widest, names, VkConf.BATCH_BYTES, rowLimit());
    }
    for (int i = 0; i < calls.size(); i++) {
      if (calls.get(i).onGpu()) {
        runOnCpu(i, in, rows);
      }
    }
    return true;
  }

  /**
   * Spark's view of a result vector. A decimal's is read as Spark keeps decimals of at most 18
   * digits, {@code Decimal.createUnsafe} of the unscaled long in the low 8 bytes of each Decimal128,
   * rather than through a {@code BigDecimal} per row ({@code ArrowColumnVector}'s own way).
   */
  static ColumnVector column(FieldVector v) {
    return v instanceof DecimalVector d ? new DecimalColumn(d) : new ArrowColumnVector(v);
  }

  /** A Decimal128 vector of precision 18 or less, read a long at a time. */
  private static final class DecimalColumn extends ArrowColumnVector {
    private final DecimalVector vector;

    DecimalColumn(DecimalVector v) {
      super(v);
      this.vector = v;
    }

    @Override
    public org.apache.spark.sql.types.Decimal getDecimal(int rowId, int precision, int scale) {
      if (isNullAt(rowId)) {
        return null;
      }
      return org.apache.spark.sql.types.Decimal.createUnsafe(vector.getDataBuffer().getLong(16L * rowId), precision, scale);
    }
  }

  /** Spark's ANSI mode in this task: a decimal result too wide for its type fails rather than giving null. */
  private static boolean ansiEnabled() {
    return org.apache.spark.sql.internal.SQLConf.get().ansiEnabled();
  }

  /** This task's batch runner, made on its first GPU batch (while it holds the GPU permit). */
  private BatchRunner runner() {
    if (runner == null) {
      runner = newRunner(Boolean.TRUE.equals(reducing) ? reductionFor() : null);
    }
    return runner;
  }

  /**
   * The plain runner of a task that reduces on the GPU, for its batches whose keys are too wide
   * for the grouped reduction: made on the first such batch.
   */
  private BatchRunner rowRunner() {
    if (rowRunner == null) {
      rowRunner = newRunner(null);
    }
    return rowRunner;
  }

  /** A runner of this task's GPU calls (reducing with {@code reduction} when not null), bounded as the task is. */
  private BatchRunner newRunner(ColumnReduction reduction) {
    long before = gpu.runtime().bufferSetsCreated();
    BatchRunner r = gpu.runtime().runner(kernelCalls(), gpuColumns.stream().map(o -> inputType(o)).toList(),
        conf.batchRows(), allocator, reduction);
    metrics.add(VkMetric.BUFFER_SETS_RECORDED, gpu.runtime().bufferSetsCreated() - before);
    TaskContext task = TaskContext.get();
    r.bound(conf.kernelTimeout(), task == null ? () -> false : task::isInterrupted);
    // as Spark converts a UDF's BigDecimal result (CatalystTypeConverters: toPrecision, null on overflow unless ANSI)
    r.onDecimalOverflow(ansiEnabled() ? DecimalOverflow.ERROR : DecimalOverflow.NULL);
    return r;
  }

  /**
   * What a failed dispatch means for this task. LOOP_LIMIT: the device cut loops short and the
   * batch's GPU results were discarded; with fallback on, the batch's GPU calls are recomputed with
   * call() (true), otherwise the task fails with the error. CANCELLED: the task was killed; Spark's
   * own TaskKilledException is thrown. DEVICE_LOST: the executor opens its device again for later
   * tasks, and this one fails.
   */
  private boolean onGpuFailure(GpuException e) {
    switch (e.code()) {
      case LOOP_LIMIT -> {
        if (!conf.fallback()) {
          return false;
        }
        if (!loopLimitLogged) {
          loopLimitLogged = true;
          Placement p = Placement.cpu(Placement.Cause.LOOP_LIMIT, Placement.DecidedBy.EXECUTOR, e);
          LOG.warn("vkspark: {}", p.describe(String.join(", ", gpuCalls.stream().map(GpuUdfCall::name).toList())));
        }
        metrics.add(VkMetric.LOOP_LIMIT_BATCHES, 1);
        return true;
      }
      case CANCELLED -> {
        TaskContext task = TaskContext.get();
        if (task != null) {
          task.killTaskIfInterrupted();
        }
        return false;
      }
      case DEVICE_LOST -> {
        ExecutorGpu.deviceLost(gpu, e);
        return false;
      }
      default -> {
        return false;
      }
    }
  }

  private SqlType inputType(int ordinal) {
    for (GpuUdfCall c : gpuCalls) {
      int[] args = c.argOrdinals();
      for (int a = 0; a < args.length; a++) {
        if (args[a] == ordinal) {
          return c.kernel().signature().args().get(a).type();
        }
      }
    }
    if (keyType != null && ordinal == reduction.keyOrdinal()) {
      return keyType; // a grouped reduction's key that no call reads
    }
    throw new IllegalStateException("column " + ordinal);
  }

  private List<KernelCall> kernelCalls() {
    List<KernelCall> out = new ArrayList<>();
    for (GpuUdfCall c : gpuCalls) {
      int[] cols = new int[c.argOrdinals().length];
      for (int a = 0; a < cols.length; a++) {
        cols[a] = gpuColumns.indexOf(c.argOrdinals()[a]);
      }
      out.add(new KernelCall(c.kernel(), cols));
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

  /**
   * Strict CPU evaluation with the UDF's own call(): a null argument gives a null result. A GLSL-only
   * UDF has no call() of its own: its SPIR-V runs over the whole batch on the CPU Vulkan device.
   */
  private void runOnCpu(int i, ColumnarBatch in, int rows) {
    GpuUdfCall c = calls.get(i);
    if (c.glslOnly()) {
      if (cpuVulkan == null) {
        cpuVulkan = new CpuVulkanTask(conf, allocator);
      }
      results[i] = cpuVulkan.run(i, c, in, rows);
      metrics.add(VkMetric.CPU_ROWS, rows);
      metrics.add(VkMetric.CPU_VULKAN_ROWS, rows);
      return;
    }
    if (cpuVectors[i] == null) {
      cpuVectors[i] = new Field(c.name(), FieldType.nullable(c.kernel().signature().resultArrowType()), null)
          .createVector(allocator);
    }
    results[i] = column(cpuVectors[i]);
    FieldVector v = cpuVectors[i];
    v.setInitialCapacity(rows);
    v.allocateNew();
    int[] args = c.argOrdinals();
    for (int r = 0; r < rows; r++) {
      InternalRow row = in.getRow(r);
      boolean anyNull = false;
      for (int a : args) {
        anyNull |= row.isNullAt(a);
      }
      // Rows Spark would not evaluate the call for (a CASE branch not taken, ...) get null, never call().
      Object value = anyNull || !c.evaluatedFor(row) ? null : c.boundCpu().eval(row);
      set(v, c.resultType(), r, value);
    }
    v.setValueCount(rows);
    metrics.add(VkMetric.CPU_ROWS, rows);
  }

  private static void set(FieldVector v, SqlType t, int r, Object value) {
    if (value == null) {
      v.setNull(r);
      return;
    }
    switch (t) {
      case INT -> ((IntVector) v).setSafe(r, (Integer) value);
      case BIGINT -> ((BigIntVector) v).setSafe(r, (Long) value);
      case FLOAT -> ((Float4Vector) v).setSafe(r, (Float) value);
      case DOUBLE -> ((Float8Vector) v).setSafe(r, (Double) value);
      case BOOLEAN -> ((BitVector) v).setSafe(r, (Boolean) value ? 1 : 0);
      case DATE -> ((DateDayVector) v).setSafe(r, (Integer) value);
      case TIMESTAMP -> ((TimeStampVector) v).setSafe(r, (Long) value);
      case TINYINT -> ((TinyIntVector) v).setSafe(r, (Byte) value);
      case SMALLINT -> ((SmallIntVector) v).setSafe(r, (Short) value);
      case DECIMAL -> ((DecimalVector) v).setSafe(r, ((org.apache.spark.sql.types.Decimal) value).toUnscaledLong());
    }
  }

  private void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      try {
        if (runner != null) {
          runner.close();
        }
      } finally {
        try {
          if (rowRunner != null) {
            rowRunner.close();
          }
        } finally {
          if (cpuVulkan != null) {
            cpuVulkan.close();
          }
        }
      }
    } finally {
      try {
        if (coalescer != null) {
          coalescer.close();
        }
        for (FieldVector v : cpuVectors) {
          if (v != null) {
            v.close();
          }
        }
      } finally {
        allocator.close();
      }
    }
  }

  public static Map<String, Long> snapshot(Map<String, SQLMetric> metrics) {
    Map<String, Long> out = new LinkedHashMap<>();
    metrics.forEach((k, m) -> out.put(k, m.value()));
    return out;
  }
}
