package io.vkspark.spark.exec.input;

import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.input.Bits;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.cache.ResidentColumn;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.BoundedColumn;
import io.vkspark.gpu.column.reduce.KeyRange;
import io.vkspark.spark.cache.CachedColumn;
import java.lang.reflect.Field;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * {@link InputColumn}s over Spark's column vectors, so a batch moves into GPU memory with one bulk
 * copy per column: Spark's on-heap and off-heap vectors store fixed-width values in the same
 * little-endian layout the GPU reads (tinyints and smallints too: a byte or two per row, as the GPU
 * packs them). Booleans (a byte per row in Spark) are packed into bits. Decimals of at most 18
 * digits go to the GPU as int64 unscaled values: Spark keeps those of precision 10 to 18 as longs
 * (one bulk copy) and those of precision 9 or less as ints (widened here). Dictionary-encoded and
 * other vectors are read value by value.
 */
public final class SparkInputs {
  private SparkInputs() {}

  public static InputColumn of(ColumnVector v, SqlType type, int rows) {
    if (type.isVariableWidth()) {
      return SparkVarInputs.of(v, type, rows);
    }
    if (v instanceof CachedColumn c) {
      return new Cached(c, type, rows);
    }
    if (v instanceof ArrowColumnVector a && a.getValueVector() instanceof FieldVector f) {
      return ArrowInputs.of(f, type, rows);
    }
    if (v instanceof OnHeapColumnVector on && !on.hasDictionary()) {
      return new OnHeap(on, type, rows);
    }
    if (v instanceof OffHeapColumnVector off && !off.hasDictionary()) {
      return new OffHeap(off, type, rows);
    }
    return new Generic(v, type, rows);
  }

  /** Clears, in the validity bitmap at {@code dst}, the bit of each of the first {@code n} rows of {@code v} that is null. */
  static void clearNulls(ColumnVector v, long dst, int n) {
    for (int i = 0; i < n; i++) {
      if (v.isNullAt(i)) {
        long word = dst + 8L * (i >>> 6);
        Platform.putLong(null, word, Platform.getLong(null, word) & ~(1L << (i & 63)));
      }
    }
  }

  /** Common parts: validity through isNullAt, booleans from one byte per row. */
  private abstract static class Base implements InputColumn {
    final ColumnVector v;
    final SqlType type;
    final int rows;

    Base(ColumnVector v, SqlType type, int rows) {
      this.v = v;
      this.type = type;
      this.rows = rows;
    }

    @Override
    public SqlType type() {
      return type;
    }

    @Override
    public int rows() {
      return rows;
    }

    @Override
    public boolean hasNulls() {
      return v.hasNull();
    }

    @Override
    public void andValidity(long dst, int n) {
      clearNulls(v, dst, n);
    }

    /** Whether Spark's writable vectors hold this decimal column as ints (precision 9 or less) rather than longs. */
    boolean decimalAsInts() {
      return ((DecimalType) v.dataType()).precision() <= Decimal.MAX_INT_DIGITS();
    }

    /** Packs booleans of rows [start, start + count) into bits from bit 0 of dst. */
    void packBooleans(int start, int count, long dst) {
      int words = (count + 63) >>> 6;
      for (int w = 0; w < words; w++) {
        long bits = 0;
        int base = start + 64 * w;
        int end = Math.min(64, count - 64 * w);
        for (int b = 0; b < end; b++) {
          if (v.getBoolean(base + b)) {
            bits |= 1L << b;
          }
        }
        Platform.putLong(null, dst + 8L * w, bits);
      }
    }
  }

  /** Spark's on-heap vectors: the values are a Java array, copied with one Unsafe copy. */
  private static final class OnHeap extends Base {
    private static final Field BYTES = field("byteData");
    private static final Field SHORTS = field("shortData");
    private static final Field INTS = field("intData");
    private static final Field LONGS = field("longData");
    private static final Field FLOATS = field("floatData");
    private static final Field DOUBLES = field("doubleData");

    OnHeap(OnHeapColumnVector v, SqlType type, int rows) {
      super(v, type, rows);
    }

    private static Field field(String name) {
      try {
        Field f = OnHeapColumnVector.class.getDeclaredField(name);
        f.setAccessible(true);
        return f;
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("OnHeapColumnVector." + name + " not found in this Spark version", e);
      }
    }

    @Override
    public void copyValues(int start, int count, long dst) {
      try {
        switch (type) {
          case INT, DATE -> Platform.copyMemory(INTS.get(v), Platform.INT_ARRAY_OFFSET + 4L * start, null, dst, 4L * count);
          case BIGINT, TIMESTAMP ->
              Platform.copyMemory(LONGS.get(v), Platform.LONG_ARRAY_OFFSET + 8L * start, null, dst, 8L * count);
          case FLOAT -> Platform.copyMemory(FLOATS.get(v), Platform.FLOAT_ARRAY_OFFSET + 4L * start, null, dst, 4L * count);
          case DOUBLE ->
              Platform.copyMemory(DOUBLES.get(v), Platform.DOUBLE_ARRAY_OFFSET + 8L * start, null, dst, 8L * count);
          case BOOLEAN -> packBooleans(start, count, dst);
          case TINYINT -> Platform.copyMemory(BYTES.get(v), Platform.BYTE_ARRAY_OFFSET + start, null, dst, count);
          case SMALLINT ->
              Platform.copyMemory(SHORTS.get(v), Platform.SHORT_ARRAY_OFFSET + 2L * start, null, dst, 2L * count);
          case DECIMAL -> {
            if (decimalAsInts()) {
              int[] ints = (int[]) INTS.get(v);
              for (int i = 0; i < count; i++) {
                Platform.putLong(null, dst + 8L * i, ints[start + i]);
              }
            } else {
              Platform.copyMemory(LONGS.get(v), Platform.LONG_ARRAY_OFFSET + 8L * start, null, dst, 8L * count);
            }
          }
        }
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** Spark's off-heap vectors: the values are native memory, copied with one memcpy. */
  private static final class OffHeap extends Base {
    OffHeap(OffHeapColumnVector v, SqlType type, int rows) {
      super(v, type, rows);
    }

    @Override
    public void copyValues(int start, int count, long dst) {
      long values = ((OffHeapColumnVector) v).valuesNativeAddress();
      if (type == SqlType.BOOLEAN) {
        packBooleans(start, count, dst);
      } else if (type == SqlType.DECIMAL && decimalAsInts()) {
        for (int i = 0; i < count; i++) {
          Platform.putLong(null, dst + 8L * i, Platform.getInt(null, values + 4L * (start + i)));
        }
      } else {
        long w = type.byteWidth();
        Platform.copyMemory(null, values + w * start, null, dst, w * count);
      }
    }
  }

  /**
   * A column of vkspark's cache: already in the GPU's layout (Arrow's) in native memory, so values,
   * booleans (bit-packed) and validity each move with one bulk copy, no work per row. Its identity
   * (batch and column) lets a runner keep its values on the device ({@code spark.vkspark.cache.device}).
   */
  private record Cached(CachedColumn c, SqlType type, int rows) implements ResidentColumn, BoundedColumn {
    @Override
    public long residentBatch() {
      return c.batchId();
    }

    /** Found when the batch was cached: a grouping key over the column is bounded without reading it. */
    @Override
    public KeyRange bounds() {
      return c.hasBounds() && (type == SqlType.INT || type == SqlType.BIGINT || type == SqlType.DATE)
          ? KeyRange.ofLongs(c.min(), c.max()) : null;
    }

    @Override
    public int residentColumn() {
      return c.column();
    }

    @Override
    public void copyValues(int start, int count, long dst) {
      if (type.isBitPacked()) {
        if (start % 64 != 0) {
          throw new IllegalArgumentException("bit copies start at a multiple of 64, not " + start);
        }
        Platform.copyMemory(null, c.valuesAddress() + start / 8, null, dst, (count + 7) / 8);
      } else {
        long w = type.byteWidth();
        Platform.copyMemory(null, c.valuesAddress() + w * start, null, dst, w * count);
      }
    }

    @Override
    public boolean hasNulls() {
      return c.hasNull();
    }

    @Override
    public void andValidity(long dst, int n) {
      Bits.and(c.validityAddress(), n, dst);
    }
  }

  /** Any other vector (dictionary-encoded, constant, ...): value by value. */
  private static final class Generic extends Base {
    Generic(ColumnVector v, SqlType type, int rows) {
      super(v, type, rows);
    }

    @Override
    public void copyValues(int start, int count, long dst) {
      for (int i = 0; i < count; i++) {
        int r = start + i;
        boolean nul = v.isNullAt(r);
        switch (type) {
          case INT, DATE -> Platform.putInt(null, dst + 4L * i, nul ? 0 : v.getInt(r));
          case BIGINT, TIMESTAMP -> Platform.putLong(null, dst + 8L * i, nul ? 0 : v.getLong(r));
          case FLOAT -> Platform.putFloat(null, dst + 4L * i, nul ? 0 : v.getFloat(r));
          case DOUBLE -> Platform.putDouble(null, dst + 8L * i, nul ? 0 : v.getDouble(r));
          case TINYINT -> Platform.putByte(null, dst + i, nul ? 0 : v.getByte(r));
          case SMALLINT -> Platform.putShort(null, dst + 2L * i, nul ? 0 : v.getShort(r));
          case DECIMAL -> {
            DecimalType d = (DecimalType) v.dataType();
            Platform.putLong(null, dst + 8L * i, nul ? 0 : v.getDecimal(r, d.precision(), d.scale()).toUnscaledLong());
          }
          case BOOLEAN -> {
            packBooleansNullSafe(start, count, dst);
            return;
          }
        }
      }
    }

    private void packBooleansNullSafe(int start, int count, long dst) {
      int words = (count + 63) >>> 6;
      for (int w = 0; w < words; w++) {
        long bits = 0;
        for (int b = 0; b < Math.min(64, count - 64 * w); b++) {
          int r = start + 64 * w + b;
          if (!v.isNullAt(r) && v.getBoolean(r)) {
            bits |= 1L << b;
          }
        }
        Platform.putLong(null, dst + 8L * w, bits);
      }
    }
  }
}
