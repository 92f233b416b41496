package io.vkspark.spark;

import io.vkspark.gpu.column.DecimalSpec;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import java.util.Optional;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;

/** Spark SQL types for the GPU column types, and back. */
public final class SparkTypes {
  private SparkTypes() {}

  /**
   * The Spark type of a type without parameters.
   *
   * @throws IllegalArgumentException for DECIMAL, whose Spark type needs precision and scale ({@link #of(SqlType, DecimalSpec)})
   */
  public static DataType of(SqlType t) {
    return switch (t) {
      case INT -> DataTypes.IntegerType;
      case BIGINT -> DataTypes.LongType;
      case TINYINT -> DataTypes.ByteType;
      case SMALLINT -> DataTypes.ShortType;
      case FLOAT -> DataTypes.FloatType;
      case DOUBLE -> DataTypes.DoubleType;
      case BOOLEAN -> DataTypes.BooleanType;
      case DATE -> DataTypes.DateType;
      case TIMESTAMP -> DataTypes.TimestampType;
      case DECIMAL -> throw new IllegalArgumentException("a decimal's Spark type needs its precision and scale");
    };
  }

  /** The Spark type of {@code t}, with {@code decimal}'s precision and scale when t is DECIMAL. */
  public static DataType of(SqlType t, DecimalSpec decimal) {
    return t == SqlType.DECIMAL ? DataTypes.createDecimalType(decimal.precision(), decimal.scale()) : of(t);
  }

  /** The Spark type of an argument. */
  public static DataType of(KernelSignature.Arg a) {
    return of(a.type(), a.decimal());
  }

  /** The Spark type of a signature's result. */
  public static DataType result(KernelSignature s) {
    return of(s.result(), s.resultDecimal());
  }

  /** The GPU type for a Spark type, if GPU UDFs support it (decimals of at most 18 digits). */
  public static Optional<SqlType> of(DataType t) {
    if (t instanceof DecimalType d) {
      return d.precision() <= DecimalSpec.MAX_PRECISION && d.scale() >= 0 ? Optional.of(SqlType.DECIMAL) : Optional.empty();
    }
    for (SqlType s : SqlType.values()) {
      if (s != SqlType.DECIMAL && of(s).equals(t)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }
}
