package io.vkspark.spark.exec.input;

import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;

/**
 * What rows and column values take in memory, read without copying them: the measure of
 * {@code spark.vkspark.batchBytes}. Rows count their whole size ({@code UnsafeRow}'s own); a
 * column value counts its variable-width bytes (a string's or binary's bytes, an array's elements
 * times their size) or its type's fixed width.
 */
public final class RowBytes {
  private RowBytes() {}

  /** The bytes of {@code row} (of {@code schema}). */
  static long of(InternalRow row, StructType schema) {
    if (row instanceof UnsafeRow u) {
      return u.getSizeInBytes();
    }
    long out = 8;
    StructField[] fields = schema.fields();
    for (int i = 0; i < fields.length; i++) {
      DataType t = fields[i].dataType();
      if (row.isNullAt(i)) {
        out += 8;
      } else if (t instanceof StringType) {
        out += 8L + row.getUTF8String(i).numBytes();
      } else if (t instanceof BinaryType) {
        out += 8L + row.getBinary(i).length;
      } else if (t instanceof ArrayType a) {
        out += 8L + (long) row.getArray(i).numElements() * a.elementType().defaultSize();
      } else {
        out += Math.max(8, t.defaultSize());
      }
    }
    return out;
  }

  /** The variable-width bytes of row {@code r} of {@code v} (of {@code t}); 0 for a null or fixed-width value. */
  public static long value(ColumnVector v, DataType t, int r) {
    if (!(t instanceof StringType || t instanceof BinaryType || t instanceof ArrayType) || v.isNullAt(r)) {
      return 0;
    }
    long width = t instanceof ArrayType a ? a.elementType().defaultSize() : 1;
    if (v instanceof WritableColumnVector w && !w.hasDictionary()) {
      return width * w.getArrayLength(r);
    }
    if (v instanceof ArrowColumnVector a) {
      ValueVector vv = a.getValueVector();
      if (vv instanceof BaseVariableWidthVector var) {
        return var.getValueLength(r);
      }
      if (vv instanceof ListVector list) {
        return width * (list.getElementEndIndex(r) - list.getElementStartIndex(r));
      }
    }
    if (t instanceof StringType) {
      return v.getUTF8String(r).numBytes();
    }
    return t instanceof BinaryType ? v.getBinary(r).length : width * v.getArray(r).numElements();
  }

  /** The bytes of rows {@code [0, rows)} of {@code v}: variable-width bytes plus 8 bytes of offset or value per row. */
  static long column(ColumnVector v, DataType t, int rows) {
    long out = Math.multiplyExact(8L, rows);
    if (t instanceof StringType || t instanceof BinaryType || t instanceof ArrayType) {
      for (int r = 0; r < rows; r++) {
        out = Math.addExact(out, value(v, t, r));
      }
    }
    return out;
  }
}
