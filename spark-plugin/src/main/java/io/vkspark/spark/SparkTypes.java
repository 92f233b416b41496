package io.vkspark.spark;

import io.vkspark.gpu.column.SqlType;
import java.util.Optional;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/** Spark SQL types for the GPU column types, and back. */
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
    };
  }

  /** The GPU type for a Spark type, if GPU UDFs support it. */
  public static Optional<SqlType> of(DataType t) {
    for (SqlType s : SqlType.values()) {
      if (of(s).equals(t)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }
}
