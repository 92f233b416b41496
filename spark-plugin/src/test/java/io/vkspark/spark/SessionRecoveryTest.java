package io.vkspark.spark;

import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.conf.Settings;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import java.util.Map;
import org.apache.spark.SparkContext$;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.junit.jupiter.api.Test;
import scala.Option;

/**
 * A bad {@code spark.vkspark.*} setting fails the session that has it, clearly, and poisons nothing:
 * the same JVM then builds a corrected session whose GPU UDFs run on the GPU. (The shared session is
 * stopped first: one SparkContext per JVM; later tests build it again.)
 */
final class SessionRecoveryTest {
  /** A GPU UDF whose SQL name would replace Spark's abs. */
  public static final class ShadowsAbs implements UDF1<Double, Double>, GpuUdf {
    @Override
    public Double call(Double x) {
      return x == null ? null : Math.abs(x);
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("double").arg("x", "double").body("abs(x)");
    }

    @Override
    public String name() {
      return "abs";
    }
  }

  /** Building a session with {@code key=value} on top of the good settings fails; returns the error. */
  private static Throwable failsToStart(String key, String value) {
    Throwable t = assertThrows(Throwable.class, () -> builder().config(key, value).getOrCreate(), key + "=" + value);
    assertTrue(SparkContext$.MODULE$.getActive().isEmpty(), "the failed SparkContext stopped: " + messages(t));
    // Spark 4 leaves no session behind; Spark 3.5 may keep the failed one as active/default, but stopped.
    for (Option<SparkSession> left : List.of(SparkSession.getActiveSession(), SparkSession.getDefaultSession())) {
      assertTrue(left.isEmpty() || left.get().sparkContext().isStopped(), "a session left running: " + messages(t));
    }
    SparkSession.clearActiveSession();
    SparkSession.clearDefaultSession();
    return t;
  }

  @Test
  void badValue_badFunctionsClasses_thenTheCorrectedBuilder_runsOnTheGpu() {
    parquet(); // written by the shared session before it stops
    TestSpark.stop();

    String m = messages(failsToStart(Settings.BATCH_ROWS.key(), "lots"));
    assertTrue(m.contains("spark.vkspark.batchRows is 'lots', not a positive whole number. Fix: set spark.vkspark.batchRows"), m);

    m = messages(failsToStart(Settings.FALLBACK.key(), "maybe"));
    assertTrue(m.contains("spark.vkspark.fallback is 'maybe', not a boolean. Fix: set spark.vkspark.fallback to true or false."), m);

    m = messages(failsToStart(Settings.FUNCTIONS.key(), FUNCTIONS + ",com.example.NoSuchUdf"));
    assertTrue(m.contains("spark.vkspark.functions lists 'com.example.NoSuchUdf', which is not a class on the classpath. "
        + "Fix: correct the name"), m);

    m = messages(failsToStart(Settings.FUNCTIONS.key(), String.class.getName()));
    assertTrue(m.contains("spark.vkspark.functions lists 'java.lang.String', which is not a GpuUdf (nor a plain Spark Java UDF). Fix: "), m);

    FallbackTest.assertAnalysisError(failsToStart(Settings.FUNCTIONS.key(), ShadowsAbs.class.getName()),
        "VKSPARK_GPU_UDF_SHADOWS_BUILTIN", "42723", "would replace Spark's built-in function abs", "Fix: override name()");

    FallbackTest.assertAnalysisError(failsToStart(Settings.FUNCTIONS.key(), FallbackTest.Broken.class.getName()),
        "VKSPARK_GPU_UDF_BODY_DOES_NOT_COMPILE", "42601", "GPU UDF 'broken' does not compile: line 3 of its body", "Fix: ");

    // The corrected builder, same JVM: the session starts and its GPU UDFs run on the GPU.
    SparkSession s = spark();
    assertEquals("false", s.conf().get(Settings.FALLBACK.key()));
    assertTrue(ExecutorDevice.current().isPresent(), "the new executor opened its device");
    Dataset<Row> df = s.read().parquet(parquet()).selectExpr("id", "int_poly(i, j) AS p", "long_mix(l, m) AS q");
    assertEquals(20_000, df.collectAsList().size());
    assertAllRowsOnGpu(df);
    Map<String, Long> metrics = metrics(gpuNodes(df).get(0));
    assertEquals(20_000L, metrics.get("gpuRows"), metrics.toString());
    assertGpuEqualsCpu(() -> s.read().parquet(parquet()).selectExpr("id", "int_poly(i, j) AS p", "long_mix(l, m) AS q"));
  }
}
