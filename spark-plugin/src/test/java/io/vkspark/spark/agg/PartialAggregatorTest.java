package io.vkspark.spark.agg;

import io.vkspark.spark.agg.FusedAggregate;
import io.vkspark.spark.agg.PartialAggregator;
import io.vkspark.spark.agg.VkGpuAggregateExec;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.Test;

/**
 * The fused partial aggregation's buffers without Spark's planner: overflow of integral sums (wraps,
 * or fails under ANSI as Spark does), the row of an empty ungrouped partition, and a partition with
 * more keys than {@link PartialAggregator#MAX_GROUPS} (emitted in parts; every key's counts add up).
 */
final class PartialAggregatorTest {
  private static ColumnarBatch longs(Long... values) {
    OnHeapColumnVector v = new OnHeapColumnVector(values.length, DataTypes.LongType);
    for (int r = 0; r < values.length; r++) {
      if (values[r] == null) {
        v.putNull(r);
      } else {
        v.putLong(r, values[r]);
      }
    }
    return new ColumnarBatch(new ColumnVector[] {v}, values.length);
  }

  private static FusedAggregate agg(FusedAggregate.Kind kind, DataType input, boolean ansi) {
    return new FusedAggregate(kind, new int[] {0}, input, ansi, kind + "(x)");
  }

  private static List<InternalRow> run(List<ColumnarBatch> batches, int key, DataType keyType, FusedAggregate... aggs) {
    VkGpuAggregateExec.Spec spec = new VkGpuAggregateExec.Spec(key, keyType, "", List.of(aggs), List.of());
    Map<AggregateMetric, SQLMetric> metrics = new EnumMap<>(AggregateMetric.class);
    for (AggregateMetric m : AggregateMetric.values()) {
      metrics.put(m, new SQLMetric("sum", 0));
    }
    Iterator<InternalRow> it = new PartialAggregator(PartialAggregator.rows(batches.iterator()), spec, metrics);
    List<InternalRow> out = new ArrayList<>();
    it.forEachRemaining(out::add);
    return out;
  }

  @Test
  void longSum_wrapsWithoutAnsi_failsWithAnsi_likeSpark() {
    List<InternalRow> rows = run(List.of(longs(Long.MAX_VALUE, null, 1L)), -1, null,
        agg(FusedAggregate.Kind.SUM, DataTypes.LongType, false));
    assertEquals(Long.MIN_VALUE, rows.get(0).getLong(0));
    ArithmeticException e = assertThrows(ArithmeticException.class, () -> run(List.of(longs(Long.MAX_VALUE, 1L)), -1,
        null, agg(FusedAggregate.Kind.SUM, DataTypes.LongType, true)));
    assertTrue(e.getMessage().contains("ARITHMETIC_OVERFLOW") && e.getMessage().contains("Fix:"), e.getMessage());
  }

  @Test
  void emptyUngroupedPartition_emitsSparksInitialBuffers() {
    List<InternalRow> rows = run(List.of(), -1, null, agg(FusedAggregate.Kind.SUM, DataTypes.LongType, false),
        new FusedAggregate(FusedAggregate.Kind.COUNT, new int[0], DataTypes.LongType, false, "count(1)"),
        agg(FusedAggregate.Kind.MIN, DataTypes.LongType, false), agg(FusedAggregate.Kind.AVG, DataTypes.LongType, false));
    assertEquals(1, rows.size());
    InternalRow r = rows.get(0);
    assertTrue(r.isNullAt(0), "sum null");
    assertEquals(0L, r.getLong(1), "count 0");
    assertTrue(r.isNullAt(2), "min null");
    assertEquals(0.0, r.getDouble(3), "avg sum 0.0");
    assertEquals(0L, r.getLong(4), "avg count 0");
  }

  @Test
  void moreKeysThanSlots_emitsInParts_countsAddUp() {
    int keys = PartialAggregator.MAX_GROUPS + 1000;
    List<ColumnarBatch> batches = new ArrayList<>();
    for (int b = 0; b < 3; b++) {
      Long[] v = new Long[keys];
      for (int k = 0; k < keys; k++) {
        v[k] = (long) k;
      }
      batches.add(longs(v));
    }
    List<InternalRow> rows = run(batches, 0, DataTypes.LongType,
        new FusedAggregate(FusedAggregate.Kind.COUNT, new int[0], DataTypes.LongType, false, "count(1)"));
    long[] counts = new long[keys];
    for (InternalRow r : rows) {
      counts[(int) r.getLong(0)] += r.getLong(1);
    }
    for (int k = 0; k < keys; k++) {
      assertEquals(3L, counts[k], "key " + k);
    }
    assertTrue(rows.size() > keys, "emitted in parts: " + rows.size());
  }
}
