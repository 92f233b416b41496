package io.vkspark.spark;

import io.vkspark.spark.api.GpuFunction;
import io.vkspark.spark.plan.OutsideNodeCalls;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.udf.CountedFunction;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.sql.Date;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.LongStream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.util.LongAccumulator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * GPU UDF calls guarded by other GPU UDFs, over Parquet columns whose types the kernels widen
 * (an implicit cast is a computed argument): the guard is re-evaluated from the guarding call's
 * column, every call runs on the GPU, and on the CPU paths a guarded call's {@code call()} runs only
 * where its guard holds. {@code inverse_pct}'s {@code call()} throws {@code / by zero} exactly where
 * its guard {@code nonzero(y)} is false, so any leak fails the query.
 */
@ExtendWith(TestSpark.Validated.class)
final class GpuGuardSparkTest {
  /** The two queries of issue 20: hour_of_day(ts) and steps(n) read int columns cast to bigint. */
  static final String IF_QUERY = "IF(is_weekend(d), hour_of_day(ts), -1)";
  static final String WHERE_QUERY = "is_weekend(d) AND steps(n) > 100 OR hour_of_day(ts) = 3";
  /** inverse_pct(y) is evaluated only where nonzero(y) is true; its call() throws elsewhere. */
  static final String[] THROWING = {
      "IF(nonzero(y), inverse_pct(y), -1)",
      "CASE WHEN nonzero(y) THEN inverse_pct(y) + 1 END",
      "nonzero(y) AND inverse_pct(y) > 5",
  };
  private static String data;

  @BeforeAll
  static void table() throws Exception {
    SparkSession s = spark();
    GpuFunction.define("is_weekend").returns("boolean").arg("d", "date")
        .body("jrem(d + 3, 7) >= 5")
        .cpu((UDF1<Date, Boolean>) d -> d == null ? null : (d.toLocalDate().toEpochDay() + 3) % 7 >= 5)
        .register(s);
    GpuFunction.define("hour_of_day").returns("int").arg("ts", "bigint")
        .body("int(jrem(ts / 3600l, 24l))")
        .cpu((UDF1<Long, Integer>) t -> t == null ? null : (int) (t / 3600L % 24L))
        .register(s);
    GpuFunction.define("steps").returns("bigint").arg("n", "bigint")
        .body("n * 2l")
        .cpu((UDF1<Long, Long>) n -> n == null ? null : n * 2)
        .register(s);
    GpuFunction.define("nonzero").returns("boolean").arg("y", "int")
        .body("y != 0")
        .cpu((UDF1<Integer, Boolean>) y -> y == null ? null : y != 0)
        .register(s);
    GpuFunction.define("inverse_pct").returns("bigint").arg("v", "bigint")
        .body("jdiv(100l, v)")
        .cpu((UDF1<Long, Long>) v -> v == null ? null : 100L / v)
        .register(s);
    data = Files.createTempDirectory("vkspark-gpu-guard").resolve("t.parquet").toString();
    // ts: seconds since the epoch (int); n: int; y is 0 on one row in 7 and null on one in 11.
    s.range(0, 20_000, 1, 4).selectExpr("id",
            "CASE WHEN id % 13 = 0 THEN NULL ELSE date_add(date'2020-01-01', CAST(id % 400 AS INT)) END AS d",
            "CAST(1577836800 + id * 12345 AS INT) AS ts",
            "CAST(id % 150 AS INT) AS n",
            "CASE WHEN id % 11 = 0 THEN NULL ELSE CAST(id % 7 - 3 AS INT) END AS y")
        .write().parquet(data);
  }


  static Dataset<Row> t() {
    return spark().read().parquet(data);
  }

  static Supplier<Dataset<Row>> select(String expr) {
    return () -> t().selectExpr("id", expr + " AS r");
  }

  static Supplier<Dataset<Row>> where(String condition) {
    return () -> t().where(condition).select("id");
  }

  @Test
  void guardedByGpuUdfs_everyCallRunsOnTheGpu() {
    for (Supplier<Dataset<Row>> q : List.of(select(IF_QUERY), where(WHERE_QUERY))) {
      assertGpuEqualsCpu(q);
      Dataset<Row> df = q.get();
      String plan = explain(df);
      assertFalse(plan.contains("runs on CPU"), plan);
      assertFalse(plan.contains("on CPU because"), plan);
      for (String call : List.of("is_weekend(", "hour_of_day(")) {
        assertTrue(gpuNodes(df).stream().anyMatch(n -> n.toString().contains(call)), call + ": " + plan);
      }
    }
    String plan = explain(select(IF_QUERY).get());
    assertTrue(plan.matches("(?s).*if \\(coalesce\\(is_weekend#\\d+, false\\)\\) cast\\(ts#\\d+ as bigint\\) else null AS vk_arg0.*"),
        "the cast is computed under the guard: " + plan);
    assertTrue(where(WHERE_QUERY).get().count() > 0 && where(WHERE_QUERY).get().count() < 20_000);
  }

  @Test
  void throwingWhereTheGuardIsFalse_onTheGpu() {
    for (String q : THROWING) {
      assertGpuEqualsCpu(q.contains(" AND ") ? where(q) : select(q));
    }
    assertGpuEqualsCpu(() -> t().selectExpr("id % 3 AS k", "y").groupBy("k")
        .agg(org.apache.spark.sql.functions.expr("sum(IF(nonzero(y), inverse_pct(y), 0))")));
  }

  @Test
  void throwingWhereTheGuardIsFalse_noDeviceWhenPlanning_callRunsOnlyWhereTheGuardHolds() {
    withFallback(() -> withoutDevice(() -> {
      for (String q : THROWING) {
        assertVksparkEqualsCpu(q.contains(" AND ") ? where(q) : select(q), d -> {
          List<Map<String, Long>> ms = gpuNodes(d).stream().map(TestSpark::metrics).toList();
          assertFalse(ms.isEmpty(), explain(d));
          assertTrue(ms.stream().allMatch(m -> m.get("cpuRows") > 0 && m.get("gpuRows") == 0), q + ": " + ms);
        });
      }
    }));
  }

  /** Planned for the GPU on a driver with a device; the executor that runs it has none. */
  @Test
  void throwingWhereTheGuardIsFalse_executorWithoutDevice_callRunsOnlyWhereTheGuardHolds() {
    for (String q : THROWING) {
      Supplier<Dataset<Row>> query = q.contains(" AND ") ? where(q) : select(q);
      List<Row> expected = gpuAndCpu(query).get(1);
      Dataset<Row> df = query.get();
      withFallback(() -> withoutDevice(() -> {
        List<Row> rows = new ArrayList<>(df.collectAsList());
        rows.sort(Comparator.comparing((Row r) -> String.valueOf(r.get(0))));
        assertRowsEqual(expected, rows);
        List<Map<String, Long>> ms = gpuNodes(df).stream().map(TestSpark::metrics).toList();
        assertTrue(ms.stream().allMatch(m -> m.get("cpuRows") > 0 && m.get("gpuRows") == 0), q + ": " + ms);
      }));
    }
  }

  /**
   * A call that must stay in Spark's projection (inside a lambda) counts its call() rows in the
   * application's accumulator, and EXPLAIN says so; calls in VkGpuEval nodes, on the CPU path too,
   * do not count there (the node's rows on CPU does).
   */
  @Test
  void callOutsideTheNode_countsInTheAccumulator_andExplainSaysWhere() {
    LongAccumulator rows = OutsideNodeCalls.accumulator(spark().sparkContext());
    withFallback(() -> {
      Dataset<Row> df = t().selectExpr("id", "transform(array(n, n + 1), e -> steps(e))[1] + steps(n) AS r");
      String plan = explain(df);
      assertTrue(plan.contains("steps runs on CPU because it is inside a lambda"), plan);
      assertTrue(plan.contains("outside VkGpuEval (its rows count in the accumulator '" + OutsideNodeCalls.NAME + "')"), plan);
      long before = rows.value();
      long executor = CountedFunction.ROWS.sum(); // the executor's cpuRowsOutsideNode (local mode: this JVM)
      List<Row> got = df.collectAsList();
      assertEquals(20_000, got.size());
      assertEquals(40_000L, rows.value() - before, "two lambda calls a row, each counted once");
      assertEquals(40_000L, CountedFunction.ROWS.sum() - executor);
      assertAllRowsOnGpu(df); // steps(n) outside the lambda: in the node, on the GPU, not counted above
      assertVksparkEqualsCpu(() -> t().selectExpr("id", "transform(array(n, n + 1), e -> steps(e))[1] + steps(n) AS r"),
          d -> { });

      before = rows.value();
      withoutDevice(() -> assertVksparkEqualsCpu(select(THROWING[0]), d ->
          assertTrue(gpuNodes(d).stream().allMatch(n -> metrics(n).get("cpuRows") > 0), explain(d))));
      assertEquals(0L, rows.value() - before, "rows on CPU inside VkGpuEval count in the node, not the accumulator");
    });
  }

  /** Strict verify re-computes every GPU row with call(), but only where the guard holds. */
  @Test
  void throwingWhereTheGuardIsFalse_strictVerify_checksOnlyRowsWhereTheGuardHolds() {
    spark().conf().set(Settings.VERIFY.key(), "strict");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "1");
    try {
      Dataset<Row> df = select(THROWING[0]).get();
      df.collectAsList();
      long taken = LongStream.range(0, 20_000).filter(id -> id % 11 != 0 && id % 7 != 3).count();
      long verified = gpuNodes(df).stream().filter(n -> n.toString().contains("inverse_pct("))
          .mapToLong(n -> metrics(n).get("verifyRows")).sum();
      assertEquals(taken, verified, "every row where nonzero(y) is true, and only those");
      assertAllRowsOnGpu(df);
    } finally {
      spark().conf().unset(Settings.VERIFY.key());
      spark().conf().unset(Settings.VERIFY_SAMPLE_RATE.key());
    }
  }
}
