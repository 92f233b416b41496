package io.vkspark.spark.cache;

import io.vkspark.spark.shim.PlanNode;
import io.vkspark.spark.shim.Scala;

import java.util.Collections;
import java.util.List;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Passes on the column batches of a scan of vkspark's cache (an {@code InMemoryTableScan}, or the
 * adaptive {@code TableCacheQueryStage} around one), naming {@link CachedColumn} as their vector
 * class. {@link ReadCacheColumns} puts it under a {@code ColumnarToRow}, whose generated code then
 * casts each column to that final class and reads values straight from the cached memory; a query
 * stage does not pass its scan's vector classes on, so without this node the code would call the
 * abstract {@code ColumnVector}. Shown in plans as {@code VkCacheColumns}.
 */
public final class VkCacheColumnsExec extends PlanNode {
  private static final long serialVersionUID = 1L;

  public VkCacheColumnsExec(SparkPlan child) {
    super(child);
  }

  @Override
  public boolean supportsColumnar() {
    return true;
  }

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    return child().executeColumnar();
  }

  @Override
  public RDD<InternalRow> doExecute() {
    return child().execute();
  }

  @Override
  protected List<String> columnVectorClasses() {
    return Collections.nCopies(Scala.list(child().output()).size(), CachedColumn.class.getName());
  }

  @Override
  public String nodeName() {
    return "VkCacheColumns";
  }
}
