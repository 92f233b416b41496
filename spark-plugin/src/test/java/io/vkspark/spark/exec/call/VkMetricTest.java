package io.vkspark.spark.exec.call;

import io.vkspark.spark.conf.MetricsLevel;

import io.vkspark.spark.exec.call.VkMetric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The metric list itself, and docs/METRICS.md generated from it. */
class VkMetricTest {

  /** docs/METRICS.md holds exactly the table the enum renders: change the enum, paste the new table. */
  @Test
  void docsMetricsMd_containsExactlyTheEnumsTable() throws IOException {
    Path docs = Files.exists(Path.of("docs", "METRICS.md")) ? Path.of("docs", "METRICS.md") : Path.of(System.getProperty("vkspark.source.root", ".."), "docs", "METRICS.md");
    String text = Files.readString(docs).replace("\r\n", "\n");
    String table = VkMetric.markdownTable();
    assertTrue(text.contains(table), "docs/METRICS.md must contain this table (generated from VkMetric):\n" + table);
    long tableLines = text.lines().filter(l -> l.startsWith("|")).count();
    assertEquals(table.lines().count(), tableLines, "docs/METRICS.md has table rows that VkMetric does not render");
    assertTrue(Files.readString(docs.resolveSibling("../README.md").normalize()).contains("docs/METRICS.md"),
        "README links docs/METRICS.md");
  }

  @Test
  void keysAreUnique_andEssentialIsASubsetOfDebugInEnumOrder() {
    assertEquals(VkMetric.values().length, Arrays.stream(VkMetric.values()).map(VkMetric::key).distinct().count());
    List<VkMetric> essential = VkMetric.at(MetricsLevel.ESSENTIAL);
    assertEquals(List.of(VkMetric.values()), VkMetric.at(MetricsLevel.DEBUG));
    assertEquals(Arrays.stream(VkMetric.values()).filter(m -> m.level() == MetricsLevel.ESSENTIAL).toList(), essential);
    assertTrue(essential.contains(VkMetric.GPU_ROWS) && essential.contains(VkMetric.CPU_ROWS),
        "assertAllRowsOnGpu needs gpuRows and cpuRows at the default level");
    assertTrue(essential.size() < VkMetric.values().length, "debug shows more than essential");
  }
}
