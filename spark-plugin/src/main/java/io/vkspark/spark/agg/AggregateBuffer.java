package io.vkspark.spark.agg;

import io.vkspark.gpu.column.reduce.ColumnReduction;
import java.util.Arrays;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * One fused function's partial buffers, for every group of a {@link PartialAggregator}: updated row
 * by row exactly as Spark's update expression does, or with a batch's value the GPU reduced
 * ({@link #fold}). One family member per kind of function; the storage (a long and a double per
 * group, as the kind needs, and whether the group has seen a value) is shared, and int or float
 * inputs are read widened, so integral and floating forms differ only where Spark's do.
 */
abstract sealed class AggregateBuffer {
  final FusedAggregate agg;
  /** The column read (-1 for COUNT(*)). */
  final int column;
  final boolean integral;
  /** Whether the group has seen a non-null value (SUM, MIN and MAX are null until then). */
  boolean[] has = new boolean[0];
  long[] longs;
  double[] doubles;

  AggregateBuffer(FusedAggregate agg, boolean longs, boolean doubles) {
    this.agg = agg;
    this.column = agg.ordinals().length > 0 ? agg.ordinals()[0] : -1;
    this.integral = agg.integral();
    this.longs = longs ? new long[0] : null;
    this.doubles = doubles ? new double[0] : null;
  }

  static AggregateBuffer of(FusedAggregate a) {
    return switch (a.kind()) {
      case SUM -> new Sum(a);
      case COUNT -> new Count(a);
      case MIN, MAX -> new Extreme(a);
      case AVG -> new Avg(a);
    };
  }

  /** Room for {@code capacity} groups. */
  final void ensure(int capacity) {
    if (has.length < capacity) {
      has = Arrays.copyOf(has, capacity);
      longs = longs == null ? null : Arrays.copyOf(longs, capacity);
      doubles = doubles == null ? null : Arrays.copyOf(doubles, capacity);
    }
  }

  /** Back to Spark's initial buffers for the first {@code groups} groups. */
  final void clear(int groups) {
    Arrays.fill(has, 0, groups, false);
    if (longs != null) {
      Arrays.fill(longs, 0, groups, 0L);
    }
    if (doubles != null) {
      Arrays.fill(doubles, 0, groups, 0.0);
    }
  }

  /** Adds a batch's rows, row {@code r} to group {@code slot[r]}. */
  abstract void update(ColumnarBatch batch, int rows, int[] slot);

  /** Adds a batch's value reduced on the GPU (its rows in order) to group {@code g}'s buffer, as {@link #update} would. */
  abstract void fold(int g, ColumnReduction.Value v);

  /** Writes group {@code g}'s buffer at {@code at}; returns the next position. */
  abstract int write(int g, Object[] values, int at);

  final long integral(ColumnVector v, int r) {
    return agg.input().equals(DataTypes.IntegerType) ? v.getInt(r) : v.getLong(r);
  }

  final double floating(ColumnVector v, int r) {
    DataType t = agg.input();
    if (t.equals(DataTypes.DoubleType)) {
      return v.getDouble(r);
    }
    if (t.equals(DataTypes.FloatType)) {
      return v.getFloat(r);
    }
    return t.equals(DataTypes.IntegerType) ? v.getInt(r) : (double) v.getLong(r);
  }

  /**
   * SUM: of int or bigint a bigint {@code sum} that wraps or, with ANSI, fails on overflow; of
   * float or double a double {@code (sum or 0.0) + x}. Null until a non-null value.
   */
  static final class Sum extends AggregateBuffer {
    Sum(FusedAggregate a) {
      super(a, a.integral(), !a.integral());
    }

    @Override
    void update(ColumnarBatch batch, int rows, int[] slot) {
      ColumnVector v = batch.column(column);
      for (int r = 0; r < rows; r++) {
        if (!v.isNullAt(r)) {
          int g = slot[r];
          if (integral) {
            long x = integral(v, r);
            longs[g] = agg.ansi() ? add(longs[g], x) : longs[g] + x; // 0 until the first value
          } else {
            doubles[g] = doubles[g] + floating(v, r); // 0.0 + x for the first value, as Spark's coalesce(sum, 0.0) + x
          }
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
    void fold(int g, ColumnReduction.Value v) {
      if (!v.isNull()) {
        if (integral) {
          longs[g] += v.integral(); // wraps: a GPU reduction is never planned for an ANSI integral sum
        } else {
          doubles[g] = doubles[g] + v.floating();
        }
        has[g] = true;
      }
    }

    @Override
    int write(int g, Object[] values, int at) {
      values[at] = !has[g] ? null : integral ? (Object) longs[g] : (Object) doubles[g];
      return at + 1;
    }
  }

  /** AVG: a double {@code sum} from 0.0 and a bigint {@code count} from 0, over the non-null values. */
  static final class Avg extends AggregateBuffer {
    Avg(FusedAggregate a) {
      super(a, true, true);
    }

    @Override
    void update(ColumnarBatch batch, int rows, int[] slot) {
      ColumnVector v = batch.column(column);
      for (int r = 0; r < rows; r++) {
        if (!v.isNullAt(r)) {
          int g = slot[r];
          doubles[g] += floating(v, r);
          longs[g]++;
        }
      }
    }

    @Override
    void fold(int g, ColumnReduction.Value v) {
      if (!v.isNull()) {
        doubles[g] += v.floating();
        longs[g] += v.count();
      }
    }

    @Override
    int write(int g, Object[] values, int at) {
      values[at] = doubles[g];
      values[at + 1] = longs[g];
      return at + 2;
    }
  }

  /** COUNT: rows whose arguments are all non-null (every row for COUNT(*)). */
  static final class Count extends AggregateBuffer {
    Count(FusedAggregate a) {
      super(a, true, false);
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
          longs[slot[r]]++;
        }
      }
    }

    @Override
    void fold(int g, ColumnReduction.Value v) {
      longs[g] += v.count();
    }

    @Override
    int write(int g, Object[] values, int at) {
      values[at] = longs[g];
      return at + 1;
    }
  }

  /**
   * MIN/MAX: the value, null until a non-null one. Floating values in Spark's order
   * ({@code SQLOrderingUtil}): equal values (-0.0 and 0.0) compare equal and the first is kept;
   * otherwise {@code Double.compare}, NaN largest.
   */
  static final class Extreme extends AggregateBuffer {
    private final boolean max;

    Extreme(FusedAggregate a) {
      super(a, a.integral(), !a.integral());
      this.max = a.kind() == FusedAggregate.Kind.MAX;
    }

    @Override
    void update(ColumnarBatch batch, int rows, int[] slot) {
      ColumnVector v = batch.column(column);
      for (int r = 0; r < rows; r++) {
        if (!v.isNullAt(r)) {
          if (integral) {
            offer(slot[r], integral(v, r));
          } else {
            offer(slot[r], floating(v, r));
          }
        }
      }
    }

    @Override
    void fold(int g, ColumnReduction.Value v) {
      if (!v.isNull()) {
        if (integral) {
          offer(g, v.integral());
        } else {
          offer(g, v.floating());
        }
      }
    }

    private void offer(int g, long x) {
      if (!has[g] || (max ? x > longs[g] : x < longs[g])) {
        longs[g] = x;
        has[g] = true;
      }
    }

    private void offer(int g, double x) {
      int c = x == doubles[g] ? 0 : Double.compare(x, doubles[g]);
      if (!has[g] || (max ? c > 0 : c < 0)) {
        doubles[g] = x;
        has[g] = true;
      }
    }

    @Override
    int write(int g, Object[] values, int at) {
      DataType t = agg.input();
      values[at] = !has[g] ? null : t.equals(DataTypes.IntegerType) ? (Object) (int) longs[g]
          : t.equals(DataTypes.LongType) ? (Object) longs[g]
          : t.equals(DataTypes.FloatType) ? (Object) (float) doubles[g] : (Object) doubles[g];
      return at + 1;
    }
  }
}
