package io.vkspark.spark.exec.call;

import static io.vkspark.spark.TestSpark.gpuNodes;
import static io.vkspark.spark.TestSpark.spark;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.spark.TestSpark;
import io.vkspark.spark.TestUdfs;
import io.vkspark.spark.javaudfs.IntDiv;
import io.vkspark.spark.javaudfs.OrMinusOne;
import io.vkspark.spark.udf.UdfKind;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link GpuUdfCall} as the planner leaves it: the kind of UDF it calls decided once
 * ({@link UdfKind}), and a value that plans compare field by field. The calls come from real plans
 * of a real local Spark.
 */
@ExtendWith(TestSpark.Validated.class)
final class GpuUdfCallTest {
  private static GpuUdfCall call(Dataset<Row> df) {
    return gpuNodes(df).get(0).calls().get(0);
  }

  private static Dataset<Row> ints() {
    return spark().range(0, 10, 1, 1).selectExpr("CAST(id AS INT) AS a", "CAST(id + 1 AS INT) AS b");
  }

  @Test
  void kind_handWrittenGpuUdf_isGpuWithItsTolerance() {
    GpuUdfCall c = call(spark().range(0, 10, 1, 1).selectExpr("id * 0.5 AS a", "id * 0.25 AS b")
        .selectExpr("hypot_gpu(a, b) AS h"));
    assertEquals(new UdfKind.Gpu(new TestUdfs.GpuHypot().tolerance()), c.kind());
    assertFalse(c.translated());
    assertTrue(c.nullStrict());
  }

  @Test
  void kind_translatedJavaUdf_carriesStrictnessAndLanguage() {
    spark().udf().register("kind_idiv", new IntDiv(), DataTypes.IntegerType);
    spark().udf().register("kind_or_minus_one", new OrMinusOne(), DataTypes.IntegerType);
    GpuUdfCall strict = call(ints().selectExpr("kind_idiv(a, b) AS q"));
    assertTrue(strict.kind() instanceof UdfKind.Translated t && t.strict() && t.language().equals("Java"),
        () -> String.valueOf(strict.kind()));
    assertTrue(strict.translated());
    assertTrue(strict.nullStrict());
    GpuUdfCall lenient = call(ints().selectExpr("kind_or_minus_one(a) AS o"));
    assertTrue(lenient.kind() instanceof UdfKind.Translated t && !t.strict() && t.language().equals("Java"),
        () -> String.valueOf(lenient.kind()));
    assertFalse(lenient.nullStrict());
  }

  @Test
  void equals_coversKindAndGuard() {
    GpuUdfCall c = call(spark().range(0, 10, 1, 1).selectExpr("id * 0.5 AS a", "id * 0.25 AS b")
        .selectExpr("hypot_gpu(a, b) AS h"));
    GpuUdfCall same = new GpuUdfCall(c.name(), c.expr(), c.boundCpu(), c.kernel(), new ArrayList<>(c.argOrdinals()),
        c.result(), c.placement(), c.guard(), c.kind());
    assertEquals(c, same);
    assertEquals(c.hashCode(), same.hashCode());
    GpuUdfCall otherKind = new GpuUdfCall(c.name(), c.expr(), c.boundCpu(), c.kernel(), c.argOrdinals(), c.result(),
        c.placement(), c.guard(), new UdfKind.GlslOnly(c.kind().tolerance()));
    assertNotEquals(c, otherKind);
    GpuUdfCall guarded = new GpuUdfCall(c.name(), c.expr(), c.boundCpu(), c.kernel(), c.argOrdinals(), c.result(),
        c.placement(), new GreaterThan(new BoundReference(0, DataTypes.DoubleType, true),
        Literal.create(1.0, DataTypes.DoubleType)), c.kind());
    assertNotEquals(c, guarded);
  }

  @Test
  void argOrdinals_areACopy_andImmutable() {
    GpuUdfCall c = call(spark().range(0, 10, 1, 1).selectExpr("id * 0.5 AS a", "id * 0.25 AS b")
        .selectExpr("hypot_gpu(a, b) AS h"));
    List<Integer> ordinals = new ArrayList<>(c.argOrdinals());
    GpuUdfCall copy = new GpuUdfCall(c.name(), c.expr(), c.boundCpu(), c.kernel(), ordinals, c.result(),
        c.placement(), c.guard(), c.kind());
    ordinals.set(0, 99);
    assertEquals(c.argOrdinals(), copy.argOrdinals());
    assertThrows(UnsupportedOperationException.class, () -> copy.argOrdinals().set(0, 1));
  }
}
