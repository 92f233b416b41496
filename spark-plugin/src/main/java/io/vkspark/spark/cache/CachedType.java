package io.vkspark.spark.cache;

import java.util.Optional;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StringType;

/**
 * How one column lies in a cached batch, in Arrow's layout: a validity bitmap (bit set = not null)
 * and either fixed-width little-endian values, bit-packed booleans, or int32 offsets plus UTF-8
 * bytes for strings. Dates are int32 days and timestamps int64 microseconds, as in Spark.
 */
public enum CachedType {
  INT32(4),
  INT64(8),
  FLOAT32(4),
  FLOAT64(8),
  BOOLEAN(0),
  STRING(0);

  private final int width;

  CachedType(int width) {
    this.width = width;
  }

  /** Bytes per value of a fixed-width type; 0 for bit-packed booleans and strings. */
  public int width() {
    return width;
  }

  /** The layout of Spark type {@code t}, if the cache stores it columnar. */
  public static Optional<CachedType> of(DataType t) {
    if (t.equals(DataTypes.IntegerType) || t.equals(DataTypes.DateType)) {
      return Optional.of(INT32);
    }
    if (t.equals(DataTypes.LongType) || t.equals(DataTypes.TimestampType) || t.equals(DataTypes.TimestampNTZType)) {
      return Optional.of(INT64);
    }
    if (t.equals(DataTypes.FloatType)) {
      return Optional.of(FLOAT32);
    }
    if (t.equals(DataTypes.DoubleType)) {
      return Optional.of(FLOAT64);
    }
    if (t.equals(DataTypes.BooleanType)) {
      return Optional.of(BOOLEAN);
    }
    if (t instanceof StringType) {
      return Optional.of(STRING);
    }
    return Optional.empty();
  }

  /** Bytes of a bitmap of {@code rows} bits, in whole 64-bit words (what the GPU upload ANDs). */
  static long bitmapBytes(int rows) {
    return ((rows + 63L) >>> 6) << 3;
  }
}
