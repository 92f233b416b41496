package io.vkspark.spark.exec;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.SqlType;
import java.util.List;
import java.util.Optional;
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
  /** Whether the last {@link #reduce} found the batch's keys too wide for the slots. */
  private boolean wide;
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
   * Whether {@code in} is worth reducing on the GPU: the task reduces (decided on its first call,
   * with what the executor found: {@code verifying}, and whether all {@code calls} run on its GPU),
   * its keys have not proved too many, and no row is too wide to stage.
   */
  boolean tries(ColumnarBatch in, boolean verifying, int calls) {
    if (reducing == null) {
      reducing = decide(verifying, calls);
    }
    return reducing && !keysTooWide && gpu.widestRow(in, in.numRows()) <= gpu.rowLimit();
  }

  private boolean decide(boolean verifying, int calls) {
    boolean allOnGpu = calls > 0 && gpu.calls().size() == calls;
    List<SqlType> types = gpu.calls().stream().map(GpuUdfCall::resultType).toList();
    int keyInput = reduction.grouped() ? gpu.inputOf(reduction.keyOrdinal()) : -1;
    // the key's type as the runner takes it (a UDF's declared argument type where one reads it)
    SqlType keyType = allOnGpu && reduction.keyOrdinal() >= 0 ? gpu.inputType(reduction.keyOrdinal()) : null;
    Optional<ColumnReduction> r = reduction.onExecutor(new DeviceReduction.Executor(verifying, allOnGpu, types,
        keyInput, keyType, allOnGpu ? gpu.gpu().device().info() : null));
    r.ifPresent(gpu::reduceWith);
    return r.isPresent();
  }

  /**
   * Whether every batch of this task is reduced on the GPU, ungrouped, deciding now if not yet
   * decided (as {@link #tries} would on the first batch): then a batch's rows can be appended to
   * the runner as they arrive, since nothing but the device needs them.
   */
  boolean reducesEveryBatch(boolean verifying, int calls) {
    if (reducing == null) {
      reducing = decide(verifying, calls);
    }
    return reducing && !reduction.grouped();
  }

  /** Whether this task reduces on the GPU (false before its first batch): its too-wide batches then use a plain runner. */
  boolean reducing() {
    return Boolean.TRUE.equals(reducing);
  }

  /** Whether the last {@link #reduce} found the batch's keys too wide for the slots (nothing ran on the GPU). */
  boolean wasWide() {
    return wide;
  }

  /**
   * Runs the calls and the reduction over {@code in} on the GPU; null when the GPU run failed in a
   * way that lets the batch be recomputed on the CPU (loop limit with fallback on), or when a
   * grouped batch's keys are too wide for the slots ({@link #wasWide()}: nothing ran).
   */
  DeviceReduction.Step reduce(ColumnarBatch in) {
    int rows = in.numRows();
    wide = false;
    DeviceReduction.Step step = gpu.underLease(in, rows, gpu::runner, (r, inputs) -> {
      try {
        if (reduction.grouped()) {
          ColumnReduction.Grouped grouped = r.runGrouped(inputs, rows).orElse(null);
          wide = grouped == null;
          return grouped == null ? null : new DeviceReduction.ReducedByKey(grouped, 0);
        }
        return new DeviceReduction.Reduced(r.runReduced(inputs, rows), 0);
      } catch (GpuException e) {
        if (!gpu.onGpuFailure(e)) {
          throw e;
        }
        return null;
      }
    });
    long read = gpu.runner().stats().bytesRead() - reportedRead; // underLease made the runner before it ran
    reportedRead = gpu.runner().stats().bytesRead();
    wideRun = wide ? wideRun + 1 : 0;
    if (wideRun >= WIDE_LIMIT) {
      keysTooWide = true; // a high-cardinality key: finding each batch's range only to fold it on the host
      LOG.info("vkspark: {} consecutive batches' keys spanned more than {} values; this task folds the rest on the host",
          wideRun, reduction.slots());
    }
    if (step == null) {
      return null;
    }
    // the rows the runner reduced: in's, after any appended straight to the GPU (GpuEvalIterator's one-copy path)
    metrics.add(VkMetric.NUM_OUTPUT_ROWS, step instanceof DeviceReduction.ReducedByKey k ? k.result().rows()
        : ((DeviceReduction.Reduced) step).result().rows());
    metrics.add(VkMetric.NUM_OUTPUT_BATCHES, 1);
    return step instanceof DeviceReduction.ReducedByKey k ? new DeviceReduction.ReducedByKey(k.result(), read)
        : new DeviceReduction.Reduced(((DeviceReduction.Reduced) step).result(), read);
  }
}
