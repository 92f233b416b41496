package io.vkspark.spark.exec.input;

import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.input.StagedVarColumn;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * String, binary and array columns of a Spark batch as GPU inputs. An Arrow-backed vector
 * ({@code ArrowColumnVector} over a VarChar, VarBinary or List vector) and Spark's own on-heap and
 * off-heap vectors with rows one after another ({@link SparkVarBulk}) are read in place, with one
 * bulk copy per staged range; any other vector (on-heap, off-heap, constant, dictionary-encoded) is
 * read through the public {@link ColumnVector} API row by row into a {@link StagedVarColumn}: a
 * string's bytes with one copy each, an array element by element. Only public ColumnVector methods
 * present in Spark 3.5 to 4.2 are used.
 */
public final class SparkVarInputs {
  private SparkVarInputs() {}

  static InputColumn of(ColumnVector v, SqlType type, int rows) {
    if (v instanceof ArrowColumnVector a && a.getValueVector() instanceof FieldVector f) {
      return ArrowInputs.of(f, type, rows);
    }
    if (v instanceof WritableColumnVector w) {
      SparkVarBulk bulk = SparkVarBulk.of(w, type, rows);
      if (bulk != null) {
        return bulk;
      }
    }
    StagedVarColumn out = StagedVarColumn.of(type);
    for (int r = 0; r < rows; r++) {
      if (v.isNullAt(r)) {
        out.appendNull();
        continue;
      }
      switch (type) {
        case STRING -> {
          UTF8String s = v.getUTF8String(r);
          byte[] b = new byte[s.numBytes()];
          Platform.copyMemory(s.getBaseObject(), s.getBaseOffset(), b, Platform.BYTE_ARRAY_OFFSET, b.length);
          out.appendBytes(b);
        }
        case BINARY -> out.appendBytes(v.getBinary(r));
        default -> {
          ColumnarArray a = v.getArray(r);
          for (int i = 0, n = a.numElements(); i < n; i++) {
            if (a.isNullAt(i)) {
              out.addNullElement();
            } else if (type == SqlType.ARRAY_FLOAT) {
              out.addFloat(a.getFloat(i));
            } else if (type == SqlType.ARRAY_DOUBLE) {
              out.addDouble(a.getDouble(i));
            } else {
              out.addInt(a.getInt(i));
            }
          }
          out.endRow();
        }
      }
    }
    return out;
  }
}
