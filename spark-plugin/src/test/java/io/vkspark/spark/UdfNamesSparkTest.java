package io.vkspark.spark;

import io.vkspark.gpu.GpuException;
import io.vkspark.spark.api.GpuFunction;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF2;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * GPU UDFs registered under SQL names that are not GLSL identifiers (called with backticks) run on
 * the GPU and agree with Spark's CPU run; plans and errors show the name as registered.
 */
@ExtendWith(TestSpark.Validated.class)
final class UdfNamesSparkTest {
  static final String[] NAMES = {"geo.dist3", "dist-3", "3d", "main", "vk_udf", "名前", "a*/b"};

  @BeforeAll
  static void register() {
    for (String name : NAMES) {
      GpuFunction.define(name).returns("double").arg("a", "double").arg("b", "double")
          .body("sqrt(a * a + b * b + 1.0)")
          .cpu((UDF2<Double, Double, Double>) (a, b) -> a == null || b == null ? null : Math.sqrt(a * a + b * b + 1.0))
          .register(spark());
    }
  }


  private static String call(String name, String args) {
    return "`" + name.replace("`", "``") + "`(" + args + ")";
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"geo.dist3", "dist-3", "3d", "main", "vk_udf", "名前", "a*/b"})
  void nonIdentifierNames_runOnTheGpu_andAgreeWithSpark(String name) {
    table().createOrReplaceTempView("names_t");
    String sql = "SELECT id, " + call(name, "a, b") + " AS r FROM names_t";
    assertGpuEqualsCpu(() -> spark().sql(sql)); // every row of every node on the GPU, none on the CPU
    Dataset<Row> df = spark().sql(sql);
    List<Row> rows = df.collectAsList();
    assertAllRowsOnGpu(df);
    assertEquals(20_000L, metrics(gpuNodes(df).get(0)).get("gpuRows"));
    assertTrue(rows.stream().anyMatch(r -> !r.isNullAt(1)));
    String plan = explain(spark().sql(sql));
    assertTrue(plan.contains("VkGpuEval [" + name + "(a#"), plan);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"geo.dist3", "名前", "a*/b"})
  void vksparkErrors_nameTheUdfAsRegistered(String name) {
    table().createOrReplaceTempView("names_t");
    Exception e = assertThrows(Exception.class, () -> spark().sql("SELECT " + call(name, "p, b") + " FROM names_t").collect());
    String all = e.toString() + (e.getCause() == null ? "" : " " + e.getCause());
    assertTrue(all.contains("argument 1 (a) of GPU UDF '" + name + "' must be double"), all);
    assertTrue(all.contains("Fix: write CAST("), all);
  }

  @Test
  void badArgumentNames_areStillRefused_namingTheUdf() {
    GpuException e = assertThrows(GpuException.class,
        () -> GpuFunction.define("geo.dist3").returns("double").arg("float", "double").body("1.0"));
    assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().startsWith("argument name 'float' of GPU UDF 'geo.dist3' is a GLSL reserved word."),
        e.getMessage());
    assertTrue(e.getMessage().endsWith("Fix: rename the argument, e.g. to float_value."), e.getMessage());
    e = assertThrows(GpuException.class,
        () -> GpuFunction.define("dist-3").returns("double").arg("a-b", "double").body("1.0"));
    assertTrue(e.getMessage().startsWith("argument name 'a-b' of GPU UDF 'dist-3' is not an identifier."), e.getMessage());
    assertTrue(e.getMessage().endsWith("Fix: rename the argument, e.g. to a_b."), e.getMessage());
  }
}
