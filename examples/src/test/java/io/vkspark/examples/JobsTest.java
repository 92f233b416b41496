package io.vkspark.examples;

import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.api.GpuUdfs;

import static io.vkspark.examples.ExampleSpark.captureOut;
import static io.vkspark.examples.ExampleSpark.spark;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.spark.api.GpuFunction;
import io.vkspark.spark.api.GpuKernel;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF5;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The spark-submit jobs' main() methods end to end, in-process on a small N: they reuse the
 * tests' session (and so must not stop it), print what they promise and return normally.
 */
@Tag("defaultLineOnly")
final class JobsTest {
  /** The start of the rows-on-CPU metric's label (the cpuRows* causes add up to it). */
  static final String CPU_ROWS = "rows on CPU (";

  private static String path;
  private static String generated;

  @BeforeAll
  static void generate() throws Exception {
    spark();
    path = ExampleSpark.tempDir("vkspark-options").resolve("options.parquet").toString();
    generated = captureOut(() -> GenerateOptions.main(new String[] {path, "20000", "3"}));
  }

  @Test
  void generateOptions_writesTheDocumentedColumns() {
    assertTrue(generated.contains("[generate] done"), generated);
    Dataset<Row> options = spark().read().parquet(path);
    assertEquals(20_000, options.count());
    assertEquals(3, options.inputFiles().length);
    assertEquals(List.of("id", "trade_date", "expiry", "s", "k", "t", "r", "v", "price"), List.of(options.columns()));
    long missing = options.where("price IS NULL").count();
    assertTrue(missing > 50 && missing < 500, "about 1% of prices missing: " + missing);
    assertEquals(0, options.where("s <= 0D OR k <= 0D OR t <= 0D OR expiry <= trade_date "
        + "OR abs(t - datediff(expiry, trade_date) / 365D) > 1e-12D").count());
  }

  @Test
  void optionsJob_main() throws Exception {
    String out = captureOut(() -> OptionsJob.main(new String[] {path}));
    // The device the local executor opened, by name (not "none" or "not opened").
    String device = io.vkspark.spark.executor.ExecutorDevice.current().orElseThrow().device().info().name();
    assertTrue(out.contains("[vkspark] device: " + device + " ("), out);
    assertTrue(out.contains("VkGpuEval [black_scholes("), "the plan shows the GPU node: " + out);
    assertTrue(out.contains("implied_volatility(price#") && out.contains(" on GPU"), out);
    // Every node's metrics: rows on the GPU (none zero), none on the CPU.
    List<String> gpu = out.lines().map(String::strip).filter(l -> l.startsWith("rows on GPU: ")).toList();
    List<String> cpu = out.lines().map(String::strip).filter(l -> l.startsWith(CPU_ROWS)).toList();
    assertFalse(gpu.isEmpty(), "metrics: " + out);
    assertTrue(gpu.stream().noneMatch(l -> l.equals("rows on GPU: 0")), "metrics: " + out);
    assertEquals(gpu.size(), cpu.size(), out);
    assertTrue(cpu.stream().allMatch(l -> l.endsWith("): 0")), "metrics: " + out);
    assertTrue(out.contains("[options] checks passed"), out);
    assertEquals(5, out.lines().filter(l -> l.startsWith("[options] check ") && l.contains(" OK ")).count(), out);
    assertFalse(spark().sparkContext().isStopped(), "the job must not stop a session it did not create");
  }

  @Test
  void optionsJob_checks_catchAKernelThatIsOffByOnePartInAMillion() {
    GpuKernel right = new BlackScholes().kernel();
    String wrongBody = right.body().replace("return s * vk_norm_cdf(d1)", "return 1.000001lf * s * vk_norm_cdf(d1)");
    assertFalse(wrongBody.equals(right.body()));
    BlackScholes cpu = new BlackScholes();
    GpuFunction.define("black_scholes").returns("double")
        .arg("s", "double").arg("k", "double").arg("t", "double").arg("r", "double").arg("v", "double")
        .body(wrongBody)
        .cpu((UDF5<Double, Double, Double, Double, Double, Double>) cpu::call)
        .register(spark());
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    try {
      spark().read().parquet(path).createOrReplaceTempView("options");
      boolean ok = OptionsJob.check(spark(), new PrintStream(buf, true, StandardCharsets.UTF_8));
      String out = buf.toString(StandardCharsets.UTF_8);
      assertFalse(ok, out);
      assertTrue(out.contains("black_scholes GPU vs Java call()") && out.contains("FAIL"), out);
      assertTrue(out.contains("[options] checks FAILED"), out);
      assertTrue(out.lines().anyMatch(l -> l.contains("days_to_expiry") && l.contains(" OK ")), out);
    } finally {
      SparkJobs.registerAll(spark());
    }
  }

  @Test
  void demo_main() throws Exception {
    String out = captureOut(() -> Demo.main(new String[] {"60000"}));
    assertTrue(out.contains("[vkspark] device: " + io.vkspark.spark.executor.ExecutorDevice.current().orElseThrow().device().info().name()
        + " ("), out);
    assertTrue(out.contains("[demo]   GPU  ") && out.contains("[demo]   CPU  "), out);
    assertTrue(out.contains("rows on GPU: 60,000"), out);
    assertTrue(out.lines().anyMatch(l -> l.contains(CPU_ROWS) && l.endsWith("): 0")), out);
    assertTrue(out.contains("[demo] OK"), out);
    assertFalse(spark().sparkContext().isStopped());
    assertEquals("true", spark().conf().get("spark.vkspark.enabled", "true"), "the demo restores the setting");
  }

  @Test
  void jobs_rejectMissingArguments_withoutExiting() {
    assertThrows(IllegalArgumentException.class, () -> OptionsJob.main(new String[0]));
    assertThrows(IllegalArgumentException.class, () -> GenerateOptions.main(new String[0]));
  }

  /**
   * The README's code snippets, as written (the lines below must stand in README.md word for word):
   * the SQL of "Using GPU UDFs", the registration and call forms, and GpuFunction.define. Each
   * result is checked against the UDF's own call() on the CPU, and every row ran on the GPU.
   */
  @Test
  void readmeSnippets_runAsWritten_onTheGpu() throws Exception {
    String readme = java.nio.file.Files.readString(java.nio.file.Path.of("..", "README.md"));
    List<String> lines = List.of(
        "SELECT id, black_scholes(s, k, t, r, v) AS price FROM options WHERE in_the_money(s, k)",
        "spark.udf().register(\"black_scholes\", new BlackScholes(), DataTypes.DoubleType);",
        "GpuUdfs.register(spark, \"black_scholes\", new BlackScholes());      // same, type from the kernel",
        "spark.sql(\"SELECT black_scholes(s, k, t, r, v) * 100 FROM options\");",
        "df.select(functions.call_function(\"black_scholes\", col(\"s\"), col(\"k\"), col(\"t\"), col(\"r\"), col(\"v\")));",
        "GpuFunction.define(\"saxpy\")",
        "    .returns(\"float\").arg(\"x\", \"float\").arg(\"y\", \"float\")",
        "    .body(\"2.5 * x + y\")",
        "    .cpu((UDF2<Float, Float, Float>) (x, y) -> x == null || y == null ? null : 2.5f * x + y)",
        "    .register(spark);");
    for (String l : lines) {
      assertTrue(readme.lines().anyMatch(r -> r.equals(l)), "README.md no longer has the line this test runs: " + l);
    }
    org.apache.spark.sql.SparkSession spark = spark();
    Dataset<Row> df = spark.read().parquet(path).where("s IS NOT NULL");
    df.createOrReplaceTempView("options");
    BlackScholes bs = new BlackScholes();
    InTheMoney itm = new InTheMoney();
    spark.udf().register("in_the_money", itm, org.apache.spark.sql.types.DataTypes.BooleanType);

    spark.udf().register("black_scholes", new BlackScholes(), org.apache.spark.sql.types.DataTypes.DoubleType);
    Dataset<Row> sql = spark.sql("SELECT id, black_scholes(s, k, t, r, v) AS price FROM options WHERE in_the_money(s, k)");
    List<Row> priced = sql.collectAsList();
    ExampleSpark.assertAllOnGpu(sql);
    java.util.Map<Long, Row> byId = new java.util.HashMap<>();
    df.collectAsList().forEach(r -> byId.put(r.getLong(r.fieldIndex("id")), r));
    long itmRows = byId.values().stream().filter(r -> itm.call(r.getAs("s"), r.getAs("k"))).count();
    assertEquals(itmRows, priced.size(), "WHERE in_the_money(s, k) keeps the rows call() keeps");
    for (Row p : priced) {
      Row in = byId.get(p.getLong(0));
      double want = bs.call(in.getAs("s"), in.getAs("k"), in.getAs("t"), in.getAs("r"), in.getAs("v"));
      assertEquals(want, p.getDouble(1), 1e-9 * Math.max(in.<Double>getAs("s"), in.<Double>getAs("k")), "id " + p.getLong(0));
    }

    io.vkspark.spark.api.GpuUdfs.register(spark, "black_scholes", new BlackScholes());      // same, type from the kernel
    Dataset<Row> scaled = spark.sql("SELECT black_scholes(s, k, t, r, v) * 100 FROM options");
    Dataset<Row> called = df.select(org.apache.spark.sql.functions.call_function("black_scholes",
        org.apache.spark.sql.functions.col("s"), org.apache.spark.sql.functions.col("k"),
        org.apache.spark.sql.functions.col("t"), org.apache.spark.sql.functions.col("r"),
        org.apache.spark.sql.functions.col("v")));
    List<Row> a = scaled.collectAsList();
    List<Row> b = called.collectAsList();
    ExampleSpark.assertAllOnGpu(scaled);
    ExampleSpark.assertAllOnGpu(called);
    assertEquals(a.size(), b.size());
    for (int i = 0; i < a.size(); i++) {
      assertEquals(a.get(i).getDouble(0), b.get(i).getDouble(0) * 100, 1e-9 * Math.abs(a.get(i).getDouble(0)) + 1e-12);
    }

    GpuFunction.define("saxpy")
        .returns("float").arg("x", "float").arg("y", "float")
        .body("2.5 * x + y")
        .cpu((org.apache.spark.sql.api.java.UDF2<Float, Float, Float>) (x, y) -> x == null || y == null ? null : 2.5f * x + y)
        .register(spark);
    Dataset<Row> saxpy = spark.sql("SELECT CAST(s AS FLOAT) AS x, CAST(k AS FLOAT) AS y, saxpy(CAST(s AS FLOAT), CAST(k AS FLOAT)) FROM options");
    List<Row> sx = saxpy.collectAsList();
    ExampleSpark.assertAllOnGpu(saxpy);
    assertFalse(sx.isEmpty());
    for (Row r : sx) {
      float x = r.getFloat(0);
      float y = r.getFloat(1);
      // a fused multiply-add rounds once where Java rounds twice: within the terms' magnitude
      assertEquals(2.5f * x + y, r.getFloat(2), 2 * Math.ulp(Math.abs(2.5f * x) + Math.abs(y)), "saxpy(" + x + ", " + y + ")");
    }
  }
}
