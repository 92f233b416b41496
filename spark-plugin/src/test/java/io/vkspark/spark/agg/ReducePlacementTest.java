package io.vkspark.spark.agg;

import io.vkspark.spark.conf.Settings;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.reduce.DeviceExpr;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.spark.TestSpark;
import io.vkspark.spark.exec.DeviceReduction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * The one decision "reduce on the GPU or fold on the host": how it reads the
 * {@code fuseAggregates*} settings, and what an executor refuses before any device is asked. The
 * driver's decision over real plans is {@code FusedAggregateSparkTest}'s.
 */
final class ReducePlacementTest {
  private static final GpuReduction SUM = new GpuReduction(
      List.of(new ColumnReduction.Aggregate(ColumnReduction.Function.SUM, new DeviceExpr.Call(0))), -1, 0);
  private static final GpuReduction BY_KEY = new GpuReduction(SUM.aggregates(), 0, 8);

  private static DeviceReduction.Executor executor(boolean verifying, boolean allOnGpu, SqlType keyType) {
    return new DeviceReduction.Executor(verifying, allOnGpu, List.of(SqlType.DOUBLE), keyType == null ? -1 : 1,
        keyType, null);
  }

  @Test
  void executorRefuses_withoutAskingTheDevice_whenVerifying_aCallOnTheCpu_anUngroupableKey_orHostPlaced() {
    ReducePlacement ungrouped = new ReducePlacement(SUM, null);
    assertTrue(ungrouped.onExecutor(executor(true, true, null)).isEmpty(), "verify needs the rows");
    assertTrue(ungrouped.onExecutor(executor(false, false, null)).isEmpty(), "a call on the CPU");
    ReducePlacement grouped = new ReducePlacement(BY_KEY, "grouped");
    assertTrue(grouped.onExecutor(executor(false, true, SqlType.DOUBLE)).isEmpty(), "a double key is not grouped by");
    ReducePlacement host = ReducePlacement.host("onGpu is false");
    assertFalse(host.onGpu());
    assertTrue(host.onExecutor(executor(false, true, null)).isEmpty());
    assertEquals(-1, host.keyOrdinal());
    assertEquals(0, host.slots());
    assertEquals(0, grouped.keyOrdinal());
    assertEquals(8, grouped.slots());
    assertTrue(grouped.grouped() && !ungrouped.grouped());
  }

  @Test
  void settings_modeIsStrict_keySlotsBounded_onGpuDefaultsToTrue() {
    SparkSession s = TestSpark.spark();
    try {
      s.conf().unset(Settings.FUSE_AGGREGATES.key());
      assertEquals(ReducePlacement.Mode.GPU_REDUCED, ReducePlacement.Mode.of(s));
      s.conf().set(Settings.FUSE_AGGREGATES.key(), " TRUE ");
      assertEquals(ReducePlacement.Mode.ALWAYS, ReducePlacement.Mode.of(s));
      s.conf().set(Settings.FUSE_AGGREGATES.key(), "false");
      assertEquals(ReducePlacement.Mode.NEVER, ReducePlacement.Mode.of(s));
      s.conf().set(Settings.FUSE_AGGREGATES.key(), "yes");
      GpuException e = assertThrows(GpuException.class, () -> ReducePlacement.Mode.of(s));
      assertTrue(e.getMessage().contains(Settings.FUSE_AGGREGATES.key() + " is 'yes'") && e.getMessage().contains("Fix:"),
          e.getMessage());

      s.conf().unset(Settings.FUSE_AGGREGATES_ON_GPU.key());
      assertTrue(ReducePlacement.onGpu(s));
      s.conf().set(Settings.FUSE_AGGREGATES_ON_GPU.key(), "false");
      assertFalse(ReducePlacement.onGpu(s));

      s.conf().unset(Settings.FUSE_AGGREGATES_KEY_SLOTS.key());
      assertEquals(ColumnReduction.DEFAULT_SLOTS, ReducePlacement.keySlots(s));
      s.conf().set(Settings.FUSE_AGGREGATES_KEY_SLOTS.key(), " 4 ");
      assertEquals(4, ReducePlacement.keySlots(s));
      for (String bad : List.of("0", String.valueOf(ColumnReduction.MAX_SLOTS + 1), "many")) {
        s.conf().set(Settings.FUSE_AGGREGATES_KEY_SLOTS.key(), bad);
        GpuException slots = assertThrows(GpuException.class, () -> ReducePlacement.keySlots(s));
        assertTrue(slots.getMessage().contains(Settings.FUSE_AGGREGATES_KEY_SLOTS.key() + " is '" + bad + "'")
            && slots.getMessage().contains("Fix:"), slots.getMessage());
      }
    } finally {
      for (String k : List.of(Settings.FUSE_AGGREGATES.key(), Settings.FUSE_AGGREGATES_ON_GPU.key(), Settings.FUSE_AGGREGATES_KEY_SLOTS.key())) {
        s.conf().unset(k);
      }
    }
  }

  /** docs/METRICS.md lists every metric of the aggregate node as the enum declares it, and no other. */
  @Test
  void docsMetricsMd_listsTheAggregateNodesMetrics() throws IOException {
    Path docs = Files.exists(Path.of("docs", "METRICS.md")) ? Path.of("docs", "METRICS.md") : Path.of(System.getProperty("vkspark.source.root", ".."), "docs", "METRICS.md");
    String text = Files.readString(docs).replace("\r\n", "\n");
    String section = text.substring(text.indexOf("## VkGpuAggregate metrics"), text.indexOf("## VkRowToColumnar metrics"));
    for (AggregateMetric m : AggregateMetric.values()) {
      assertTrue(section.contains(m.docLine()), "docs/METRICS.md's VkGpuAggregate section lists: " + m.docLine());
    }
    assertEquals(AggregateMetric.values().length, section.lines().filter(l -> l.startsWith("- `")).count(),
        "docs/METRICS.md lists aggregate metrics that AggregateMetric does not declare");
  }
}
