package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.javaudfs.BlackScholesCall;
import io.vkspark.spark.javaudfs.DigitCount;
import io.vkspark.spark.javaudfs.IntDiv;
import io.vkspark.spark.javaudfs.OrMinusOne;
import io.vkspark.spark.udf.ConfiguredUdfs;
import io.vkspark.spark.shim.SparkShim;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.SparkThrowable;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Plain Java UDFs (no vkspark code in them) translated from their bytecode to the GPU
 * ({@code spark.vkspark.translate}, on by default): they run on the GPU with call()'s results,
 * rows that throw fail the query as Spark does, non-strict nulls get call()'s value, and one that
 * does not translate stays Spark's with the reason in EXPLAIN. The shared session has
 * {@code fallback=false}: none of this may fail a query Spark alone would run.
 */
@ExtendWith({TestSpark.Validated.class, TestSpark.RestoresConf.class})
final class TranslatedUdfSparkTest {
  private static String data;

  /** 4,000 rows in 4 Parquet files: option inputs s, k, t, r, v; ints i, z (0 once), n (10% null); bigint l. */
  @BeforeAll
  static void setUp() throws Exception {
    data = Files.createTempDirectory("vkspark-translated").resolve("data.parquet").toString();
    spark().range(0, 4000, 1, 4).selectExpr("id",
        "50 + rand(1) * 100 AS s", "50 + rand(2) * 100 AS k", "0.1 + rand(3) * 1.9 AS t",
        "0.01 + rand(4) * 0.04 AS r", "0.1 + rand(5) * 0.4 AS v",
        "CAST(id AS INT) * 7919 - 1000 AS i", "id * 1000003 AS l",
        "CAST(CASE WHEN id = 1234 THEN 0 ELSE id % 7 + 1 END AS INT) AS z",
        "CASE WHEN id % 10 = 3 THEN NULL ELSE CAST(id AS INT) END AS n")
        .write().parquet(data);
    spark().udf().register("bs_java", new BlackScholesCall(), DataTypes.DoubleType);
    spark().udf().register("idiv_java", new IntDiv(), DataTypes.IntegerType);
    spark().udf().register("or_minus_one", new OrMinusOne(), DataTypes.IntegerType);
    spark().udf().register("digit_count", new DigitCount(), DataTypes.IntegerType);
  }

  private static Dataset<Row> data() {
    return spark().read().parquet(data);
  }

  private static Dataset<Row> blackScholes() {
    return data().selectExpr("id", "s", "k", "t", "r", "v", "bs_java(s, k, t, r, v) AS p");
  }

  @Test
  void blackScholes_runsOnTheGpu_withCallsResults_verifiedBySample() {
    Dataset<Row> df = blackScholes();
    List<Row> rows = df.collectAsList();
    assertAllRowsOnGpu(df);
    String explain = explain(df);
    assertTrue(explain.contains("bs_java(") && explain.contains("on GPU (translated from Java)"), explain);
    BlackScholesCall f = new BlackScholesCall();
    assertEquals(4000, rows.size());
    for (Row row : rows) {
      double s = row.getDouble(1);
      double expected = f.call(s, row.getDouble(2), row.getDouble(3), row.getDouble(4), row.getDouble(5));
      double gpu = row.getDouble(6);
      // a few ulps of the price's scale (the spot): the price itself can cancel to a small value
      assertTrue(Math.abs(gpu - expected) <= 8 * Math.ulp(s), () -> row + ": GPU " + gpu + ", call() " + expected);
    }
    // spark.vkspark.verify is unset: a translated UDF is checked against call() on a sample of its rows
    long verified = 0;
    for (VkGpuEvalExec node : gpuNodes(df)) {
      Map<String, Long> m = metrics(node);
      verified += m.get("verifyRows");
      assertEquals(0L, m.get("verifyMismatches"), m::toString);
    }
    assertTrue(verified > 0, "verify=sample by default for translated UDFs");
  }

  @Test
  void lambdas_fromFunctionsUdf_runOnTheGpu_exactly() throws Exception {
    UDF1<Integer, Integer> poly = x -> x * 3 + (x >> 2) - 7;
    UDF2<Long, Long, Long> mix = (a, b) -> a * 0x9E3779B97F4A7C15L + (b >>> 3) - (a ^ b);
    UserDefinedFunction p = functions.udf(poly, DataTypes.IntegerType);
    UserDefinedFunction m = functions.udf(mix, DataTypes.LongType);
    Dataset<Row> df = data().select(col("id"), col("i"), col("l"), p.apply(col("i")).as("p"),
        m.apply(col("l"), col("id")).as("m"));
    List<Row> rows = df.collectAsList();
    assertAllRowsOnGpu(df);
    assertTrue(explain(df).contains("(translated from Java)"), () -> explain(df));
    for (Row row : rows) {
      assertEquals(poly.call(row.getInt(1)), row.get(3), row::toString);
      assertEquals(mix.call(row.getLong(2), row.getLong(0)), row.get(4), row::toString);
    }
  }

  @Test
  void callFunction_ofARegisteredJavaUdf_runsOnTheGpu() {
    List<List<Row>> both = onAndOff(() -> data().select(col("id"), col("i"), col("n"),
        functions.call_function("idiv_java", col("i"), functions.lit(7)).as("q"),
        functions.call_function("or_minus_one", col("id").cast("int")).as("o")), df -> {
      assertAllRowsOnGpu(df);
      assertTrue(explain(df).contains("idiv_java(") && explain(df).contains("on GPU (translated from Java)"), () -> explain(df));
    });
    assertEquals(both.get(1), both.get(0));
    assertEquals(4000, both.get(0).size());
    for (Row r : both.get(0)) {
      assertEquals(r.getInt(1) / 7, r.getInt(3), r::toString);
      assertEquals((int) r.getLong(0) + 1, r.getInt(4), r::toString);
    }
  }

  /** {@code a.equals(b)} on boxed Integers, as real UDFs compare codes (3 of issue 31's 46 queries). */
  @Test
  void boxedIntegerEquals_runsOnTheGpu() {
    UDF2<Integer, Integer, Integer> same = (a, b) -> a == null || b == null ? null : a.equals(b) ? 1 : 0;
    spark().udf().register("same_java", same, DataTypes.IntegerType);
    Supplier<Dataset<Row>> q = () -> data().selectExpr("id", "z", "n", "same_java(z, n % 8) AS s");
    Dataset<Row> df = q.get();
    List<Row> rows = df.collectAsList();
    assertAllRowsOnGpu(df);
    for (Row r : rows) {
      assertEquals(r.isNullAt(2) ? null : r.getInt(1) == r.getInt(2) % 8 ? 1 : 0, r.get(3), r::toString);
    }
    assertGpuEqualsCpu(q);
  }

  /** {@code functions.udf((Long x) -> x * x, LongType)}: javac erases the lambda's result to Object. */
  @Test
  void aLambdaReturningObject_takesTheRegisteredType_onTheGpu() {
    UserDefinedFunction square = functions.udf((Long x) -> x * x, DataTypes.LongType);
    Supplier<Dataset<Row>> q = () -> data().select(col("id"), col("l"), square.apply(col("l")).as("sq"));
    Dataset<Row> df = q.get();
    List<Row> rows = df.collectAsList();
    assertAllRowsOnGpu(df);
    for (Row r : rows) {
      assertEquals(r.getLong(1) * r.getLong(1), r.getLong(2), r::toString);
    }
  }

  @Test
  void untranslatable_staysSparks_andExplainSaysWhy() {
    Supplier<Dataset<Row>> q = () -> data().selectExpr("id", "l", "digit_count(l) AS d");
    Dataset<Row> df = q.get();
    List<Row> rows = df.collectAsList(); // fallback=false in this session: still no error
    assertTrue(gpuNodes(df).isEmpty(), () -> explain(df));
    String explain = explain(df);
    assertTrue(explain.contains("digit_count runs on CPU because it does not translate to the GPU: "
        + DigitCount.class.getName() + ".call"), explain);
    assertTrue(explain.contains("StringBuilder"), explain);
    for (Row row : rows) {
      assertEquals(String.valueOf(row.getLong(1)).length(), row.getInt(2), row::toString);
    }
    List<List<Row>> both = onAndOff(q, d -> { });
    assertRowsEqual(both.get(1), both.get(0));
  }

  @Test
  void aTranslationThatDoesNotFitTheCall_staysSparks_andExplainSaysWhy() {
    spark().udf().register("or_minus_one_long", new OrMinusOne(), DataTypes.LongType);
    String explain = explain(data().selectExpr("id", "or_minus_one_long(n) AS o"));
    assertTrue(explain.contains("or_minus_one_long runs on CPU because it does not translate to the GPU: it is "
        + "registered as returning BIGINT but " + OrMinusOne.class.getName() + ".call returns int"), explain);
  }

  @Test
  void aThrowingRow_failsAsSparkDoes_inProjectionsAndFusedAggregates() {
    // an int SUM under ANSI (Spark 4's default) is fused only when asked: folded on the host
    spark().conf().set(Settings.FUSE_AGGREGATES.key(), "true");
    for (String sql : List.of("SELECT id, idiv_java(i, z) AS q FROM %s", "SELECT sum(idiv_java(i, z)) AS q FROM %s")) {
      Supplier<Dataset<Row>> q = () -> {
        data().createOrReplaceTempView("translated_data");
        return spark().sql(String.format(sql, "translated_data"));
      };
      Dataset<Row> df = q.get();
      Throwable vk = assertThrows(Exception.class, df::collectAsList);
      assertTrue(explain(df).contains("idiv_java(i#") && explain(df).contains("on GPU (translated from Java)"),
          () -> explain(df));
      assertEquals(sql.contains("sum("), explain(df).contains("VkGpuAggregate"), () -> explain(df));
      spark().conf().set(Settings.ENABLED.key(), "false");
      Throwable plain;
      try {
        plain = assertThrows(Exception.class, () -> q.get().collectAsList());
      } finally {
        spark().conf().set(Settings.ENABLED.key(), "true");
      }
      assertSameFailure(plain, vk);
    }
  }

  @Test
  void aThrowingRowFilteredOut_doesNotFail() {
    data().createOrReplaceTempView("translated_data");
    Dataset<Row> rows = spark().sql("SELECT id, i, z, idiv_java(i, z) AS q FROM translated_data WHERE z <> 0");
    List<Row> out = rows.collectAsList();
    assertAllRowsOnGpu(rows);
    assertEquals(3999, out.size());
    for (Row r : out) {
      assertEquals(r.getInt(1) / r.getInt(2), r.getInt(3), r::toString);
    }
    spark().conf().set(Settings.FUSE_AGGREGATES.key(), "true");
    Dataset<Row> sum = spark().sql("SELECT sum(idiv_java(i, z)) FROM translated_data WHERE z <> 0");
    long expected = out.stream().mapToLong(r -> r.getInt(3)).sum();
    assertEquals(expected, sum.collectAsList().get(0).getLong(0));
    assertFalse(explain(sum).contains("on CPU"), () -> explain(sum));
    assertTrue(explain(sum).contains("VkGpuAggregate"), () -> explain(sum));
  }

  @Test
  void nonStrict_nullRowsGetCallsValue_computedOnTheGpu() {
    Dataset<Row> df = data().selectExpr("id", "n", "or_minus_one(n) AS o");
    List<Row> rows = df.collectAsList();
    for (Row r : rows) {
      assertEquals(r.isNullAt(1) ? -1 : r.getInt(1) + 1, r.getInt(2), r::toString);
    }
    assertAllRowsOnGpu(df); // the null-aware kernel computes the null rows: no batch recomputed with call()
    List<VkGpuEvalExec> nodes = gpuNodes(df);
    long recomputed = nodes.stream().mapToLong(n -> metrics(n).get("recomputedBatches")).sum();
    assertEquals(0, recomputed, () -> nodes.stream().map(n -> metrics(n).toString()).toList().toString());
    // fused into an aggregate: the task folds the GPU's rows on the host (the reduction reads no device validity yet)
    spark().conf().set(Settings.FUSE_AGGREGATES.key(), "true");
    Dataset<Row> sum = data().selectExpr("sum(or_minus_one(n))");
    long expected = rows.stream().mapToLong(r -> r.getInt(2)).sum();
    assertEquals(expected, sum.collectAsList().get(0).getLong(0));
    assertTrue(explain(sum).contains("VkGpuAggregate"), () -> explain(sum));
    // the same UDF over a column without nulls: every row on the GPU
    Dataset<Row> noNulls = data().selectExpr("id", "or_minus_one(CAST(id AS INT)) AS o");
    noNulls.collectAsList();
    assertAllRowsOnGpu(noNulls);
  }

  /**
   * Null-tolerant Java UDFs ({@code x == null ? 0.0 : x * 2}, and one that returns null for some
   * non-null arguments) compute their null rows on the device: Spark's rows, every row on the GPU,
   * no batch recomputed and no CPU row for null arguments.
   */
  @Test
  void nullTolerantUdf1_andNullResults_computedOnTheGpu() {
    spark().udf().register("twice_or_zero", (UDF1<Double, Double>) x -> x == null ? 0.0 : x * 2, DataTypes.DoubleType);
    spark().udf().register("thirds_null", (UDF2<Integer, Long, Long>) (x, y) -> {
      if (x == null) {
        return y == null ? -1L : y;
      }
      if (x % 3 == 0) {
        return null;
      }
      return x + (y == null ? 0L : y % 7);
    }, DataTypes.LongType);
    long[] nullRows = new long[2];
    assertVksparkEqualsCpu(() -> data().selectExpr("id", "n", "twice_or_zero(CAST(n AS DOUBLE) * 0.5) AS d",
        "thirds_null(n, CASE WHEN id % 4 = 1 THEN NULL ELSE l END) AS t"), d -> {
          assertAllRowsOnGpu(d);
          for (VkGpuEvalExec node : gpuNodes(d)) {
            Map<String, Long> m = metrics(node);
            assertEquals(0L, m.get("recomputedBatches"), m::toString);
            assertEquals(0L, m.getOrDefault("cpuRowsNullArguments", 0L), m::toString);
            assertEquals(0L, m.getOrDefault("verifyMismatches", 0L), m::toString); // sampled rows agree with call()
          }
          for (Row r : d.collectAsList()) {
            nullRows[0] += r.isNullAt(1) ? 1 : 0;
            nullRows[1] += r.isNullAt(3) ? 1 : 0;
          }
        });
    assertTrue(nullRows[0] >= 300 && nullRows[1] >= 1000, "null arguments and null results: " + nullRows[0] + ", "
        + nullRows[1]);
    String explain = explain(data().selectExpr("twice_or_zero(CAST(n AS DOUBLE)) AS d"));
    assertTrue(explain.contains("on GPU (translated from Java)"), explain);
  }

  @Test
  void translateOff_leavesJavaUdfsToSpark() {
    spark().conf().set(Settings.TRANSLATE.key(), "false");
    Dataset<Row> df = blackScholes();
    List<Row> rows = df.collectAsList();
    assertTrue(gpuNodes(df).isEmpty(), () -> explain(df));
    assertFalse(explain(df).contains("does not translate"), () -> explain(df));
    BlackScholesCall f = new BlackScholesCall();
    for (Row row : rows) {
      assertEquals(f.call(row.getDouble(1), row.getDouble(2), row.getDouble(3), row.getDouble(4), row.getDouble(5)),
          row.get(6));
    }
  }

  @Test
  void aPlainUdfClass_inFunctions_isASqlFunction_onTheGpu() {
    data().createOrReplaceTempView("translated_data");
    Dataset<Row> df = spark().sql("SELECT id, black_scholes_call(s, k, t, r, v) AS a, bs_java(s, k, t, r, v) AS b "
        + "FROM translated_data");
    List<Row> rows = df.collectAsList();
    assertAllRowsOnGpu(df);
    assertTrue(explain(df).contains("black_scholes_call(s#"), () -> explain(df));
    for (Row r : rows) {
      assertEquals(r.getDouble(2), r.getDouble(1), r::toString);
    }
  }

  @Test
  void aGpuUdf_registeredAsAJavaUdf_keepsItsOwnKernel() {
    Dataset<Row> df = data().selectExpr("id", "hypot_gpu(s, k) AS h");
    df.collectAsList();
    assertAllRowsOnGpu(df);
    String explain = explain(df);
    assertTrue(explain.contains("hypot_gpu(s#") && !explain.contains("translated from Java"), explain);
  }

  @Test
  void plainUdfClasses_inFunctions_returnTheirCallsType() {
    VkConf conf = VkConf.from(Map.of(Settings.FUNCTIONS.key(), BlackScholesCall.class.getName() + ","
        + IntDiv.class.getName() + "," + TestUdfs.IntPoly.class.getName())::get);
    List<ConfiguredUdfs.JavaFunction> fs = ConfiguredUdfs.javaFunctions(conf, null);
    assertEquals(List.of("black_scholes_call", "int_div"), fs.stream().map(ConfiguredUdfs.JavaFunction::name).toList());
    assertEquals(List.of(5, 2), fs.stream().map(ConfiguredUdfs.JavaFunction::arity).toList());
    assertEquals(List.of(DataTypes.DoubleType, DataTypes.IntegerType),
        fs.stream().map(ConfiguredUdfs.JavaFunction::result).toList());
    assertEquals(1, ConfiguredUdfs.configured(conf, null).size(), "the GpuUdf class stays a GPU UDF");
  }

  /**
   * vkspark's failure is Spark's: the same chain of exception classes, the UDF's error wrapped as
   * FAILED_EXECUTE_UDF, the same root cause and message.
   */
  private static void assertSameFailure(Throwable spark, Throwable vk) {
    assertEquals(chain(spark), chain(vk), () -> "Spark:\n" + messages(spark) + "vkspark:\n" + messages(vk));
    assertTrue(conditions(vk).contains("FAILED_EXECUTE_UDF"), () -> messages(vk));
    assertEquals(conditions(spark), conditions(vk));
    Throwable a = root(spark);
    Throwable b = root(vk);
    assertEquals(ArithmeticException.class, b.getClass(), () -> messages(vk));
    assertEquals(a.getClass(), b.getClass());
    // Once call() is hot, HotSpot may throw a preallocated ArithmeticException without a message
    // (OmitStackTraceInFastThrow): Spark's own run showed a null message on the 3.5/2.13 line
    if (a.getMessage() != null && b.getMessage() != null) {
      assertEquals(a.getMessage(), b.getMessage());
    }
  }

  private static List<String> chain(Throwable t) {
    List<String> out = new ArrayList<>();
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      out.add(c.getClass().getName());
    }
    return out;
  }

  private static List<String> conditions(Throwable t) {
    List<String> out = new ArrayList<>();
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof SparkThrowable s && SparkShim.condition(s) != null) {
        out.add(SparkShim.condition(s));
      }
    }
    return out;
  }

  private static Throwable root(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c;
  }
}
