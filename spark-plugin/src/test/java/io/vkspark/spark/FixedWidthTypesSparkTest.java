package io.vkspark.spark;

import io.vkspark.spark.api.GpuFunction;
import io.vkspark.spark.shim.SparkShim;
import io.vkspark.spark.conf.Settings;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Date;
import java.sql.Timestamp;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.SparkThrowable;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * tinyint, smallint and decimal columns (from Parquet: Spark keeps a decimal(9,2) as ints and a
 * decimal(18,4) as longs) through GPU UDFs: every row on the GPU and equal to call(), and a decimal
 * result too wide for its type null with ANSI off and Spark's own overflow error with it on.
 */
@ExtendWith(TestSpark.Validated.class)
final class FixedWidthTypesSparkTest {
  private static String table;

  @BeforeAll
  static void setUp() {
    SparkSession session = spark();
    table = Path.of("target", "fixed-width-types.parquet").toAbsolutePath().toString();
    // 5,003 rows over 3 files: extremes (Byte/Short MIN and MAX, a decimal(9,2)'s largest), negatives, nulls
    session.sql("""
        SELECT id,
          CASE WHEN id % 17 = 3 THEN NULL WHEN id % 7 = 0 THEN CAST(-128 AS TINYINT) WHEN id % 7 = 1 THEN CAST(127 AS TINYINT)
               ELSE CAST(id % 256 - 128 AS TINYINT) END AS b,
          CASE WHEN id % 19 = 4 THEN NULL WHEN id % 5 = 0 THEN CAST(-32768 AS SMALLINT) WHEN id % 5 = 1 THEN CAST(32767 AS SMALLINT)
               ELSE CAST(id * 37 % 65536 - 32768 AS SMALLINT) END AS s,
          CASE WHEN id % 23 = 5 THEN NULL WHEN id % 11 = 0 THEN CAST(9999999.99 AS DECIMAL(9,2))
               WHEN id % 11 = 1 THEN CAST(-9999999.99 AS DECIMAL(9,2))
               ELSE CAST((id * 7919 % 2000000 - 1000000) / 100.0 AS DECIMAL(9,2)) END AS p,
          CASE WHEN id % 29 = 6 THEN NULL ELSE CAST((id % 2001 - 1000) * 12345.6789 + id / 10000.0 AS DECIMAL(18,4)) END AS q
        FROM range(5003)
        """).repartition(3).write().mode("overwrite").parquet(table);
    GpuFunction.define("fw_mix").returns("tinyint").arg("b", "tinyint").arg("s", "smallint")
        .body("b * 3 + s")
        .cpu((UDF2<Byte, Short, Byte>) (b, s) -> b == null || s == null ? null : (byte) (b * 3 + s))
        .register(session);
    GpuFunction.define("fw_twice").returns("smallint").arg("s", "short")
        .body("s * 2 - 1")
        .cpu((UDF1<Short, Short>) x -> x == null ? null : (short) (x * 2 - 1))
        .register(session);
    // decimal(9,2) + decimal(18,4) -> decimal(18,4): the body scales p up by 10^(result_scale - p_scale)
    GpuFunction.define("fw_total").returns("decimal(18,4)").arg("p", "decimal(9,2)").arg("q", "decimal(18,4)")
        .body("p * 100l + q")
        .cpu((UDF2<BigDecimal, BigDecimal, BigDecimal>) (p, q) -> p == null || q == null ? null : p.add(q))
        .register(session);
    // decimal(18,4) -> decimal(10,4): a |q| of 10^6 or more does not fit
    GpuFunction.define("fw_narrow").returns("decimal(10,4)").arg("q", "decimal(18,4)")
        .body("q")
        .cpu((UDF1<BigDecimal, BigDecimal>) q -> q)
        .register(session);
  }

  /**
   * Issue 33: constant arguments of every type a kernel argument can have (bare literals, float
   * literals, {@code CAST(literal AS type)}, {@code lit()}, foldable expressions) are per-call
   * constants in the kernel's literal slots: no projection under the node, every row on the GPU,
   * results equal to Spark's exactly; one kernel for several values. A strict call over a null
   * constant is null for every row.
   */
  @Test
  void constantArguments_everyType_onTheDevice_noProjection_exactlySpark() {
    SparkSession session = spark();
    GpuFunction.define("c_int").returns("int").arg("x", "int").arg("c", "int").body("x + c")
        .cpu((UDF2<Integer, Integer, Integer>) (x, c) -> x == null || c == null ? null : x + c).register(session);
    GpuFunction.define("c_bigint").returns("bigint").arg("x", "int").arg("c", "bigint").body("int64_t(x) + c")
        .cpu((UDF2<Integer, Long, Long>) (x, c) -> x == null || c == null ? null : x + c).register(session);
    GpuFunction.define("c_float").returns("float").arg("x", "int").arg("c", "float").body("float(x) + c")
        .cpu((UDF2<Integer, Float, Float>) (x, c) -> x == null || c == null ? null : (float) x + c).register(session);
    GpuFunction.define("c_double").returns("double").arg("x", "int").arg("c", "double").body("double(x) + c")
        .cpu((UDF2<Integer, Double, Double>) (x, c) -> x == null || c == null ? null : (double) x + c).register(session);
    GpuFunction.define("c_boolean").returns("int").arg("x", "int").arg("c", "boolean").body("c ? x : -x")
        .cpu((UDF2<Integer, Boolean, Integer>) (x, c) -> x == null || c == null ? null : c ? x : -x).register(session);
    GpuFunction.define("c_date").returns("date").arg("x", "int").arg("c", "date").body("c + x")
        .cpu((UDF2<Integer, Date, Date>) (x, c) -> x == null || c == null ? null
            : Date.valueOf(c.toLocalDate().plusDays(x))).register(session);
    GpuFunction.define("c_timestamp").returns("timestamp").arg("x", "int").arg("c", "timestamp").body("c + int64_t(x)")
        .cpu((UDF2<Integer, Timestamp, Timestamp>) (x, c) -> {
          if (x == null || c == null) {
            return null;
          }
          Timestamp t = new Timestamp(c.getTime());
          t.setNanos(c.getNanos() + x * 1000);
          return t;
        }).register(session);
    GpuFunction.define("c_tinyint").returns("int").arg("x", "int").arg("c", "tinyint").body("x + c")
        .cpu((UDF2<Integer, Byte, Integer>) (x, c) -> x == null || c == null ? null : x + c).register(session);
    GpuFunction.define("c_smallint").returns("int").arg("x", "int").arg("c", "smallint").body("x + c")
        .cpu((UDF2<Integer, Short, Integer>) (x, c) -> x == null || c == null ? null : x + c).register(session);
    String x = "CAST(id % 997 - 498 AS INT)"; // x in -498..498, with nulls from s
    String select = String.join(", ",
        "c_int(x, 2147483000)", "c_int(x, -7)", "c_int(x, 1 + 2 * 3)",
        "c_bigint(x, 9223372036854775000)", "c_bigint(x, CAST(-1 AS BIGINT))",
        "c_float(x, CAST(2.5 AS FLOAT))", "c_float(x, float('-0.0'))", "c_float(x, CAST(3.4028235E38 AS FLOAT))",
        "c_double(x, 0.1D)", "c_double(x, 1e300D * 10)", "c_double(x, -0.0D)",
        "c_boolean(x, true)", "c_boolean(x, 1 > 2)",
        "c_date(x, DATE'2024-02-29')", "c_timestamp(x, TIMESTAMP'2024-01-01 00:00:00.123456')",
        "c_tinyint(x, CAST(-128 AS TINYINT))", "c_smallint(x, CAST(32767 AS SMALLINT))");
    Supplier<Dataset<Row>> q = () -> spark().sql("SELECT id, " + select
        + " FROM (SELECT id, CASE WHEN s IS NULL THEN NULL ELSE " + x + " END AS x FROM parquet.`" + table + "`)");
    List<List<Row>> both = gpuAndCpu(q);
    assertEquals(both.get(1), both.get(0), "exactly Spark's values");
    assertEquals(5003, both.get(0).size());
    Dataset<Row> df = q.get();
    df.collectAsList();
    assertFalse(explain(df).contains("vk_arg"), "no projection computes a constant under the node: " + explain(df));
    // lit() through the DataFrame API, and a null constant: a strict call over it is null for every row
    Supplier<Dataset<Row>> lit = () -> spark().read().parquet(table)
        .selectExpr("id", "CAST(id % 997 - 498 AS INT) AS x")
        .select(org.apache.spark.sql.functions.col("id"),
            org.apache.spark.sql.functions.call_function("c_float", org.apache.spark.sql.functions.col("x"),
                org.apache.spark.sql.functions.lit(0.1f)).as("f"),
            org.apache.spark.sql.functions.call_function("c_int", org.apache.spark.sql.functions.col("x"),
                org.apache.spark.sql.functions.lit(null).cast("int")).as("n"));
    List<List<Row>> lits = TestSpark.onAndOff(lit, d -> {
      assertFalse(explain(d).contains("vk_arg"), explain(d));
      assertAllRowsOnGpu(d);
    });
    assertEquals(lits.get(1), lits.get(0));
    assertTrue(lits.get(0).stream().allMatch(r -> r.isNullAt(2)), "null constant: null results");
  }

  @AfterAll
  static void validation() {
    spark().conf().unset("spark.sql.ansi.enabled");
  }

  private static Dataset<Row> query(String select) {
    return spark().sql("SELECT id, " + select + " FROM parquet.`" + table + "`");
  }

  @Test
  void tinyintSmallintDecimal_onTheGpu_equalCall() {
    List<List<Row>> both = gpuAndCpu(() -> query("b, s, p, q, fw_mix(b, s) AS m, fw_twice(s) AS t, fw_total(p, q) AS total"));
    assertRowsEqual(both.get(1), both.get(0));
    List<Row> gpu = both.get(0);
    assertEquals(5003, gpu.size());
    int extremes = 0;
    int nulls = 0;
    for (Row r : gpu) {
      // each row against call() directly too, so a wrong CPU plan cannot hide a wrong GPU value
      Object m = r.isNullAt(1) || r.isNullAt(2) ? null : (byte) (r.getByte(1) * 3 + r.getShort(2));
      Object t = r.isNullAt(2) ? null : (short) (r.getShort(2) * 2 - 1);
      Object total = r.isNullAt(3) || r.isNullAt(4) ? null : r.getDecimal(3).add(r.getDecimal(4));
      assertEquals(m, r.isNullAt(5) ? null : r.getByte(5), r::toString);
      assertEquals(t, r.isNullAt(6) ? null : r.getShort(6), r::toString);
      assertEquals(total == null ? null : ((BigDecimal) total).setScale(4), r.isNullAt(7) ? null : r.getDecimal(7), r::toString);
      extremes += !r.isNullAt(1) && (r.getByte(1) == Byte.MIN_VALUE || r.getByte(1) == Byte.MAX_VALUE) ? 1 : 0;
      extremes += !r.isNullAt(3) && r.getDecimal(3).abs().compareTo(new BigDecimal("9999999.99")) == 0 ? 1 : 0;
      nulls += r.isNullAt(7) ? 1 : 0;
    }
    assertTrue(extremes > 1000 && nulls > 300, "extremes " + extremes + ", nulls " + nulls);

    // spark.vkspark.verify=strict over every row: GpuVerifier reads tinyint, smallint and decimal results
    spark().conf().set(Settings.VERIFY.key(), "strict");
    spark().conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "1");
    try {
      Dataset<Row> df = query("fw_mix(b, s) AS m, fw_twice(s) AS t, fw_total(p, q) AS total");
      df.collectAsList();
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertEquals(0L, m.get("verifyMismatches"), m::toString);
      assertTrue(m.get("verifyRows") >= 3 * 4000, m::toString);
    } finally {
      spark().conf().unset(Settings.VERIFY.key());
      spark().conf().unset(Settings.VERIFY_SAMPLE_RATE.key());
    }
  }

  @Test
  void decimalOverflow_isNullWithAnsiOff_andSparksErrorWithAnsiOn() {
    spark().conf().set("spark.sql.ansi.enabled", "false");
    List<List<Row>> both = gpuAndCpu(() -> query("q, fw_narrow(q) AS n"));
    assertRowsEqual(both.get(1), both.get(0));
    long overflowed = both.get(0).stream().filter(r -> !r.isNullAt(1) && r.isNullAt(2)).count();
    assertTrue(overflowed > 3000, "rows that overflowed to null: " + overflowed);

    spark().conf().set("spark.sql.ansi.enabled", "true");
    Dataset<Row> gpu = query("q, fw_narrow(q) AS n");
    Throwable e = assertThrows(Exception.class, gpu::collectAsList);
    SparkThrowable spark = sparkError(e);
    assertNotNull(spark, () -> "not Spark's own error: " + messages(e));
    assertTrue(SparkShim.condition(spark).startsWith("NUMERIC_VALUE_OUT_OF_RANGE"), SparkShim.condition(spark));
    // planned on the GPU; the batch that overflowed there was recomputed with call(), which raised Spark's error
    assertTrue(explain(gpu).contains("fw_narrow(q#") && explain(gpu).contains("on GPU"), explain(gpu));
    Map<String, Long> m = metrics(gpuNodes(gpu).get(0));
    assertEquals(0L, m.get("gpuRows"), "the failed batch is not counted as GPU rows: " + m);
  }

  private static SparkThrowable sparkError(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof SparkThrowable s && SparkShim.condition(s) != null && SparkShim.condition(s).startsWith("NUMERIC_VALUE")) {
        return s;
      }
    }
    return null;
  }
}
