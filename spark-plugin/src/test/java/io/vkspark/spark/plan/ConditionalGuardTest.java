package io.vkspark.spark.plan;

import io.vkspark.spark.TestSpark;

import io.vkspark.spark.api.GpuFunction;
import io.vkspark.spark.exec.VkGpuEvalExec;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF2;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A GPU UDF call in a branch Spark skips for some rows ({@code CASE WHEN y <> 0 THEN safe_div(x, y)})
 * is computed by the GPU for every row (a kernel cannot fail), but its {@code call()} never runs for
 * the skipped rows: not when the planner, or the executor, puts it on the CPU. {@code safe_div}'s
 * {@code call()} throws {@code / by zero}, so any leak fails the query.
 */
@ExtendWith(TestSpark.Validated.class)
public final class ConditionalGuardTest {
  /** Every conditional form vkspark guards, each skipping safe_div exactly where y = 0. */
  static final String[] QUERIES = {
      "CASE WHEN y <> 0 THEN safe_div(x, y) ELSE -1 END",
      "IF(y = 0, -1, safe_div(x, y))",
      "COALESCE(z, safe_div(x, y))",
      "y <> 0 AND safe_div(x, y) > 1",
      "y = 0 OR safe_div(x, y) > 1",
      "IF(x > 100, CASE WHEN y = 0 THEN -3 WHEN y <> 0 THEN safe_div(x, y) END, -2)",
      "CASE WHEN int_poly(y, 0) <> 0 THEN safe_div(x, y) + 1 END",
  };
  private static String data;

  @BeforeAll
  public static void table() throws Exception {
    SparkSession s = spark();
    GpuFunction.define("safe_div").returns("int").arg("x", "int").arg("y", "int")
        .body("y == 0 ? 0 : x / y")
        .cpu((UDF2<Integer, Integer, Integer>) (x, y) -> x == null || y == null ? null : x / y)
        .register(s);
    data = Files.createTempDirectory("vkspark-guard").resolve("t.parquet").toString();
    // y is 0 on one row in 7 (and null on one in 11); z is non-null exactly where y = 0.
    s.range(0, 20_000, 1, 4).selectExpr("id",
            "CAST(id * 37 % 2001 - 1000 AS INT) AS x",
            "CASE WHEN id % 11 = 0 THEN NULL ELSE CAST(id % 7 - 3 AS INT) END AS y")
        .selectExpr("id", "x", "y", "CASE WHEN y = 0 THEN 0 END AS z")
        .write().parquet(data);
  }


  public static Dataset<Row> t() {
    return spark().read().parquet(data);
  }

  static Supplier<Dataset<Row>> select(String expr) {
    return () -> t().selectExpr("id", expr + " AS r");
  }

  static final List<Supplier<Dataset<Row>>> AGGREGATES = List.of(
      () -> t().selectExpr("id % 3 AS k", "y", "x").groupBy("k").agg(
          functions("sum(CASE WHEN y <> 0 THEN safe_div(x, y) ELSE 0 END)"),
          functions("sum(safe_div(x, y)) FILTER (WHERE y <> 0)")),
      () -> t().where("y <> 0 AND safe_div(x, y) > 1").select("id"));

  private static Column functions(String e) {
    return org.apache.spark.sql.functions.expr(e);
  }

  @Test
  void onTheGpu_everyConditionalAgreesWithSpark_andRowsRanOnTheGpu() {
    for (String q : QUERIES) {
      assertGpuEqualsCpu(select(q));
      Dataset<Row> df = select(q).get();
      df.collectAsList();
      List<VkGpuEvalExec> nodes = gpuNodes(df);
      assertFalse(nodes.isEmpty(), q + ": " + explain(df));
      for (VkGpuEvalExec n : nodes) {
        Map<String, Long> m = metrics(n);
        assertTrue(m.get("gpuRows") > 0, q + ": " + m);
        assertEquals(0L, m.get("cpuRows"), q + ": " + m);
      }
    }
    for (Supplier<Dataset<Row>> q : AGGREGATES) {
      assertGpuEqualsCpu(q);
    }
  }

  @Test
  void noDeviceWhenPlanning_guardedCallsRunOnTheCpuOnlyWhereSparkWould() {
    withFallback(() -> withoutDevice(() -> {
      Dataset<Row> df = select(QUERIES[0]).get();
      String plan = explain(df);
      assertTrue(plan.contains("(guarded) on CPU because no Vulkan device could be opened"), plan);
      for (String q : QUERIES) {
        assertVksparkEqualsCpu(select(q), d ->
            assertTrue(gpuNodes(d).stream().anyMatch(n -> metrics(n).get("cpuRows") > 0), q + ": " + explain(d)));
      }
      for (Supplier<Dataset<Row>> q : AGGREGATES) {
        assertVksparkEqualsCpu(q, d -> assertFalse(gpuNodes(d).isEmpty(), explain(d)));
      }
      // The same call in a branch and in a lambda under a wider condition: a guarded column would be
      // null where the lambda reads it, so the call stays in place.
      assertVksparkEqualsCpu(select("IF(y > 0, safe_div(x, y), -1) "
          + "+ coalesce(CASE WHEN y <> 0 THEN transform(array(1), e -> safe_div(x, y))[0] END, 0)"), d -> { });
    }));
  }

  /** Planned for the GPU on a driver with a device; the executor that runs it has none (a cluster). */
  @Test
  void plannedOnGpu_executorWithoutDevice_guardedCallsRunOnTheCpuOnlyWhereSparkWould() {
    for (String q : QUERIES) {
      List<Row> expected = gpuAndCpu(select(q)).get(1);
      // A query runs with the settings its session had when it was planned: fallback is set first.
      withFallback(() -> {
        Dataset<Row> df = select(q).get();
        assertTrue(explain(df).contains("on GPU"), explain(df));
        withoutDevice(() -> {
          List<Row> rows = df.collectAsList();
          assertRowsEqual(expected, sortedById(rows));
          List<Map<String, Long>> ms = gpuNodes(df).stream().map(TestSpark::metrics).toList();
          assertTrue(ms.stream().allMatch(m -> m.get("cpuRows") > 0 && m.get("gpuRows") == 0), q + ": " + ms);
        });
      });
    }
  }

  private static List<Row> sortedById(List<Row> rows) {
    return rows.stream().sorted(Comparator.comparing((Row r) -> String.valueOf(r.get(0)))).toList();
  }
}
