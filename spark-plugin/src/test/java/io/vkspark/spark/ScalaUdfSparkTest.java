package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.spark.api.Tolerance;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.scalaudfs.Closures;
import io.vkspark.spark.scalaudfs.Fee;
import io.vkspark.spark.udf.ScalaUdfs;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Scala closures as users write them ({@link Closures}: {@code udf(...)} and
 * {@code spark.udf.register(...)}), translated from their bytecode to the GPU: the rows equal
 * Spark's own run and each closure's own result, every row ran on the GPU, and a closure that does
 * not translate stays Spark's with the reason in EXPLAIN. Nulls in the inputs: Spark returns null
 * for a null primitive argument without calling the closure, and so does the kernel.
 */
@ExtendWith({TestSpark.Validated.class, TestSpark.RestoresConf.class})
final class ScalaUdfSparkTest {
  private static String data;

  /**
   * 3,000 rows in 3 Parquet files: doubles a (10% null), b, price, discount, tax, income, debt, c;
   * ints i (10% null), j, age, code, qty; bigint ts (epoch seconds, negative ones too); doubles
   * lat1, lon1, lat2, lon2 (degrees).
   */
  @BeforeAll
  static void setUp() throws Exception {
    data = Files.createTempDirectory("vkspark-scala").resolve("data.parquet").toString();
    spark().range(0, 3000, 1, 3).selectExpr("id",
        "CASE WHEN id % 10 = 4 THEN NULL ELSE (rand(1) - 0.5) * 2000 END AS a", "randn(2) * 100 AS b",
        "1 + rand(3) * 500 AS price", "rand(4) * 0.1 AS discount", "rand(5) * 0.08 AS tax",
        "rand(6) * 90000 AS income", "rand(7) * 50000 AS debt", "(rand(8) - 0.3) * 60 AS c",
        "CASE WHEN id % 10 = 7 THEN NULL ELSE CAST((rand(9) - 0.5) * 2e6 AS INT) END AS i",
        "CAST((rand(10) - 0.5) * 2e6 AS INT) AS j", "CAST(rand(11) * 95 AS INT) AS age",
        "element_at(array(200, 301, 302, 404, 500, 503), CAST(id % 6 + 1 AS INT)) AS code",
        "CAST(rand(12) * 20 AS INT) AS qty", "CAST((rand(13) - 0.2) * 4e9 AS BIGINT) AS ts",
        "(rand(14) - 0.5) * 170 AS lat1", "(rand(15) - 0.5) * 360 AS lon1", "(rand(16) - 0.5) * 170 AS lat2",
        "(rand(17) - 0.5) * 360 AS lon2")
        .write().parquet(data);
    Closures.register(spark());
  }

  private static Dataset<Row> data() {
    return spark().read().parquet(data);
  }

  /**
   * Runs {@code q} with vkspark on, where every row must run on the GPU and EXPLAIN must contain each
   * of {@code explainHas}, then off; asserts the rows are Spark's, bit for bit; returns them.
   */
  private static List<Row> onGpuAsSpark(Supplier<Dataset<Row>> q, String... explainHas) {
    List<List<Row>> both = onAndOff(q, d -> {
      assertAllRowsOnGpu(d);
      String explain = explain(d);
      for (String s : explainHas) {
        assertTrue(explain.contains(s), () -> s + " in " + explain);
      }
    });
    assertEquals(both.get(1), both.get(0), "the translated closures give the closures' own bits");
    return both.get(0);
  }

  @Test
  void udfValues_runOnTheGpu_withTheClosuresResults() {
    List<Row> rows = onGpuAsSpark(() -> Closures.select(data()), "(translated from Scala)");
    for (Row r : rows) {
      assertEquals(r.isNullAt(1) ? null : Closures.affine().apply(r.get(1)), r.get(8), r::toString);
      assertEquals(r.isNullAt(2) ? null : Closures.absDiff().apply(r.get(2), r.get(3)), r.get(9), r::toString);
      assertEquals(Closures.chargedPrice().apply(r.get(4), r.get(5), r.get(6)), r.get(10), r::toString);
      assertEquals(r.getDouble(7) * 0.5 + 1.0, r.getDouble(11), r::toString);
    }
  }

  /** Registered closures in SQL, in a projection and a filter. */
  @Test
  void registeredClosures_inSql_runOnTheGpu() {
    List<String> functions = List.of("scala_affine", "scala_abs_diff", "scala_discounted_price", "scala_charged_price",
        "scala_c_to_f", "scala_age_bucket", "scala_status_class", "scala_hour_of_day", "scala_is_high_value",
        "scala_risk_score", "scala_bmi_class");
    List<Row> rows = onGpuAsSpark(() -> {
      data().createOrReplaceTempView("scala_data");
      return spark().sql("SELECT id, scala_affine(a) AS affine, scala_abs_diff(i, j) AS abs_diff, "
          + "scala_discounted_price(price, discount) AS discounted, scala_charged_price(price, discount, tax) AS charged, "
          + "scala_c_to_f(c) AS f, scala_age_bucket(age) AS bucket, scala_status_class(code) AS status, "
          + "scala_hour_of_day(ts) AS hour, scala_is_high_value(price, qty) AS high, "
          + "scala_risk_score(age, income, debt) AS risk, scala_bmi_class(income / 1000, 1.5 + discount) AS bmi, "
          + "code, ts FROM scala_data WHERE scala_age_bucket(age) < 3");
    }, functions.stream().map(f -> "vkspark: " + f + "(").toArray(String[]::new));
    Set<Integer> statuses = new TreeSet<>();
    for (Row r : rows) {
      assertEquals(Closures.statusClass().apply(r.get(12)), r.get(7), r::toString);
      assertEquals(Closures.hourOfDay().apply(r.get(13)), r.get(8), r::toString);
      statuses.add(r.getInt(7));
    }
    assertEquals(Set.of(0, 1, 2, 3, 4), statuses, "every case of the match");
    assertTrue(rows.stream().allMatch(r -> r.getInt(6) < 3) && rows.size() > 2000 && rows.size() < 3000,
        () -> "the filter on scala_age_bucket kept " + rows.size() + " rows");
  }

  /**
   * Spark's null check around a closure over nullable columns moves into its function
   * ({@code NullCheckedClosures}): the call reads the columns themselves, not under a guard, and a
   * SUM over it is fused and reduced on the GPU. Where Spark keeps the call (a GROUP BY key, computed
   * inside its aggregate), Spark's rows are the same, null group included.
   */
  @Test
  void nullChecks_moveIntoTheFunction_soCallsReadColumns_andSumsFuse() {
    spark().conf().set(Settings.PREFIX + "verify", "off"); // the GPU reduces the sum
    data().createOrReplaceTempView("scala_data");
    Supplier<Dataset<Row>> sums = () -> spark().sql("SELECT sum(scala_charged_price(price, discount, tax)), "
        + "sum(scala_affine(a)), count(scala_affine(a)) FROM scala_data");
    List<List<Row>> both = onAndOff(sums, d -> {
      assertAllRowsOnGpu(d);
      String explain = explain(d);
      assertTrue(explain.contains("VkGpuAggregate") && explain.contains("scala_affine(a#") && !explain.contains("guarded")
          && !explain.contains("knownnotnull"), explain);
    });
    Row gpu = both.get(0).get(0);
    Row cpu = both.get(1).get(0);
    for (int c = 0; c < 2; c++) {
      assertEquals(cpu.getDouble(c), gpu.getDouble(c), 1e-12 * Math.abs(cpu.getDouble(c)), "sum " + c + " (order differs)");
    }
    assertEquals(2700L, gpu.getLong(2), "the 300 null a give null");
    assertEquals(cpu.getLong(2), gpu.getLong(2));
    Supplier<Dataset<Row>> groups = () -> spark().sql("SELECT scala_abs_diff(i, j) % 3 AS g, count(*) AS n FROM scala_data "
        + "GROUP BY scala_abs_diff(i, j) % 3");
    List<List<Row>> grouped = onAndOff(groups, d -> { });
    assertEquals(grouped.get(1), grouped.get(0));
    assertEquals(4, grouped.get(0).size(), () -> "groups 0, 1, 2 and null: " + grouped.get(0));
  }

  /**
   * Each closure is looked into and translated once ({@code ScalaUdfs}): analysis, the optimizer's
   * null check, the call sites, counting, planning and EXPLAIN of every query that calls it share
   * that one recognition; a closure that does not translate has its reason recognized once too.
   */
  @Test
  void eachClosure_isRecognizedOnce_forEveryRuleAndQuery() {
    UserDefinedFunction scaled = Closures.scaledBy(3.0); // a new closure
    long before = ScalaUdfs.recognitions();
    onGpuAsSpark(() -> data().where(scaled.apply(functions.col("b")).gt(0))
        .select(scaled.apply(functions.col("a")).as("s"), scaled.apply(functions.col("b")).as("t")));
    List<List<Row>> sums = onAndOff(() -> data().agg(functions.sum(scaled.apply(functions.col("a"))),
        functions.max(scaled.apply(functions.col("c")))), TestSpark::assertAllRowsOnGpu);
    assertAggregatesEqual(sums.get(1), sums.get(0)); // the GPU's sum adds in its own order
    assertEquals(1, ScalaUdfs.recognitions() - before, "one recognition for the closure in both queries");
    UserDefinedFunction sampled = Closures.sampledFrom(7L); // a new closure that does not translate
    long refused = ScalaUdfs.recognitions();
    for (int i = 0; i < 2; i++) {
      Dataset<Row> d = data().select(sampled.apply(functions.col("ts")));
      d.collect();
      assertTrue(explain(d).contains("java.util.Random"), () -> explain(d));
    }
    assertEquals(1, ScalaUdfs.recognitions() - refused, "one recognition for the closure that stays Spark's");
  }

  @Test
  void aClosureThatDoesNotTranslate_staysSparks_andExplainSaysWhy() {
    List<List<Row>> both = onAndOff(() -> data().select(functions.col("ts"),
        Closures.sampleBucketUdf().apply(functions.col("ts")).as("bucket")), df -> {
      assertTrue(gpuNodes(df).isEmpty(), () -> explain(df));
      assertTrue(explain(df).contains("vkspark: udf runs on CPU because it does not translate to the GPU: "
          + "io.vkspark.spark.scalaudfs.Closures$.$anonfun$sampleBucket$1 line 85: allocates an object "
          + "(new java.util.Random) [new java/util/Random] (Spark runs it as without vkspark)\n"), () -> explain(df));
    }); // fallback=false in this session: still no error
    assertRowsEqual(both.get(1), both.get(0));
    for (Row r : both.get(0)) {
      assertEquals(new Random(r.getLong(0)).nextInt(100), r.getInt(1), r::toString);
    }
  }

  /**
   * A closure registered without input types (Spark's untyped {@code udf(f, dataType)}) gets
   * Spark's nulls: its bridge reads a null double as 0, where a kernel would return null. It stays
   * Spark's, with the reason; over an argument that cannot be null it runs on the GPU.
   */
  @Test
  void anUntypedClosure_overANullableColumn_staysSparks_andExplainSaysWhy() {
    spark().conf().set("spark.sql.legacy.allowUntypedScalaUDF", "true");
    @SuppressWarnings("deprecation")
    UserDefinedFunction untyped =
        functions.udf(Closures.affine(), DataTypes.DoubleType);
    Supplier<Dataset<Row>> q = () -> data().select(functions.col("id"), functions.col("a"),
        untyped.apply(functions.col("a")).as("affine"));
    Dataset<Row> df = q.get();
    List<Row> rows = df.collectAsList();
    assertTrue(gpuNodes(df).isEmpty(), () -> explain(df));
    assertTrue(explain(df).contains("vkspark: udf runs on CPU because it does not translate to the GPU: argument 1 may be "
        + "null and Spark passes it to io.vkspark.spark.scalaudfs.Closures$.$anonfun$affine$1, which reads a null double "
        + "as 0 (a closure registered without input types: with udf(f) or spark.udf.register(name, f) Spark returns null "
        + "for a null argument itself), outside VkGpuEval"), () -> explain(df));
    long nulls = 0;
    for (Row r : rows) {
      nulls += r.isNullAt(1) ? 1 : 0;
      assertEquals(r.isNullAt(1) ? 1.0 : r.getDouble(1) * 2 + 1, r.getDouble(2), r::toString);
    }
    assertEquals(300, nulls);
    // coalesce(a, 0.0) cannot be null: the closure never sees one
    Dataset<Row> noNulls = data().select(functions.col("id"), functions.col("a"),
        untyped.apply(functions.coalesce(functions.col("a"), functions.lit(0.0))).as("affine"));
    List<Row> gpu = noNulls.collectAsList();
    assertAllRowsOnGpu(noNulls);
    for (Row r : gpu) {
      assertEquals(r.isNullAt(1) ? 1.0 : r.getDouble(1) * 2 + 1, r.getDouble(2), r::toString);
    }
  }

  // ---- Scala idioms the translator learns on branch ir (issue 31): math.*, Option, case-class
  // fields and trait methods. Each runs on the GPU with Spark's rows once it is merged.

  /**
   * {@code math.sin} and kin are java.lang.Math's, within 1 ulp of the exact result, and vkspark's
   * device versions within 1 ulp of StrictMath: each row agrees within the translated UDF's own
   * tolerance ({@link io.vkspark.spark.api.Tolerance#DOUBLE_DEFAULT}), which verify mode also holds
   * it to (no mismatch).
   */
  @Test
  void mathClosures_haversineAndClampedLog_runOnTheGpu() {
    data().createOrReplaceTempView("scala_data");
    List<List<Row>> both = onAndOff(() -> spark().sql("SELECT id, scala_haversine_km(lat1, lon1, lat2, lon2) AS km, "
        + "scala_clamped_log(a) AS l FROM scala_data"), d -> {
      assertAllRowsOnGpu(d);
      assertTrue(explain(d).contains("scala_haversine_km(") && explain(d).contains("(translated from Scala)"),
          () -> explain(d));
      gpuNodes(d).forEach(n -> assertEquals(0L, metrics(n).get("verifyMismatches"), () -> metrics(n).toString()));
    });
    assertEquals(3000, both.get(0).size());
    for (int i = 0; i < 3000; i++) {
      Row cpu = both.get(1).get(i);
      Row gpu = both.get(0).get(i);
      assertEquals(cpu.get(0), gpu.get(0));
      for (int c = 1; c <= 2; c++) {
        boolean agree = cpu.isNullAt(c) ? gpu.isNullAt(c)
            : Tolerance.DOUBLE_DEFAULT.agrees(cpu.getDouble(c), gpu.getDouble(c), false);
        assertTrue(agree, cpu + " vs " + gpu);
      }
    }
  }

  /**
   * An {@code Option} result: {@code None} is a null row computed on the device (the null-aware
   * kernel writes the result's validity), and a null {@code i} is null as Spark's check makes it;
   * no batch is recomputed with the closure.
   */
  @Test
  void optionResult_noneIsNull_onTheGpu() {
    List<Row> rows = onGpuAsSpark(() -> data().selectExpr("id", "i", "scala_half_if_even(i) AS h"), "scala_half_if_even(");
    Dataset<Row> again = data().selectExpr("id", "i", "scala_half_if_even(i) AS h");
    again.collectAsList();
    for (var node : gpuNodes(again)) {
      Map<String, Long> m = metrics(node);
      assertTrue(m.get("gpuRows") >= 3000, m::toString);
      assertEquals(0L, m.get("recomputedBatches"), m::toString);
      assertEquals(0L, m.get("cpuRows"), m::toString);
      assertEquals(0L, m.getOrDefault("verifyMismatches", 0L), m::toString);
    }
    long none = 0;
    for (Row r : rows) {
      boolean even = !r.isNullAt(1) && r.getInt(1) % 2 == 0;
      none += !r.isNullAt(1) && !even ? 1 : 0;
      assertEquals(even ? (Object) (r.getInt(1) / 2) : null, r.get(2), r::toString);
    }
    assertTrue(none > 1000, "odd values give None: " + none);
  }

  /** A match without a default case throws scala.MatchError: the row is recomputed with the closure, as any throwing row. */
  @Test
  void matchOnLiterals_aMatchErrorRow_failsAsSparkDoes_andFilteredOut_runsOnTheGpu() {
    data().createOrReplaceTempView("scala_data");
    List<Row> rows = onGpuAsSpark(() -> spark().sql("SELECT id, i, scala_quarter(i) AS q FROM scala_data WHERE (i & 3) <> 3"),
        "scala_quarter(");
    for (Row r : rows) {
      assertEquals(Closures.quarter().apply(r.get(1)), r.get(2), r::toString);
    }
    Dataset<Row> all = spark().sql("SELECT id, scala_quarter(i) AS q FROM scala_data");
    Throwable vk = assertThrows(Exception.class, all::collectAsList);
    assertTrue(messages(vk).contains("scala.MatchError: 3 (of class java.lang.Integer)"), () -> messages(vk));
  }

  @Test
  void caseClassFields_andTraitMethods_runOnTheGpu() {
    UserDefinedFunction fee = Closures.feeOf(new Fee(0.015, 2.5));
    List<Row> rows = onGpuAsSpark(() -> data().select(functions.col("id"), functions.col("price"),
        fee.apply(functions.col("price")).as("fee"),
        functions.call_function("scala_retail_price", functions.col("price")).as("retail")), "(translated from Scala)",
        "vkspark: scala_retail_price("); // the object's call is in the GPU node, not left to Spark
    for (Row r : rows) {
      double p = r.getDouble(1);
      assertEquals(p * 0.015 > 2.5 ? p * 0.015 : 2.5, r.getDouble(2), r::toString);
      assertEquals(p * (1 + 0.25), r.getDouble(3), r::toString);
    }
  }

  /** One closure class over two fees, in one projection: two kernels, each with its fee's constants. */
  @Test
  void oneClosureOverTwoFees_isTwoKernels() {
    UserDefinedFunction small = Closures.feeOf(new Fee(0.015, 2.5));
    UserDefinedFunction large = Closures.feeOf(new Fee(0.1, 0.3));
    List<Row> rows = onGpuAsSpark(() -> data().select(functions.col("price"), small.apply(functions.col("price")).as("small"),
        large.apply(functions.col("price")).as("large")), "(translated from Scala)");
    for (Row r : rows) {
      double p = r.getDouble(0);
      assertEquals(p * 0.015 > 2.5 ? p * 0.015 : 2.5, r.getDouble(1), r::toString);
      assertEquals(p * 0.1 > 0.3 ? p * 0.1 : 0.3, r.getDouble(2), r::toString);
    }
  }
}
