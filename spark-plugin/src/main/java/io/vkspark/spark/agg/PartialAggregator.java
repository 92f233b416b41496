package io.vkspark.spark.agg;

import io.vkspark.spark.exec.GpuEvalIterator;
import io.vkspark.spark.shim.Scala;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * One partition of a {@link VkGpuAggregateExec}: folds the {@code VkGpuEval} batches into Spark's
 * partial aggregation buffers, a column at a time, and emits one row per group (one row in all
 * without grouping, even for an empty partition, as Spark's partial aggregate does).
 *
 * <p>Each function updates its buffer exactly as Spark's update expression does, row by row in the
 * batch's order, so a partition's partial result is bit for bit Spark's: {@code SUM} starts from
 * {@code 0 + x} (so {@code -0.0} alone sums to {@code 0.0}), integral sums wrap or, with ANSI, fail
 * on overflow; {@code MIN}/{@code MAX} keep the first of equal values ({@code -0.0 == 0.0}) and
 * order NaN above everything; nulls are skipped; {@code COUNT} counts rows whose arguments are all
 * non-null.
 *
 * <p>Fed by a {@link GpuEvalIterator} with a {@link GpuReduction}, it takes each batch's aggregates
 * as the GPU reduced them ({@link State#fold}; grouped, per key, into each key's group whether its
 * earlier batches were reduced or folded row by row) instead of its rows: integer results, counts and
 * MIN/MAX are the same, double sums differ from the row-by-row sum only by summation order
 * (see {@link io.vkspark.gpu.column.reduce.ColumnReduction}).
 *
 * <p>More than {@link #MAX_GROUPS} keys in a partition: the groups so far are emitted and the
 * aggregation starts over, so memory stays bounded; the final aggregation merges repeated keys.
 */
public final class PartialAggregator implements Iterator<InternalRow> {
  /** Most groups held before they are emitted (the aggregation targets low-cardinality keys). */
  static final int MAX_GROUPS = 1 << 16;

  private final Iterator<ColumnarBatch> input;
  private final int keyOrdinal;
  private final DataType keyType;
  private final State[] states;
  private final UnsafeProjection toUnsafe;
  private final int width;
  private final SQLMetric outputRows;
  private final SQLMetric aggregatedRows;
  /** The GPU node's batches, reduced on the GPU where it can (null: {@link #input} gives rows only). */
  private final GpuEvalIterator steps;
  private final SQLMetric gpuReducedRows;
  private final SQLMetric gpuReadbackBytes;
  private final Map<Long, Integer> slots = new HashMap<>();
  private final ArrayDeque<InternalRow> ready = new ArrayDeque<>();
  private long[] keys = new long[16];
  private int nullSlot = -1;
  private int groups;
  private int[] slotOf = new int[0];
  private boolean done;
  /** Keys and arguments computed per row from the child's columns, and their columns (reused). */
  private final List<org.apache.spark.sql.catalyst.expressions.Expression> computed;
  private final UnsafeProjection computeRow;
  private org.apache.spark.sql.execution.vectorized.OnHeapColumnVector[] computedColumns;
  private int computedCapacity;

  PartialAggregator(Iterator<ColumnarBatch> input, VkGpuAggregateExec.Spec spec, SQLMetric outputRows,
                    SQLMetric aggregatedRows) {
    this(input, null, spec, outputRows, aggregatedRows, null, null);
  }

  /**
   * Over the steps of {@code steps}: batches the GPU reduced are folded as values, the others row by
   * row; grouped, the GPU's values per key go into the key's group.
   */
  PartialAggregator(GpuEvalIterator steps, VkGpuAggregateExec.Spec spec, SQLMetric outputRows, SQLMetric aggregatedRows,
                    SQLMetric gpuReducedRows, SQLMetric gpuReadbackBytes) {
    this(steps, steps, spec, outputRows, aggregatedRows, gpuReducedRows, gpuReadbackBytes);
  }

  private PartialAggregator(Iterator<ColumnarBatch> input, GpuEvalIterator steps, VkGpuAggregateExec.Spec spec,
                            SQLMetric outputRows, SQLMetric aggregatedRows, SQLMetric gpuReducedRows,
                            SQLMetric gpuReadbackBytes) {
    this.input = input;
    this.steps = steps;
    this.gpuReducedRows = gpuReducedRows;
    this.gpuReadbackBytes = gpuReadbackBytes;
    this.keyOrdinal = spec.keyOrdinal();
    this.keyType = spec.keyType();
    List<FusedAggregate> aggregates = spec.aggregates();
    this.computed = spec.computed();
    this.computeRow = computed.isEmpty() ? null : UnsafeProjection.create(Scala.seq(computed));
    this.states = aggregates.stream().map(PartialAggregator::state).toArray(State[]::new);
    this.outputRows = outputRows;
    this.aggregatedRows = aggregatedRows;
    java.util.List<DataType> types = new java.util.ArrayList<>();
    if (keyOrdinal >= 0) {
      types.add(keyType);
    }
    aggregates.forEach(a -> types.addAll(Arrays.asList(a.bufferTypes())));
    this.width = types.size();
    this.toUnsafe = UnsafeProjection.create(types.toArray(DataType[]::new));
    if (keyOrdinal < 0) {
      newGroup(); // the one group of an ungrouped aggregate, present even for no rows
    }
  }

  @Override
  public boolean hasNext() {
    while (ready.isEmpty() && !done) {
      if (input.hasNext()) {
        if (steps == null) {
          add(input.next());
        } else {
          GpuEvalIterator.Step step = steps.nextStep();
          if (step instanceof GpuEvalIterator.Reduced r) {
            fold(r);
          } else if (step instanceof GpuEvalIterator.ReducedByKey r) {
            fold(r);
          } else {
            add(((GpuEvalIterator.Rows) step).batch());
          }
        }
        if (groups > MAX_GROUPS) {
          emit();
        }
      } else {
        done = true;
        closeComputed();
        emit();
      }
    }
    return !ready.isEmpty();
  }

  @Override
  public InternalRow next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    return ready.poll();
  }

  private void add(ColumnarBatch in) {
    int rows = in.numRows();
    ColumnarBatch batch = computeRow == null ? in : withComputed(in, rows);
    if (slotOf.length < rows) {
      slotOf = new int[rows];
    }
    if (keyOrdinal >= 0) {
      ColumnVector k = batch.column(keyOrdinal);
      boolean wide = keyType.equals(DataTypes.LongType);
      for (int r = 0; r < rows; r++) {
        slotOf[r] = k.isNullAt(r) ? nullSlot() : slot(wide ? k.getLong(r) : k.getInt(r));
      }
    } // ungrouped: every row in slot 0 (slotOf is all zeros)
    for (State s : states) {
      s.update(batch, rows, slotOf);
    }
    aggregatedRows.add(rows);
  }

  /** One batch's aggregates as the GPU reduced them, into the one group of an ungrouped aggregate. */
  private void fold(GpuEvalIterator.Reduced r) {
    List<io.vkspark.gpu.column.reduce.ColumnReduction.Value> values = r.result().values();
    for (int i = 0; i < states.length; i++) {
      states[i].fold(0, values.get(i));
    }
    gpuReducedRows.add(r.result().rows());
    gpuReadbackBytes.add(r.readbackBytes());
  }

  /**
   * One batch's aggregates per key as the GPU reduced them, each into its key's group (made on the
   * key's first batch, reduced or folded row by row), after the batches before it.
   */
  private void fold(GpuEvalIterator.ReducedByKey r) {
    for (io.vkspark.gpu.column.reduce.ColumnReduction.Group g : r.result().groups()) {
      int slot = g.nullKey() ? nullSlot() : slot(g.key());
      for (int i = 0; i < states.length; i++) {
        states[i].fold(slot, g.values().get(i));
      }
    }
    gpuReducedRows.add(r.result().rows());
    gpuReadbackBytes.add(r.readbackBytes());
  }

  /** {@code in}'s columns followed by the computed ones, evaluated row by row as Spark's projection would. */
  private ColumnarBatch withComputed(ColumnarBatch in, int rows) {
    int n = computed.size();
    if (computedColumns == null || computedCapacity < rows) {
      closeComputed();
      computedColumns = new org.apache.spark.sql.execution.vectorized.OnHeapColumnVector[n];
      computedCapacity = Math.max(rows, 1);
      for (int c = 0; c < n; c++) {
        computedColumns[c] = new org.apache.spark.sql.execution.vectorized.OnHeapColumnVector(computedCapacity,
            stored(computed.get(c).dataType()));
      }
    }
    for (var v : computedColumns) {
      v.reset();
    }
    for (int r = 0; r < rows; r++) {
      InternalRow values = computeRow.apply(in.getRow(r));
      for (int c = 0; c < n; c++) {
        var v = computedColumns[c];
        DataType t = computed.get(c).dataType();
        if (values.isNullAt(c)) {
          v.putNull(r);
        } else if (t.equals(DataTypes.LongType)) {
          v.putLong(r, values.getLong(c));
        } else if (t.equals(DataTypes.DoubleType)) {
          v.putDouble(r, values.getDouble(c));
        } else if (t.equals(DataTypes.FloatType)) {
          v.putFloat(r, values.getFloat(c));
        } else if (t.equals(DataTypes.IntegerType) || t.equals(DataTypes.DateType)) {
          v.putInt(r, values.getInt(c));
        } else {
          v.putBoolean(r, true); // COUNT's argument of any other type: only whether it is null counts
        }
      }
    }
    ColumnVector[] all = new ColumnVector[in.numCols() + n];
    for (int c = 0; c < in.numCols(); c++) {
      all[c] = in.column(c);
    }
    System.arraycopy(computedColumns, 0, all, in.numCols(), n);
    return new ColumnarBatch(all, rows);
  }

  /** How a computed column is kept: as itself for the types SUM/MIN/MAX/AVG and keys read, else as "not null". */
  private static DataType stored(DataType t) {
    return t.equals(DataTypes.LongType) || t.equals(DataTypes.DoubleType) || t.equals(DataTypes.FloatType)
        || t.equals(DataTypes.IntegerType) || t.equals(DataTypes.DateType) ? t : DataTypes.BooleanType;
  }

  private void closeComputed() {
    if (computedColumns != null) {
      for (var v : computedColumns) {
        v.close();
      }
      computedColumns = null;
    }
  }

  private int nullSlot() {
    if (nullSlot < 0) {
      nullSlot = newGroup();
    }
    return nullSlot;
  }

  private int slot(long key) {
    Integer s = slots.get(key);
    if (s == null) {
      s = newGroup();
      keys[s] = key;
      slots.put(key, s);
    }
    return s;
  }

  private int newGroup() {
    int g = groups++;
    if (g >= keys.length) {
      keys = Arrays.copyOf(keys, keys.length * 2);
    }
    for (State s : states) {
      s.ensure(keys.length);
    }
    return g;
  }

  /** Queues one row per group and starts over with none. */
  private void emit() {
    for (int g = 0; g < groups; g++) {
      Object[] values = new Object[width];
      int at = 0;
      if (keyOrdinal >= 0) {
        values[at++] = g == nullSlot ? null : keyType.equals(DataTypes.LongType) ? (Object) keys[g] : (Object) (int) keys[g];
      }
      for (State s : states) {
        at = s.write(g, values, at);
      }
      ready.add(toUnsafe.apply(new GenericInternalRow(values)).copy());
    }
    outputRows.add(groups);
    for (State s : states) {
      s.clear(groups);
    }
    groups = 0;
    nullSlot = -1;
    slots.clear();
  }

  private static State state(FusedAggregate a) {
    return switch (a.kind()) {
      case SUM -> a.integral() ? new LongSum(a) : new DoubleSum(a);
      case COUNT -> new Count(a);
      case MIN, MAX -> a.integral() ? new LongExtreme(a) : new DoubleExtreme(a);
      case AVG -> new Avg(a);
    };
  }

  /** A function's buffers for every group. */
  private abstract static class State {
    final FusedAggregate agg;
    final int column;
    boolean[] has = new boolean[0];

    State(FusedAggregate agg) {
      this.agg = agg;
      this.column = agg.ordinals().length > 0 ? agg.ordinals()[0] : -1;
    }

    void ensure(int capacity) {
      if (has.length < capacity) {
        has = Arrays.copyOf(has, capacity);
        grow(capacity);
      }
    }

    void clear(int groups) {
      Arrays.fill(has, 0, groups, false);
      reset(groups);
    }

    abstract void grow(int capacity);

    abstract void reset(int groups);

    abstract void update(ColumnarBatch batch, int rows, int[] slot);

    /** Adds a batch's value reduced on the GPU (its rows in order) to group {@code g}'s buffer, as {@link #update} would. */
    abstract void fold(int g, io.vkspark.gpu.column.reduce.ColumnReduction.Value v);

    /** Writes group {@code g}'s buffer at {@code at}; returns the next position. */
    abstract int write(int g, Object[] values, int at);

    long integral(ColumnVector v, int r) {
      return agg.input().equals(DataTypes.IntegerType) ? v.getInt(r) : v.getLong(r);
    }

    double floating(ColumnVector v, int r) {
      DataType t = agg.input();
      if (t.equals(DataTypes.DoubleType)) {
        return v.getDouble(r);
      }
      if (t.equals(DataTypes.FloatType)) {
        return v.getFloat(r);
      }
      return t.equals(DataTypes.IntegerType) ? v.getInt(r) : (double) v.getLong(r);
    }
  }

  /** SUM of int or bigint: a bigint {@code sum}, null until a non-null value. */
  private static final class LongSum extends State {
    long[] sum = new long[0];

    LongSum(FusedAggregate a) {
      super(a);
    }

    @Override
    void grow(int capacity) {
      sum = Arrays.copyOf(sum, capacity);
    }

    @Override
    void reset(int groups) {
      Arrays.fill(sum, 0, groups, 0L);
    }

    @Override
    void update(ColumnarBatch batch, int rows, int[] slot) {
      ColumnVector v = batch.column(column);
      for (int r = 0; r < rows; r++) {
        if (!v.isNullAt(r)) {
          int g = slot[r];
          long x = integral(v, r);
          sum[g] = agg.ansi() ? add(sum[g], x) : sum[g] + x; // sum[g] is 0 until the first value
          has[g] = true;
        }
      }
    }

    private long add(long a, long b) {
      try {
        return Math.addExact(a, b);
      } catch (ArithmeticException e) {
        throw new ArithmeticException("[ARITHMETIC_OVERFLOW] long overflow in " + agg.text()
            + " (fused partial aggregate of vkspark). Fix: sum a wider type (cast to decimal) or set "
            + "spark.sql.ansi.enabled=false to wrap around as Spark does without ANSI mode.");
      }
    }

    @Override
    void fold(int g, io.vkspark.gpu.column.reduce.ColumnReduction.Value v) {
      if (!v.isNull()) {
        sum[g] += v.integral(); // wraps: a GPU reduction is never planned for an ANSI integral sum
        has[g] = true;
      }
    }

    @Override
    int write(int g, Object[] values, int at) {
      values[at] = has[g] ? (Object) sum[g] : null;
      return at + 1;
    }
  }

  /** SUM of float or double: a double {@code sum}, null until a non-null value; {@code (sum or 0.0) + x}. */
  private static final class DoubleSum extends State {
    double[] sum = new double[0];

    DoubleSum(FusedAggregate a) {
      super(a);
    }

    @Override
    void grow(int capacity) {
      sum = Arrays.copyOf(sum, capacity);
    }

    @Override
    void reset(int groups) {
      Arrays.fill(sum, 0, groups, 0.0);
    }

    @Override
    void update(ColumnarBatch batch, int rows, int[] slot) {
      ColumnVector v = batch.column(column);
      for (int r = 0; r < rows; r++) {
        if (!v.isNullAt(r)) {
          int g = slot[r];
          sum[g] = sum[g] + floating(v, r); // 0.0 + x for the first value, as Spark's coalesce(sum, 0.0) + x
          has[g] = true;
        }
      }
    }

    @Override
    void fold(int g, io.vkspark.gpu.column.reduce.ColumnReduction.Value v) {
      if (!v.isNull()) {
        sum[g] = sum[g] + v.floating();
        has[g] = true;
      }
    }

    @Override
    int write(int g, Object[] values, int at) {
      values[at] = has[g] ? (Object) sum[g] : null;
      return at + 1;
    }
  }

  /** AVG: a double {@code sum} from 0.0 and a bigint {@code count} from 0, over the non-null values. */
  private static final class Avg extends State {
    double[] sum = new double[0];
    long[] count = new long[0];

    Avg(FusedAggregate a) {
      super(a);
    }

    @Override
    void grow(int capacity) {
      sum = Arrays.copyOf(sum, capacity);
      count = Arrays.copyOf(count, capacity);
    }

    @Override
    void reset(int groups) {
      Arrays.fill(sum, 0, groups, 0.0);
      Arrays.fill(count, 0, groups, 0L);
    }

    @Override
    void update(ColumnarBatch batch, int rows, int[] slot) {
      ColumnVector v = batch.column(column);
      for (int r = 0; r < rows; r++) {
        if (!v.isNullAt(r)) {
          int g = slot[r];
          sum[g] += floating(v, r);
          count[g]++;
        }
      }
    }

    @Override
    void fold(int g, io.vkspark.gpu.column.reduce.ColumnReduction.Value v) {
      if (!v.isNull()) {
        sum[g] += v.floating();
        count[g] += v.count();
      }
    }

    @Override
    int write(int g, Object[] values, int at) {
      values[at] = sum[g];
      values[at + 1] = count[g];
      return at + 2;
    }
  }

  /** COUNT: rows whose arguments are all non-null (every row for COUNT(*)). */
  private static final class Count extends State {
    long[] count = new long[0];

    Count(FusedAggregate a) {
      super(a);
    }

    @Override
    void grow(int capacity) {
      count = Arrays.copyOf(count, capacity);
    }

    @Override
    void reset(int groups) {
      Arrays.fill(count, 0, groups, 0L);
    }

    @Override
    void update(ColumnarBatch batch, int rows, int[] slot) {
      int[] cols = agg.ordinals();
      ColumnVector[] vs = new ColumnVector[cols.length];
      boolean anyNulls = false;
      for (int c = 0; c < cols.length; c++) {
        vs[c] = batch.column(cols[c]);
        anyNulls |= vs[c].hasNull();
      }
      for (int r = 0; r < rows; r++) {
        boolean counted = true;
        for (int c = 0; anyNulls && c < vs.length && counted; c++) {
          counted = !vs[c].isNullAt(r);
        }
        if (counted) {
          count[slot[r]]++;
        }
      }
    }

    @Override
    void fold(int g, io.vkspark.gpu.column.reduce.ColumnReduction.Value v) {
      count[g] += v.count();
    }

    @Override
    int write(int g, Object[] values, int at) {
      values[at] = count[g];
      return at + 1;
    }
  }

  /** MIN/MAX of int or bigint: the value, null until a non-null one. */
  private static final class LongExtreme extends State {
    long[] value = new long[0];
    final boolean max;

    LongExtreme(FusedAggregate a) {
      super(a);
      this.max = a.kind() == FusedAggregate.Kind.MAX;
    }

    @Override
    void grow(int capacity) {
      value = Arrays.copyOf(value, capacity);
    }

    @Override
    void reset(int groups) {}

    @Override
    void update(ColumnarBatch batch, int rows, int[] slot) {
      ColumnVector v = batch.column(column);
      for (int r = 0; r < rows; r++) {
        if (!v.isNullAt(r)) {
          int g = slot[r];
          long x = integral(v, r);
          if (!has[g] || (max ? x > value[g] : x < value[g])) {
            value[g] = x;
            has[g] = true;
          }
        }
      }
    }

    @Override
    void fold(int g, io.vkspark.gpu.column.reduce.ColumnReduction.Value v) {
      long x = v.integral();
      if (!v.isNull() && (!has[g] || (max ? x > value[g] : x < value[g]))) {
        value[g] = x;
        has[g] = true;
      }
    }

    @Override
    int write(int g, Object[] values, int at) {
      values[at] = !has[g] ? null : agg.input().equals(DataTypes.IntegerType) ? (Object) (int) value[g] : (Object) value[g];
      return at + 1;
    }
  }

  /**
   * MIN/MAX of float or double in Spark's order ({@code SQLOrderingUtil}): equal values (-0.0 and
   * 0.0) compare equal and the first is kept; otherwise {@code Double.compare}, NaN largest.
   */
  private static final class DoubleExtreme extends State {
    double[] value = new double[0];
    final boolean max;

    DoubleExtreme(FusedAggregate a) {
      super(a);
      this.max = a.kind() == FusedAggregate.Kind.MAX;
    }

    @Override
    void grow(int capacity) {
      value = Arrays.copyOf(value, capacity);
    }

    @Override
    void reset(int groups) {}

    static int compare(double x, double y) {
      return x == y ? 0 : Double.compare(x, y);
    }

    @Override
    void update(ColumnarBatch batch, int rows, int[] slot) {
      ColumnVector v = batch.column(column);
      for (int r = 0; r < rows; r++) {
        if (!v.isNullAt(r)) {
          int g = slot[r];
          double x = floating(v, r);
          if (!has[g] || (max ? compare(x, value[g]) > 0 : compare(x, value[g]) < 0)) {
            value[g] = x;
            has[g] = true;
          }
        }
      }
    }

    @Override
    void fold(int g, io.vkspark.gpu.column.reduce.ColumnReduction.Value v) {
      double x = v.floating();
      if (!v.isNull() && (!has[g] || (max ? compare(x, value[g]) > 0 : compare(x, value[g]) < 0))) {
        value[g] = x;
        has[g] = true;
      }
    }

    @Override
    int write(int g, Object[] values, int at) {
      values[at] = !has[g] ? null : agg.input().equals(DataTypes.FloatType) ? (Object) (float) value[g] : (Object) value[g];
      return at + 1;
    }
  }
}
