package io.vkspark.spark.exec.call;

import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;

/**
 * Spark's view of a call's result vector, from the GPU or the CPU path alike. A decimal's is read as
 * Spark keeps decimals of at most 18 digits, {@code Decimal.createUnsafe} of the unscaled long in
 * the low 8 bytes of each Decimal128, rather than through a {@code BigDecimal} per row
 * ({@code ArrowColumnVector}'s own way).
 */
public final class ResultColumn {
  private ResultColumn() {}

  public static ColumnVector of(FieldVector v) {
    return v instanceof DecimalVector d ? new DecimalColumn(d) : new ArrowColumnVector(v);
  }

  /** A Decimal128 vector of precision 18 or less, read a long at a time. */
  private static final class DecimalColumn extends ArrowColumnVector {
    private final DecimalVector vector;

    DecimalColumn(DecimalVector v) {
      super(v);
      this.vector = v;
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
      if (isNullAt(rowId)) {
        return null;
      }
      return Decimal.createUnsafe(vector.getDataBuffer().getLong(16L * rowId), precision, scale);
    }
  }
}
