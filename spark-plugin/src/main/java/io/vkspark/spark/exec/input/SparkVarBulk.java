package io.vkspark.spark.exec.input;

import io.vkspark.gpu.column.input.Bits;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.input.VarColumn;
import java.lang.reflect.Field;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.unsafe.Platform;

/**
 * A string, binary or array column of Spark's own on-heap or off-heap vectors whose rows lie one
 * after another in the child vector (as Spark's Parquet reader and row-to-column conversion write
 * them), read in place: the offsets are computed once per batch and the elements move with one bulk
 * copy per staged range. Columns laid out otherwise (dictionary-encoded, rows out of order) are
 * left to the row-by-row path ({@link #of} returns null).
 */
public final class SparkVarBulk implements VarColumn {
  private static final Field BYTES = field("byteData");
  private static final Field INTS = field("intData");
  private static final Field FLOATS = field("floatData");
  private static final Field DOUBLES = field("doubleData");

  private final WritableColumnVector v;
  private final WritableColumnVector child;
  private final SqlType type;
  private final int rows;
  private final int[] offsets;
  private final int width;

  private SparkVarBulk(WritableColumnVector v, SqlType type, int rows, int[] offsets) {
    this.v = v;
    this.child = v.arrayData();
    this.type = type;
    this.rows = rows;
    this.offsets = offsets;
    this.width = switch (type) {
      case STRING, BINARY -> 1;
      case ARRAY_DOUBLE -> 8;
      default -> 4;
    };
  }

  private static Field field(String name) {
    try {
      Field f = OnHeapColumnVector.class.getDeclaredField(name);
      f.setAccessible(true);
      return f;
    } catch (ReflectiveOperationException e) {
      return null; // this Spark version names it otherwise: the row-by-row path serves
    }
  }

  /** The column read in place, or null when its rows are not laid out one after another. */
  static SparkVarBulk of(WritableColumnVector v, SqlType type, int rows) {
    if (v.hasDictionary() || v.arrayData() == null || v.arrayData().hasDictionary()
        || !(v instanceof OffHeapColumnVector || (v instanceof OnHeapColumnVector && BYTES != null && INTS != null
        && FLOATS != null && DOUBLES != null))) {
      return null;
    }
    int[] offsets = new int[rows + 1];
    int end = -1;
    for (int r = 0; r < rows; r++) {
      if (v.isNullAt(r)) {
        offsets[r + 1] = Math.max(end, 0);
        continue;
      }
      int at = v.getArrayOffset(r);
      int len = v.getArrayLength(r);
      if (end < 0) {
        end = at;
        for (int k = 0; k <= r; k++) {
          offsets[k] = at;
        }
      }
      if (at != end || len < 0) {
        return null;
      }
      end = Math.addExact(at, len);
      offsets[r + 1] = end;
    }
    return new SparkVarBulk(v, type, rows, offsets);
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
  public int offset(int row) {
    return offsets[row];
  }

  @Override
  public void copyElements(int from, int count, long dst) {
    long bytes = (long) count * width;
    if (child instanceof OffHeapColumnVector off) {
      Platform.copyMemory(null, off.valuesNativeAddress() + (long) from * width, null, dst, bytes);
      return;
    }
    try {
      Object array = switch (type) {
        case STRING, BINARY -> BYTES.get(child);
        case ARRAY_FLOAT -> FLOATS.get(child);
        case ARRAY_DOUBLE -> DOUBLES.get(child);
        default -> INTS.get(child);
      };
      long base = switch (type) {
        case STRING, BINARY -> Platform.BYTE_ARRAY_OFFSET;
        case ARRAY_FLOAT -> Platform.FLOAT_ARRAY_OFFSET;
        case ARRAY_DOUBLE -> Platform.DOUBLE_ARRAY_OFFSET;
        default -> Platform.INT_ARRAY_OFFSET;
      };
      Platform.copyMemory(array, base + (long) from * width, null, dst, bytes);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public boolean hasElementNulls() {
    return type != SqlType.STRING && type != SqlType.BINARY && child.hasNull();
  }

  @Override
  public void copyElementValidity(int from, int count, long dst, long dstBit) {
    for (int done = 0; done < count; done += 64) {
      int k = Math.min(64, count - done);
      long bits = 0;
      for (int b = 0; b < k; b++) {
        if (!child.isNullAt(from + done + b)) {
          bits |= 1L << b;
        }
      }
      Bits.write(dst, dstBit + done, bits, k);
    }
  }

  @Override
  public boolean hasNulls() {
    return v.hasNull();
  }

  @Override
  public void andValidity(long dst, int n) {
    SparkInputs.clearNulls(v, dst, n);
  }
}
