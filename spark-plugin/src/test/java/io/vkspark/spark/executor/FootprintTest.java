package io.vkspark.spark.executor;

import io.vkspark.spark.executor.Footprint;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.DeviceCounters;
import org.junit.jupiter.api.Test;

/** Footprint's verdicts on given figures (the steady-state test and the bench read them from a real device). */
class FootprintTest {
  private static DeviceCounters counters(long buffersCreated, long bufferBytesLive, long commandBuffersCreated) {
    return new DeviceCounters(buffersCreated, 4, bufferBytesLive, commandBuffersCreated, 1, 2, 1, 1, 100, 0, 0, 0);
  }

  private static Footprint footprint(DeviceCounters c, long idleBytes, int idleSets, long idleBudget, long limit, long rss,
                                     long jvm) {
    return new Footprint(c, c.bufferBytesLive(), idleBytes, idleSets, idleBudget, 1, limit, 0, 0, 0, 0, rss, jvm);
  }

  @Test
  void budgets_deviceMemoryLimit_andIdleBudget_oneOversizedIdleSetIsKept() {
    DeviceCounters c = counters(4, 1000, 1);
    assertTrue(footprint(c, 1000, 2, 1000, 1000, 0, 0).withinBudgets());
    assertTrue(footprint(c, 1000, 2, 1000, 0, 0, 0).withinBudgets(), "no limit");
    assertFalse(footprint(c, 1000, 2, 1000, 999, 0, 0).withinBudgets(), "buffers over spark.vkspark.deviceMemoryLimit");
    assertFalse(footprint(c, 1000, 2, 999, 0, 0, 0).withinBudgets(), "two idle sets over the idle budget");
    assertTrue(footprint(c, 1000, 1, 999, 0, 0, 0).withinBudgets(), "the pool keeps one idle set whatever its size");
  }

  @Test
  void vulkanObjectsSince_namesWhatWasCreated() {
    Footprint before = footprint(counters(4, 1000, 1), 0, 0, 1, 0, 100, 50);
    assertTrue(before.noVulkanObjectsSince(before));
    Footprint after = footprint(counters(5, 1000, 2), 0, 0, 1, 0, 170, 60);
    assertFalse(after.noVulkanObjectsSince(before));
    assertEquals(1L, after.vulkanObjectsSince(before).get("buffers_created"));
    assertEquals(1L, after.vulkanObjectsSince(before).get("command_buffers_created"));
    assertEquals(0L, after.vulkanObjectsSince(before).get("descriptor_sets_created"));
    assertEquals(60L, after.hostGrowthSince(before).get("native_rss_bytes"), "RSS growth less the JVM's");
  }

  @Test
  void now_readsThisProcess() {
    Footprint f = Footprint.now();
    assertTrue(f.rssBytes() > 0, "Linux has /proc/self/status VmRSS: " + f);
    assertTrue(f.jvmCommittedBytes() > 0, f::toString);
    assertTrue(f.directBuffers() >= 0, f::toString);
  }
}
