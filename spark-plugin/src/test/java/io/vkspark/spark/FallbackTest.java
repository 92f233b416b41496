package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** When a GPU UDF cannot run on the GPU: CPU fallback with the reason in EXPLAIN, or a clear error. */
final class FallbackTest {
  private static Dataset<Row> table() {
    return spark().read().parquet(parquet());
  }

  @AfterAll
  static void validation() {
    assertNoValidationErrors();
  }

  /** Root cause of a Spark failure (driver-side errors may be wrapped). */
  private static Throwable root(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c;
  }

  private static String messages(Throwable t) {
    StringBuilder s = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      s.append(c).append('\n');
    }
    return s.toString();
  }

  @Test
  void noDevice_runsOnCpuAndExplainSaysWhy() {
    SparkSession s = spark();
    VkConf good = VkConf.from(s.sparkContext().conf());
    ExecutorGpu.shutdown();
    ExecutorGpu.init(new VkConf(true, "no-such-gpu", good.batchRows(), good.concurrentGpuTasks(), good.shaderCacheDir(),
        true, good.functions(), false, good.transfers(), 0), "driver", null);
    try {
      assertTrue(ExecutorGpu.current().isEmpty());
      Dataset<Row> df = table().selectExpr("id", "gpu_hypot(a, b) AS h");
      String plan = explain(df);
      assertTrue(plan.contains("gpu_hypot(a#"), plan);
      assertTrue(plan.contains("on CPU because no Vulkan device could be opened (no Vulkan device matches 'no-such-gpu'"), plan);
      assertGpuEqualsCpu(() -> table().selectExpr("id", "gpu_hypot(a, b) AS h"));
      df.collectAsList();
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertEquals(20_000L, m.get("cpuRows"), m.toString());
      assertEquals(0L, m.get("gpuRows"), m.toString());

      s.conf().set(VkConf.FALLBACK, "false");
      try {
        Throwable e = assertThrows(Throwable.class, () -> table().selectExpr("id", "gpu_hypot(a, b)").collectAsList());
        String msg = messages(e);
        assertTrue(msg.contains("vkspark: GPU UDF 'gpu_hypot' cannot run on the GPU because no Vulkan device could be opened"), msg);
        assertTrue(msg.contains("Fix: "), msg);
      } finally {
        s.conf().unset(VkConf.FALLBACK);
      }
    } finally {
      ExecutorGpu.shutdown();
      ExecutorGpu.init(good, "driver", null);
    }
    assertTrue(ExecutorGpu.current().isPresent());
  }

  /** Registered with the wrong return type: Spark runs it, EXPLAIN says why. */
  public static final class WrongType implements UDF1<Double, Double>, GpuUdf {
    @Override
    public Double call(Double x) {
      return x == null ? null : x * 2;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("double").arg("x", "double").body("x * 2.0");
    }
  }

  @Test
  void registeredTypeDiffersFromKernel_leftToSparkWithReason() {
    spark().udf().register("wrong_type", new WrongType(), DataTypes.FloatType);
    Dataset<Row> df = table().selectExpr("id", "wrong_type(a)");
    String plan = explain(df);
    assertTrue(gpuNodes(df).isEmpty(), plan);
    assertTrue(plan.contains("vkspark: wrong_type runs on CPU because it is registered as returning float but its kernel returns double"), plan);
  }

  @Test
  void insideAnOperatorVksparkDoesNotPlan_reasonInExplain_errorWhenStrict() {
    Dataset<Row> df = table().orderBy(org.apache.spark.sql.functions.expr("gpu_hypot(a, b)")).select("id");
    String plan = explain(df);
    assertTrue(plan.contains("vkspark: gpu_hypot runs on CPU because it is inside Sort"), plan);
    spark().conf().set(VkConf.FALLBACK, "false");
    try {
      Throwable e = assertThrows(Throwable.class, () -> table().orderBy(org.apache.spark.sql.functions.expr("gpu_hypot(a, b)"))
          .select("id").collectAsList());
      assertTrue(messages(e).contains("GPU UDF 'gpu_hypot' cannot run on the GPU here: it is inside Sort, which vkspark "
          + "does not plan on the GPU"), messages(e));
      assertTrue(messages(e).contains("Fix: compute it in a SELECT or WHERE first"), messages(e));
    } finally {
      spark().conf().unset(VkConf.FALLBACK);
    }
  }

  @Test
  void disabled_leavesThePlanToSpark() {
    spark().conf().set(VkConf.ENABLED, "false");
    try {
      Dataset<Row> df = table().selectExpr("id", "gpu_hypot(a, b)");
      assertTrue(gpuNodes(df).isEmpty(), explain(df));
    } finally {
      spark().conf().unset(VkConf.ENABLED);
    }
  }

  @Test
  void wrongArgumentCountOrType_failsAtAnalysis() {
    Throwable count = assertThrows(Throwable.class, () -> table().selectExpr("id", "gpu_hypot(a)"));
    assertTrue(messages(count).contains("GPU UDF 'gpu_hypot' takes 2 arguments (a double, b double) -> double but was called with 1"),
        messages(count));
    Throwable registered = assertThrows(Throwable.class, () -> table().selectExpr("id", "hypot_gpu(a, b, a)"));
    assertTrue(messages(registered).contains("hypot_gpu"), messages(registered));
    Throwable type = assertThrows(Throwable.class, () -> table().selectExpr("id", "gpu_hypot(a, p)"));
    GpuException g = (GpuException) root(type);
    assertEquals(GpuException.Code.INVALID_ARGUMENT, g.code());
    assertTrue(g.getMessage().contains("argument 2 (b) of GPU UDF 'gpu_hypot' must be double but p is boolean"),
        g.getMessage());
    assertTrue(g.getMessage().contains("Fix: write CAST(p AS DOUBLE)"), g.getMessage());
  }

  /** A body with a typo on its third line. */
  public static final class Broken implements UDF1<Double, Double>, GpuUdf {
    @Override
    public Double call(Double x) {
      return x;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("double").arg("x", "double").body("""
          double y = x * 2.0;
          double z = y + 1.0;
          return z * undefined_name;
          """);
    }
  }

  @Test
  void bodyThatDoesNotCompile_failsTheQueryNamingUdfAndLine() {
    GpuUdfs.register(spark(), "broken_udf", new Broken());
    Throwable e = assertThrows(Throwable.class, () -> table().selectExpr("id", "broken_udf(a)").collectAsList());
    GpuException g = (GpuException) root(e);
    assertEquals(GpuException.Code.COMPILE, g.code());
    assertTrue(g.getMessage().contains("GPU UDF 'broken_udf' does not compile: line 3 of its body"), g.getMessage());
    assertTrue(g.getMessage().contains("undefined_name"), g.getMessage());
  }

  @Test
  void badConfiguration_saysWhatToWrite() {
    GpuException e = assertThrows(GpuException.class, () -> VkConf.from(k -> k.equals(VkConf.BATCH_ROWS) ? "lots" : null));
    assertEquals("spark.vkspark.batchRows is 'lots', not a positive whole number. Fix: set spark.vkspark.batchRows "
        + "to the number of rows per GPU batch, e.g. 1048576.", e.getMessage());
    spark().conf().set(VkConf.BATCH_ROWS, "-5");
    try {
      Throwable t = assertThrows(Throwable.class, () -> table().selectExpr("id", "gpu_hypot(a, b)").collectAsList());
      assertTrue(messages(t).contains("spark.vkspark.batchRows is '-5'"), messages(t));
    } finally {
      spark().conf().unset(VkConf.BATCH_ROWS);
    }
  }
}
