package io.vkspark.spark;

import io.vkspark.gpu.DeviceType;
import io.vkspark.gpu.vulkan.GpuDevices;
import io.vkspark.spark.executor.CpuVulkan;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.conf.Settings;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * GPU UDFs with no Java at all, as spark-sql, the Thrift server or PySpark define and call them:
 * only SQL strings ({@code vkspark_define}) and configuration ({@code spark.vkspark.glsl}). Results
 * are checked against values computed here in Java; every row must run on the GPU, or, through the
 * fallback, on the CPU Vulkan device (lavapipe), as the node's metrics say.
 */
@ExtendWith(TestSpark.Validated.class)
final class GlslUdfSqlTest {
  @AfterAll
  static void validation() {
    // Opened by the fallback and verify cases (a test run alone may never need it).
    CpuVulkan.current().ifPresent(cpu ->
        assertEquals(0, cpu.device().validationErrors(), () -> "validation errors: " + cpu.device().validationMessages()));
  }

  /** Whether this host has a CPU Vulkan device (lavapipe: always under `make test`; not on the H200 machine). */
  private static final boolean LAVAPIPE =
      GpuDevices.list().stream().anyMatch(d -> d.type() == DeviceType.CPU);

  private static String table() {
    return "parquet.`" + parquet() + "`";
  }

  /** {i * 3 - j} for every row of the test table with both set, keyed by id (Java int arithmetic wraps as GLSL's). */
  private static void assertMix(List<Row> rows) {
    assertEquals(20_000, rows.size());
    long nonNull = 0;
    for (Row r : rows) {
      Object expected = r.isNullAt(1) || r.isNullAt(2) ? null : r.getInt(1) * 3 - r.getInt(2);
      assertEquals(expected, r.isNullAt(3) ? null : r.get(3), () -> "row " + r);
      nonNull += expected == null ? 0 : 1;
    }
    assertTrue(nonNull > 15_000, "rows with a value: " + nonNull);
  }

  private static void assertPoly(List<Row> rows) {
    for (Row r : rows) {
      if (r.isNullAt(1)) {
        assertTrue(r.isNullAt(2), () -> "row " + r);
        continue;
      }
      double a = r.getDouble(1);
      double expected = 1.0 + a * (2.0 + a);
      double got = r.getDouble(2);
      // bit for bit: every operation of the body is NoContraction, so no driver fuses x * (2.0 + x) + 1.0
      assertEquals(Double.doubleToLongBits(expected), Double.doubleToLongBits(got), () -> "row " + r + ": Java " + expected);
      if (r.size() > 3) {
        assertEquals(Double.doubleToLongBits(r.getDouble(3)), Double.doubleToLongBits(got), () -> "row " + r + ": Spark's");
      }
    }
  }

  @Test
  void sqlOnly_defineAndRun_onGpu_andOnLavapipeAsFallback() {
    SparkSession spark = spark();
    List<Row> defined = spark.sql("SELECT vkspark_define('int glsl_mix(int i, int j) { return i * 3 - j; }')")
        .collectAsList();
    assertEquals("int glsl_mix(int i, int j)", defined.get(0).getString(0));
    assertEquals("double glsl_poly(double x)", spark.sql(
        "SELECT vkspark_define('double glsl_poly(double x)', '1.0 + x * (2.0 + x)')").collectAsList().get(0).getString(0));

    String query = "SELECT id, i, j, glsl_mix(i, j) AS m FROM " + table();
    Dataset<Row> df = spark.sql(query);
    assertMix(df.collectAsList());
    assertAllRowsOnGpu(df);
    Dataset<Row> poly = spark.sql("SELECT id, a, glsl_poly(a), 1.0D + a * (2.0D + a) FROM " + table());
    assertPoly(poly.collectAsList());
    assertAllRowsOnGpu(poly);
    spark.conf().set(Settings.FAST_MATH.key(), "true");
    try {
      String plan = spark.sql("SELECT id, a, glsl_poly(a) FROM " + table()).queryExecution().executedPlan().toString();
      assertTrue(plan.contains("(fastMath: a * b + c may be one fused multiply-add"), plan);
    } finally {
      spark.conf().unset(Settings.FAST_MATH.key());
    }

    // call() of a GLSL-only UDF (Spark evaluates a local relation row by row on the driver): one row at a time on
    // this JVM's own device, the GPU where there is one: a GPU host needs no lavapipe for it.
    long ownBefore = CpuVulkan.ownDeviceRows();
    long lavapipeBefore = CpuVulkan.rows();
    List<Row> local = spark.sql("SELECT glsl_mix(i, j), glsl_poly(x) FROM VALUES (1, 2, 0.5D), (7, NULL, 3.0D), "
        + "(2147483647, 0, -1.0D) AS t(i, j, x) ORDER BY 1").collectAsList();
    assertEquals("[[null,16.0], [1,2.25], [2147483645,0.0]]", local.toString());
    assertEquals(5, CpuVulkan.ownDeviceRows() - ownBefore); // the row with a null argument never reaches Vulkan
    assertEquals(0, CpuVulkan.rows() - lavapipeBefore);

    if (!LAVAPIPE) {
      // No usable GPU and no CPU Vulkan device (a GPU host without Mesa): call() says how to get one.
      withoutDevice(() -> {
        Exception e = assertThrows(Exception.class, () -> spark.sql(
            "SELECT glsl_mix(i, j) FROM VALUES (1, 2) AS t(i, j)").collectAsList());
        assertTrue(messages(e).contains("Fix: install Mesa's lavapipe (mesa-vulkan-drivers, libvulkan1)"), () -> messages(e));
      });
      return;
    }
    // Verify mode: call() of a GLSL-only UDF is its SPIR-V on lavapipe, so sampled GPU rows are compared with that.
    spark.conf().set(Settings.VERIFY.key(), "strict");
    spark.conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "0.01");
    try {
      long before = CpuVulkan.rows();
      Dataset<Row> verified = spark.sql(query);
      assertMix(verified.collectAsList());
      assertAllRowsOnGpu(verified);
      Map<String, Long> m = metrics(gpuNodes(verified).get(0));
      assertTrue(m.get("verifyRows") >= 100, m::toString);
      assertEquals(0L, m.get("verifyMismatches"), m::toString);
      assertTrue(CpuVulkan.rows() - before >= m.get("verifyRows") * 8 / 10, () -> "rows on lavapipe " + m); // nulls skip it

      // A GPU host without a CPU Vulkan device (the H200): the GLSL-only rows are not checked, counted, and the
      // query (a grouping by the UDF) runs as it does without verify, instead of failing with NO_DEVICE.
      CpuVulkan.hideForTests(true);
      try {
        Dataset<Row> grouped = spark.sql("SELECT glsl_mix(i, j) AS m, count(*) AS n FROM " + table()
            + " GROUP BY glsl_mix(i, j)");
        long rows = grouped.collectAsList().stream().mapToLong(r -> r.getLong(1)).sum();
        assertEquals(20_000, rows);
        Map<String, Long> hidden = metrics(gpuNodes(grouped).get(0));
        assertTrue(hidden.get("verifySkippedRows") >= 100, hidden::toString);
        // only rows with a null argument are still checked (a null result needs no call())
        assertTrue(hidden.get("verifyRows") < hidden.get("verifySkippedRows") / 2, hidden::toString);
        assertEquals(0L, hidden.get("verifyMismatches"), hidden::toString);
      } finally {
        CpuVulkan.hideForTests(false);
      }
    } finally {
      spark.conf().unset(Settings.VERIFY.key());
      spark.conf().unset(Settings.VERIFY_SAMPLE_RATE.key());
    }

    // No usable GPU: the same SPIR-V runs on the CPU Vulkan device, counted by cpuVulkanRows.
    withFallback(() -> withoutDevice(() -> {
      long before = CpuVulkan.rows();
      Dataset<Row> cpu = spark.sql(query);
      assertTrue(explain(cpu).contains("(GLSL-only: its SPIR-V runs on the CPU Vulkan device)"), () -> explain(cpu));
      assertMix(cpu.collectAsList());
      List<VkGpuEvalExec> nodes = gpuNodes(cpu);
      assertFalse(nodes.isEmpty(), () -> explain(cpu));
      long vulkanRows = 0;
      for (VkGpuEvalExec n : nodes) {
        Map<String, Long> m = metrics(n);
        assertEquals(0L, m.get("gpuRows"), m::toString);
        assertEquals(m.get("cpuRows"), m.get("cpuVulkanRows"), m::toString);
        vulkanRows += m.get("cpuVulkanRows");
      }
      assertEquals(20_000, vulkanRows);
      assertEquals(20_000, CpuVulkan.rows() - before);
    }));

    // Without a usable GPU, call() runs on lavapipe.
    withoutDevice(() -> {
      long before = CpuVulkan.rows();
      assertEquals("[[1]]", spark.sql("SELECT glsl_mix(i, j) FROM VALUES (1, 2) AS t(i, j)").collectAsList().toString());
      assertEquals(1, CpuVulkan.rows() - before);
    });
  }

  /**
   * Calls Spark evaluates itself, outside any GPU node (a join condition over both sides, a grouping
   * by the result; with spark.vkspark.fallback=true, as EXPLAIN asks), run on the executor's own
   * device: its GPU on a GPU host, with or without lavapipe.
   */
  @Test
  void glslOnly_inJoinConditionAndGroupBy_runOnTheOwnDevice() {
    withFallback(GlslUdfSqlTest::joinAndGroupBy);
  }

  private static void joinAndGroupBy() {
    SparkSession spark = spark();
    spark.sql("SELECT vkspark_define('int glsl_gap(int i, int j) { return i * 3 - j; }')").collectAsList();
    String device = ExecutorDevice.current().orElseThrow().device().info().summary();
    long lavapipeBefore = CpuVulkan.rows();

    long ownBefore = CpuVulkan.ownDeviceRows();
    Dataset<Row> join = spark.sql("SELECT a.x, b.y FROM (SELECT CAST(id AS INT) x FROM range(20)) a "
        + "JOIN (SELECT CAST(id AS INT) y FROM range(60)) b ON glsl_gap(a.x, b.y) = 0 ORDER BY a.x");
    List<Row> joined = join.collectAsList();
    assertEquals(20, joined.size(), () -> explain(join));
    for (int x = 0; x < 20; x++) {
      assertEquals(x, joined.get(x).getInt(0));
      assertEquals(3 * x, joined.get(x).getInt(1));
    }
    long joinCalls = CpuVulkan.ownDeviceRows() - ownBefore;
    assertTrue(joinCalls >= 20 * 60, () -> "join condition rows on " + device + ": " + joinCalls + "\n" + explain(join));

    ownBefore = CpuVulkan.ownDeviceRows();
    Dataset<Row> grouped = spark.sql("SELECT glsl_gap(x, x) AS g, count(*) AS n "
        + "FROM (SELECT CAST(id % 10 AS INT) x FROM range(1000)) GROUP BY glsl_gap(x, x) ORDER BY g");
    List<Row> groups = grouped.collectAsList();
    assertEquals(10, groups.size(), () -> explain(grouped));
    for (int x = 0; x < 10; x++) {
      assertEquals(2 * x, groups.get(x).getInt(0));
      assertEquals(100L, groups.get(x).getLong(1));
    }
    long onNodes = gpuNodes(grouped).stream().mapToLong(n -> metrics(n).get("gpuRows")).sum();
    long groupCalls = CpuVulkan.ownDeviceRows() - ownBefore;
    assertTrue(onNodes + groupCalls >= 1000, () -> "group rows on " + device + ": " + groupCalls + " by call(), "
        + onNodes + " in GPU nodes\n" + explain(grouped));
    assertEquals(0, CpuVulkan.rows() - lavapipeBefore, "nothing ran on the separate CPU Vulkan device");
  }

  @Test
  void configFile_functionsInEverySession_onGpu() {
    for (SparkSession s : List.of(spark(), spark().newSession())) {
      Dataset<Row> df = s.sql("SELECT id, i, j, glsl_file_mix(i, j) AS m, glsl_file_widen(i, l) AS w, l FROM " + table());
      List<Row> rows = df.collectAsList();
      assertMix(rows);
      for (Row r : rows) {
        Object w = r.isNullAt(1) || r.isNullAt(5) ? null : r.getInt(1) + r.getLong(5);
        assertEquals(w, r.isNullAt(4) ? null : r.get(4), () -> "row " + r);
      }
      assertAllRowsOnGpu(df);
    }
  }

  /**
   * What PySpark runs: {@code spark.udf.registerJavaFunction(name, className, DoubleType())} is
   * {@code registerJava}, and {@code spark.sql(text, args={...})} binds a definition read from a file
   * as a parameter (no quoting of the GLSL in the SQL string).
   */
  @Test
  void pysparkCalls_registerJavaFunction_andParameterizedDefine_onGpu() {
    SparkSession spark = spark();
    spark.udf().registerJava("hypot_py", TestUdfs.GpuHypot.class.getName(), DataTypes.DoubleType);
    assertGpuEqualsCpu(() -> spark.sql("SELECT id, hypot_py(a, b) FROM " + table()));

    String source = "// read from a file in Python: open('udfs.glsl').read()\n"
        + "int glsl_param_mix(int i, int j) {\n  return i * 3 - j;\n}\n";
    assertEquals("int glsl_param_mix(int i, int j)",
        spark.sql("SELECT vkspark_define(:src)", Map.<String, Object>of("src", source)).collectAsList().get(0).getString(0));
    Dataset<Row> df = spark.sql("SELECT id, i, j, glsl_param_mix(i, j) FROM " + table());
    assertMix(df.collectAsList());
    assertAllRowsOnGpu(df);
  }

  /** README's "PySpark and SQL" snippets as written: the GLSL file block and the SQL lines. */
  @Test
  void readmeSnippets_runAsWritten_onGpu() throws Exception {
    List<String> readme = Files.readAllLines(Path.of("..", "README.md"));
    int from = readme.indexOf("// udfs.glsl: comments and blank lines between functions are fine");
    assertTrue(from > 0, "README has the udfs.glsl block");
    String file = String.join("\n", readme.subList(from, readme.subList(from, readme.size()).indexOf("```") + from));
    SparkSession spark = spark();
    assertEquals("double poly(double x); bigint days_between(date a, date b)",
        spark.sql("SELECT vkspark_define(:src)", Map.<String, Object>of("src", file)).collectAsList().get(0).getString(0));
    spark.read().parquet(parquet()).selectExpr("id", "a", "d").createOrReplaceTempView("t");
    for (String sql : List.of(
        "  SELECT vkspark_define('double poly(double x) { return 1.0 + x * (2.0 + x); }');",
        "  SELECT vkspark_define('double poly(double x)', '1.0 + x * (2.0 + x)');  -- signature, body",
        "  SELECT id, poly(a) FROM t;")) {
      assertTrue(readme.contains(sql), () -> "README.md no longer has the line this test runs: " + sql);
      Dataset<Row> df = spark.sql(sql.substring(0, sql.lastIndexOf(';')));
      List<Row> rows = df.collectAsList();
      if (sql.contains("FROM t")) {
        Map<Long, Double> a = new HashMap<>();
        spark.sql("SELECT id, a FROM t").collectAsList().forEach(r -> a.put(r.getLong(0), r.isNullAt(1) ? null : r.getDouble(1)));
        assertPoly(rows.stream().map(r -> RowFactory.create(r.get(0), a.get(r.getLong(0)), r.get(1))).toList());
        assertAllRowsOnGpu(df);
      } else {
        assertEquals("double poly(double x)", rows.get(0).getString(0));
      }
    }
    Dataset<Row> days = spark.sql("SELECT id, d, days_between(d, date_add(d, CAST(id % 7 AS INT))) FROM t");
    for (Row r : days.collectAsList()) {
      assertEquals(r.isNullAt(1) ? null : r.getLong(0) % 7, r.isNullAt(2) ? null : r.get(2), () -> "row " + r);
    }
    assertAllRowsOnGpu(days);
  }

  @Test
  void defineErrors_areAnalysisErrorsNamingTheUdfAndLine() {
    SparkSession spark = spark();
    FallbackTest.assertAnalysisError(assertThrows(Exception.class,
            () -> spark.sql("SELECT vkspark_define('dbl bad_sig(double x)', 'x')")),
        "VKSPARK_GPU_UDF_INVALID_SIGNATURE", "42601", "vkspark_define line 1", "GPU UDF 'bad_sig'", "dbl", "Fix:");
    FallbackTest.assertAnalysisError(assertThrows(Exception.class,
            () -> spark.sql("SELECT vkspark_define('double bad_body(double x) {\n  double y = x;\n  return y +* 2.0;\n}')")),
        "VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE", "42601", "'bad_body'", "line 3 of its body", "Fix:");
    FallbackTest.assertAnalysisError(assertThrows(Exception.class,
            () -> spark.sql("SELECT vkspark_define('double sqrt(double x) { return x; }')")),
        "VKSPARK_GPU_UDF_SHADOWS_BUILTIN", "42723", "'sqrt'", "Fix:");
    FallbackTest.assertAnalysisError(assertThrows(Exception.class,
            () -> spark.sql("SELECT vkspark_define('int twice_d(int i) { return i; } int twice_d(int j) { return j; }')")),
        "VKSPARK_GPU_UDF_INVALID_SIGNATURE", "42601", "'twice_d'", "defined twice", "Fix:");
    assertThrows(Exception.class, () -> spark.sql("SELECT bad_body(1.0D)"), "a failed definition registers nothing");
  }
}
