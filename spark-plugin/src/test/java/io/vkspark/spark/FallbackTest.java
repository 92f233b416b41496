package io.vkspark.spark;

import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.shim.SparkShim;
import io.vkspark.spark.api.VkAnalysisException;
import io.vkspark.spark.conf.VkConf;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.spark.conf.Settings;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.ErrorMessageFormat;
import org.apache.spark.SparkThrowableHelper;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * When a GPU UDF cannot run on the GPU: CPU fallback with the reason in EXPLAIN, or a clear error;
 * and GPU UDF mistakes found at analysis, reported as Spark's AnalysisException. These tests run
 * with {@code spark.vkspark.fallback=true} (the shared session has it off) and switch it off where
 * they test the error.
 */
@ExtendWith(TestSpark.Validated.class)
final class FallbackTest {
  @BeforeAll
  static void fallbackOn() {
    spark().conf().set(Settings.FALLBACK.key(), "true");
  }

  @AfterAll
  static void fallbackOff() {
    spark().conf().set(Settings.FALLBACK.key(), "false");
  }

  /** Runs {@code body} with fallback off, then on again. */
  private static void strict(Runnable body) {
    spark().conf().set(Settings.FALLBACK.key(), "false");
    try {
      body.run();
    } finally {
      spark().conf().set(Settings.FALLBACK.key(), "true");
    }
  }

  /**
   * {@code t} is an AnalysisException (or wraps one) with vkspark's {@code condition} (the message's
   * prefix and parameter), {@code sqlState}, and a message with a Fix, under Spark's condition
   * {@link VkAnalysisException#SPARK_CONDITION}, whose template in Spark's own table gives back the
   * message from the parameters, as a Spark Connect client rebuilds it.
   */
  static AnalysisException assertAnalysisError(Throwable t, String condition, String sqlState, String... says) {
    Throwable c = t;
    while (c != null && !(c instanceof AnalysisException)) {
      c = c.getCause();
    }
    assertNotNull(c, () -> "not an AnalysisException: " + messages(t));
    AnalysisException a = (AnalysisException) c;
    assertEquals(VkAnalysisException.SPARK_CONDITION, SparkShim.condition(a), a::getMessage);
    assertEquals(VkAnalysisException.SPARK_CONDITION, a.getErrorClass(), a::getMessage);
    assertEquals(condition, a.getMessageParameters().get("condition"), a::getMessage);
    assertTrue(a.getMessage().startsWith("[" + condition + "] "), a::getMessage);
    String rendered = SparkThrowableHelper.getMessage(a.getErrorClass(), a.getMessageParameters());
    assertTrue(a.getMessage().startsWith(rendered), () -> "Spark's table renders the message (before the SQL position): "
        + rendered + " vs " + a.getMessage());
    assertEquals(sqlState, a.getSqlState(), a::getMessage);
    for (String s : says) {
      assertTrue(a.getMessage().contains(s), () -> "'" + s + "' in: " + a.getMessage());
    }
    return a;
  }

  /** Root cause of a Spark failure (driver-side errors may be wrapped). */
  private static Throwable root(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c;
  }

  @Test
  void noDevice_runsOnCpuAndExplainSaysWhy() {
    withoutDevice(() -> {
      Dataset<Row> df = table().selectExpr("id", "gpu_hypot(a, b) AS h");
      String plan = explain(df);
      assertTrue(plan.contains("gpu_hypot(a#"), plan);
      assertTrue(plan.contains("on CPU because no Vulkan device could be opened (no Vulkan device matches 'no-such-gpu'"), plan);
      assertVksparkEqualsCpu(() -> table().selectExpr("id", "gpu_hypot(a, b) AS h"), ran -> { });
      df.collectAsList();
      Map<String, Long> m = metrics(gpuNodes(df).get(0));
      assertEquals(20_000L, m.get("cpuRows"), m.toString());
      assertEquals(0L, m.get("gpuRows"), m.toString());

      strict(() -> {
        Throwable e = assertThrows(Throwable.class, () -> table().selectExpr("id", "gpu_hypot(a, b)").collectAsList());
        String msg = messages(e);
        assertTrue(msg.contains("vkspark: GPU UDF 'gpu_hypot' cannot run on the GPU because no Vulkan device could be opened"), msg);
        assertTrue(msg.contains("Fix: "), msg);
      });
    });
    assertTrue(ExecutorDevice.current().isPresent());
  }

  /**
   * Every fixed-width result type the CPU path writes (int, bigint, float, double, boolean, date,
   * timestamp), with nulls in every argument, computed by the node's CPU path (no device) and equal
   * to Spark's own plan calling {@code call()}.
   */
  @Test
  void noDevice_everyResultType_onCpuEqualsCall() {
    String[] select = {"id", "int_poly(i, j) AS ip", "long_mix(l, m) AS lm", "float_saxpy(f, g) AS fs",
        "gpu_hypot(a, b) AS h", "xor_gpu(p, q) AS x", "is_positive(a) AS pos", "add_days(d, i) AS ad",
        "add_hours(t, i) AS ah"};
    withoutDevice(() -> {
      assertVksparkEqualsCpu(() -> table().selectExpr(select), ran -> { });
      Dataset<Row> df = table().selectExpr(select);
      df.collectAsList();
      long cpu = 0;
      for (var node : gpuNodes(df)) {
        Map<String, Long> m = metrics(node);
        assertEquals(0L, m.get("gpuRows"), m.toString());
        cpu += m.get("cpuRows");
      }
      assertTrue(cpu >= 20_000L, "cpuRows " + cpu);
    });
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
    strict(() -> {
      Throwable e = assertThrows(Throwable.class, () -> table().orderBy(org.apache.spark.sql.functions.expr("gpu_hypot(a, b)"))
          .select("id").collectAsList());
      assertTrue(messages(e).contains("GPU UDF 'gpu_hypot' cannot run on the GPU because it is inside Sort, which vkspark "
          + "does not plan on the GPU"), messages(e));
      assertTrue(messages(e).contains("Fix: compute it in a SELECT or WHERE first"), messages(e));
    });
  }

  @Test
  void disabled_leavesThePlanToSpark() {
    spark().conf().set(Settings.ENABLED.key(), "false");
    try {
      Dataset<Row> df = table().selectExpr("id", "gpu_hypot(a, b)");
      String plan = explain(df);
      assertTrue(gpuNodes(df).isEmpty(), plan);
      assertTrue(plan.contains("vkspark: gpu_hypot runs on CPU because spark.vkspark.enabled is false"), plan);
      strict(() -> assertEquals(20_000, table().selectExpr("id", "gpu_hypot(a, b)").collectAsList().size()));
    } finally {
      spark().conf().unset(Settings.ENABLED.key());
    }
  }

  @Test
  void wrongArgumentCount_isAnAnalysisException() {
    Throwable count = assertThrows(Throwable.class, () -> table().selectExpr("id", "gpu_hypot(a)"));
    AnalysisException a = assertAnalysisError(count, "VKSPARK_GPU_UDF_WRONG_NUM_ARGS", "42605",
        "GPU UDF 'gpu_hypot' takes 2 arguments (a double, b double) -> double but was called with 1", "Fix: call gpu_hypot with 2");
    assertEquals("gpu_hypot", a.getMessageParameters().get("udf"));
    assertInstanceOf(GpuException.class, a.getCause());
    // Registered with spark.udf().register: Spark checks the count itself, with its own condition.
    Throwable registered = assertThrows(Throwable.class, () -> table().selectExpr("id", "hypot_gpu(a, b, a)"));
    AnalysisException r = assertInstanceOf(AnalysisException.class, registered);
    assertTrue(SparkShim.condition(r).startsWith("WRONG_NUM_ARGS"), SparkShim.condition(r));
    assertTrue(r.getMessage().contains("hypot_gpu"), r.getMessage());
  }

  @Test
  void wrongArgumentType_isAnAnalysisException_withTheCastToWrite() {
    for (String query : new String[] {"gpu_hypot(a, p)", "hypot_gpu(a, p)"}) {
      Throwable type = assertThrows(Throwable.class, () -> table().selectExpr("id", query));
      String name = query.substring(0, query.indexOf('('));
      AnalysisException a = assertAnalysisError(type, "VKSPARK_GPU_UDF_ARGUMENT_TYPE", "42K09",
          "argument 2 (b) of GPU UDF '" + name + "' must be double but p is boolean", "Fix: write CAST(p AS DOUBLE)");
      assertEquals(GpuException.Code.INVALID_ARGUMENT, assertInstanceOf(GpuException.class, a.getCause()).code());
    }
    // Spark's JSON error formats: the condition is in Spark's table, the SQLSTATE is vkspark's.
    AnalysisException a = assertAnalysisError(assertThrows(Throwable.class, () -> table().selectExpr("gpu_hypot(a, p)")),
        "VKSPARK_GPU_UDF_ARGUMENT_TYPE", "42K09");
    var formats = new ArrayList<>(List.of(ErrorMessageFormat.PRETTY(),
        ErrorMessageFormat.MINIMAL()));
    if (SparkShim.STANDARD_JSON_ERRORS) {
      formats.add(ErrorMessageFormat.STANDARD());
    }
    for (var format : formats) {
      String json = SparkThrowableHelper.getMessage(a, format);
      assertTrue(json.contains("gpu_hypot"), json);
    }
    assertFalse(a.isInternalError());
  }

  /** No CAST turns an array, a struct or a map into a double: the Fix says what to pass instead. */
  @Test
  void wrongArgumentType_arrayStructOrMap_fixPassesAnElement() {
    String[][] cases = {
        {"gpu_hypot(a, array(a))", "Fix: pass one element, e.g. array(a)[0], or declare the argument as array<double>"},
        {"gpu_hypot(a, array(p))", "Fix: pass one element, e.g. CAST(array(p)[0] AS DOUBLE)."},
        {"gpu_hypot(a, named_struct('x', a))", "Fix: pass one field, e.g. named_struct('x', a).x, or pass a double column."},
        {"gpu_hypot(a, map('k', a))", "Fix: pass one value, e.g. element_at(map('k', a), key), or pass a double column."}};
    for (String[] c : cases) {
      Throwable t = assertThrows(Throwable.class, () -> table().selectExpr("id", c[0]));
      Throwable a = t;
      while (a != null && !(a instanceof AnalysisException)) {
        a = a.getCause();
      }
      String message = assertInstanceOf(AnalysisException.class, a, () -> messages(t)).getMessage();
      assertTrue(message.contains("argument 2 (b) of GPU UDF 'gpu_hypot' must be double"), message);
      assertTrue(message.contains(c[1]), () -> "'" + c[1] + "' in: " + message);
      assertFalse(message.contains("CAST(" + c[0].substring(c[0].indexOf(", ") + 2, c[0].length() - 1) + " AS"), message);
    }
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
  void bodyThatDoesNotCompile_failsRegistrationAndAnalysis_namingUdfAndLine() {
    Throwable atRegistration = assertThrows(Throwable.class, () -> GpuUdfs.register(spark(), "broken_udf", new Broken()));
    AnalysisException a = assertAnalysisError(atRegistration, "VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE", "42601",
        "GPU UDF 'broken_udf' does not compile: line 3 of its body", "undefined_name", "Fix: ");
    assertEquals(GpuException.Code.COMPILE, ((GpuException) root(a)).code());
    assertThrows(AnalysisException.class, () -> spark().sql("SELECT broken_udf(1D)"), "nothing was registered");

    // Registered as a plain Java UDF, the body is compiled when a query using it is analyzed.
    spark().udf().register("broken_plain", new Broken(), DataTypes.DoubleType);
    Throwable atAnalysis = assertThrows(Throwable.class, () -> table().selectExpr("id", "broken_plain(a)"));
    assertAnalysisError(atAnalysis, "VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE", "42601",
        "GPU UDF 'broken_plain' does not compile: line 3 of its body", "Fix: ");
  }

  /** Declares two kernel arguments but is a UDF1. */
  public static final class WrongInterface implements UDF1<Double, Double>, GpuUdf {
    @Override
    public Double call(Double x) {
      return x;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("double").arg("x", "double").arg("y", "double").body("x + y");
    }
  }

  @Test
  void udfClassOfTheWrongArity_isAnAnalysisException() {
    Throwable e = assertThrows(Throwable.class, () -> GpuUdfs.register(spark(), "wrong_interface", new WrongInterface()));
    assertAnalysisError(e, "VKSPARK_GPU_UDF_INVALID_IMPLEMENTATION", "38000",
        "GPU UDF 'wrong_interface' (" + WrongInterface.class.getName() + ") declares 2 kernel arguments but does not implement UDF2",
        "Fix: implement org.apache.spark.sql.api.java.UDF2");
  }

  @Test
  void badConfiguration_saysWhatToWrite() {
    GpuException e = assertThrows(GpuException.class,
        () -> VkConf.from(k -> k.equals(Settings.BATCH_ROWS.key()) ? "lots" : null));
    assertEquals("spark.vkspark.batchRows is 'lots', not a positive whole number. Fix: set spark.vkspark.batchRows "
        + "to the number of rows per GPU batch, e.g. 1048576.", e.getMessage());
    spark().conf().set(Settings.BATCH_ROWS.key(), "-5");
    try {
      Throwable t = assertThrows(Throwable.class, () -> table().selectExpr("id", "gpu_hypot(a, b)").collectAsList());
      assertTrue(messages(t).contains("spark.vkspark.batchRows is '-5'"), messages(t));
    } finally {
      spark().conf().unset(Settings.BATCH_ROWS.key());
    }
  }
}
