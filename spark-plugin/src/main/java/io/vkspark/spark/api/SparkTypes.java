package io.vkspark.spark.api;

import io.vkspark.gpu.column.DecimalSpec;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import java.util.Optional;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Spark SQL types for the GPU column types, and back. Arrays map to Spark arrays that may hold
 * nulls; a Spark array of the same element type is accepted whether or not it may (a literal
 * {@code array(0.1f, 0.2f)} may not).
 */
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
      case STRING -> DataTypes.StringType;
      case BINARY -> DataTypes.BinaryType;
      case ARRAY_FLOAT -> DataTypes.createArrayType(DataTypes.FloatType, true);
      case ARRAY_DOUBLE -> DataTypes.createArrayType(DataTypes.DoubleType, true);
      case ARRAY_INT -> DataTypes.createArrayType(DataTypes.IntegerType, true);
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
    DataType key = t instanceof ArrayType a ? DataTypes.createArrayType(a.elementType(), true) : t;
    for (SqlType s : SqlType.values()) {
      if (s != SqlType.DECIMAL && of(s).equals(key)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  /**
   * Whether a column of Spark type {@code t} can be argument {@code a} as it is: its SQL type, any
   * array nullability, and for a decimal the same precision and scale (else the caller casts it).
   */
  public static boolean accepts(KernelSignature.Arg a, DataType t) {
    return a.type() == SqlType.DECIMAL ? of(a).equals(t) : of(t).filter(s -> s == a.type()).isPresent();
  }

  /**
   * {@code t} as a refusal names it next to {@code other}: its SQL name, and where both names read
   * the same ({@code array<int>} may or may not hold nulls), the nullability that sets it apart,
   * e.g. {@code array<int> (containsNull=false)}. Without this a reason could read "is {@code array<int>},
   * not {@code array<int>}".
   */
  public static String describe(DataType t, DataType other) {
    String name = t.simpleString();
    if (!name.equals(other.simpleString()) || t.equals(other)) {
      return name;
    }
    String why = nullability(t, other);
    return name + " (" + (why != null ? why : t.json()) + ")";
  }

  /** The first nullability flag of {@code t} that differs from {@code other}'s (same shape), or null. */
  private static String nullability(DataType t, DataType other) {
    if (t instanceof ArrayType a && other instanceof ArrayType b) {
      return a.containsNull() != b.containsNull() ? "containsNull=" + a.containsNull()
          : inner("element", nullability(a.elementType(), b.elementType()));
    }
    if (t instanceof MapType a && other instanceof MapType b) {
      if (a.valueContainsNull() != b.valueContainsNull()) {
        return "valueContainsNull=" + a.valueContainsNull();
      }
      String key = inner("key", nullability(a.keyType(), b.keyType()));
      return key != null ? key : inner("value", nullability(a.valueType(), b.valueType()));
    }
    if (t instanceof StructType a && other instanceof StructType b && a.fields().length == b.fields().length) {
      for (int i = 0; i < a.fields().length; i++) {
        StructField x = a.fields()[i];
        StructField y = b.fields()[i];
        String why = x.nullable() != y.nullable() ? "nullable=" + x.nullable() : nullability(x.dataType(), y.dataType());
        if (why != null) {
          return "field " + x.name() + ": " + why;
        }
      }
    }
    return null;
  }

  private static String inner(String where, String why) {
    return why == null ? null : where + ": " + why;
  }
}
