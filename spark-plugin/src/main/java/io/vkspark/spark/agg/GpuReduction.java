package io.vkspark.spark.agg;

import io.vkspark.spark.exec.GpuUdfCall;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.api.SparkTypes;
import io.vkspark.spark.exec.VkGpuEvalExec;

import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.reduce.DeviceExpr;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * A fused partial aggregate that the GPU computes in the same submission as its UDFs
 * ({@link ColumnReduction}), so the per-row results never come back: decided on the driver for a
 * {@link VkGpuAggregateExec} that is ungrouped or grouped by a column of the GPU node's child of
 * type int, bigint or date (reduced per key value, {@link ColumnReduction#grouped}, while a batch's
 * keys span at most {@code slots} values; a wider batch folds on the host), and whose every
 * function is {@code COUNT(*)} or reads GPU UDF result columns (no guard, a result of int, bigint,
 * float or double) directly or through an expression the device computes exactly
 * ({@link DeviceExprs}: {@code sum(CASE WHEN isnan(x) THEN 0D ELSE x END)}, {@code count_if(isnan(x))},
 * {@code max(coalesce(x, 0))}; not over a column of the GPU node's child), with no integral
 * {@code SUM} that must fail on overflow (ANSI).
 * Anything else folds on the host ({@link PartialAggregator}). Whether it is tried, and whether an
 * executor runs it, is {@link ReducePlacement}'s decision.
 *
 * @param aggregates one per fused function, in order, reading call indices of the GPU node
 * @param keyOrdinal the grouping key's column of the GPU node's child (uploaded as a runner input
 *     whether or not a UDF reads it); -1 when ungrouped
 * @param slots key values (plus one for null keys) a batch may span to be reduced on the GPU
 */
public record GpuReduction(List<ColumnReduction.Aggregate> aggregates, int keyOrdinal, int slots) implements Serializable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GpuReduction.class);

  public GpuReduction {
    aggregates = List.copyOf(aggregates);
  }

  public boolean grouped() {
    return keyOrdinal >= 0;
  }

  /**
   * The reduction as gpu-core runs it, over calls of {@code callTypes}; grouped, with the key in
   * runner input {@code keyInput} of type {@code keyType}. The one place a {@link ColumnReduction}
   * is built from a plan.
   */
  ColumnReduction build(List<SqlType> callTypes, int keyInput, SqlType keyType) {
    return grouped() ? ColumnReduction.grouped(aggregates, callTypes, keyInput, keyType, slots)
        : ColumnReduction.of(aggregates, callTypes);
  }

  /**
   * A planned reduction, and the ungrouped form compiled on the driver to check that it compiles
   * (a local device's features are checked against it too).
   */
  record Planned(GpuReduction reduction, ColumnReduction compiled) {}

  /**
   * The reduction for {@code spec} over {@code eval}'s calls, when every part qualifies; a grouped
   * one when the key is a column of {@code eval}'s child of type int, bigint or date.
   */
  static Optional<Planned> plan(VkGpuAggregateExec.Spec spec, VkGpuEvalExec eval, int slots) {
    if (slots < 1 || slots > ColumnReduction.MAX_SLOTS) {
      return Optional.empty();
    }
    int childColumns = Scala.list(eval.child().output()).size();
    int key = spec.keyOrdinal();
    if (key >= 0) {
      DataType kt = spec.keyType();
      boolean integral = kt.equals(DataTypes.IntegerType) || kt.equals(DataTypes.LongType) || kt.equals(DataTypes.DateType);
      if (key >= childColumns || !integral || spec.aggregates().size() > ColumnReduction.MAX_GROUPED_AGGREGATES) {
        return Optional.empty(); // a key computed by a UDF or per row, of another type: folded on the host
      }
    }
    List<GpuUdfCall> calls = eval.calls();
    if (calls.stream().anyMatch(c -> c.kernel().rowStatus())) {
      // string or binary results, or rows a kernel hands to call(): the host folds the node's rows
      return Optional.empty();
    }
    List<SqlType> callTypes = calls.stream().map(GpuUdfCall::resultType).toList();
    int evalColumns = childColumns + calls.size();
    // a column of the GPU node's output: a UDF result is on the device, a column of its child is not
    IntFunction<DeviceExpr> onDevice = o -> {
      int call = o - childColumns;
      if (call < 0 || call >= calls.size() || calls.get(call).guard() != null
          || !ColumnReduction.reducible(callTypes.get(call))) {
        return null;
      }
      return new DeviceExpr.Call(call);
    };
    // a column the fused node reads: the GPU node's, or an expression it computes per row over them
    IntFunction<DeviceExpr> argument = o -> o < evalColumns ? onDevice.apply(o)
        : DeviceExprs.translate(spec.computed().get(o - evalColumns), onDevice).orElse(null);
    List<ColumnReduction.Aggregate> out = new ArrayList<>();
    for (FusedAggregate a : spec.aggregates()) {
      List<DeviceExpr> args = new ArrayList<>();
      for (int o : a.ordinals()) {
        DeviceExpr d = argument.apply(o);
        if (d == null) {
          return Optional.empty();
        }
        args.add(d);
      }
      if (a.kind() == FusedAggregate.Kind.COUNT) {
        out.add(new ColumnReduction.Aggregate(ColumnReduction.Function.COUNT, countable(args)));
        continue;
      }
      if (args.size() != 1 || (a.kind() == FusedAggregate.Kind.SUM && a.integral() && a.ansi())) {
        return Optional.empty();
      }
      SqlType t;
      try {
        t = args.get(0).type(callTypes);
      } catch (io.vkspark.gpu.GpuException ill) {
        return Optional.empty();
      }
      if (!sparkType(t).equals(a.input())) {
        return Optional.empty();
      }
      out.add(new ColumnReduction.Aggregate(ColumnReduction.Function.valueOf(a.kind().name()), args.get(0)));
    }
    GpuReduction planned = new GpuReduction(out, key, key >= 0 ? slots : 0);
    try {
      // compiled once per JVM: the executors' shaders are known to compile (a grouped one's source
      // does not depend on which runner input holds the key)
      ColumnReduction compiled = ColumnReduction.of(out, callTypes);
      if (key >= 0) {
        planned.build(callTypes, 0, SparkTypes.of(spec.keyType()).orElseThrow());
      }
      return Optional.of(new Planned(planned, compiled));
    } catch (io.vkspark.gpu.GpuException e) {
      LOG.info("vkspark: fused aggregate folds on the host: {}", e.getMessage());
      return Optional.empty();
    }
  }

  /**
   * What {@code COUNT(args...)} counts the non-null values of: null for none ({@code COUNT(*)}), the
   * one argument, or for several a boolean that is null unless every argument is non-null.
   */
  private static DeviceExpr countable(List<DeviceExpr> args) {
    if (args.size() <= 1) {
      return args.isEmpty() ? null : args.get(0);
    }
    DeviceExpr all = new DeviceExpr.IsNull(args.get(0), true);
    for (int i = 1; i < args.size(); i++) {
      all = new DeviceExpr.Logic(false, all, new DeviceExpr.IsNull(args.get(i), true));
    }
    return new DeviceExpr.If(all, new DeviceExpr.Literal(SqlType.BOOLEAN, true), DeviceExpr.Literal.nullOf(SqlType.BOOLEAN));
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
