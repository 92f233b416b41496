package io.vkspark.spark.exec.input;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A column read in place from rows or an array's elements: value {@code i} is field
 * {@code ordinal} of row {@code i}, or element {@code i}. A row wider than
 * {@code spark.vkspark.batchBytes} becomes a batch of its own through this, without a copy: its
 * values stay where Spark put them (valid until the row iterator advances, as Spark's own
 * row-to-column batches are until their next batch).
 */
public final class RowColumn extends ColumnVector {
  private final SpecializedGetters[] rows;
  private final int ordinal;
  private final ArrayData elements;

  private RowColumn(DataType type, SpecializedGetters[] rows, int ordinal, ArrayData elements) {
    super(type);
    this.rows = rows;
    this.ordinal = ordinal;
    this.elements = elements;
  }

  /** A one-row batch of {@code row} (of {@code schema}), read in place. */
  static ColumnarBatch batchOf(InternalRow row, StructType schema) {
    SpecializedGetters[] one = {row};
    ColumnVector[] columns = new ColumnVector[schema.fields().length];
    for (int c = 0; c < columns.length; c++) {
      columns[c] = new RowColumn(schema.fields()[c].dataType(), one, c, null);
    }
    return new ColumnarBatch(columns, 1);
  }

  private static RowColumn elementsOf(DataType type, ArrayData a) {
    return new RowColumn(type, null, -1, a);
  }

  private SpecializedGetters src(int i) {
    return elements != null ? elements : rows[i];
  }

  private int at(int i) {
    return elements != null ? i : ordinal;
  }

  @Override
  public void close() {
    // nothing owned: the values belong to the rows
  }

  @Override
  public boolean hasNull() {
    return numNulls() > 0;
  }

  @Override
  public int numNulls() {
    int n = 0;
    int count = elements != null ? elements.numElements() : rows.length;
    for (int i = 0; i < count; i++) {
      n += isNullAt(i) ? 1 : 0;
    }
    return n;
  }

  @Override
  public boolean isNullAt(int i) {
    SpecializedGetters s = src(i);
    return s == null || s.isNullAt(at(i)); // null: the field of a null struct
  }

  @Override
  public boolean getBoolean(int i) {
    return src(i).getBoolean(at(i));
  }

  @Override
  public byte getByte(int i) {
    return src(i).getByte(at(i));
  }

  @Override
  public short getShort(int i) {
    return src(i).getShort(at(i));
  }

  @Override
  public int getInt(int i) {
    return src(i).getInt(at(i));
  }

  @Override
  public long getLong(int i) {
    return src(i).getLong(at(i));
  }

  @Override
  public float getFloat(int i) {
    return src(i).getFloat(at(i));
  }

  @Override
  public double getDouble(int i) {
    return src(i).getDouble(at(i));
  }

  @Override
  public ColumnarArray getArray(int i) {
    if (isNullAt(i)) {
      return null;
    }
    ArrayData a = src(i).getArray(at(i));
    return new ColumnarArray(elementsOf(((ArrayType) dataType()).elementType(), a), 0, a.numElements());
  }

  @Override
  public ColumnarMap getMap(int i) {
    if (isNullAt(i)) {
      return null;
    }
    MapData m = src(i).getMap(at(i));
    MapType t = (MapType) dataType();
    return new ColumnarMap(elementsOf(t.keyType(), m.keyArray()), elementsOf(t.valueType(), m.valueArray()), 0,
        m.numElements());
  }

  @Override
  public Decimal getDecimal(int i, int precision, int scale) {
    return isNullAt(i) ? null : src(i).getDecimal(at(i), precision, scale);
  }

  @Override
  public UTF8String getUTF8String(int i) {
    return isNullAt(i) ? null : src(i).getUTF8String(at(i));
  }

  @Override
  public byte[] getBinary(int i) {
    return isNullAt(i) ? null : src(i).getBinary(at(i));
  }

  /** A struct column's field {@code field}: the struct of each row, read in place. */
  @Override
  public ColumnVector getChild(int field) {
    StructType t = (StructType) dataType();
    int count = elements != null ? elements.numElements() : rows.length;
    SpecializedGetters[] structs = new SpecializedGetters[count];
    for (int i = 0; i < count; i++) {
      structs[i] = isNullAt(i) ? null : src(i).getStruct(at(i), t.fields().length);
    }
    return new RowColumn(t.fields()[field].dataType(), structs, field, null);
  }
}
