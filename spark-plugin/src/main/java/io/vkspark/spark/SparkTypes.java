package io.vkspark.spark;

import io.vkspark.gpu.column.SqlType;
import java.util.Optional;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * Spark SQL types for the GPU column types, and back. Arrays map to Spark arrays that may hold
 * nulls; a Spark array of the same element type is accepted whether or not it may (a literal
 * {@code array(0.1f, 0.2f)} may not).
 */
public final class SparkTypes {
  private SparkTypes() {}

  public static DataType of(SqlType t) {
    return switch (t) {
      case INT -> DataTypes.IntegerType;
      case BIGINT -> DataTypes.LongType;
      case FLOAT -> DataTypes.FloatType;
      case DOUBLE -> DataTypes.DoubleType;
      case BOOLEAN -> DataTypes.BooleanType;
      case DATE -> DataTypes.DateType;
      case TIMESTAMP -> DataTypes.TimestampType;
      case STRING -> DataTypes.StringType;
      case BINARY -> DataTypes.BinaryType;
      case ARRAY_FLOAT -> DataTypes.createArrayType(DataTypes.FloatType, true);
      case ARRAY_DOUBLE -> DataTypes.createArrayType(DataTypes.DoubleType, true);
      case ARRAY_INT -> DataTypes.createArrayType(DataTypes.IntegerType, true);
    };
  }

  /** The GPU type for a Spark type, if GPU UDFs support it. */
  public static Optional<SqlType> of(DataType t) {
    DataType key = t instanceof ArrayType a ? DataTypes.createArrayType(a.elementType(), true) : t;
    for (SqlType s : SqlType.values()) {
      if (of(s).equals(key)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  /** Whether a column of Spark type {@code t} can be passed as a GPU argument of type {@code want} as it is. */
  public static boolean accepts(SqlType want, DataType t) {
    return of(t).filter(s -> s == want).isPresent();
  }
}
