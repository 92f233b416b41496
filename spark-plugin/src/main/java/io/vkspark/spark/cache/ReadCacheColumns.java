package io.vkspark.spark.cache;

import io.vkspark.spark.cache.VkCacheSerializer;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.ColumnarToRowTransition;
import org.apache.spark.sql.execution.RowToColumnarTransition;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.TableCacheQueryStageExec;
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec;

/**
 * The physical rule (after Spark inserts its row/column transitions) that makes CPU operators read
 * vkspark's cache through {@code ColumnarToRow} instead of rows. Spark's cache scan supports both;
 * under a row-based parent Spark takes its rows, which for any cache means writing every value into
 * an UnsafeRow that the parent's generated code then reads back. Spark's default cache builds those
 * rows with generated code; ours would have to as well to keep up. Reading the column batches
 * instead, {@code ColumnarToRow}'s generated code (over {@link VkCacheColumnsExec}, which names
 * the final {@code CachedColumn} class) reads each value straight from the cached memory into the
 * parent's code: no row is built at all.
 *
 * <p>Applies to scans of relations vkspark's cache stores and hands out as column batches
 * ({@code spark.vkspark.cache.columnarOutput}), read by a row-based parent; not to the plan's root,
 * whose consumer (rows or batches) this rule cannot see. Idempotent: a wrapped scan is read by a
 * columnar parent.
 */
public final class ReadCacheColumns extends Rule<SparkPlan> {
  @Override
  public SparkPlan apply(SparkPlan plan) {
    boolean columnar = plan instanceof ColumnarToRowTransition || (plan.supportsColumnar() && !plan.supportsRowBased());
    return withChildren(plan, columnar);
  }

  /** {@code plan} with its children rewritten; {@code columnar}: whether its own output is read as batches. */
  private static SparkPlan withChildren(SparkPlan plan, boolean columnar) {
    boolean childrenColumnar = plan instanceof ColumnarToRowTransition
        || (!(plan instanceof RowToColumnarTransition) && columnar);
    return plan.mapChildren(child -> rewrite(child, childrenColumnar));
  }

  private static SparkPlan rewrite(SparkPlan plan, boolean columnar) {
    if (!columnar && readsVkCacheColumns(plan)) {
      return new ColumnarToRowExec(new VkCacheColumnsExec(plan));
    }
    return withChildren(plan, columnar);
  }

  /** Whether {@code plan} is a scan of vkspark's cache that can hand out column batches. */
  public static boolean readsVkCacheColumns(SparkPlan plan) {
    SparkPlan scan = plan instanceof TableCacheQueryStageExec stage ? stage.plan() : plan;
    return plan.supportsColumnar() && scan instanceof InMemoryTableScanExec s && s.supportsColumnar()
        && s.relation().cacheBuilder().serializer() instanceof VkCacheSerializer;
  }
}
