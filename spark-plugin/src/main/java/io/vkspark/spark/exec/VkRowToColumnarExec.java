package io.vkspark.spark.exec;

import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.shim.Partitions;
import io.vkspark.spark.shim.PlanNode;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.exec.input.BoundedRowBatches;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.RowToColumnarExec;
import org.apache.spark.sql.execution.RowToColumnarTransition;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.runtime.AbstractPartialFunction;

/**
 * Spark's {@code RowToColumnar} under a GPU node, bounded by bytes as well as rows. Spark's own
 * fills {@code spark.sql.inMemoryColumnarStorage.batchSize} rows whatever their width: 300 rows of
 * 10 MB strings asked for one 1.3 GB vector and the out-of-memory error killed the executor. Here
 * a batch also ends before its rows pass {@code spark.vkspark.batchBytes}, and a single row wider
 * than that becomes a batch of its own, read in place ({@link io.vkspark.spark.exec.input.RowColumn}), never copied. Shown in
 * plans as {@code VkRowToColumnar}; {@link #bound} puts it in place of Spark's, with the settings
 * of the GPU node above it.
 */
public final class VkRowToColumnarExec extends PlanNode implements RowToColumnarTransition {
  private static final long serialVersionUID = 1L;

  private final VkConf vkConf;
  private transient Map<String, SQLMetric> metrics;

  /** @param vkConf the settings of the query ({@code batchBytes}) */
  public VkRowToColumnarExec(VkConf vkConf, SparkPlan child) {
    super(vkConf, child);
    this.vkConf = vkConf;
  }

  /** {@code plan} with every {@code RowToColumnar} right under a {@link VkGpuEvalExec} bounded by bytes. */
  public static SparkPlan bound(SparkPlan plan) {
    return plan.transformUp(new AbstractPartialFunction<SparkPlan, SparkPlan>() {
      @Override
      public boolean isDefinedAt(SparkPlan p) {
        return p instanceof VkGpuEvalExec e && e.child() instanceof RowToColumnarExec;
      }

      @Override
      public SparkPlan apply(SparkPlan p) {
        VkGpuEvalExec e = (VkGpuEvalExec) p;
        return e.withNewChildInternal(new VkRowToColumnarExec(e.vkConf(), e.child().children().head()));
      }
    });
  }

  @Override
  public boolean supportsColumnar() {
    return true;
  }

  @Override
  public RDD<InternalRow> doExecute() {
    return child().execute();
  }

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    int maxRows = SQLConf.get().columnBatchSize();
    long maxBytes = vkConf.batchBytes();
    boolean offHeap = SQLConf.get().offHeapColumnVectorEnabled();
    StructType schema = schema();
    Map<String, SQLMetric> m = metricsMap();
    SQLMetric rows = m.get("numInputRows");
    SQLMetric batches = m.get("numOutputBatches");
    SQLMetric wide = m.get("wideRows");
    return Partitions.map(child().execute(),
        it -> new BoundedRowBatches(it, schema, maxRows, maxBytes, offHeap, rows, batches, wide));
  }

  /** Rows in, batches out, and rows wider than the bound (each a batch of its own, read in place). */
  public synchronized Map<String, SQLMetric> metricsMap() {
    if (metrics == null) {
      metrics = new LinkedHashMap<>();
      metrics.put("numInputRows", SQLMetrics.createMetric(sparkContext(), "number of input rows"));
      metrics.put("numOutputBatches", SQLMetrics.createMetric(sparkContext(), "number of output batches"));
      metrics.put("wideRows", SQLMetrics.createMetric(sparkContext(), "rows wider than spark.vkspark.batchBytes"));
    }
    return metrics;
  }

  @Override
  public scala.collection.immutable.Map<String, SQLMetric> metrics() {
    return Scala.orderedMap(metricsMap());
  }

  @Override
  public String nodeName() {
    return "VkRowToColumnar";
  }

  /** Nothing besides the child, as Spark's {@code RowToColumnar} (the settings it carries are the GPU node's). */
  @Override
  public String argString(int maxFields) {
    return "";
  }
}
