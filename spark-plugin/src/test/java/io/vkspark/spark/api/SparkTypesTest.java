package io.vkspark.spark.api;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.SparkTypes;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.column.SqlType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.junit.jupiter.api.Test;

/** Which Spark types a kernel argument takes as they are, and how a refusal names what differs. */
final class SparkTypesTest {
  private static final DataType INTS = DataTypes.createArrayType(DataTypes.IntegerType, true);
  private static final DataType NON_NULL_INTS = DataTypes.createArrayType(DataTypes.IntegerType, false);

  @Test
  void arrayOfElementsThatCannotBeNull_isAccepted() {
    var arg = GpuKernel.returns("bigint").arg("v", "array<int>").body("0l").args().get(0);
    assertTrue(SparkTypes.accepts(arg, NON_NULL_INTS));
    assertTrue(SparkTypes.accepts(arg, INTS));
    assertFalse(SparkTypes.accepts(arg, DataTypes.createArrayType(DataTypes.LongType, false)));
    assertEquals(SqlType.ARRAY_INT, SparkTypes.of(NON_NULL_INTS).orElseThrow());
  }

  @Test
  void describe_namesTheNullabilityWhenTheNamesAgree() {
    assertEquals("array<int> (containsNull=false)", SparkTypes.describe(NON_NULL_INTS, INTS));
    assertEquals("array<int> (containsNull=true)", SparkTypes.describe(INTS, NON_NULL_INTS));
    assertEquals("array<array<int>> (element: containsNull=false)", SparkTypes.describe(
        DataTypes.createArrayType(NON_NULL_INTS, true), DataTypes.createArrayType(INTS, true)));
    assertEquals("map<string,int> (valueContainsNull=false)", SparkTypes.describe(
        DataTypes.createMapType(DataTypes.StringType, DataTypes.IntegerType, false),
        DataTypes.createMapType(DataTypes.StringType, DataTypes.IntegerType, true)));
    assertEquals("struct<a:int,b:double> (field b: nullable=false)", SparkTypes.describe(
        DataTypes.createStructType(new StructField[] {DataTypes.createStructField("a", DataTypes.IntegerType, true),
            DataTypes.createStructField("b", DataTypes.DoubleType, false)}),
        DataTypes.createStructType(new StructField[] {DataTypes.createStructField("a", DataTypes.IntegerType, true),
            DataTypes.createStructField("b", DataTypes.DoubleType, true)})));
  }

  @Test
  void describe_keepsTheNameWhenItAlreadyDiffers() {
    assertEquals("array<bigint>", SparkTypes.describe(DataTypes.createArrayType(DataTypes.LongType, false), INTS));
    assertEquals("decimal(10,2)", SparkTypes.describe(DataTypes.createDecimalType(10, 2), DataTypes.createDecimalType(9, 2)));
    assertEquals("array<int>", SparkTypes.describe(INTS, INTS));
  }
}
