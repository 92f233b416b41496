package io.vkspark.spark.exec;

import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.conf.VerifySettings;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.executor.ExecutorDevice;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.BatchRunner;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.util.ArrowUtils$;
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
 * any size; per-child views would only add an offset to every read. Where nothing on the host needs
 * the rows (a fused aggregate reduced on the GPU), the small batches' arguments go straight into
 * the GPU's input buffers instead, with no host copy ({@link BatchCoalescer} says when).
 *
 * <p>The iterator gathers and evaluates; the GPU path is {@link GpuBatchStep}, the CPU path
 * {@link CpuBatchStep}, and a fused aggregate's reduction {@link ReductionStep}. With
 * {@code spark.vkspark.placement=adaptive}, {@link AdaptiveStep} picks, per batch, whether the GPU
 * calls take the GPU path (or the reduction) or the CPU path, whichever the executor measured faster.
 */
public final class GpuEvalIterator implements Iterator<ColumnarBatch> {
  private static final Logger LOG = LoggerFactory.getLogger(GpuEvalIterator.class);

  private final Iterator<ColumnarBatch> input;
  private final List<GpuUdfCall> calls;
  private final int childColumns;
  private final VkConf conf;
  private final NodeMetrics metrics;
  private final BufferAllocator allocator;
  private final ColumnVector[] results;
  /** Each GPU call's result column over the runner's vector (results[i] points here or at a CPU recomputation). */
  private final ColumnVector[] gpuResults;
  private boolean wideLogged;
  /** A decimal result overflowed on the GPU with ANSI on: the batch is recomputed with call() for Spark's own error. */
  private GpuException overflow;
  private boolean closed;
  /** The GPU calls' runners and what their batches share. */
  private final GpuBatchStep gpu;
  /** The calls computed on the CPU (planned there, or a GPU batch's fallback). */
  private final CpuBatchStep cpu;
  /** A fused aggregate's reduction on the GPU (null: a plain GPU node). */
  private final ReductionStep reduction;
  /** spark.vkspark.verify: re-checks a sample of GPU rows with call() (see GpuVerifier). */
  private final GpuVerifier verifier;
  /**
   * Per call: a translated Java UDF on the GPU whose {@code call()} may return a value for a null
   * argument. The kernel skips rows with a null argument, so a batch with one runs that call with
   * {@code call()} ({@link #nullsOnCpu}).
   */
  private final boolean[] lenient;
  /** Stages small child batches (null: every child batch is evaluated as it comes). */
  private final BatchCoalescer coalescer;
  /** {@link #oneCopy()}, decided on the first coalesced batch. */
  private Boolean oneCopy;
  /** A child batch pulled but not yet evaluated (it did not fit the coalesced batch); valid until the child advances. */
  private ColumnarBatch pending;
  /** spark.vkspark.placement=adaptive: each batch's GPU calls on the faster path (null: always the GPU). */
  private final AdaptiveStep adaptive;
  /** The batch {@link #gather} just returned, on the path adaptive placement chose for it (null: not adaptive). */
  private AdaptiveStep.Batch batch;

  public GpuEvalIterator(Iterator<ColumnarBatch> input, List<GpuUdfCall> planned, List<DataType> childTypes, VkConf conf,
                  NodeMetrics metrics, VerifySettings verify) {
    this(input, planned, childTypes, conf, metrics, verify, null);
  }

  /**
   * @param reduction a fused aggregate's reduction, read through {@link #steps()}; null for a plain
   *     GPU node
   */
  GpuEvalIterator(Iterator<ColumnarBatch> input, List<GpuUdfCall> planned, List<DataType> childTypes, VkConf conf,
                  NodeMetrics metrics, VerifySettings verify, DeviceReduction reduction) {
    this.input = input;
    this.childColumns = childTypes.size();
    this.conf = conf;
    this.metrics = metrics;
    TaskContext task = TaskContext.get();
    this.verifier = new GpuVerifier(verify, metrics, task == null ? 0 : task.partitionId());
    this.allocator = ArrowUtils$.MODULE$.rootAllocator().newChildAllocator(
        "vkspark-task-" + (task == null ? "driver" : task.taskAttemptId()), 0, Long.MAX_VALUE);
    this.results = new ColumnVector[planned.size()];
    this.gpuResults = new ColumnVector[planned.size()];
    if (task != null) {
      task.addTaskCompletionListener((TaskCompletionListener) ctx -> close());
    }
    ExecutorDevice device = planned.stream().anyMatch(GpuUdfCall::onGpu) ? ExecutorDevice.get(conf, executor()).orElse(null)
        : null;
    this.calls = decideOnExecutor(planned, device);
    this.lenient = new boolean[calls.size()];
    for (int i = 0; i < calls.size(); i++) {
      lenient[i] = calls.get(i).onGpu() && !calls.get(i).nullStrict();
    }
    int key = reduction != null && reduction.grouped() ? reduction.keyOrdinal() : -1;
    this.gpu = new GpuBatchStep(calls, device, childTypes, key, conf, metrics, allocator);
    this.cpu = new CpuBatchStep(calls, conf, allocator, metrics);
    this.reduction = reduction == null ? null : new ReductionStep(reduction, gpu, metrics);
    this.adaptive = AdaptiveStep.of(gpu.calls(), device, metrics);
    // Only GPU calls gain from larger batches; the CPU calls run row by row either way.
    this.coalescer = conf.coalesce() && !gpu.calls().isEmpty()
        ? BatchCoalescer.forColumns(childTypes, conf.batchRows(), conf.batchBytes()).orElse(null) : null;
  }

  private static String executor() {
    return org.apache.spark.SparkEnv.get() == null ? "driver" : org.apache.spark.SparkEnv.get().executorId();
  }

  /** Calls planned for the GPU fall back here when this executor has no device for them. */
  private List<GpuUdfCall> decideOnExecutor(List<GpuUdfCall> planned, ExecutorDevice gpu) {
    if (planned.stream().noneMatch(GpuUdfCall::onGpu)) {
      return planned;
    }
    String executor = executor();
    List<GpuUdfCall> out = new ArrayList<>();
    for (GpuUdfCall c : planned) {
      Placement p = !c.onGpu() ? c.placement() : c.translated() ? onThisExecutor(c, gpu, executor)
          : onThisExecutor(c, gpu, executor).strict(conf, c.name()); // Spark would run a plain Java UDF anyway
      if (c.onGpu() && !p.onGpu()) {
        LOG.warn("vkspark: {} (decided on executor {})", p.describe(c.name()), executor);
        c = c.placed(p);
      }
      out.add(c);
    }
    return out;
  }

  /** Where a call planned for the GPU runs on this executor: on its device, if it has one with the kernel's features. */
  private static Placement onThisExecutor(GpuUdfCall c, ExecutorDevice gpu, String executor) {
    if (gpu == null) {
      return Placement.cpu(Placement.Cause.NO_DEVICE_ON_EXECUTOR, Placement.DecidedBy.EXECUTOR, executor,
          ExecutorDevice.unavailableReason().orElse("not opened"));
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
    return evaluate(gather(false));
  }

  /** This iterator as a fused aggregate reads it: one {@link DeviceReduction.Step} per (coalesced) batch. */
  public Iterator<DeviceReduction.Step> steps() {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        if (adaptive != null) {
          adaptive.finish(); // the aggregate has folded the last step: its batch's time ends here
        }
        return GpuEvalIterator.this.hasNext();
      }

      @Override
      public DeviceReduction.Step next() {
        return nextStep();
      }
    };
  }

  /**
   * The next input batch (coalesced as for {@link #next()}) for a fused aggregate: reduced on the
   * GPU when this task can (every call on its GPU, a device with the features, verify off), else
   * evaluated as {@link #next()} does, as is a batch whose GPU run fell back to the CPU and, for
   * a grouped reduction, a batch whose keys span more values than its slots (its UDFs still run
   * on the GPU, their results read back).
   */
  private DeviceReduction.Step nextStep() {
    ColumnarBatch in = gather(reduction != null);
    if (reduction == null || lenientNulls(in, in.numRows()) || !reduction.tries(in, verifier.on(), calls.size())) {
      return new DeviceReduction.Rows(evaluate(in));
    }
    AdaptiveStep.Batch b = batch;
    batch = null;
    if (b != null && b.path() == AdaptivePlacement.Path.CPU) {
      ColumnarBatch out = fallback(in, in.numRows()); // the node folds these rows on the host
      adaptive.endAtNext(b);
      return new DeviceReduction.Rows(out);
    }
    DeviceReduction.Step r = reduction.reduce(in);
    if (r != null) {
      if (b != null) {
        adaptive.endAtNext(b); // with the merge of its partials
      }
      return r;
    }
    if (b != null) {
      adaptive.untimed(b);
    }
    return new DeviceReduction.Rows(reduction.wasWide() ? evaluate(in) : fallback(in, in.numRows()));
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

  /**
   * The next child batch, or several small ones coalesced (see {@link BatchCoalescer}): copied into
   * the coalescer's host vectors, or, where only the GPU needs their rows ({@link #oneCopy}),
   * appended straight into the runner's GPU input buffers, and then the batch returned is an empty
   * one (no rows) whose reduction dispatches the rows waiting in the runner.
   */
  private ColumnarBatch gather(boolean reducing) {
    ColumnarBatch in = pullChild();
    if (coalescer != null) {
      coalescer.reset(); // the previous output batch has been consumed
    }
    // Adaptive placement decides first, by the child's batch size: a batch for call() is never coalesced.
    batch = adaptive == null || in.numRows() == 0 ? null : adaptive.begin(reducing, in.numRows());
    if (coalescer == null || !coalescer.fits(in) || (batch != null && batch.path() == AdaptivePlacement.Path.CPU)) {
      if (batch != null) {
        batch.rows(in.numRows());
      }
      return in; // zero copy: a batch large enough on its own, or one computed on the CPU
    }
    boolean direct = oneCopy();
    ColumnarBatch first = in;
    stage(in, direct); // copied before the child is asked for more
    long childNanos = 0;
    while (coalescer.rows() < conf.batchRows()) {
      long t = batch == null ? 0 : System.nanoTime();
      ColumnarBatch b = input.hasNext() ? pullChild() : null;
      if (batch != null) {
        childNanos += System.nanoTime() - t; // reading the child is no part of either path's cost
      }
      if (b == null) {
        break;
      }
      if (!coalescer.fits(b)) {
        pending = b; // evaluated by the next call, before the child advances
        break;
      }
      stage(b, direct);
    }
    if (batch != null) {
      batch.childTime(childNanos);
      batch.rows(coalescer.rows());
    }
    return direct ? new ColumnarBatch(columnsOf(first), 0) : coalescer.batch();
  }

  /** {@code b}'s rows into the GPU's input buffers ({@code direct}) or the coalescer's host vectors. */
  private void stage(ColumnarBatch b, boolean direct) {
    if (direct) {
      gpu.append(b);
      coalescer.admit(b);
    } else {
      metrics.add(VkMetric.STAGED_BYTES, coalescer.add(b));
    }
  }

  private static ColumnVector[] columnsOf(ColumnarBatch b) {
    ColumnVector[] out = new ColumnVector[b.numCols()];
    for (int c = 0; c < out.length; c++) {
      out[c] = b.column(c);
    }
    return out;
  }

  /**
   * Whether small child batches go straight to the GPU with no host copy: a fused aggregate whose
   * every batch this task reduces on the GPU, ungrouped (nothing on the host reads its rows),
   * verify off, every call on the GPU, and no GPU run that could hand a batch back to be recomputed
   * with {@code call()} over rows the child has since overwritten. Decided once per task, before
   * its first batch.
   */
  private boolean oneCopy() {
    if (oneCopy == null) {
      oneCopy = reduction != null && !verifier.on() && gpu.calls().size() == calls.size() && gpu.neverRecomputes()
          && reduction.reducesEveryBatch(verifier.on(), calls.size());
    }
    return oneCopy;
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
    if (!gpu.calls().isEmpty()) {
      AdaptiveStep.Batch b = batch;
      batch = null;
      if (b != null && b.path() == AdaptivePlacement.Path.CPU) {
        for (int i = 0; i < calls.size(); i++) {
          if (calls.get(i).onGpu()) {
            runOnCpu(i, in, rows);
          }
        }
        adaptive.end(b);
      } else {
        boolean onGpu = runOnGpu(in, rows);
        nullsOnCpu(in, rows);
        if (b != null && onGpu) {
          adaptive.end(b);
        } else if (b != null) {
          adaptive.untimed(b); // a batch recomputed on the CPU is no GPU timing
        }
        if (verifier.on()) {
          verifier.check(in, rows, calls, results);
        }
      }
    }
    for (int i = 0; i < calls.size(); i++) {
      if (!calls.get(i).onGpu()) {
        runOnCpu(i, in, rows);
      }
    }
    return output(in, rows);
  }

  /** Runs the GPU calls over {@code in}; false when the batch ran on the CPU instead (too wide, or a GPU failure). */
  private boolean runOnGpu(ColumnarBatch in, int rows) {
    overflow = null;
    if (wideOnCpu(in, rows)) {
      return false;
    }
    // a task that reduces on the GPU evaluates its too-wide batches with a plain runner
    List<FieldVector> out = gpu.underLease(in, rows, gpu::rowsRunner, (r, inputs) -> {
      try {
        return r.run(inputs, rows);
      } catch (GpuException e) {
        if (e.code() == Code.OVERFLOW) {
          overflow = e; // ANSI: call() on the CPU raises Spark's own error for the row
        } else if (!gpu.onGpuFailure(e)) {
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
            gpuResults[i] = ResultColumn.of(v);
          }
          int[] handed = gpu.handedBack(g - 1); // rows the kernel gave to call(): null, or a string not ASCII
          results[i] = handed.length == 0 ? gpuResults[i] : cpu.withHandedBack(i, v, handed, in);
        }
      }
      return true;
    }
    for (int i = 0; i < calls.size(); i++) {
      if (calls.get(i).onGpu()) {
        runOnCpu(i, in, rows);
      }
    }
    if (overflow != null) {
      throw overflow; // call() did not overflow where the GPU did: the GPU's error, naming the UDF and the row
    }
    return false;
  }

  /**
   * A batch with a row wider than {@link GpuBatchStep#rowLimit()} is never staged: its GPU calls run with
   * {@code call()} (true), or, without fallback or for a GLSL-only UDF (it has no {@code call()}),
   * the task fails with SIZE before anything is allocated for it.
   */
  private boolean wideOnCpu(ColumnarBatch in, int rows) {
    long widest = gpu.widestRow(in, rows);
    long limit = gpu.rowLimit();
    if (widest <= limit) {
      return false;
    }
    String names = String.join(", ", gpu.calls().stream().map(GpuUdfCall::name).toList());
    boolean glsl = gpu.calls().stream().anyMatch(GpuUdfCall::glslOnly);
    if (!conf.fallback() || glsl) {
      throw GpuException.of(Code.SIZE, "a row holds " + widest + " bytes of arguments of GPU UDF(s) " + names
          + ", more than the " + limit + " bytes one GPU batch may stage (" + VkConf.BATCH_BYTES + " is "
          + conf.batchBytes() + ", and one dispatch stages at most " + BatchRunner.MAX_VAR_ELEMENTS + " per argument).",
          glsl ? "keep the values passed to GLSL-only UDFs below " + limit + " bytes per row (a GLSL-only UDF has "
              + "no call() to run such rows on the CPU), or raise " + VkConf.BATCH_BYTES + " if it is below that."
              : "set " + VkConf.FALLBACK + "=true to run such rows with the UDF's call() on the CPU, keep the values "
              + "below " + limit + " bytes per row, or raise " + VkConf.BATCH_BYTES + " if it is below that.");
    }
    if (!wideLogged) {
      wideLogged = true;
      LOG.warn("vkspark: a row holds {} bytes of arguments of GPU UDF(s) {}, more than {} = {}: its batch runs with "
          + "call() on the CPU", widest, names, VkConf.BATCH_BYTES, limit);
    }
    for (int i = 0; i < calls.size(); i++) {
      if (calls.get(i).onGpu()) {
        runOnCpu(i, in, rows);
      }
    }
    return true;
  }

  /**
   * Non-strict translated calls ({@link #lenient}) over a batch with a null in one of their
   * arguments: {@code call()} computes them on the CPU, as Spark would (counted as a recomputed
   * batch).
   */
  private void nullsOnCpu(ColumnarBatch in, int rows) {
    boolean recomputed = false;
    for (int i = 0; i < calls.size(); i++) {
      if (lenient[i] && hasNullArgument(calls.get(i), in, rows)) {
        runOnCpu(i, in, rows);
        recomputed = true;
      }
    }
    if (recomputed) {
      metrics.add(VkMetric.RECOMPUTED_BATCHES, 1);
    }
  }

  /** Whether a non-strict translated call has a null argument in {@code in} (its batch is evaluated, not reduced). */
  private boolean lenientNulls(ColumnarBatch in, int rows) {
    for (int i = 0; i < calls.size(); i++) {
      if (lenient[i] && hasNullArgument(calls.get(i), in, rows)) {
        return true;
      }
    }
    return false;
  }

  private static boolean hasNullArgument(GpuUdfCall c, ColumnarBatch in, int rows) {
    for (int a : c.argOrdinals()) {
      ColumnVector v = in.column(a);
      if (v.hasNull() && v.numNulls() > 0) {
        if (rows == in.numRows()) {
          return true;
        }
        for (int r = 0; r < rows; r++) {
          if (v.isNullAt(r)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /** Call {@code i} over {@code in} on the CPU (see {@link CpuBatchStep}). */
  private void runOnCpu(int i, ColumnarBatch in, int rows) {
    results[i] = cpu.run(i, in, rows);
  }

  private void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      try {
        gpu.close();
      } finally {
        cpu.close();
      }
    } finally {
      try {
        if (coalescer != null) {
          coalescer.close();
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
