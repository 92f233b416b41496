package io.vkspark.spark.exec;

import io.vkspark.spark.conf.VerifySettings;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.call.NodeMetrics;
import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.exec.call.ResultColumn;
import io.vkspark.spark.exec.call.VkMetric;
import io.vkspark.spark.exec.cpu.CpuBatchStep;
import io.vkspark.spark.exec.verify.GpuVerifier;
import io.vkspark.spark.exec.input.BatchCoalescer;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.util.ArrowUtils$;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.TaskCompletionListener;

/**
 * One partition through a {@link VkGpuEvalExec}: each batch is gathered ({@link ChildBatches}: as it
 * came, coalesced with the next small ones, or appended straight to the GPU), routed
 * ({@link BatchRouter}: GPU, reduced on the GPU, or {@code call()} for a {@link Placement.Cause}), run
 * ({@link GpuBatchStep} or {@link ReductionStep}, whose outcome may send the batch on another route,
 * or the one CPU loop {@link #onCpu}) and output (the batch's columns plus one vector per call,
 * reused from batch to batch, or a fused aggregate's partials, {@link #steps()}). Every row a call
 * computes with {@code call()} is counted under its cause ({@link VkMetric#cpuRows}).
 */
public final class GpuEvalIterator implements Iterator<ColumnarBatch> {
  private final List<GpuUdfCall> calls;
  private final int childColumns;
  private final NodeMetrics metrics;
  private final BufferAllocator allocator;
  private final ColumnVector[] results;
  /** Each GPU call's result column over the runner's vector (results[i] points here or at a CPU computation). */
  private final ColumnVector[] gpuResults;
  /** Per call: placed on the GPU (its batches are routed), or on the CPU (every batch, for its placement's cause). */
  private final boolean[] onGpu;
  private final boolean[] onCpu;
  private boolean closed;
  private final GpuBatchStep gpu;
  private final CpuBatchStep cpu;
  /** A fused aggregate's reduction on the GPU (null: a plain GPU node). */
  private final ReductionStep reduction;
  /** spark.vkspark.verify: re-checks a sample of GPU rows with call() (see GpuVerifier). */
  private final GpuVerifier verifier;
  private final ChildBatches children;
  /** spark.vkspark.placement=adaptive: times each batch's path (null: not adaptive). */
  private final AdaptiveStep adaptive;
  private final BatchRouter router;
  /** A fused aggregate's absorbed filter, for the batches not reduced on the GPU (null: none). */
  private final HostFilter hostFilter;

  /** @param reduction a fused aggregate's reduction, read through {@link #steps()}; null for a plain GPU node */
  GpuEvalIterator(Iterator<ColumnarBatch> input, List<GpuUdfCall> planned, List<DataType> childTypes, VkConf conf,
                  NodeMetrics metrics, VerifySettings verify, DeviceReduction reduction) {
    this.childColumns = childTypes.size();
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
    String executor = SparkEnv.get() == null ? "driver" : SparkEnv.get().executorId();
    ExecutorDevice device = planned.stream().anyMatch(GpuUdfCall::onGpu) ? ExecutorDevice.get(conf, executor).orElse(null)
        : null;
    this.calls = BatchRouter.placeOnExecutor(planned, device, conf, executor);
    this.onGpu = new boolean[calls.size()];
    this.onCpu = new boolean[calls.size()];
    for (int i = 0; i < calls.size(); i++) {
      onGpu[i] = calls.get(i).onGpu();
      onCpu[i] = !onGpu[i];
    }
    int key = reduction != null && reduction.grouped() ? reduction.keyOrdinal() : -1;
    this.gpu = new GpuBatchStep(calls, device, childTypes, key, reduction == null ? List.of() : reduction.filterColumns(),
        conf, metrics, allocator);
    this.hostFilter = reduction == null ? null : HostFilter.of(reduction.hostFilter());
    this.cpu = new CpuBatchStep(calls, conf, allocator, metrics);
    this.reduction = reduction == null ? null : new ReductionStep(reduction, gpu, metrics);
    this.adaptive = AdaptiveStep.of(gpu.calls(), device, metrics);
    this.router = new BatchRouter(calls, gpu, this.reduction, adaptive, conf, verifier);
    // Only GPU calls gain from larger batches; the CPU calls run row by row either way.
    this.children = new ChildBatches(input, conf.coalesce() && !gpu.calls().isEmpty()
        ? BatchCoalescer.forColumns(childTypes, conf.batchRows(), conf.batchBytes()).orElse(null) : null,
        gpu, metrics, conf.batchRows());
  }

  @Override
  public boolean hasNext() {
    return children.hasNext();
  }

  @Override
  public ColumnarBatch next() {
    return ((DeviceReduction.Rows) run(gather(false))).batch(); // a plain batch is never routed to a reduction
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
        return run(gather(reduction != null));
      }
    };
  }

  /** A gathered batch, the route it takes, and adaptive placement's timing of it (null when not timed). */
  private record Gathered(ColumnarBatch batch, BatchRoute route, AdaptiveStep.Batch timing, boolean reducing) {}

  /**
   * The next batch, gathered (see {@link ChildBatches}) on the route it starts on; a batch for
   * {@code call()} is never coalesced, nor one read from device copies unless appended to the GPU
   * ({@link BatchRouter#gathers}).
   */
  private Gathered gather(boolean reducing) {
    ColumnarBatch first = children.first();
    boolean small = children.small(first);
    BatchRouter.Start start = router.start(first, reducing, small);
    AdaptiveStep.Batch t = start.timing();
    if (t != null && t.slice() > 0 && !(start.route() instanceof BatchRoute.Cpu)) {
      int k = Math.min(t.slice(), first.numRows()); // the trial: a slice timed with call(); the GPU computes it too
      long t0 = System.nanoTime();
      ColumnarBatch slice = filtered(ChildBatches.prefix(first, k)); // call() sees only the rows Spark's Filter keeps
      onCpu(slice, slice.numRows(), onGpu, Placement.Cause.ADAPTIVE_TRIAL);
      adaptive.sliced(t, k, System.nanoTime() - t0);
    }
    ColumnarBatch in = first;
    if (router.gathers(start, first, small)) {
      in = children.gather(first, start.route() instanceof BatchRoute.GpuAppend, t);
    } else if (t != null) {
      t.rows(first.numRows());
    }
    return new Gathered(in, router.gathered(start.route(), in), t, reducing);
  }

  /**
   * Runs the gathered batch on its route until one completes: a GPU run that asks for a recompute
   * sends the batch on the route the router names; an overflow is recomputed with {@code call()},
   * whose own error is Spark's, else the GPU's is thrown.
   */
  @SuppressWarnings("unchecked")
  private DeviceReduction.Step run(Gathered g) {
    ColumnarBatch in = g.batch();
    int rows = in.numRows();
    BatchRoute route = g.route();
    AdaptiveStep.Batch t = g.timing();
    boolean kept = hostFilter == null;
    while (true) {
      if (!kept && (route instanceof BatchRoute.Gpu || route instanceof BatchRoute.Cpu)) {
        in = hostFilter.apply(in); // not reduced on the GPU: the absorbed filter on the host, before any call runs
        rows = in.numRows();
        kept = true;
      }
      if (gpu.calls().isEmpty() || route instanceof BatchRoute.Cpu) {
        if (route instanceof BatchRoute.Cpu c && !gpu.calls().isEmpty()) {
          onCpu(in, rows, onGpu, c.cause());
        }
        ended(t, route, g.reducing());
        return new DeviceReduction.Rows(output(in, rows));
      }
      long t0 = System.nanoTime();
      // verify: the results of a reduced batch's first rows come back with its reduction, within the budget
      int sample = route instanceof BatchRoute.Gpu || !verifier.on() ? 0 : verifier.reducedSample(rows);
      GpuOutcome<?> o = route instanceof BatchRoute.Gpu ? gpu.evaluate(in, rows) : reduction.reduce(in, sample);
      long gpuNanos = System.nanoTime() - t0;
      if (o instanceof GpuOutcome.Done<?> done && done.value() instanceof DeviceReduction.Step step) {
        ended(t, route, g.reducing());
        if (verifier.on()) {
          verifier.checkReduced(sample == 0 ? null : sampled(in, reduction.sampled()), calls, gpuNanos);
        }
        return step;
      }
      if (o instanceof GpuOutcome.Done<?> done) {
        List<FieldVector> out = (List<FieldVector>) done.value();
        for (int i = 0, v = 0; i < calls.size(); i++) {
          if (onGpu[i]) {
            gpuResults[i] = gpuResults[i] == null ? ResultColumn.of(out.get(v)) : gpuResults[i];
            int[] handed = gpu.handedBack(v); // rows the kernel gave to call(): a string not ASCII, say
            results[i] = handed.length == 0 ? gpuResults[i] : cpu.withHandedBack(i, out.get(v), handed, in);
            v++;
          }
        }
        boolean[] nulls = router.nullArgumentCalls(in, rows);
        if (nulls != null) {
          onCpu(in, rows, nulls, Placement.Cause.NULL_ARGUMENTS);
          metrics.add(VkMetric.RECOMPUTED_BATCHES, 1);
        }
        ended(t, nulls == null ? route : new BatchRoute.Cpu(Placement.Cause.NULL_ARGUMENTS), g.reducing());
        if (verifier.on()) {
          verifier.check(in, rows, calls, results, gpuNanos);
        }
        return new DeviceReduction.Rows(output(in, rows));
      }
      ended(t, null, g.reducing()); // a batch recomputed elsewhere is no timing of its path
      t = null;
      if (o instanceof GpuOutcome.Overflow<?> overflow) {
        onCpu(in, rows, onGpu, Placement.Cause.GPU_FAILURE);
        throw overflow.error(); // call() did not overflow where the GPU did: the GPU's error, naming the UDF and the row
      }
      route = router.after((GpuOutcome.Recompute<?>) o);
    }
  }

  /**
   * A reduced batch's sampled rows for verify: the first rows of {@code in}, then the GPU calls'
   * results of them ({@code results}, one per GPU call), as columns after in's; only the rows the
   * absorbed filter keeps (call() sees only the rows Spark's Filter would keep).
   */
  private ColumnarBatch sampled(ColumnarBatch in, List<FieldVector> results) {
    ColumnVector[] columns = new ColumnVector[in.numCols() + calls.size()];
    for (int c = 0; c < in.numCols(); c++) {
      columns[c] = in.column(c);
    }
    for (int i = 0; i < calls.size(); i++) { // a reducing task runs every call on the GPU: a result each
      columns[in.numCols() + i] = ResultColumn.of(results.get(i));
    }
    return filtered(new ColumnarBatch(columns, results.isEmpty() ? 0 : results.get(0).getValueCount()));
  }

  /** {@code in}'s rows the absorbed filter keeps ({@code in} itself without one). */
  private ColumnarBatch filtered(ColumnarBatch in) {
    return hostFilter == null ? in : hostFilter.apply(in);
  }

  private void ended(AdaptiveStep.Batch t, BatchRoute route, boolean reducing) {
    if (t != null) {
      adaptive.ended(t, route, reducing);
    }
  }

  /**
   * The one CPU loop: the calls marked in {@code which} over the first {@code rows} rows of
   * {@code in} with their {@code call()} ({@link CpuBatchStep}), each call's rows counted under
   * {@code cause} (null: the call's own placement's cause).
   */
  private void onCpu(ColumnarBatch in, int rows, boolean[] which, Placement.Cause cause) {
    for (int i = 0; i < calls.size(); i++) {
      if (which[i]) {
        results[i] = cpu.run(i, in, rows);
        metrics.add(VkMetric.cpuRows(cause != null ? cause : calls.get(i).placement().cause()), rows);
      }
    }
  }

  /** The node's output batch: {@code in}'s columns, then each call's results (the CPU-placed calls' computed now). */
  private ColumnarBatch output(ColumnarBatch in, int rows) {
    onCpu(in, rows, onCpu, null);
    ColumnVector[] columns = new ColumnVector[childColumns + calls.size()];
    for (int c = 0; c < childColumns; c++) {
      columns[c] = in.column(c);
    }
    System.arraycopy(results, 0, columns, childColumns, results.length);
    metrics.add(VkMetric.NUM_OUTPUT_ROWS, rows);
    metrics.add(VkMetric.NUM_OUTPUT_BATCHES, 1);
    return new ColumnarBatch(columns, rows);
  }

  private void close() {
    if (closed) {
      return;
    }
    try (allocator; ChildBatches c = children; CpuBatchStep cpuStep = cpu; GpuBatchStep gpuStep = gpu) {
      closed = true; // each closed, last to first, even when a later one fails
    }
  }

  public static Map<String, Long> snapshot(Map<String, SQLMetric> metrics) {
    Map<String, Long> out = new LinkedHashMap<>();
    metrics.forEach((k, m) -> out.put(k, m.value()));
    return out;
  }
}
