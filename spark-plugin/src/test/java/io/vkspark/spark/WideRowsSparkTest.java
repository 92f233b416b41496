package io.vkspark.spark;

import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.plan.VkExplain;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.exec.VkRowToColumnarExec;
import io.vkspark.spark.conf.Settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * Wide rows never take the JVM down (issue 21): {@link WideRowsJob} runs in a child JVM with a
 * 1 GiB heap, where Spark's own row-to-column step under the GPU node asked for one vector of
 * 620 MB for 60 rows of 10 MiB and the out-of-memory error killed the JVM. Now the JVM exits 0,
 * the 10 MiB rows run on the GPU in batches of at most {@code spark.vkspark.batchBytes}, the row of
 * 140 MB runs {@code call()} on the CPU (fallback) or fails with SIZE and a Fix (without), each
 * query twice with the same outcome, and results equal Spark's without vkspark.
 */
final class WideRowsSparkTest {

  @Test
  void wideStringRows_smallHeap_jvmSurvives_splitOnGpu_widestOnCpuOrSize_sameTwice() throws Exception {
    String out = runJob("-Xmx1g");
    String tail = out.length() > 8000 ? out.substring(out.length() - 8000) : out;
    Map<String, String> r = results(out);
    // Spark alone (vkspark off: no vkspark node ran)
    long narrowBytes = (long) WideRowsJob.ROWS * WideRowsJob.WIDTH;
    String off = " gpuRows=0 cpuRows=0 batches=0 wideRows=0";
    String narrowRows = "[[" + WideRowsJob.ROWS + "," + narrowBytes + "]]";
    String wideRows = "[[1," + WideRowsJob.WIDE + "]]";
    assertEquals(narrowRows + off, r.get("narrowSpark"), tail);
    assertEquals(wideRows + off, r.get("wideSpark"), tail);
    // 10 MiB rows: every row on the GPU, in batches of at most 128 MiB (12 rows), not one batch
    int perBatch = (int) (Settings.BATCH_BYTES.defaultValue() / (WideRowsJob.WIDTH + 64));
    int batches = (WideRowsJob.ROWS + perBatch - 1) / perBatch;
    String narrow = narrowRows + " gpuRows=" + WideRowsJob.ROWS + " cpuRows=0 batches=" + batches + " wideRows=0";
    assertEquals(narrow, r.get("narrow1"), tail);
    assertEquals(narrow, r.get("narrow2"), tail);
    // 140 MB: over the bound, a batch of its own, call() on the CPU; without fallback SIZE with a Fix
    String wide = wideRows + " gpuRows=0 cpuRows=1 batches=1 wideRows=1";
    assertEquals(wide, r.get("wide1"), tail);
    assertEquals(wide, r.get("wide2"), tail);
    String strict = r.get("strict1");
    assertTrue(strict.startsWith("error SIZE ") && strict.contains("Fix: set spark.vkspark.fallback=true")
        && strict.contains("a row holds " + WideRowsJob.WIDE + " bytes of arguments of GPU UDF(s) slen"), tail);
    assertEquals(strict, r.get("strict2"), tail);
  }

  /**
   * Issue 33: the 140 MB row of a constant folded into the plan, three times with vkspark and then
   * three times without, in one 3 GiB JVM. Spark keeps each query's plan text; the node used to
   * render the literal argument in full (its name, EXPLAIN, the UI's plan info), one more copy per
   * query, and the third run ran out of heap. Now vkspark needs no more heap than Spark alone: all
   * six runs succeed, the row's call runs with {@code call()} (wider than a GPU batch).
   */
  @Test
  void foldedWideRow_threeRuns_smallHeap_asSparkAlone() throws Exception {
    String out = runJob("-Xmx3g", "repeat");
    String tail = out.length() > 8000 ? out.substring(out.length() - 8000) : out;
    Map<String, String> r = results(out);
    for (int run = 1; run <= 6; run++) {
      String counts = run <= 3 ? " gpuRows=0 cpuRows=1 batches=1 wideRows=1" : " gpuRows=0 cpuRows=0 batches=0 wideRows=0";
      assertEquals("[[" + (WideRowsJob.WIDE + 1) + "]]" + counts, r.get("folded" + run), tail);
    }
  }

  /** Runs {@link WideRowsJob} in a child JVM with heap option {@code args[0]} and job arguments {@code args[1..]}; its output. */
  private static String runJob(String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("java.home") + "/bin/java");
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--") || a.startsWith("-XX:+IgnoreUnrecognized") || a.startsWith("-Dio.netty"))
        .toList());
    cmd.addAll(List.of(args[0], "-XX:ErrorFile=/dev/stderr", "-cp", System.getProperty("java.class.path"),
        WideRowsJob.class.getName(), Path.of("target", "shader-cache").toString()));
    cmd.addAll(List.of(args).subList(1, args.length));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "the job finished");
    String tail = out.length() > 8000 ? out.substring(out.length() - 8000) : out;
    assertEquals(0, p.exitValue(), "exit code of the wide-row job:\n" + tail);
    assertFalse(out.contains("OutOfMemoryError"), tail);
    return out;
  }

  /**
   * The bound is a per-session setting and splits by measured bytes: with
   * {@code batchBytes=1m}, 40 rows of 100 KB strings arrive on the GPU in 4 batches of 10 (Spark's
   * own conversion would make one), which the coalescer does not join again, and a row of 2 MB is a batch of its own whose call runs with
   * {@code call()}; without fallback it fails with SIZE, naming the setting, and the next query runs.
   */
  @Test
  void batchBytes_perSession_splitsByMeasuredBytes_widerRowOnCpuOrSize() {
    SparkSession s = TestSpark.spark();
    GpuUdfs.register(s, "slen", new WideRowsJob.Slen());
    s.conf().set(Settings.BATCH_BYTES.key(), "1m");
    try {
      String narrow = WideRowsJob.query(40, 100_000);
      List<List<Row>> both = TestSpark.gpuAndCpu(() -> s.sql(narrow));
      assertEquals(List.of(RowFactory.create(40L, 4_000_000L)), both.get(0));
      assertEquals(both.get(1), both.get(0));
      Dataset<Row> again = s.sql(narrow);
      again.collectAsList();
      assertEquals(List.of(4L, 0L), toColumnar(again), TestSpark.explain(again));
      // each 1 MB batch is half the bound or more: evaluated as it is, never coalesced with the next
      assertEquals(4L, TestSpark.metrics(TestSpark.gpuNodes(again).get(0)).get("numOutputBatches"));

      String wide = WideRowsJob.query(1, 2_000_000);
      TestSpark.withFallback(() -> {
        Dataset<Row> df = s.sql(wide);
        assertEquals(List.of(RowFactory.create(1L, 2_000_000L)), df.collectAsList());
        assertEquals(List.of(1L, 1L), toColumnar(df));
        VkGpuEvalExec node = TestSpark.gpuNodes(df).get(0);
        assertEquals(0L, TestSpark.metrics(node).get("gpuRows"));
        assertEquals(1L, TestSpark.metrics(node).get("cpuRows"));
      });
      Exception e = assertThrows(Exception.class, () -> s.sql(wide).collectAsList());
      String m = TestSpark.messages(e);
      assertTrue(m.contains("a row holds 2000000 bytes of arguments of GPU UDF(s) slen, more than the 1048576 bytes")
          && m.contains("Fix: set spark.vkspark.fallback=true"), m);
      TestSpark.assertGpuEqualsCpu(() -> s.sql(narrow));
    } finally {
      s.conf().unset(Settings.BATCH_BYTES.key());
    }
  }

  /** The VkRowToColumnar nodes' batches and rows wider than the bound. */
  private static List<Long> toColumnar(Dataset<Row> df) {
    long[] out = new long[2];
    VkExplain.visit(df.queryExecution().executedPlan(), p -> {
      if (p instanceof VkRowToColumnarExec c) {
        out[0] += c.metricsMap().get("numOutputBatches").value();
        out[1] += c.metricsMap().get("wideRows").value();
      }
    });
    return List.of(out[0], out[1]);
  }

  /** The job's {@code name=value} lines. */
  private static Map<String, String> results(String out) {
    Map<String, String> r = new LinkedHashMap<>();
    out.lines().filter(l -> l.matches("^(narrow|wide|strict|folded)\\w*=.*")).forEach(l -> {
      int eq = l.indexOf('=');
      r.put(l.substring(0, eq), l.substring(eq + 1));
    });
    return r;
  }
}
