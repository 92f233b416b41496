package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.ShaderFeature;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.internal.SpirvSeal;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Ungrouped aggregates of kernel results computed on the device, in the same recording as the
 * kernels: a generated compute shader that runs after them over the same indirect group count.
 * Each workgroup reduces its rows in shared memory and writes one partial per aggregate (value and
 * non-null count, 16 bytes) to a small output; the host folds the partials in workgroup order
 * ({@link HostFold}). The per-row results stay in device-only memory and never cross the bus.
 *
 * <p>Semantics are Spark's partial aggregation buffers': {@code SUM} of int/bigint is a wrapping
 * int64 sum, of float/double a double sum (float widened first); {@code COUNT} counts non-null
 * rows ({@code call = -1}: every row); {@code MIN}/{@code MAX} order NaN above everything, compare
 * {@code -0.0} equal to {@code 0.0} and keep the first of equal values (workgroups reduce
 * contiguous, ordered ranges, so "first" is row order); {@code AVG} is a double sum and a count.
 * A value is null when its count is 0. Integer results and MIN/MAX are exact; double sums differ
 * from a sequential sum only by summation order (a pairwise tree per workgroup, then workgroups in
 * order): within {@code n * 2^-53 * sum(|x|)} for {@code n} rows, in practice far less.
 *
 * <p>Needs 64-bit integers and, for any floating-point aggregate, 64-bit floats in shaders;
 * {@link #unsupportedOn} says when a device lacks them (the caller then folds on the host).
 * Compiled once per JVM per shape ({@link #of}); immutable and thread-safe.
 */public final class ColumnReduction {
  /** The aggregate functions the device computes. */
  public enum Function { SUM, COUNT, MIN, MAX, AVG }

  /**
   * One aggregate over one call's result or over an expression of call results computed per row.
   *
   * @param function the function
   * @param argument what it aggregates: a {@link DeviceExpr.Call} for a call's result, any other
   *     {@link DeviceExpr} of int, bigint, float or double (of any type for {@code COUNT}, which
   *     counts the rows where it is not null); null for {@code COUNT(*)}
   */
  public record Aggregate(Function function, DeviceExpr argument) implements Serializable {
    public Aggregate {
      Objects.requireNonNull(function, "function");
      if (argument == null && function != Function.COUNT) {
        throw GpuException.of(Code.INVALID_ARGUMENT, function + " of nothing.",
            "name the call or expression it reads (only COUNT(*) reads none).");
      }
    }

    /**
     * One aggregate over call {@code call}'s result (its index in the runner's calls); -1 for
     * {@code COUNT(*)}.
     */
    public Aggregate(Function function, int call) {
      this(function, call == -1 ? null : new DeviceExpr.Call(call));
    }

    /** The call whose result it reads as is, -1 when none (COUNT(*) or an expression over calls). */
    public int call() {
      return argument instanceof DeviceExpr.Call c ? c.call() : -1;
    }
  }

  /**
   * One aggregate's value over a batch. {@code count} non-null rows; the value is {@code integral}
   * for SUM/MIN/MAX of int or bigint, else {@code floating} (SUM, AVG, MIN/MAX of float or double).
   */
  public record Value(long count, long integral, double floating) {
    /** SUM, MIN, MAX: null when no row was non-null. */
    public boolean isNull() {
      return count == 0;
    }
  }

  /**
   * What {@code BatchRunner.runReduced} returns: the rows of the batch, one value per aggregate and,
   * for a {@link #filtered} reduction, how many of the rows its filter dropped (0 otherwise).
   */
  public record Result(long rows, List<Value> values, long filtered) {
    public Result {
      values = List.copyOf(values);
    }

    public Result(long rows, List<Value> values) {
      this(rows, values, 0);
    }
  }

  /**
   * One key's aggregates over a batch of a grouped reduction ({@link #grouped}).
   *
   * @param nullKey whether this is the group of the rows whose key is null ({@code key} is then 0)
   * @param key the key value (a date as its epoch day)
   * @param rows the batch's rows with this key (at least 1)
   * @param values one per aggregate, as {@link Result#values()}
   */
  public record Group(boolean nullKey, long key, long rows, List<Value> values) {
    public Group {
      values = List.copyOf(values);
    }
  }

  /**
   * What {@code BatchRunner.runGrouped} returns: the rows of the batch, one {@link Group} per key
   * present, ascending by key, the null key last, and, for a {@link #filtered} reduction, the rows its
   * filter dropped (0 otherwise; they belong to no group).
   */
  public record Grouped(long rows, List<Group> groups, long filtered) {
    public Grouped {
      groups = List.copyOf(groups);
    }

    public Grouped(long rows, List<Group> groups) {
      this(rows, groups, 0);
    }
  }

  /** Key slots of a grouped reduction unless the caller asks otherwise: distinct keys (and null) per batch. */
  public static final int DEFAULT_SLOTS = 64;
  /** Most key slots of a grouped reduction (its first pass scans its rows once per slot). */
  public static final int MAX_SLOTS = 256;
  /** Most aggregates of a grouped reduction (bounds the loop iterations of one invocation). */
  public static final int MAX_GROUPED_AGGREGATES = 32;
  private static final Map<String, ColumnReduction> CACHE = new ConcurrentHashMap<>();

  private final List<Aggregate> aggregates;
  private final List<SqlType> callTypes;
  /** The grouping key (null: ungrouped) and the slots per batch. */
  private final GroupKey key;
  private final int slots;
  /** The rows counted: those where it is true (not null); null counts every row. */
  private final DeviceExpr filter;
  private final ReductionPasses passes;
  private final HostFold fold;

  private ColumnReduction(List<Aggregate> aggregates, List<Aggregate> all, List<SqlType> callTypes, GroupKey key,
                          int slots, DeviceExpr filter) {
    this.aggregates = aggregates;
    this.callTypes = callTypes;
    this.key = key;
    this.slots = slots;
    this.filter = filter;
    this.passes = key == null ? ReductionPasses.ungrouped(all, callTypes, filter, aggregates.toString())
        : ReductionPasses.grouped(all, callTypes, key, slots, filter, aggregates.toString());
    this.fold = new HostFold(aggregates, all, callTypes, slots);
  }

  /**
   * The reduction of {@code aggregates} over calls whose results have {@code callTypes} (in call
   * order), compiled once per JVM.
   *
   * @throws GpuException INVALID_ARGUMENT for an aggregate over a call that does not exist, of a
   *     type other than int, bigint, float or double, or more than 32 calls
   */
  public static ColumnReduction of(List<Aggregate> aggregates, List<SqlType> callTypes) {
    List<Aggregate> aggs = List.copyOf(aggregates);
    List<SqlType> types = List.copyOf(callTypes);
    validate(aggs, types);
    String key = aggs + "|" + types;
    return CACHE.computeIfAbsent(key, k -> new ColumnReduction(aggs, aggs, types, null, 0, null));
  }

  /**
   * The reduction of {@code aggregates} per value of an integral key: the runner's input column
   * {@code keyColumn} (of {@code keyType}: int, bigint or date), which the runner uploads whether
   * or not a call reads it. Per batch the runner finds the key's range on the host; when its
   * distinct possible values (plus one for null keys) fit {@code slots}, the device reduces each
   * workgroup's rows into per-key partials in device-only memory and a second pass folds those over
   * the workgroups, in workgroup order, into one partial per key and aggregate, the only bytes that
   * come back ({@code BatchRunner.runGrouped}); otherwise the batch is left to the caller. The
   * semantics per key are those of {@link #of}, with the same exactness and tolerance.
   *
   * @param slots key slots per batch, 1 to {@link #MAX_SLOTS} (e.g. {@link #DEFAULT_SLOTS})
   * @throws GpuException INVALID_ARGUMENT as {@link #of}, for a key type other than int, bigint or
   *     date, a negative key column, slots out of range, or more than {@link #MAX_GROUPED_AGGREGATES}
   *     aggregates
   */
  public static ColumnReduction grouped(List<Aggregate> aggregates, List<SqlType> callTypes, int keyColumn,
                                        SqlType keyType, int slots) {
    if (!groupable(keyType) || keyColumn < 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a grouped reduction keyed by input column " + keyColumn + " of type "
          + (keyType == null ? "null" : keyType.sqlName()) + ".", "group by an int, bigint or date input column of the runner.");
    }
    return grouped(aggregates, callTypes, GroupKey.column(keyColumn, keyType), slots);
  }

  /**
   * The reduction of {@code aggregates} per value of a key the device computes ({@link GroupKey}: an
   * input column, or an expression such as {@code id % 16} over one, or over a call's result),
   * otherwise as {@link #grouped(List, List, int, SqlType, int)}: a key over an input column is
   * uploaded whether or not a call reads it; per batch the runner bounds the key's range, from the
   * expression alone where it bounds it ({@link GroupKey#staticRange}), else from the source's
   * values on the host.
   *
   * @throws GpuException INVALID_ARGUMENT as {@link #grouped(List, List, int, SqlType, int)}, and for a
   *     key that {@link GroupKey} does not compute or whose call does not exist or has another type
   */
  public static ColumnReduction grouped(List<Aggregate> aggregates, List<SqlType> callTypes, GroupKey key, int slots) {
    List<Aggregate> aggs = List.copyOf(aggregates);
    List<SqlType> types = List.copyOf(callTypes);
    validate(aggs, types);
    Objects.requireNonNull(key, "key");
    key.check();
    if (key.call() >= 0 && (key.call() >= types.size() || types.get(key.call()) != key.sourceType())) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a grouped reduction keyed by call " + key.call() + " of type "
          + key.sourceType().sqlName() + " over calls of types " + types + ".", "key by a call of the runner, with its result type.");
    }
    if (slots < 1 || slots > MAX_SLOTS) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a grouped reduction with " + slots + " key slots.",
          "use 1 to " + MAX_SLOTS + " slots (" + DEFAULT_SLOTS + " is the default).");
    }
    if (aggs.size() > MAX_GROUPED_AGGREGATES) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a grouped reduction of " + aggs.size() + " aggregates; at most "
          + MAX_GROUPED_AGGREGATES + " are supported.", "fold this many aggregates on the host.");
    }
    String cacheKey = aggs + "|" + types + "|key " + key + " " + key.sourceType() + " " + slots;
    return CACHE.computeIfAbsent(cacheKey, k -> {
      List<Aggregate> all = new ArrayList<>(aggs);
      all.add(new Aggregate(Function.COUNT, -1)); // each key's rows, so a key whose values are all null still has a group
      return new ColumnReduction(aggs, List.copyOf(all), types, key, slots, null);
    });
  }

  /**
   * This reduction over only the rows where {@code filter} is true: a row where it is false or null
   * counts for no aggregate ({@code COUNT(*)} included) and, grouped, for no key, as if a SQL
   * {@code WHERE} had dropped it before the aggregation. The filter reads runner input columns
   * ({@link DeviceExpr.Input}), which the runner uploads whether or not a call reads them, and has
   * Spark's semantics exactly ({@link DeviceExpr}); the rows it drops are counted
   * ({@link Result#filtered}, {@link Grouped#filtered}). Grouped, the dropped rows take one key slot
   * of their own, so a batch's key range may span one value fewer. Compiled once per JVM.
   *
   * @throws GpuException INVALID_ARGUMENT for a filter that is not a boolean over input columns (it
   *     reads no call), or that reads more than 32 input columns
   */
  public ColumnReduction filtered(DeviceExpr filter) {
    Objects.requireNonNull(filter, "filter");
    if (this.filter != null) {
      throw GpuException.of(Code.INVALID_ARGUMENT, this + " is filtered already.", "combine the filters with AND first.");
    }
    SqlType t;
    try {
      t = filter.type(callTypes);
    } catch (GpuException e) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "row filter " + filter + ": " + e.getMessage(),
          "filter on a boolean expression of input columns and literals.");
    }
    if (t != SqlType.BOOLEAN || !filter.calls().isEmpty() || DeviceExpr.inputs(filter).size() > 32) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "row filter " + filter + " is a " + t.sqlName() + " over calls "
          + filter.calls() + " and inputs " + DeviceExpr.inputs(filter) + ".",
          "filter on a boolean expression of at most 32 input columns (no call result) and literals.");
    }
    String cacheKey = aggregates + "|" + callTypes + "|key " + (key == null ? "none" : key + " " + key.sourceType())
        + " " + slots + "|where " + filter;
    return CACHE.computeIfAbsent(cacheKey, k -> {
      List<Aggregate> all = new ArrayList<>(aggregates);
      all.add(new Aggregate(Function.COUNT, -1)); // the rows kept (grouped: each key's, and the dropped rows' slot)
      return new ColumnReduction(aggregates, List.copyOf(all), callTypes, key, slots, filter);
    });
  }

  /** The key types a grouped reduction groups by. */
  public static boolean groupable(SqlType t) {
    return t == SqlType.INT || t == SqlType.BIGINT || t == SqlType.DATE;
  }

  private static void validate(List<Aggregate> aggs, List<SqlType> types) {
    if (aggs.isEmpty()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a reduction needs at least one aggregate.", "pass one or more.");
    }
    if (types.size() > 32) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a reduction over " + types.size() + " calls; at most 32 are supported.",
          "reduce on the host for this many calls.");
    }
    for (Aggregate a : aggs) {
      if (a.argument() == null) {
        continue;
      }
      SqlType t = a.argument().type(types); // checks the calls it reads and its operands
      if (a.function() != Function.COUNT && !reducible(t)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, a + " aggregates a " + t.sqlName() + " value.",
            "aggregate int, bigint, float or double values on the device (COUNT counts any); others on the host.");
      }
    }
  }

  /** The result types a reduction reads. */
  public static boolean reducible(SqlType t) {
    return t == SqlType.INT || t == SqlType.BIGINT || t == SqlType.FLOAT || t == SqlType.DOUBLE;
  }

  /** The compiled passes and their buffer sizes, for the runtime that loads and records them. */
  public ReductionPasses passes() {
    return passes;
  }

  /** The host's fold of the partials. */
  HostFold fold() {
    return fold;
  }

  /** The row filter ({@link #filtered}); null when every row counts. */
  public DeviceExpr filter() {
    return filter;
  }

  /** The input columns the row filter reads, ascending (empty without one): the runner uploads them. */
  public int[] filterInputs() {
    return filter == null ? new int[0] : DeviceExpr.inputs(filter).stream().mapToInt(Integer::intValue).toArray();
  }

  /** Whether this reduction is grouped by a key ({@link #grouped}). */
  public boolean grouped() {
    return key != null;
  }

  /** The grouping key; null when ungrouped. */
  public GroupKey key() {
    return key;
  }

  /** The runner's input column the key is computed from; -1 when ungrouped or computed from a call's result. */
  public int keyColumn() {
    return key == null ? -1 : key.input();
  }

  /** The type of the key's source (the input column as the runner takes it, or the call's result); null when ungrouped. */
  public SqlType keyType() {
    return key == null ? null : key.sourceType();
  }

  /** Key slots per batch (distinct key values, plus one for null keys); 0 when ungrouped. */
  public int slots() {
    return slots;
  }

  public List<Aggregate> aggregates() {
    return aggregates;
  }

  /** The result type of each call, in call order. */
  public List<SqlType> callTypes() {
    return callTypes;
  }

  /** The generated GLSL (a grouped reduction's first pass), for debugging. */
  public String source() {
    return passes.source();
  }

  /** Name and SHA-256 of the generated source: the key of loaded programs. */
  public String id() {
    return passes.id();
  }

  /** Why this reduction cannot run on {@code device}, if it cannot: the shader features it lacks. */
  public Optional<String> unsupportedOn(DeviceInfo device) {
    Set<ShaderFeature> missing = passes.missingOn(device);
    return missing.isEmpty() ? Optional.empty() : Optional.of("the GPU reduction of " + aggregates
        + " needs " + SpirvSeal.describe(missing) + ", which device '" + device.name() + "' does not support");
  }

  @Override
  public String toString() {
    return "ColumnReduction" + aggregates + (grouped() ? " by " + key + " (" + slots + " slots)" : "")
        + (filter == null ? "" : " where " + filter);
  }
}
