package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction.Function;
import io.vkspark.gpu.column.reduce.ColumnReduction.Value;

/**
 * The reduction tests' CPU reference: Spark's partial aggregate of one function over values in row
 * order (null skipped), one row at a time, as Spark's update expressions do: integer sums wrap,
 * MIN/MAX keep the first of equal values and order NaN above everything ({@code -0.0 == 0.0}).
 */
final class SparkFold {
  private SparkFold() {}

  /**
   * @param t the values' type (int/bigint sums and MIN/MAX are integral, the rest double); null
   *     for {@code COUNT(*)}, whose values only need to be non-null
   */
  static Value of(Function f, SqlType t, Iterable<?> values) {
    long count = 0;
    long integral = 0;
    double floating = 0.0;
    boolean whole = (t == SqlType.INT || t == SqlType.BIGINT) && f != Function.AVG;
    for (Object x : values) {
      if (x == null) {
        continue;
      }
      long lx = x instanceof Integer n ? n : x instanceof Long n ? n : 0;
      double dx = x instanceof Number n ? n.doubleValue() : 0;
      switch (f) {
        case COUNT -> { }
        case SUM, AVG -> {
          integral += lx;
          floating += whole ? 0 : dx;
        }
        case MIN, MAX -> {
          boolean max = f == Function.MAX;
          boolean better = count == 0 || (whole ? (max ? lx > integral : lx < integral)
              : (max ? HostFold.greater(dx, floating) : HostFold.greater(floating, dx)));
          if (better) {
            integral = lx;
            floating = dx;
          }
        }
      }
      count++;
    }
    return new Value(count, whole ? integral : 0, whole ? 0.0 : floating);
  }
}
