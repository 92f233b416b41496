package io.vkspark.spark.exec;

import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.run.ReducedSample;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.call.NodeMetrics;
import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.exec.call.VkMetric;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fused aggregate's side of one task of a GPU node: whether the task reduces on the GPU (asked of
 * the {@link DeviceReduction} once, before its first batch) and each batch's reduction in the UDFs'
 * own submission. The one per-batch fallback: a grouped batch whose keys span more values than the
 * slots is evaluated with its rows read back, and after {@link #WIDE_LIMIT} such batches in a row the
 * task stops trying.
 */
final class ReductionStep {
  private static final Logger LOG = LoggerFactory.getLogger(ReductionStep.class);
  /** Consecutive too-wide batches after which a task stops reducing by key on the GPU. */
  static final int WIDE_LIMIT = 8;

  private final DeviceReduction reduction;
  private final GpuBatchStep gpu;
  private final NodeMetrics metrics;
  /** Whether this task reduces on the GPU: decided before its first batch (null before). */
  private Boolean reducing;
  /** Consecutive batches of this task whose keys were too wide; at {@link #WIDE_LIMIT} it stops trying. */
  private int wideRun;
  /** Whether this task's keys proved too many for the slots: its batches fold on the host without trying. */
  private boolean keysTooWide;
  private long reportedRead;

  ReductionStep(DeviceReduction reduction, GpuBatchStep gpu, NodeMetrics metrics) {
    this.reduction = reduction;
    this.gpu = gpu;
    this.metrics = metrics;
  }

  /**
   * Whether this task reduces on the GPU, deciding on its first call with what the executor found:
   * {@code verifying} (rows must come back), and whether all {@code calls} run on its GPU; false
   * once its keys proved too many for the slots.
   */
  boolean reduces(boolean verifying, int calls) {
    if (reducing == null) {
      reducing = decide(verifying, calls);
    }
    return reducing && !keysTooWide;
  }

  /**
   * Whether a reduced batch's calls' results can come back for verify beside the reduction
   * ({@link ReducedSample#carries}: every GPU call's result is fixed-width, not decimal).
   */
  boolean samples() {
    return gpu.calls().stream().allMatch(c -> ReducedSample.carries(c.resultType()));
  }

  /** Whether the reduction is grouped by a key (a grouped batch's keys may be too wide for the slots). */
  boolean grouped() {
    return reduction.grouped();
  }

  private boolean decide(boolean verifying, int calls) {
    if (gpu.calls().stream().anyMatch(GpuUdfCall::nullsOnDevice)) {
      return false; // its results' validity is written on the device, which the reduction does not read yet
    }
    boolean allOnGpu = calls > 0 && gpu.calls().size() == calls;
    List<SqlType> types = gpu.calls().stream().map(GpuUdfCall::resultType).toList();
    int keyInput = reduction.grouped() ? gpu.inputOf(reduction.keyOrdinal()) : -1;
    // the key's type as the runner takes it (a UDF's declared argument type where one reads it)
    SqlType keyType = allOnGpu && reduction.keyOrdinal() >= 0 ? gpu.inputType(reduction.keyOrdinal()) : null;
    List<Integer> filter = reduction.filterColumns();
    List<Integer> filterInputs = filter.stream().map(gpu::inputOf).toList();
    List<SqlType> filterTypes = allOnGpu ? filter.stream().map(gpu::inputType).toList() : List.of();
    Optional<ColumnReduction> r = reduction.onExecutor(new DeviceReduction.Executor(verifying, allOnGpu, types,
        keyInput, keyType, allOnGpu ? gpu.gpu().device().info() : null, filterInputs, filterTypes));
    r.ifPresent(gpu::reduceWith);
    return r.isPresent();
  }

  /**
   * Runs the calls and the reduction over {@code in} on the GPU: the partials, or a recompute
   * (a loop limit or a throwing row: with {@code call()}; keys too wide for the slots: nothing ran,
   * the batch is evaluated on the GPU with its rows read back). The results of its first
   * {@code sampleRows} rows come back with it ({@link #sampled}).
   */
  GpuOutcome<DeviceReduction.Step> reduce(ColumnarBatch in, int sampleRows) {
    int rows = in.numRows();
    GpuOutcome<DeviceReduction.Step> out = gpu.underLease(in, rows, gpu::runner, (r, inputs) -> {
      r.sample().request(sampleRows);
      if (reduction.grouped()) {
        return r.runGrouped(inputs, rows).<GpuOutcome<DeviceReduction.Step>>map(
            g -> new GpuOutcome.Done<>(new DeviceReduction.ReducedByKey(g, 0)))
            .orElseGet(() -> new GpuOutcome.Recompute<>(Placement.Cause.KEYS_TOO_WIDE, String.valueOf(reduction.slots())));
      }
      return new GpuOutcome.Done<>(new DeviceReduction.Reduced(r.runReduced(inputs, rows), 0));
    });
    // underLease made the runner before it ran; the partials alone (the sampled rows' results are verify's)
    long read = gpu.runner().stats().bytesRead() - reportedRead - gpu.runner().sample().bytesRead();
    reportedRead = gpu.runner().stats().bytesRead();
    boolean wide = out instanceof GpuOutcome.Recompute<?> w && w.cause() == Placement.Cause.KEYS_TOO_WIDE;
    wideRun = wide ? wideRun + 1 : 0;
    if (wide) {
      metrics.add(VkMetric.KEYS_TOO_WIDE_BATCHES, 1);
    }
    if (wideRun >= WIDE_LIMIT) {
      keysTooWide = true; // a high-cardinality key: finding each batch's range only to fold it on the host
      LOG.info("vkspark: {} consecutive batches' keys spanned more than {} values; this task folds the rest on the host",
          wideRun, reduction.slots());
    }
    if (!(out instanceof GpuOutcome.Done<DeviceReduction.Step> done)) {
      return out;
    }
    // the rows the runner reduced: in's, after any appended straight to the GPU (GpuEvalIterator's one-copy path)
    DeviceReduction.Step step = done.value();
    metrics.add(VkMetric.NUM_OUTPUT_ROWS, step instanceof DeviceReduction.ReducedByKey k ? k.result().rows()
        : ((DeviceReduction.Reduced) step).result().rows());
    metrics.add(VkMetric.NUM_OUTPUT_BATCHES, 1);
    return new GpuOutcome.Done<>(step instanceof DeviceReduction.ReducedByKey k ? new DeviceReduction.ReducedByKey(k.result(), read)
        : new DeviceReduction.Reduced(((DeviceReduction.Reduced) step).result(), read));
  }

  /**
   * The GPU calls' results of the rows of the last batch {@link #reduce} sampled, one vector per
   * call (owned by the runner, valid until its next batch): the values the reduction read.
   */
  List<FieldVector> sampled() {
    return gpu.runner().sample().vectors();
  }
}
