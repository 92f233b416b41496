package io.vkspark.spark.cache;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A column of an {@link ArrowCachedBatch}, read in place: Spark's scans and codegen read values
 * straight from the cached native memory, and the GPU upload copies whole buffers from
 * {@link #valuesAddress()} and {@link #validityAddress()} (Arrow layout, the GPU's layout). Valid
 * while its batch is retained by the reading task; closing it frees nothing (the batch owns the memory).
 */
public final class CachedColumn extends ColumnVector {
  private final ArrowCachedBatch batch;
  private final int column;
  private final CachedType cachedType;
  private final int nullCount;
  private final long validity;
  private final long values;
  private final long data;

  CachedColumn(ArrowCachedBatch batch, int column, DataType sparkType) {
    super(sparkType);
    this.batch = batch;
    this.column = column;
    this.cachedType = batch.type(column);
    this.nullCount = batch.nullCount(column);
    this.validity = batch.validityAddress(column);
    this.values = batch.valuesAddress(column);
    this.data = batch.dataAddress(column);
  }

  /** The layout of this column. */
  public CachedType cachedType() {
    return cachedType;
  }

  /** The id of the cached batch this column belongs to, unique in this JVM: with {@link #column()}, its identity. */
  public long batchId() {
    return batch.id();
  }

  /** The column's index among its batch's cached columns. */
  public int column() {
    return column;
  }

  /** Rows in this column. */
  public int rows() {
    return batch.numRows();
  }

  /**
   * Whether the range of the column's non-null values is known ({@link #min}, {@link #max}): an int,
   * bigint, date or timestamp column, whose bounds were found when the batch was cached.
   */
  public boolean hasBounds() {
    return cachedType == CachedType.INT32 || cachedType == CachedType.INT64;
  }

  /** The least non-null value (greater than {@link #max} when every value is null); with {@link #hasBounds}. */
  public long min() {
    return batch.min(column);
  }

  /** The greatest non-null value; with {@link #hasBounds}. */
  public long max() {
    return batch.max(column);
  }

  /** Native address of the validity bitmap (bit set = not null), whole 64-bit words. */
  public long validityAddress() {
    return validity;
  }

  /** Native address of the values: fixed-width values, booleans as bits, or a string column's int32 offsets. */
  public long valuesAddress() {
    return values;
  }

  @Override
  public void close() {}

  @Override
  public boolean hasNull() {
    return nullCount > 0;
  }

  @Override
  public int numNulls() {
    return nullCount;
  }

  @Override
  public boolean isNullAt(int rowId) {
    return nullCount > 0 && (Platform.getByte(null, validity + (rowId >>> 3)) & (1 << (rowId & 7))) == 0;
  }

  @Override
  public boolean getBoolean(int rowId) {
    return (Platform.getByte(null, values + (rowId >>> 3)) & (1 << (rowId & 7))) != 0;
  }

  @Override
  public byte getByte(int rowId) {
    throw unsupported("byte");
  }

  @Override
  public short getShort(int rowId) {
    throw unsupported("short");
  }

  @Override
  public int getInt(int rowId) {
    return Platform.getInt(null, values + 4L * rowId);
  }

  @Override
  public long getLong(int rowId) {
    return Platform.getLong(null, values + 8L * rowId);
  }

  @Override
  public float getFloat(int rowId) {
    return Platform.getFloat(null, values + 4L * rowId);
  }

  @Override
  public double getDouble(int rowId) {
    return Platform.getDouble(null, values + 8L * rowId);
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    int start = Platform.getInt(null, values + 4L * rowId);
    int end = Platform.getInt(null, values + 4L * rowId + 4);
    return UTF8String.fromAddress(null, data + start, end - start);
  }

  @Override
  public byte[] getBinary(int rowId) {
    throw unsupported("binary");
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    throw unsupported("array");
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    throw unsupported("map");
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    throw unsupported("decimal");
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    throw unsupported("struct");
  }

  private UnsupportedOperationException unsupported(String what) {
    return new UnsupportedOperationException("a cached " + cachedType + " column has no " + what + " values");
  }
}
