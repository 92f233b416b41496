package io.vkspark.spark.exec;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The one hook between a GPU node and a fused aggregate over it: the aggregate (package
 * {@code agg}) gives the node's iterator a reduction to run in the UDFs' own submission, and gets
 * back one {@link Step} per batch. Why an interface here: {@code exec} runs batches and never
 * knows how an aggregate is planned; {@code agg} plans it and never builds a runner.
 */
public interface DeviceReduction extends Serializable {
  /** The grouping key's column of the GPU node's child (a runner input); -1 when ungrouped. */
  int keyOrdinal();

  /** Key values (plus one for null keys) one batch may span to be reduced by key; 0 when ungrouped. */
  int slots();

  default boolean grouped() {
    return keyOrdinal() >= 0;
  }

  /**
   * The columns of the GPU node's child that a filter absorbed into the reduction reads (runner
   * inputs whether or not a call reads them: the device evaluates the filter); empty when none.
   */
  default List<Integer> filterColumns() {
    return List.of();
  }

  /**
   * The absorbed filter's condition bound to the GPU node's child's columns, or null when none:
   * evaluated on the host ({@code HostFilter}) for every batch that is not reduced on the GPU, before
   * its calls run, so {@code call()} sees only the rows Spark's {@code Filter} would have kept.
   */
  default Expression hostFilter() {
    return null;
  }

  /**
   * The reduction this task's runner computes, or empty when this executor folds on the host
   * instead; asked once per task, before its first batch runs.
   */
  Optional<ColumnReduction> onExecutor(Executor executor);

  /**
   * What a task found on its executor.
   *
   * @param verifying the rows must come back to be checked: verify is strict, or a sample of results
   *     that cannot come back beside the reduction (a sample of the others does)
   * @param allOnGpu every call of the node runs on this executor's GPU
   * @param resultTypes the calls' result types, in order
   * @param keyInput the runner input holding the key (-1 when ungrouped)
   * @param keyType the key's type as the runner takes it (null when ungrouped or not every call is on the GPU)
   * @param device the executor's device (null when not every call is on the GPU)
   * @param filterInputs the runner input holding each of {@link #filterColumns()}, in order
   * @param filterTypes each one's type as the runner takes it
   */
  record Executor(boolean verifying, boolean allOnGpu, List<SqlType> resultTypes, int keyInput, SqlType keyType,
                  DeviceInfo device, List<Integer> filterInputs, List<SqlType> filterTypes) {
    public Executor(boolean verifying, boolean allOnGpu, List<SqlType> resultTypes, int keyInput, SqlType keyType,
                    DeviceInfo device) {
      this(verifying, allOnGpu, resultTypes, keyInput, keyType, device, List.of(), List.of());
    }
  }

  /** One input batch evaluated for a fused aggregate: its aggregates reduced on the GPU, or its rows with the results. */
  sealed interface Step permits Reduced, ReducedByKey, Rows {}

  /** The batch's aggregates, reduced on the GPU; {@code readbackBytes} of partials came back for it. */
  record Reduced(ColumnReduction.Result result, long readbackBytes) implements Step {}

  /** The batch's aggregates per key value, reduced on the GPU; {@code readbackBytes} of partials came back for it. */
  record ReducedByKey(ColumnReduction.Grouped result, long readbackBytes) implements Step {}

  /** The batch with the calls' results, for the host fold. */
  record Rows(ColumnarBatch batch) implements Step {}
}
