package io.vkspark.spark;

import io.vkspark.gpu.column.ColumnReduction;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * A fused partial aggregate that the GPU computes in the same submission as its UDFs
 * ({@link ColumnReduction}), so the per-row results never come back: decided on the driver for a
 * {@link VkGpuAggregateExec} that is ungrouped or grouped by a column of the GPU node's child of
 * type int, bigint or date (reduced per key value, {@link ColumnReduction#grouped}, while a batch's
 * keys span at most {@code slots} values; a wider batch folds on the host), computes nothing per
 * row itself, and whose every
 * function is {@code COUNT(*)} or reads one GPU UDF result column directly (no guard, a result of
 * int, bigint, float or double), with no integral {@code SUM} that must fail on overflow (ANSI).
 * Anything else folds on the host ({@link PartialAggregator}). On the executor the reduction runs
 * only when every UDF of the node runs on its GPU and {@code verify} is off (verify needs the rows);
 * otherwise, batch by batch, the host fold takes over, with the same results.
 *
 * @param aggregates one per fused function, in order, reading call indices of the GPU node
 * @param keyOrdinal the grouping key's column of the GPU node's child (uploaded as a runner input
 *     whether or not a UDF reads it); -1 when ungrouped
 * @param slots key values (plus one for null keys) a batch may span to be reduced on the GPU
 */
record GpuReduction(List<ColumnReduction.Aggregate> aggregates, int keyOrdinal, int slots) implements Serializable {
  /** {@code spark.vkspark.fuseAggregates.onGpu}: reduce eligible fused aggregates on the GPU (default true). */
  static final String CONF = FuseGpuAggregates.CONF + ".onGpu";
  /**
   * {@code spark.vkspark.fuseAggregates.onGpu.keySlots}: key values (and null) one batch may span
   * for a grouped aggregate to be reduced on the GPU, 1 to 256 (default 64); a batch spanning more
   * folds on the host.
   */
  static final String SLOTS_CONF = CONF + ".keySlots";

  GpuReduction {
    aggregates = List.copyOf(aggregates);
  }

  /** An ungrouped reduction. */
  GpuReduction(List<ColumnReduction.Aggregate> aggregates) {
    this(aggregates, -1, 0);
  }

  boolean grouped() {
    return keyOrdinal >= 0;
  }

  /** The reduction for {@code spec} over {@code eval}'s calls, when every part qualifies (default key slots). */
  static Optional<GpuReduction> plan(VkGpuAggregateExec.Spec spec, VkGpuEvalExec eval) {
    return plan(spec, eval, ColumnReduction.DEFAULT_SLOTS);
  }

  /**
   * The reduction for {@code spec} over {@code eval}'s calls, when every part qualifies; a grouped
   * one when the key is a column of {@code eval}'s child of type int, bigint or date.
   */
  static Optional<GpuReduction> plan(VkGpuAggregateExec.Spec spec, VkGpuEvalExec eval, int slots) {
    if (!spec.computed().isEmpty()) {
      return Optional.empty();
    }
    int childColumns = Scala.list(eval.child().output()).size();
    int key = spec.keyOrdinal();
    if (key >= 0) {
      DataType kt = spec.keyType();
      boolean integral = kt.equals(DataTypes.IntegerType) || kt.equals(DataTypes.LongType) || kt.equals(DataTypes.DateType);
      if (key >= childColumns || !integral || slots < 1 || slots > ColumnReduction.MAX_SLOTS
          || spec.aggregates().size() > ColumnReduction.MAX_GROUPED_AGGREGATES) {
        return Optional.empty(); // a key computed by a UDF or per row, of another type: folded on the host
      }
    }
    List<GpuUdfCall> calls = eval.calls();
    List<ColumnReduction.Aggregate> out = new ArrayList<>();
    for (FusedAggregate a : spec.aggregates()) {
      if (a.kind() == FusedAggregate.Kind.COUNT && a.ordinals().length == 0) {
        out.add(new ColumnReduction.Aggregate(ColumnReduction.Function.COUNT, -1));
        continue;
      }
      if (a.ordinals().length != 1) {
        return Optional.empty();
      }
      int call = a.ordinals()[0] - childColumns;
      if (call < 0 || call >= calls.size()) {
        return Optional.empty(); // a column of the GPU node's child, not a UDF result
      }
      GpuUdfCall c = calls.get(call);
      SqlType t = c.resultType();
      if (c.guard() != null || !ColumnReduction.reducible(t)
          || (a.kind() != FusedAggregate.Kind.COUNT && !sparkType(t).equals(a.input()))
          || (a.kind() == FusedAggregate.Kind.SUM && a.integral() && a.ansi())) {
        return Optional.empty();
      }
      out.add(new ColumnReduction.Aggregate(ColumnReduction.Function.valueOf(a.kind().name()), call));
    }
    return Optional.of(new GpuReduction(out, key, key >= 0 ? slots : 0));
  }

  private static DataType sparkType(SqlType t) {
    return switch (t) {
      case INT -> DataTypes.IntegerType;
      case BIGINT -> DataTypes.LongType;
      case FLOAT -> DataTypes.FloatType;
      case DOUBLE -> DataTypes.DoubleType;
      default -> DataTypes.NullType;
    };
  }
}
