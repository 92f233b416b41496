package io.vkspark.spark.cache;

import java.util.Iterator;
import java.util.NoSuchElementException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The rows of one retained {@link ArrowCachedBatch} in Spark's UnsafeRow format, for scans under
 * row-based parents (most CPU queries): each value is read straight from the cached buffers and
 * written by one reused row writer, with no per-value virtual call through a column vector. The
 * returned row is reused, as Spark's own scans do; strings are copied into it.
 */
public final class CachedRows implements Iterator<InternalRow> {
  private final UnsafeRowWriter writer;
  /** Each column's {@link CachedType} as an int code: an int switch per value, no enum switch-map lookup. */
  private final int[] kinds;
  private final boolean[] nullable;
  private final long[] validity;
  private final long[] values;
  private final long[] data;
  private final int rows;
  private int next;

  private static final int INT32 = 0;
  private static final int INT64 = 1;
  private static final int FLOAT32 = 2;
  private static final int FLOAT64 = 3;
  private static final int BOOLEAN = 4;
  private static final int STRING = 5;

  private static int code(CachedType t) {
    return switch (t) {
      case INT32 -> INT32;
      case INT64 -> INT64;
      case FLOAT32 -> FLOAT32;
      case FLOAT64 -> FLOAT64;
      case BOOLEAN -> BOOLEAN;
      case STRING -> STRING;
    };
  }

  CachedRows(ArrowCachedBatch batch, int[] select, UnsafeRowWriter writer) {
    this.writer = writer;
    int n = select.length;
    kinds = new int[n];
    nullable = new boolean[n];
    validity = new long[n];
    values = new long[n];
    data = new long[n];
    for (int k = 0; k < n; k++) {
      int c = select[k];
      kinds[k] = code(batch.type(c));
      nullable[k] = batch.nullCount(c) > 0;
      validity[k] = batch.validityAddress(c);
      values[k] = batch.valuesAddress(c);
      data[k] = batch.dataAddress(c);
    }
    rows = batch.numRows();
  }

  @Override
  public boolean hasNext() {
    return next < rows;
  }

  @Override
  public InternalRow next() {
    if (next >= rows) {
      throw new NoSuchElementException();
    }
    int r = next++;
    writer.reset();
    writer.zeroOutNullBytes();
    for (int k = 0; k < kinds.length; k++) {
      if (nullable[k] && (Platform.getByte(null, validity[k] + (r >>> 3)) & (1 << (r & 7))) == 0) {
        writer.setNullAt(k);
        continue;
      }
      long v = values[k];
      switch (kinds[k]) {
        case INT32 -> writer.write(k, Platform.getInt(null, v + 4L * r));
        case INT64 -> writer.write(k, Platform.getLong(null, v + 8L * r));
        case FLOAT32 -> writer.write(k, Platform.getFloat(null, v + 4L * r));
        case FLOAT64 -> writer.write(k, Platform.getDouble(null, v + 8L * r));
        case BOOLEAN -> writer.write(k, (Platform.getByte(null, v + (r >>> 3)) & (1 << (r & 7))) != 0);
        default -> { // STRING
          int start = Platform.getInt(null, v + 4L * r);
          int end = Platform.getInt(null, v + 4L * r + 4);
          writer.write(k, UTF8String.fromAddress(null, data[k] + start, end - start));
        }
      }
    }
    return writer.getRow();
  }
}
