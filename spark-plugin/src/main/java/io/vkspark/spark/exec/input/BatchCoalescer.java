package io.vkspark.spark.exec.input;

import io.vkspark.spark.api.SparkTypes;

import io.vkspark.gpu.column.SqlType;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Gathers consecutive small child batches into one task-owned batch, so that one GPU dispatch
 * serves many of them. Spark's file readers hand out 4,096-row batches and overwrite their vectors
 * on the next {@code next()} (or {@code hasNext()}), so each child batch is copied as it arrives:
 * values and nulls of every column the node outputs, into off-heap vectors that grow to the
 * coalesced size and are reused from batch to batch, bounded by rows ({@code spark.vkspark.batchRows})
 * and by bytes ({@code spark.vkspark.batchBytes}, measured, not estimated from the types). Fixed-width values move with one bulk copy
 * per column (the same copies that take Spark's vectors to the GPU); booleans, strings, binary and
 * arrays value by value.
 *
 * <p>This is the one place where child batches are staged on the host, and it is done only where
 * something on the host needs the rows once the child has moved on: the output columns of a plain
 * GPU node (its child's columns, arguments included, pass through), verify mode (it re-runs
 * {@code call()} over the arguments), and any GPU run that can hand its batch back to be recomputed
 * with {@code call()} (a loop limit, a translated UDF's throwing rows, a row too wide to stage).
 * A fused aggregate reduced on the GPU, ungrouped, needs none of them when its calls can never be
 * recomputed ({@code GpuBatchStep.neverRecomputes}): there each small child batch's argument columns
 * are appended straight into the runner's host-visible GPU input buffers as it arrives
 * ({@code BatchRunner.append}, one copy, no staging), and the coalescer only counts its rows and
 * bytes ({@link #admit}) so that the coalesced batch keeps the same bounds. The GPU input buffers
 * are never read back on the host (reading device-local, host-visible memory is slow on a discrete
 * GPU). A child batch large enough on its own is never copied on either path. The
 * {@code stagedBytes} metric counts the bytes copied here.
 */
public final class BatchCoalescer implements AutoCloseable {
  private static final int INITIAL_CAPACITY = 4096;

  private final DataType[] types;
  private final int maxRows;
  private final long maxBytes;
  private final OffHeapColumnVector[] staged;
  private int rows;
  private long bytes;

  private BatchCoalescer(List<DataType> types, int maxRows, long maxBytes) {
    this.types = types.toArray(DataType[]::new);
    this.maxRows = maxRows;
    this.maxBytes = maxBytes;
    this.staged = new OffHeapColumnVector[this.types.length];
    for (int c = 0; c < staged.length; c++) {
      staged[c] = new OffHeapColumnVector(Math.min(INITIAL_CAPACITY, maxRows), this.types[c]);
    }
  }

  /**
   * A coalescer for batches of columns {@code types}, up to {@code maxRows} rows and
   * {@code maxBytes} staged bytes; empty when a column's type cannot be staged (the node then
   * passes the child's batches through one by one).
   */
  public static Optional<BatchCoalescer> forColumns(List<DataType> types, int maxRows, long maxBytes) {
    return types.stream().allMatch(BatchCoalescer::stageable)
        ? Optional.of(new BatchCoalescer(types, maxRows, maxBytes)) : Optional.empty();
  }

  /**
   * The pass-through types staged: the GPU UDF types (arrays of float, double and int among them),
   * strings and binary.
   */
  static boolean stageable(DataType t) {
    return SparkTypes.of(t).isPresent();
  }

  private static boolean bytes(DataType t) {
    return t.equals(DataTypes.StringType) || t.equals(DataTypes.BinaryType);
  }

  /** Child batches of this many rows or more are evaluated as they are, without a copy. */
  int smallBelow() {
    return Math.max(1, maxRows / 2);
  }

  /**
   * Whether {@code b} is small enough to coalesce (under half the rows and half the bytes of a
   * coalesced batch: a larger one is evaluated as it is, never copied) and still fits next to what
   * is staged, so the staged vectors never hold more than {@code maxBytes}.
   */
  public boolean fits(ColumnarBatch b) {
    if (b.numRows() >= smallBelow() || (long) rows + b.numRows() > maxRows) {
      return false;
    }
    long size = batchBytes(b);
    return size < maxBytes / 2 && bytes + size <= maxBytes;
  }

  /** Drops what is staged (the previous coalesced batch has been consumed). */
  public void reset() {
    for (OffHeapColumnVector v : staged) {
      v.reset();
    }
    rows = 0;
    bytes = 0;
  }

  /**
   * Counts {@code b}'s rows and bytes as {@link #add} would, without copying them: its arguments
   * went straight to the GPU and nothing on the host needs its rows.
   */
  public void admit(ColumnarBatch b) {
    rows = Math.addExact(rows, b.numRows());
    bytes = Math.addExact(bytes, batchBytes(b));
  }

  /**
   * Copies every row of {@code b} after those staged; {@code b} may be overwritten once this
   * returns. Returns the bytes staged for it.
   */
  public long add(ColumnarBatch b) {
    int n = b.numRows();
    if (n == 0) {
      return 0;
    }
    long before = bytes;
    int at = rows;
    for (int c = 0; c < staged.length; c++) {
      OffHeapColumnVector dst = staged[c];
      dst.reserve(Math.addExact(at, n));
      copy(b.column(c), types[c], dst, at, n);
    }
    rows = Math.addExact(rows, n);
    bytes = stagedBytes();
    return bytes - before;
  }

  /** Rows staged. */
  public int rows() {
    return rows;
  }


  /** The staged rows as a batch; valid until the next {@link #reset}. */
  public ColumnarBatch batch() {
    return new ColumnarBatch(staged.clone(), rows);
  }

  private static void copy(ColumnVector src, DataType type, OffHeapColumnVector dst, int at, int n) {
    Optional<SqlType> sql = SparkTypes.of(type).filter(s -> !s.isVariableWidth());
    if (sql.isPresent() && sql.get() == SqlType.DECIMAL) {
      // Spark's vectors keep decimals of 9 digits or less as ints, the GPU upload reads int64s: Spark's own putDecimal
      DecimalType d = (DecimalType) type;
      for (int r = 0; r < n; r++) {
        if (!src.isNullAt(r)) {
          dst.putDecimal(at + r, src.getDecimal(r, d.precision(), d.scale()), d.precision());
        }
      }
    } else if (sql.isPresent() && sql.get() != SqlType.BOOLEAN) {
      SqlType t = sql.get();
      // Spark's vectors (on-heap, off-heap, Arrow, dictionary-encoded) as the GPU upload reads them: one bulk copy.
      SparkInputs.of(src, t, n).copyValues(0, n, dst.valuesNativeAddress() + (long) at * t.byteWidth());
    } else if (sql.isPresent()) {
      for (int r = 0; r < n; r++) {
        dst.putBoolean(at + r, !src.isNullAt(r) && src.getBoolean(r));
      }
    } else if (type instanceof ArrayType) {
      copyArrays(src, SparkTypes.of(type).get(), dst, at, n);
    } else if (type.equals(DataTypes.BinaryType)) {
      for (int r = 0; r < n; r++) {
        if (!src.isNullAt(r)) {
          dst.putByteArray(at + r, src.getBinary(r));
        }
      }
    } else {
      for (int r = 0; r < n; r++) {
        UTF8String s = src.isNullAt(r) ? null : src.getUTF8String(r);
        if (s != null) {
          dst.putByteArray(at + r, s.getBytes());
        }
      }
    }
    if (src.hasNull()) {
      for (int r = 0; r < n; r++) {
        if (src.isNullAt(r)) {
          dst.putNull(at + r);
        }
      }
    }
  }

  /** Appends each array's elements to {@code dst}'s child vector and points row {@code at + r} at them. */
  private static void copyArrays(ColumnVector src, SqlType t, OffHeapColumnVector dst, int at, int n) {
    WritableColumnVector child = dst.arrayData();
    for (int r = 0; r < n; r++) {
      if (src.isNullAt(r)) {
        continue;
      }
      ColumnarArray a = src.getArray(r);
      int len = a.numElements();
      int start = child.getElementsAppended();
      for (int i = 0; i < len; i++) {
        if (a.isNullAt(i)) {
          child.appendNull();
        } else if (t == SqlType.ARRAY_FLOAT) {
          child.appendFloat(a.getFloat(i));
        } else if (t == SqlType.ARRAY_DOUBLE) {
          child.appendDouble(a.getDouble(i));
        } else {
          child.appendInt(a.getInt(i));
        }
      }
      dst.putArray(at + r, start, len);
    }
  }

  /** The bytes {@code b} takes once staged, measured as {@link #stagedBytes()} counts them. */
  private long batchBytes(ColumnarBatch b) {
    long out = 0;
    for (int c = 0; c < types.length; c++) {
      out = Math.addExact(out, bytes(types[c]) || types[c] instanceof ArrayType
          ? RowBytes.column(b.column(c), types[c], b.numRows()) : (long) types[c].defaultSize() * b.numRows());
    }
    return out;
  }

  /** Bytes staged: fixed-width values, each string's or binary's bytes and each array's elements, plus an offset and length per row. */
  private long stagedBytes() {
    long out = 0;
    for (int c = 0; c < types.length; c++) {
      out += bytes(types[c]) ? staged[c].arrayData().getElementsAppended() + 8L * rows
          : types[c] instanceof ArrayType a
          ? (long) staged[c].arrayData().getElementsAppended() * a.elementType().defaultSize() + 8L * rows
          : (long) types[c].defaultSize() * rows;
    }
    return out;
  }

  @Override
  public void close() {
    for (OffHeapColumnVector v : staged) {
      v.close();
    }
  }
}
