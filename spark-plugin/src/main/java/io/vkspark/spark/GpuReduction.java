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
 * {@link VkGpuAggregateExec} that is ungrouped, computes nothing per row itself, and whose every
 * function is {@code COUNT(*)} or reads one GPU UDF result column directly (no guard, a result of
 * int, bigint, float or double), with no integral {@code SUM} that must fail on overflow (ANSI).
 * Anything else folds on the host ({@link PartialAggregator}). On the executor the reduction runs
 * only when every UDF of the node runs on its GPU and {@code verify} is off (verify needs the rows);
 * otherwise, batch by batch, the host fold takes over, with the same results.
 *
 * @param aggregates one per fused function, in order, reading call indices of the GPU node
 */
record GpuReduction(List<ColumnReduction.Aggregate> aggregates) implements Serializable {
  /** {@code spark.vkspark.fuseAggregates.onGpu}: reduce eligible fused aggregates on the GPU (default true). */
  static final String CONF = FuseGpuAggregates.CONF + ".onGpu";

  GpuReduction {
    aggregates = List.copyOf(aggregates);
  }

  /** The reduction for {@code spec} over {@code eval}'s calls, when every part qualifies. */
  static Optional<GpuReduction> plan(VkGpuAggregateExec.Spec spec, VkGpuEvalExec eval) {
    if (spec.keyOrdinal() >= 0 || !spec.computed().isEmpty()) {
      return Optional.empty();
    }
    int childColumns = Scala.list(eval.child().output()).size();
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
    return Optional.of(new GpuReduction(out));
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
