package io.vkspark.examples;

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

/**
 * The one local SparkSession of this module's tests, with the plugin as a user sets it, the
 * validation layer on and the SQL session time zone UTC (surefire runs the JVM in
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

  /** {@code df} (executed) has a VkGpuEval node, every row of which ran on the GPU. */
  static Map<String, Long> assertAllOnGpu(Dataset<?> df, long rows) {
    assertFalse(SparkJobs.gpuNodes(df).isEmpty(), () -> SparkJobs.explain(df));
    Map<String, Long> m = SparkJobs.gpuMetrics(df);
    assertTrue(m.get("cpuRows") == 0 && m.get("gpuRows") == rows, () -> "all " + rows + " rows on the GPU: " + m);
    return m;
  }
}
