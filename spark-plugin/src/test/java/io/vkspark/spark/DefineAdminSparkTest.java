package io.vkspark.spark;

import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.spark.glsl.GlslDefinitions;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.conf.Settings;

import static io.vkspark.spark.FallbackTest.assertAnalysisError;
import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * vkspark_define under a shared server's rules: the static switch and limits (set in the
 * SparkContext's conf, as a server's start would, and restored after), the kernel-timeout cap, the
 * compile budget and size limit, reserved and application-wide names, NUL characters.
 */
final class DefineAdminSparkTest {
  /** The live SparkContext conf: what the server was started with (static settings are read from it). */
  private static SparkConf server() {
    return spark().sparkContext().conf();
  }

  /** Runs {@code body} with the static setting {@code key=value} in the SparkContext's conf, then removes it. */
  private static void withServer(String key, String value, Runnable body) {
    server().set(key, value);
    try {
      body.run();
    } finally {
      server().remove(key);
    }
  }

  /** A body of {@code terms} additions: about 4 characters and (on lavapipe's shaderc) 1 ms of compiling each. */
  private static String chain(int terms) {
    return "x" + " + x".repeat(terms - 1);
  }

  @Test
  void defineSwitchOff_isAnAnalysisErrorNamingTheSetting_andASessionSetCannotFlipIt() {
    SparkSession spark = spark();
    withServer(Settings.DEFINE_ENABLED.key(), "false", () -> {
      assertAnalysisError(assertThrows(Exception.class,
              () -> spark.sql("SELECT vkspark_define('int off_f(int x) { return x; }')")),
          "VKSPARK_GPU_UDF_UNSUPPORTED", "0A000", "vkspark_define is turned off", "spark.vkspark.define.enabled",
          "Fix:", "started with spark.vkspark.define.enabled=true");
      spark.sql("SET spark.vkspark.define.enabled=true");
      try {
        assertEquals("true", spark.conf().get(Settings.DEFINE_ENABLED.key()), "the SET itself is accepted");
        assertAnalysisError(assertThrows(Exception.class,
                () -> spark.sql("SELECT vkspark_define('int off_f(int x) { return x; }')")),
            "VKSPARK_GPU_UDF_UNSUPPORTED", "0A000", "spark.vkspark.define.enabled", "changes nothing: it is static", "Fix:");
        assertThrows(Exception.class, () -> spark.sql("SELECT off_f(1)"), "nothing was defined");
      } finally {
        spark.conf().unset(Settings.DEFINE_ENABLED.key());
      }
    });
    assertEquals("int on_f(int x)",
        spark.sql("SELECT vkspark_define('int on_f(int x) { return x; }')").collectAsList().get(0).getString(0));
  }

  @Test
  void kernelTimeout_aboveTheStaticMax_isRefused_belowItApplies_unsetIsClamped() {
    SparkSession spark = spark();
    String query = "SELECT id, glsl_file_mix(i, j) FROM parquet.`" + parquet() + "`";
    withServer(Settings.KERNEL_TIMEOUT_MAX.key(), "2s", () -> {
      assertEquals(Duration.ofSeconds(2), VkConf.of(spark).kernelTimeout(), "the 60s default, within the max");
      for (String tooLong : List.of("10min", "0")) {
        spark.conf().set(Settings.KERNEL_TIMEOUT.key(), tooLong);
        try {
          Exception e = assertThrows(Exception.class, () -> spark.sql(query).collectAsList(), tooLong);
          assertTrue(messages(e).contains("spark.vkspark.kernelTimeout is '" + tooLong + "'"), () -> messages(e));
          assertTrue(messages(e).contains("above spark.vkspark.kernelTimeout.max (2s)"), () -> messages(e));
          assertTrue(messages(e).contains("Fix: set spark.vkspark.kernelTimeout to 2s or less"), () -> messages(e));
        } finally {
          spark.conf().unset(Settings.KERNEL_TIMEOUT.key());
        }
      }
      spark.conf().set(Settings.KERNEL_TIMEOUT.key(), "1500ms");
      try {
        assertEquals(Duration.ofMillis(1500), VkConf.of(spark).kernelTimeout());
        Dataset<Row> df = spark.sql(query);
        assertEquals(20_000, df.collectAsList().size());
        assertAllRowsOnGpu(df);
      } finally {
        spark.conf().unset(Settings.KERNEL_TIMEOUT.key());
      }
      spark.conf().set(Settings.KERNEL_TIMEOUT_MAX.key(), "10min");
      try {
        assertEquals(Duration.ofSeconds(2), VkConf.of(spark).kernelTimeout(), "a session cannot raise the max");
      } finally {
        spark.conf().unset(Settings.KERNEL_TIMEOUT_MAX.key());
      }
    });
    assertEquals(Settings.KERNEL_TIMEOUT.defaultValue(), VkConf.of(spark).kernelTimeout());
  }

  @Test
  void hugeDefinition_isRefusedFast_bySize() {
    String huge = "int huge_f(int x) { return " + chain(60_000) + "; }"; // 240 KB: minutes of shaderc
    long t0 = System.nanoTime();
    assertAnalysisError(assertThrows(Exception.class,
            () -> spark().sql("SELECT vkspark_define(:src)", Map.<String, Object>of("src", huge))),
        "VKSPARK_GPU_UDF_UNSUPPORTED", "0A000", "vkspark_define was given " + huge.length() + " characters",
        "more than it takes (" + GlslDefinitions.MAX_DEFINE_CHARS + ")", "Fix:");
    assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "refused before any compile");
  }

  @Test
  void slowDefinition_failsWithinTheCompileBudget() {
    String slow = "int slow_f(int x) { return " + chain(6_000) + "; }"; // 24 KB, several seconds of shaderc
    assertTrue(slow.length() < GlslDefinitions.MAX_DEFINE_CHARS);
    withServer(Settings.COMPILE_TIMEOUT.key(), "300ms", () -> {
      long t0 = System.nanoTime();
      Exception e = assertThrows(Exception.class,
          () -> spark().sql("SELECT vkspark_define(:src)", Map.<String, Object>of("src", slow)));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertAnalysisError(e, "VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE", "42601", "GPU UDF 'slow_f'",
          "did not compile within its budget", "Fix:", "spark.vkspark.compileTimeout");
      assertTrue(ms < 300 + 5_000, "failed after " + ms + " ms");
      assertThrows(Exception.class, () -> spark().sql("SELECT slow_f(1)"), "nothing was defined");
    });
  }

  /** A cancelled statement (Thrift and Connect interrupt its thread) stops waiting for shaderc at once. */
  @Test
  void interruptedDefinition_returnsPromptly_withoutABudget() throws Exception {
    String slow = "int slow_g(int x) { return " + chain(7_000) + "; }";
    withServer(Settings.COMPILE_TIMEOUT.key(), "0", () -> {
      AtomicReference<Throwable> thrown = new AtomicReference<>();
      Thread statement = new Thread(() -> {
        try {
          spark().sql("SELECT vkspark_define(:src)", Map.<String, Object>of("src", slow)).collectAsList();
        } catch (Throwable t) {
          thrown.set(t);
        }
      }, "sql-statement");
      try {
        long drained = System.nanoTime() + 180_000_000_000L; // compiles another test abandoned end by themselves
        while (ColumnKernel.compilesInFlight() > 0 && System.nanoTime() < drained) {
          Thread.sleep(20);
        }
        statement.start();
        long until = System.nanoTime() + 60_000_000_000L;
        while (ColumnKernel.compilesInFlight() == 0 && System.nanoTime() < until) {
          Thread.sleep(5);
        }
        Thread.sleep(300);
        assertTrue(statement.isAlive(), "shaderc was still compiling");
        statement.interrupt();
        statement.join(3_000);
        assertFalse(statement.isAlive(), "the interrupted statement still waits for shaderc");
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
      assertTrue(messages(thrown.get()).contains("was cancelled: the waiting thread was interrupted"),
          () -> messages(thrown.get()));
    });
    assertThrows(Exception.class, () -> spark().sql("SELECT slow_g(1)"), "nothing was defined");
  }

  @Test
  void reservedNames_andNulCharacters_areRefused() {
    SparkSession spark = spark();
    assertAnalysisError(assertThrows(Exception.class,
            () -> spark.sql("SELECT vkspark_define('int vkspark_define(int x) { return x; }')")),
        "VKSPARK_GPU_UDF_SHADOWS_BUILTIN", "42723", "GPU UDF 'vkspark_define'", "reserved", "Fix:");
    assertAnalysisError(assertThrows(Exception.class,
            () -> spark.sql("SELECT vkspark_define('int VKSPARK_other(int x)', 'x')")),
        "VKSPARK_GPU_UDF_SHADOWS_BUILTIN", "42723", "'VKSPARK_other'", "reserved", "Fix:");
    assertAnalysisError(assertThrows(Exception.class, () -> spark.sql("SELECT vkspark_define(:src)",
            Map.<String, Object>of("src", "int nul_f(int x) {\n  return x; // \u0000\n}"))),
        "VKSPARK_GPU_UDF_INVALID_SIGNATURE", "42601", "vkspark_define line 2", "NUL character", "Fix: remove");
    assertAnalysisError(assertThrows(Exception.class, () -> spark.sql("SELECT vkspark_define(:sig, :body)",
            Map.<String, Object>of("sig", "int nul_g(int x)", "body", "x\u0000"))),
        "VKSPARK_GPU_UDF_INVALID_SIGNATURE", "42601", "NUL character", "Fix: remove");
    assertThrows(Exception.class, () -> spark.sql("SELECT nul_f(1)"), "nothing was defined");
  }

  /** Names from spark.vkspark.glsl and spark.vkspark.functions are refused, and keep their own bodies. */
  @Test
  void redefiningAnApplicationWideName_isRefused_namingItsSource() {
    SparkSession spark = spark();
    assertAnalysisError(assertThrows(Exception.class,
            () -> spark.sql("SELECT vkspark_define('int glsl_file_mix(int i, int j) { return 0; }')")),
        "VKSPARK_GPU_UDF_SHADOWS_BUILTIN", "42723", "GPU UDF 'glsl_file_mix' is an application-wide function, from "
            + "spark.vkspark.glsl file " + GLSL_FILE + " line 3", "Fix:");
    String cls = new TestUdfs.IntPoly().name();
    assertAnalysisError(assertThrows(Exception.class,
            () -> spark.sql("SELECT vkspark_define('int " + cls.toUpperCase(Locale.ROOT) + "(int a, int b)', '0')")),
        "VKSPARK_GPU_UDF_SHADOWS_BUILTIN", "42723", "GPU UDF '" + cls.toUpperCase(Locale.ROOT) + "' is an application-wide function, from class "
            + TestUdfs.IntPoly.class.getName() + " in spark.vkspark.functions", "Fix:");
    // a name the session defined itself is still replaced
    spark.sql("SELECT vkspark_define('int own_f(int x) { return x + 1; }')").collectAsList();
    spark.sql("SELECT vkspark_define('int own_f(int x) { return x - 1; }')").collectAsList();
    Dataset<Row> df = spark.sql("SELECT i, j, glsl_file_mix(i, j), " + cls + "(i, j), own_f(i) FROM parquet.`"
        + parquet() + "` WHERE i IS NOT NULL AND j IS NOT NULL");
    List<Row> rows = df.collectAsList();
    assertTrue(rows.size() > 15_000, "rows: " + rows.size());
    for (Row r : rows) {
      int i = r.getInt(0);
      int j = r.getInt(1);
      assertEquals(List.of(i * 3 - j, i * 3 + j, i - 1), List.of(r.getInt(2), r.getInt(3), r.getInt(4)), () -> "row " + r);
    }
    assertAllRowsOnGpu(df);
  }
}
