package io.vkspark.spark.cache;

import io.vkspark.gpu.GpuException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Gathers rows or column batches into growing native scratch buffers in Arrow layout, then copies
 * them into one exactly sized {@link ArrowCachedBatch}. A batch is full at {@code maxRows} rows or
 * {@code maxBytes} bytes, whichever comes first (the bytes measured: values, validity, and text).
 * One builder serves a whole partition; its scratch space is reused from batch to batch and freed by
 * {@link #close}.
 */
public final class BatchBuilder implements AutoCloseable {
  private static final int INITIAL_ROWS = 4096;

  private final CachedType[] types;
  private final int maxRows;
  private final long maxBytes;
  /** Bits a row takes outside the string columns' text: its values (offsets for strings) and validity. */
  private final long rowBits;
  /** Bytes of text in the string columns so far. */
  private long text;
  private final long[] validity;
  private final long[] values;
  private final long[] data;
  private final long[] dataCapacity;
  private final long[] dataUsed;
  private final int[] nullCounts;
  private int capacity;
  private int rows;

  BatchBuilder(CachedType[] types, int maxRows, long maxBytes) {
    this.types = types;
    this.maxRows = maxRows;
    this.maxBytes = maxBytes;
    long bits = 0;
    for (CachedType t : types) { // a row's share of 64 rows' validity and values (a string: its offset's 32 bits)
      bits += 8 * (CachedType.bitmapBytes(64) + valuesBytes(t, 64)) / 64;
    }
    this.rowBits = Math.max(1, bits);
    int n = types.length;
    validity = new long[n];
    values = new long[n];
    data = new long[n];
    dataCapacity = new long[n];
    dataUsed = new long[n];
    nullCounts = new int[n];
    capacity = Math.min(INITIAL_ROWS, maxRows);
    for (int c = 0; c < n; c++) {
      validity[c] = CacheMemory.allocate(CachedType.bitmapBytes(capacity));
      values[c] = CacheMemory.allocate(valuesBytes(types[c], capacity));
      if (types[c] == CachedType.STRING) {
        dataCapacity[c] = 16L * capacity;
        data[c] = CacheMemory.allocate(dataCapacity[c]);
        Platform.putInt(null, values[c], 0);
      }
    }
  }

  private static long valuesBytes(CachedType t, int rows) {
    return switch (t) {
      case BOOLEAN -> CachedType.bitmapBytes(rows);
      case STRING -> 4L * (rows + 1);
      default -> (long) t.width() * rows;
    };
  }

  int rows() {
    return rows;
  }

  /** Bytes the batch takes so far. */
  long bytes() {
    return (rows * rowBits + 7) / 8 + text;
  }

  boolean full() {
    return rows >= maxRows || (rows > 0 && bytes() >= maxBytes);
  }

  /** Room left in this batch (at least one row while it is not {@link #full}; text may take more bytes). */
  int room() {
    long left = maxBytes - bytes();
    long byBytes = left > Long.MAX_VALUE / 8 ? Long.MAX_VALUE : Math.max(1, left * 8 / rowBits);
    return (int) Math.min(maxRows - rows, byBytes);
  }

  private void ensureRows(int needed) {
    if (needed <= capacity) {
      return;
    }
    int grown = (int) Math.min(maxRows, Math.max(needed, 2L * capacity));
    for (int c = 0; c < types.length; c++) {
      validity[c] = CacheMemory.reallocate(validity[c], CachedType.bitmapBytes(capacity), CachedType.bitmapBytes(grown));
      values[c] = CacheMemory.reallocate(values[c], valuesBytes(types[c], capacity), valuesBytes(types[c], grown));
    }
    capacity = grown;
  }

  private void ensureData(int c, long more) {
    long needed = dataUsed[c] + more;
    if (needed > Integer.MAX_VALUE) {
      throw GpuException.of(GpuException.Code.SIZE,
          "A cached batch's string column would hold more than 2 GiB of text (" + needed + " bytes), "
              + "more than Arrow's int32 offsets address.",
          "lower spark.sql.inMemoryColumnarStorage.batchSize so each cached batch holds fewer rows (unset, lower "
              + "spark.vkspark.batchBytes, which bounds a cached batch's bytes then).");
    }
    if (needed > dataCapacity[c]) {
      long grown = Math.min(Integer.MAX_VALUE, Math.max(needed, 2 * dataCapacity[c]));
      data[c] = CacheMemory.reallocate(data[c], dataCapacity[c], grown);
      dataCapacity[c] = grown;
    }
  }

  private static void putBit(long bitmap, int i, boolean set) {
    long at = bitmap + (i >>> 3);
    byte b = Platform.getByte(null, at);
    int mask = 1 << (i & 7);
    Platform.putByte(null, at, (byte) (set ? b | mask : b & ~mask));
  }

  /** Appends one row (all cached columns, in order). */
  void add(InternalRow row) {
    ensureRows(rows + 1);
    int r = rows;
    for (int c = 0; c < types.length; c++) {
      boolean isNull = row.isNullAt(c);
      putBit(validity[c], r, !isNull);
      if (isNull) {
        nullCounts[c]++;
      }
      long v = values[c];
      switch (types[c]) {
        case INT32 -> Platform.putInt(null, v + 4L * r, isNull ? 0 : row.getInt(c));
        case INT64 -> Platform.putLong(null, v + 8L * r, isNull ? 0 : row.getLong(c));
        case FLOAT32 -> Platform.putFloat(null, v + 4L * r, isNull ? 0 : row.getFloat(c));
        case FLOAT64 -> Platform.putDouble(null, v + 8L * r, isNull ? 0 : row.getDouble(c));
        case BOOLEAN -> putBit(v, r, !isNull && row.getBoolean(c));
        case STRING -> addString(c, r, isNull ? null : row.getUTF8String(c));
      }
    }
    rows = r + 1;
  }

  private void addString(int c, int r, UTF8String s) {
    if (s != null) {
      ensureData(c, s.numBytes());
      s.writeToMemory(null, data[c] + dataUsed[c]);
      dataUsed[c] += s.numBytes();
      text += s.numBytes();
    }
    Platform.putInt(null, values[c] + 4L * (r + 1), (int) dataUsed[c]);
  }

  /** Appends rows {@code [from, from + n)} of {@code columns} (one vector per cached column, in order). */
  void add(ColumnVector[] columns, int from, int n) {
    ensureRows(rows + n);
    int at = rows;
    for (int c = 0; c < types.length; c++) {
      ColumnVector src = columns[c];
      long valid = validity[c];
      if (src.hasNull()) {
        for (int i = 0; i < n; i++) {
          boolean isNull = src.isNullAt(from + i);
          putBit(valid, at + i, !isNull);
          if (isNull) {
            nullCounts[c]++;
          }
        }
      } else {
        for (int i = 0; i < n; i++) {
          putBit(valid, at + i, true);
        }
      }
      long v = values[c];
      switch (types[c]) {
        case INT32 -> {
          for (int i = 0; i < n; i++) {
            Platform.putInt(null, v + 4L * (at + i), src.getInt(from + i));
          }
        }
        case INT64 -> {
          for (int i = 0; i < n; i++) {
            Platform.putLong(null, v + 8L * (at + i), src.getLong(from + i));
          }
        }
        case FLOAT32 -> {
          for (int i = 0; i < n; i++) {
            Platform.putFloat(null, v + 4L * (at + i), src.getFloat(from + i));
          }
        }
        case FLOAT64 -> {
          for (int i = 0; i < n; i++) {
            Platform.putDouble(null, v + 8L * (at + i), src.getDouble(from + i));
          }
        }
        case BOOLEAN -> {
          for (int i = 0; i < n; i++) {
            putBit(v, at + i, !src.isNullAt(from + i) && src.getBoolean(from + i));
          }
        }
        case STRING -> {
          for (int i = 0; i < n; i++) {
            addString(c, at + i, src.isNullAt(from + i) ? null : src.getUTF8String(from + i));
          }
        }
      }
    }
    rows = at + n;
  }

  /** The rows gathered so far as a cached batch; the builder starts over empty. */
  ArrowCachedBatch build() {
    int n = types.length;
    long[] textBytes = new long[n];
    for (int c = 0; c < n; c++) {
      textBytes[c] = dataUsed[c];
    }
    ArrowCachedBatch out = new ArrowCachedBatch(rows, types, nullCounts.clone(), textBytes);
    for (int c = 0; c < n; c++) {
      Platform.copyMemory(null, validity[c], null, out.validityAddress(c), CachedType.bitmapBytes(rows));
      Platform.copyMemory(null, values[c], null, out.valuesAddress(c), valuesBytes(types[c], rows));
      if (types[c] == CachedType.STRING) {
        Platform.copyMemory(null, data[c], null, out.dataAddress(c), dataUsed[c]);
      }
      nullCounts[c] = 0;
      dataUsed[c] = 0;
    }
    rows = 0;
    text = 0;
    out.bound();
    return out;
  }

  @Override
  public void close() {
    for (int c = 0; c < types.length; c++) {
      CacheMemory.free(validity[c], CachedType.bitmapBytes(capacity));
      CacheMemory.free(values[c], valuesBytes(types[c], capacity));
      if (types[c] == CachedType.STRING) {
        CacheMemory.free(data[c], dataCapacity[c]);
      }
    }
  }
}
