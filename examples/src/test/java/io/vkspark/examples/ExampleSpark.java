package io.vkspark.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.spark.VkSparkPlugin;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;

/**
 * The one local SparkSession of this module's tests, with the plugin as a user sets it, the
 * validation layer on, fallback off (a UDF that cannot run on the GPU fails instead of passing on the
 * CPU) and the SQL session time zone UTC (surefire runs the JVM in
 * America/Los_Angeles, so the date/timestamp UDFs are tested off UTC too). The jobs' main()
 * methods reuse it through {@code SparkSession.builder().getOrCreate()}.
 */
final class ExampleSpark {
  private static SparkSession spark;

  private ExampleSpark() {}

  static synchronized SparkSession spark() {
    if (spark == null) {
      spark = SparkSession.builder()
          .master("local[2]")
          .appName("vkspark-examples-tests")
          .config("spark.plugins", VkSparkPlugin.class.getName())
          .config("spark.vkspark.validation", "true")
          .config("spark.vkspark.fallback", "false")
          .config("spark.vkspark.placement", "gpu") // every test proves its rows ran on the GPU
          .config("spark.vkspark.shaderCacheDir", Path.of("target", "shader-cache").toAbsolutePath().toString())
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "4")
          .config("spark.sql.session.timeZone", "UTC")
          .config("spark.driver.host", "127.0.0.1")
          .config("spark.driver.bindAddress", "127.0.0.1")
          .getOrCreate();
      SparkJobs.registerAll(spark);
    }
    return spark;
  }

  static Path tempDir(String prefix) {
    try {
      return Files.createTempDirectory(prefix);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Runs {@code body} with System.out captured (and still printed); returns what it printed. */
  static String captureOut(ThrowingRunnable body) throws Exception {
    PrintStream old = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream tee = new PrintStream(new java.io.OutputStream() {
      @Override
      public void write(int b) {
        buf.write(b);
        old.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) {
        buf.write(b, off, len);
        old.write(b, off, len);
      }
    }, true, StandardCharsets.UTF_8);
    System.setOut(tee);
    try {
      body.run();
    } finally {
      tee.flush();
      System.setOut(old);
    }
    return buf.toString(StandardCharsets.UTF_8);
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  /**
   * {@code df} (executed) has VkGpuEval nodes, each of which ran rows on the GPU and none on the
   * CPU (inside adaptive query stages too).
   */
  static void assertAllOnGpu(Dataset<?> df) {
    assertFalse(SparkJobs.gpuNodes(df).isEmpty(), () -> "no VkGpuEval node: " + SparkJobs.explain(df));
    for (SparkPlan node : SparkJobs.gpuNodes(df)) {
      Map<String, Long> m = SparkJobs.metrics(node);
      assertTrue(m.get("gpuRows") > 0, () -> "no rows on the GPU in " + node.simpleString(200) + ": " + m);
      assertEquals(0L, m.get("cpuRows"), () -> "rows on the CPU in " + node.simpleString(200) + ": " + m);
    }
  }

  /** {@link #assertAllOnGpu(Dataset)}, and the nodes ran {@code rows} rows on the GPU in all. */
  static Map<String, Long> assertAllOnGpu(Dataset<?> df, long rows) {
    assertAllOnGpu(df);
    Map<String, Long> m = SparkJobs.gpuMetrics(df);
    assertEquals(rows, m.get("gpuRows"), () -> "all " + rows + " rows on the GPU: " + m);
    return m;
  }
}
