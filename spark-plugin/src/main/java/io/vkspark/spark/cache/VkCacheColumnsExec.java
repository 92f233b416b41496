package io.vkspark.spark.cache;

import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.shim.UnaryExecShim;

import io.vkspark.spark.cache.CachedColumn;
import java.util.Collections;
import java.util.List;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
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
public final class VkCacheColumnsExec extends UnaryExecShim {
  private static final long serialVersionUID = 1L;

  private final SparkPlan child;

  public VkCacheColumnsExec(SparkPlan child) {
    this.child = child;
  }

  @Override
  public SparkPlan child() {
    return child;
  }

  @Override
  public SparkPlan withNewChildInternal(SparkPlan newChild) {
    return new VkCacheColumnsExec(newChild);
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    return Scala.seq(Scala.list(child.output()));
  }

  @Override
  public boolean supportsColumnar() {
    return true;
  }

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    return child.executeColumnar();
  }

  @Override
  public RDD<InternalRow> doExecute() {
    return child.execute();
  }

  @Override
  protected List<String> columnVectorClasses() {
    return Collections.nCopies(Scala.list(child.output()).size(), CachedColumn.class.getName());
  }

  @Override
  public Partitioning outputPartitioning() {
    return child.outputPartitioning();
  }

  @Override
  protected boolean keepsChildOrdering() {
    return true;
  }

  @Override
  public String nodeName() {
    return "VkCacheColumns";
  }

  // ---- what a case class would generate -------------------------------------------------------

  @Override
  public int productArity() {
    return 1;
  }

  @Override
  public Object productElement(int n) {
    if (n != 0) {
      throw new IndexOutOfBoundsException(n);
    }
    return child;
  }

  @Override
  public boolean canEqual(Object that) {
    return that instanceof VkCacheColumnsExec;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof VkCacheColumnsExec c && c.child.equals(child);
  }

  @Override
  public int hashCode() {
    return 31 + child.hashCode();
  }
}
