package io.vkspark.spark.agg;

import io.vkspark.gpu.GpuException;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.api.SparkTypes;
import io.vkspark.spark.exec.VkGpuEvalExec;

import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.reduce.DeviceExpr;
import io.vkspark.gpu.column.reduce.GroupKey;
import io.vkspark.gpu.column.reduce.KeyRange;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.runtime.BoxedUnit;

/**
 * A fused partial aggregate that the GPU computes in the same submission as its UDFs
 * ({@link ColumnReduction}), so the per-row results never come back: decided on the driver for a
 * {@link VkGpuAggregateExec} that is ungrouped or grouped by a key the device computes (reduced per
 * key value, {@link ColumnReduction#grouped}, while a batch's keys span at most {@code slots} values;
 * a wider batch folds on the host): an int, bigint or date column of the GPU node's child, or an
 * expression of one source ({@link #keyOf}: {@code id % 16}, {@code pmod(id, 16)}, {@code + - *} by
 * literals, casts, {@code floor}) over a column of the child or a GPU UDF's result (a UDF result
 * only when the expression bounds it within the slots, e.g. {@code f(x) % 8}: its values are never
 * on the host to be ranged); and whose every function is {@code COUNT(*)} or reads GPU UDF result
 * columns (no guard, a result of int, bigint, float or double) directly or through an expression
 * the device computes exactly ({@link DeviceExprs}: {@code sum(CASE WHEN isnan(x) THEN 0D ELSE x END)},
 * {@code count_if(isnan(x))}, {@code max(coalesce(x, 0))}; not over a column of the GPU node's
 * child), with no integral {@code SUM} that must fail on overflow (ANSI).
 * Anything else folds on the host ({@link PartialAggregator}). Whether it is tried, and whether an
 * executor runs it, is {@link ReducePlacement}'s decision.
 *
 * @param aggregates one per fused function, in order, reading call indices of the GPU node
 * @param keyOrdinal the column of the GPU node's child the key is (or is computed from), uploaded as
 *     a runner input whether or not a UDF reads it; -1 when ungrouped or computed from a UDF result
 * @param slots key values (plus one for null keys) a batch may span to be reduced on the GPU
 * @param keyExpr the key computed from its source ({@link DeviceExpr.KeySource}); null when the key
 *     is the column itself (or ungrouped)
 * @param keyCall the GPU UDF call whose result the key is computed from; -1 for none
 * @param filter a {@code WHERE} on the GPU node's child's columns the device evaluates in the
 *     reduction ({@link DeviceFilter}); null for none
 */
public record GpuReduction(List<ColumnReduction.Aggregate> aggregates, int keyOrdinal, int slots, DeviceExpr keyExpr,
                           int keyCall, DeviceFilter filter) implements Serializable {
  private static final Logger LOG = LoggerFactory.getLogger(GpuReduction.class);

  public GpuReduction {
    aggregates = List.copyOf(aggregates);
  }

  /** Ungrouped ({@code keyOrdinal} -1) or grouped by the column {@code keyOrdinal} itself. */
  public GpuReduction(List<ColumnReduction.Aggregate> aggregates, int keyOrdinal, int slots) {
    this(aggregates, keyOrdinal, slots, null, -1, null);
  }

  /** The same reduction of only the rows {@code f} keeps. */
  GpuReduction withFilter(DeviceFilter f) {
    return new GpuReduction(aggregates, keyOrdinal, slots, keyExpr, keyCall, f);
  }

  public boolean grouped() {
    return keyOrdinal >= 0 || keyCall >= 0;
  }

  /**
   * The reduction as gpu-core runs it, over calls of {@code callTypes}; grouped, with the key's
   * source column in runner input {@code keyInput} of type {@code keyType} (unless the key is
   * computed from a call's result). The one place a {@link ColumnReduction} is built from a plan.
   *
   * With a filter, the runner inputs {@code filterInputs} hold its columns, in order.
   *
   * @throws io.vkspark.gpu.GpuException INVALID_ARGUMENT when the runner takes the key's source as
   *     another type than planned
   */
  ColumnReduction build(List<SqlType> callTypes, int keyInput, SqlType keyType, List<Integer> filterInputs) {
    ColumnReduction r;
    if (!grouped()) {
      r = ColumnReduction.of(aggregates, callTypes);
    } else {
      GroupKey key = keyCall >= 0 ? GroupKey.ofCall(keyCall, callTypes.get(keyCall), keyExpr)
          : GroupKey.ofInput(keyInput, keyType, keyExpr == null ? new DeviceExpr.KeySource(keyType) : keyExpr);
      r = ColumnReduction.grouped(aggregates, callTypes, key, slots);
    }
    if (filter == null) {
      return r;
    }
    DeviceExpr where = filter.onDevice(filterInputs).orElseThrow(() -> GpuException.of(
        GpuException.Code.INVALID_ARGUMENT, "the filter " + filter.text() + " no longer translates.",
        "report the query: the planner translated it."));
    return r.filtered(where);
  }

  /**
   * Whether the key's expression alone bounds its values, plus a null, within the slots (so every
   * batch reduces on the GPU, whatever its keys: {@code id % 16} with 64 slots); false for a key
   * that is a column.
   */
  boolean keyBounded() {
    if (keyExpr == null) {
      return false;
    }
    DeviceExpr.KeySource source = source(keyExpr);
    KeyRange r = GroupKey.ofInput(0, source.type(), keyExpr).staticRange();
    return r.values() + (filter != null ? 1 : 0) < slots; // a null, and the rows a filter drops, take a slot each
  }

  private static DeviceExpr.KeySource source(DeviceExpr e) {
    if (e instanceof DeviceExpr.KeySource k) {
      return k;
    }
    return e.children().stream().map(GpuReduction::source).filter(Objects::nonNull).findFirst().orElse(null);
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
  static Optional<Planned> plan(VkGpuAggregateExec.Spec spec, VkGpuEvalExec eval, int slots, DeviceFilter filter) {
    if (slots < 1 || slots > ColumnReduction.MAX_SLOTS) {
      return Optional.empty();
    }
    List<Attribute> childOutput = Scala.list(eval.child().output());
    int childColumns = childOutput.size();
    int key = spec.keyOrdinal();
    int keyOrdinal = -1;
    int keyCall = -1;
    DeviceExpr keyExpr = null;
    int evalColumnsAll = childColumns + eval.calls().size();
    if (key >= 0) {
      if (spec.aggregates().size() > ColumnReduction.MAX_GROUPED_AGGREGATES) {
        return Optional.empty();
      }
      if (key < childColumns) {
        DataType kt = spec.keyType();
        boolean integral = kt.equals(DataTypes.IntegerType) || kt.equals(DataTypes.LongType) || kt.equals(DataTypes.DateType);
        if (!integral) {
          return Optional.empty();
        }
        keyOrdinal = key;
      } else if (key < evalColumnsAll) {
        return Optional.empty(); // a UDF result as it is: its range is unknown on the host (folded there)
      } else {
        Optional<KeyPlan> k = keyOf(spec.computed().get(key - evalColumnsAll), childOutput, eval.calls());
        if (k.isEmpty()) {
          return Optional.empty();
        }
        keyOrdinal = k.get().ordinal();
        keyCall = k.get().call();
        keyExpr = k.get().expr();
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
      } catch (GpuException ill) {
        return Optional.empty();
      }
      if (!sparkType(t).equals(a.input())) {
        return Optional.empty();
      }
      out.add(new ColumnReduction.Aggregate(ColumnReduction.Function.valueOf(a.kind().name()), args.get(0)));
    }
    GpuReduction planned = new GpuReduction(out, keyOrdinal, key >= 0 ? slots : 0, keyExpr, keyCall, filter);
    if (keyCall >= 0 && !planned.keyBounded()) {
      return Optional.empty(); // a UDF result's key: only a bounded one is ever admitted
    }
    try {
      // compiled once per JVM: the executors' shaders are known to compile (a grouped one's source
      // does not depend on which runner input holds the key)
      List<Integer> filterInputs = filter == null ? List.of()
          : IntStream.range(0, filter.columns().size()).boxed().toList();
      ColumnReduction compiled = ColumnReduction.of(out, callTypes);
      if (filter != null) {
        compiled = compiled.filtered(filter.onDevice(filterInputs).orElseThrow());
      }
      if (key >= 0) {
        SqlType sourceType = keyExpr != null ? source(keyExpr).type() : SparkTypes.of(spec.keyType()).orElseThrow();
        planned.build(callTypes, 0, sourceType, filterInputs);
      }
      return Optional.of(new Planned(planned, compiled));
    } catch (GpuException e) {
      LOG.info("vkspark: fused aggregate folds on the host: {}", e.getMessage());
      return Optional.empty();
    }
  }

  /**
   * A grouping key computed from one source: a column of the GPU node's child ({@code ordinal}) or
   * a GPU UDF's result ({@code call}), as {@code expr} over it.
   */
  record KeyPlan(int ordinal, int call, DeviceExpr expr) {}

  /**
   * {@code bound} (a key computed per row, bound to the GPU node's output: its child's columns,
   * then the calls' results) as a key the device computes: it reads exactly one column, of a type a
   * key is computed from, and translates ({@link DeviceExprs#key}); empty otherwise.
   */
  static Optional<KeyPlan> keyOf(Expression bound, List<Attribute> childOutput,
                                 List<GpuUdfCall> calls) {
    Set<Integer> read = new TreeSet<>();
    bound.foreach(x -> {
      if (x instanceof BoundReference b) {
        read.add(b.ordinal());
      }
      return BoxedUnit.UNIT;
    });
    if (read.size() != 1) {
      return Optional.empty();
    }
    int o = read.iterator().next();
    int childColumns = childOutput.size();
    SqlType type;
    if (o < childColumns) {
      type = DeviceExprs.type(childOutput.get(o).dataType());
      if (type == null && childOutput.get(o).dataType().equals(DataTypes.DateType)) {
        return Optional.empty(); // a date only as the key itself
      }
    } else {
      GpuUdfCall call = calls.get(o - childColumns);
      type = call.guard() != null ? null : call.resultType();
    }
    if (type == null || type == SqlType.BOOLEAN) {
      return Optional.empty();
    }
    DeviceExpr.KeySource source = new DeviceExpr.KeySource(type);
    Optional<DeviceExpr> expr = DeviceExprs.key(bound, o, source);
    if (expr.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(o < childColumns ? new KeyPlan(o, -1, expr.get()) : new KeyPlan(-1, o - childColumns, expr.get()));
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
