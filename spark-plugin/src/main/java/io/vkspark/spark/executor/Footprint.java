package io.vkspark.spark.executor;

import io.vkspark.gpu.DeviceCounters;
import io.vkspark.spark.cache.CacheMemory;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.spark.sql.util.ArrowUtils$;

/**
 * What this JVM's vkspark holds at one moment: the executor device's Vulkan objects and device
 * memory beside their budgets, and the host memory a per-batch leak would grow (Arrow, the cache's
 * native memory, direct buffers, the resident set). Two footprints taken around a workload say
 * whether it ran in a steady state: nothing created after warm-up, memory within its budgets and
 * flat (issue 13's target). Exact counters come first; the resident set is a coarse second check,
 * since the JIT, the heap and the driver move it by megabytes on their own.
 *
 * @param device the executor device's counters (null when no device is open)
 * @param deviceBytesHeld device memory of the column runtime's buffer sets, in use or pooled
 * @param idleBytes device memory of pooled (idle) buffer sets
 * @param idleSets how many buffer sets are idle
 * @param idleBudget most device memory idle sets keep ({@code ColumnRuntime#maxIdleBytes})
 * @param keepSets idle sets kept whatever their size ({@code ColumnRuntime#keepSets}: one per GPU permit)
 * @param deviceMemoryLimit {@code spark.vkspark.deviceMemoryLimit} as the device enforces it (0: none)
 * @param arrowBytes bytes allocated from Spark's Arrow root allocator (vkspark's task vectors are its children)
 * @param cacheBytes native bytes of vkspark's cache ({@link CacheMemory})
 * @param directBytes bytes of NIO direct buffers (the JVM's "direct" buffer pool)
 * @param directBuffers NIO direct buffers alive (until collected)
 * @param rssBytes the process's resident set ({@code VmRSS} of {@code /proc/self/status}; -1 where there is none)
 * @param jvmCommittedBytes heap and non-heap memory the JVM has committed (part of the resident set that
 *     grows with the heap, the JIT's code cache and class metadata, not with a native leak)
 */
public record Footprint(DeviceCounters device, long deviceBytesHeld, long idleBytes, int idleSets, long idleBudget,
                        int keepSets, long deviceMemoryLimit, long arrowBytes, long cacheBytes, long directBytes, long directBuffers,
                        long rssBytes, long jvmCommittedBytes) {

  /** This JVM's footprint now (the device part from {@link ExecutorDevice#current()}). */
  public static Footprint now() {
    DeviceCounters counters = null;
    long held = 0;
    long idle = 0;
    int idleSets = 0;
    long idleBudget = 0;
    int keepSets = 1;
    long limit = 0;
    Optional<ExecutorDevice> gpu = ExecutorDevice.current();
    if (gpu.isPresent()) {
      ExecutorDevice g = gpu.get();
      counters = g.device().counters();
      held = g.runtime().deviceBytesHeld();
      idle = g.runtime().idleBytes();
      idleSets = g.runtime().idleSets();
      idleBudget = g.runtime().maxIdleBytes();
      keepSets = g.runtime().keepSets();
      limit = g.device().options().memoryLimit();
    }
    long directBytes = -1;
    long directCount = -1;
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (pool.getName().equals("direct")) {
        directBytes = pool.getMemoryUsed();
        directCount = pool.getCount();
      }
    }
    return new Footprint(counters, held, idle, idleSets, idleBudget, keepSets, limit, ArrowUtils$.MODULE$.rootAllocator().getAllocatedMemory(),
        CacheMemory.liveBytes(), directBytes, directCount, rss(), jvmCommitted());
  }

  private static long jvmCommitted() {
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    return memory.getHeapMemoryUsage().getCommitted() + memory.getNonHeapMemoryUsage().getCommitted();
  }

  /** The resident set in bytes, or -1 where {@code /proc/self/status} is missing (not Linux). */
  static long rss() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          String[] parts = line.substring(6).trim().split("\\s+");
          return Long.parseLong(parts[0]) * 1024; // always kB
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return -1;
  }

  /**
   * Vulkan objects created since {@code before}, by kind (buffers, command buffers, descriptor
   * sets) and the change in live counts of each and of kernels; all zero in a steady state.
   */
  public Map<String, Long> vulkanObjectsSince(Footprint before) {
    Map<String, Long> out = new LinkedHashMap<>();
    if (device == null || before.device == null) {
      return out;
    }
    DeviceCounters a = before.device;
    DeviceCounters b = device;
    out.put("buffers_created", b.buffersCreated() - a.buffersCreated());
    out.put("command_buffers_created", b.commandBuffersCreated() - a.commandBuffersCreated());
    out.put("descriptor_sets_created", b.descriptorSetsCreated() - a.descriptorSetsCreated());
    out.put("buffers_live", b.buffersLive() - a.buffersLive());
    out.put("command_buffers_live", b.commandBuffersLive() - a.commandBuffersLive());
    out.put("descriptor_sets_live", b.descriptorSetsLive() - a.descriptorSetsLive());
    out.put("kernels_live", b.kernelsLive() - a.kernelsLive());
    return out;
  }

  /** Whether no Vulkan object was created or kept since {@code before} (see {@link #vulkanObjectsSince}). */
  public boolean noVulkanObjectsSince(Footprint before) {
    return vulkanObjectsSince(before).values().stream().allMatch(v -> v == 0);
  }

  /** Buffer bytes the device holds now (every buffer of this device, not only the column runtime's). */
  public long deviceBufferBytes() {
    return device == null ? 0 : device.bufferBytesLive();
  }

  /**
   * Whether device memory is within its budgets: every buffer within {@code deviceMemoryLimit}
   * (when one is set) and idle sets within {@code idleBudget} (or at most {@code keepSets} sets,
   * which the pool keeps whatever their size).
   */
  public boolean withinBudgets() {
    boolean limit = deviceMemoryLimit == 0 || deviceBufferBytes() <= deviceMemoryLimit;
    boolean idle = idleBytes <= idleBudget || idleSets <= keepSets;
    return limit && idle;
  }

  /** The figures as JSON fields (for the benchmarks' lines), under names ending in their unit. */
  public Map<String, Object> json() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("device_buffer_bytes", deviceBufferBytes());
    m.put("device_bytes_held", deviceBytesHeld);
    m.put("device_idle_bytes", idleBytes);
    m.put("device_idle_sets", idleSets);
    m.put("device_idle_budget_bytes", idleBudget);
    m.put("device_idle_keep_sets", keepSets);
    m.put("device_memory_limit_bytes", deviceMemoryLimit);
    m.put("arrow_bytes", arrowBytes);
    m.put("cache_native_bytes", cacheBytes);
    m.put("direct_bytes", directBytes);
    m.put("direct_buffers", directBuffers);
    m.put("rss_bytes", rssBytes);
    m.put("jvm_committed_bytes", jvmCommittedBytes);
    return m;
  }

  /**
   * Host-memory growth since {@code before}, field by field (Arrow, cache, direct, resident set, the
   * JVM's committed memory) and {@code native_rss_bytes}: the resident set's growth less what the
   * JVM committed meanwhile (heap, code cache), the part a native leak (driver, LWJGL, unsafe) would grow.
   */
  public Map<String, Long> hostGrowthSince(Footprint before) {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("arrow_bytes", arrowBytes - before.arrowBytes);
    m.put("cache_native_bytes", cacheBytes - before.cacheBytes);
    m.put("direct_bytes", directBytes - before.directBytes);
    long rss = rssBytes < 0 || before.rssBytes < 0 ? 0 : rssBytes - before.rssBytes;
    long jvm = jvmCommittedBytes - before.jvmCommittedBytes;
    m.put("rss_bytes", rss);
    m.put("jvm_committed_bytes", jvm);
    m.put("native_rss_bytes", rss - Math.max(0, jvm));
    return m;
  }

  /** For messages: the footprint in one line. */
  @Override
  public String toString() {
    List<String> parts = new ArrayList<>();
    json().forEach((k, v) -> parts.add(k + "=" + v));
    return "Footprint[" + String.join(", ", parts) + (device == null ? "" : ", " + device) + "]";
  }
}
