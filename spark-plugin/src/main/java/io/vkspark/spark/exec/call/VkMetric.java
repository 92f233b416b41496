package io.vkspark.spark.exec.call;

import io.vkspark.spark.conf.MetricsLevel;

import java.util.Arrays;
import java.util.List;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics;

/**
 * The one list of the {@code VkGpuEval} node's SQL metrics: the key the node's metrics map uses,
 * how Spark aggregates and shows it, whether it is shown at {@code spark.vkspark.metrics.level}
 * {@code essential} or only at {@code debug}, and what the Spark UI calls it. The node, the
 * iterator that fills the metrics, and docs/METRICS.md (checked by a test) all come from here, so
 * names and docs cannot drift apart. Enum order is the order the UI lists them in.
 */
public enum VkMetric {
  NUM_OUTPUT_ROWS("numOutputRows", Kind.SUM, MetricsLevel.ESSENTIAL, "number of output rows"),
  NUM_OUTPUT_BATCHES("numOutputBatches", Kind.SUM, MetricsLevel.ESSENTIAL, "number of output batches"),
  GPU_ROWS("gpuRows", Kind.SUM, MetricsLevel.ESSENTIAL, "rows on GPU"),
  CPU_ROWS("cpuRows", Kind.SUM, MetricsLevel.ESSENTIAL,
      "rows on CPU (each call's rows computed with call(); the cpuRows* causes below add up to it)"),
  CPU_ROWS_NO_DEVICE("cpuRowsNoDevice", Kind.SUM, MetricsLevel.ESSENTIAL,
      "of those, calls placed on the CPU (no Vulkan device, or it lacks a feature the kernel needs)"),
  CPU_ROWS_ADAPTIVE_TRIAL("cpuRowsAdaptiveTrial", Kind.SUM, MetricsLevel.ESSENTIAL,
      "of those, slices timed with call() by adaptive placement (the GPU computes their batch too)"),
  CPU_ROWS_ADAPTIVE_CHOICE("cpuRowsAdaptiveChoice", Kind.SUM, MetricsLevel.ESSENTIAL,
      "of those, batches adaptive placement sent to call() (measured faster)"),
  CPU_ROWS_NULL_ARGUMENTS("cpuRowsNullArguments", Kind.SUM, MetricsLevel.ESSENTIAL,
      "of those, batches with a null argument of a translated UDF whose call() handles nulls"),
  CPU_ROWS_WIDE_ROW("cpuRowsWideRow", Kind.SUM, MetricsLevel.ESSENTIAL,
      "of those, batches with a row wider than one GPU batch may stage (spark.vkspark.batchBytes)"),
  CPU_ROWS_LOOP_LIMIT("cpuRowsLoopLimit", Kind.SUM, MetricsLevel.ESSENTIAL,
      "of those, batches recomputed because the device's loop limit cut a loop short"),
  CPU_ROWS_RECOMPUTE("cpuRowsRecompute", Kind.SUM, MetricsLevel.ESSENTIAL,
      "of those, batches recomputed because a row threw or returned null in a translated kernel"),
  CPU_ROWS_GPU_FAILURE("cpuRowsGpuFailure", Kind.SUM, MetricsLevel.ESSENTIAL,
      "of those, batches recomputed after a GPU failure call() can answer (a decimal overflow under ANSI)"),
  CPU_ROWS_HANDED_BACK("cpuRowsHandedBack", Kind.SUM, MetricsLevel.ESSENTIAL,
      "of those, single rows a kernel handed to call() (handedBackRows; the rest of their batch stays on the GPU)"),
  CPU_VULKAN_ROWS("cpuVulkanRows", Kind.SUM, MetricsLevel.ESSENTIAL,
      "of those, rows of GLSL-only UDFs run on a CPU Vulkan device (lavapipe)"),
  ADAPTIVE_GPU_ROWS("adaptiveGpuRows", Kind.SUM, MetricsLevel.ESSENTIAL,
      "rows of batches adaptive placement sent to the GPU (spark.vkspark.placement)"),
  ADAPTIVE_CPU_ROWS("adaptiveCpuRows", Kind.SUM, MetricsLevel.ESSENTIAL,
      "rows of batches adaptive placement sent to call() (per call in cpuRowsAdaptiveChoice)"),
  ADAPTIVE_SWITCHES("adaptiveSwitches", Kind.SUM, MetricsLevel.ESSENTIAL,
      "times adaptive placement moved a batch shape to the other path (reason logged at INFO)"),
  KEYS_TOO_WIDE_BATCHES("keysTooWideBatches", Kind.SUM, MetricsLevel.ESSENTIAL,
      "fused aggregate batches whose keys spanned more than the slots: UDFs on GPU, rows folded on the host"),
  LOOP_LIMIT_BATCHES("loopLimitBatches", Kind.SUM, MetricsLevel.ESSENTIAL,
      "batches recomputed on CPU (GPU loop limit reached)"),
  RECOMPUTED_BATCHES("recomputedBatches", Kind.SUM, MetricsLevel.ESSENTIAL,
      "batches recomputed on CPU (a row throws or returns null in call(), or a translated UDF met a null argument)"),
  UPLOAD_BYTES("uploadBytes", Kind.SIZE, MetricsLevel.ESSENTIAL, "bytes copied to GPU"),
  READBACK_BYTES("readbackBytes", Kind.SIZE, MetricsLevel.ESSENTIAL, "bytes copied back from GPU"),
  DEVICE_TIME("deviceTime", Kind.NS_TIMING, MetricsLevel.ESSENTIAL, "GPU time (device timestamps; 0 if it has none)"),
  WAIT_TIME("waitTime", Kind.NS_TIMING, MetricsLevel.ESSENTIAL, "host time waiting for the GPU"),
  PEAK_DEVICE_MEMORY("peakDeviceMemory", Kind.SIZE, MetricsLevel.ESSENTIAL,
      "peak GPU buffer memory of a task (see max)"),
  DEVICE_CACHE_HITS("deviceCacheHits", Kind.SUM, MetricsLevel.ESSENTIAL,
      "cached argument columns read from their device copy (spark.vkspark.cache.device)"),
  DEVICE_CACHE_UPLOADS("deviceCacheUploads", Kind.SUM, MetricsLevel.ESSENTIAL,
      "cached argument columns written to device memory on first use (spark.vkspark.cache.device)"),
  DEVICE_CACHE_COPY_TIME("deviceCacheCopyTime", Kind.NS_TIMING, MetricsLevel.ESSENTIAL,
      "GPU time copying cached columns from their device copies into the UDFs' inputs"),
  VERIFY_ROWS("verifyRows", Kind.SUM, MetricsLevel.ESSENTIAL, "GPU rows re-checked on CPU (spark.vkspark.verify)"),
  VERIFY_MISMATCHES("verifyMismatches", Kind.SUM, MetricsLevel.ESSENTIAL, "re-checked rows where GPU and CPU differ"),
  VERIFY_TIME("verifyTime", Kind.NS_TIMING, MetricsLevel.ESSENTIAL, "time re-checking rows on CPU"),
  VERIFY_SKIPPED_ROWS("verifySkippedRows", Kind.SUM, MetricsLevel.ESSENTIAL,
      "GPU rows of GLSL-only UDFs verify could not re-check: no CPU Vulkan device (Mesa's lavapipe) runs their call()"),
  INPUT_BATCHES("inputBatches", Kind.SUM, MetricsLevel.DEBUG,
      "child batches read (small ones coalesce into one GPU batch, spark.vkspark.coalesce)"),
  STAGED_BYTES("stagedBytes", Kind.SIZE, MetricsLevel.DEBUG,
      "bytes of small child batches copied into a host batch before the GPU (0 where they go straight to the GPU)"),
  GPU_DISPATCHES("gpuDispatches", Kind.SUM, MetricsLevel.DEBUG, "GPU submissions (a batch over capacity takes several)"),
  HOST_TIME("hostTime", Kind.NS_TIMING, MetricsLevel.DEBUG, "host time copying inputs and results"),
  SEMAPHORE_WAIT_TIME("semaphoreWaitTime", Kind.NS_TIMING, MetricsLevel.DEBUG,
      "time waiting for a GPU turn (spark.vkspark.concurrentGpuTasks)"),
  REUSED_SLOTS("reusedSlots", Kind.SUM, MetricsLevel.DEBUG, "output buffers reused from the previous batch"),
  MOVED_SLOTS("movedSlots", Kind.SUM, MetricsLevel.DEBUG, "output buffers reallocated larger"),
  APPENDED_SLOTS("appendedSlots", Kind.SUM, MetricsLevel.DEBUG, "output buffers newly allocated"),
  BUFFER_SETS_RECORDED("bufferSetsRecorded", Kind.SUM, MetricsLevel.DEBUG,
      "GPU buffer sets and command buffers recorded (0 when warm)"),
  HANDED_BACK_ROWS("handedBackRows", Kind.SUM, MetricsLevel.ESSENTIAL,
      "GPU rows their kernel handed to call() (the rest of the batch stays on the GPU)"),
  HANDED_BACK_BY_BODY("handedBackByBody", Kind.SUM, MetricsLevel.DEBUG, "rows handed to call(): the body called vk_to_cpu()"),
  HANDED_BACK_NON_ASCII("handedBackNonAscii", Kind.SUM, MetricsLevel.DEBUG,
      "rows handed to call(): a string the body needs as ASCII is not"),
  HANDED_BACK_MALFORMED("handedBackMalformedUtf8", Kind.SUM, MetricsLevel.DEBUG,
      "rows handed to call(): a string result that is not well-formed UTF-8"),
  HANDED_BACK_OVERFLOW("handedBackOverflow", Kind.SUM, MetricsLevel.DEBUG,
      "rows handed to call(): a string result longer than 128 MiB, or written otherwise than measured");

  /**
   * The {@code cpuRows*} metric of {@code cause}: every row a call computes with {@code call()} in
   * the node is counted in {@link #CPU_ROWS} by the CPU step and here, by the route that sent it,
   * so the causes add up to it (a test asserts the sum).
   */
  public static VkMetric cpuRows(Placement.Cause cause) {
    return switch (cause) {
      case NO_DEVICE_WHEN_PLANNING, NO_PLUGIN, NO_DEVICE_ON_EXECUTOR, FEATURE_MISSING -> CPU_ROWS_NO_DEVICE;
      case ADAPTIVE_TRIAL -> CPU_ROWS_ADAPTIVE_TRIAL;
      case ADAPTIVE_CHOICE -> CPU_ROWS_ADAPTIVE_CHOICE;
      case NULL_ARGUMENTS -> CPU_ROWS_NULL_ARGUMENTS;
      case WIDE_ROW -> CPU_ROWS_WIDE_ROW;
      case LOOP_LIMIT -> CPU_ROWS_LOOP_LIMIT;
      case RECOMPUTE -> CPU_ROWS_RECOMPUTE;
      case GPU_FAILURE -> CPU_ROWS_GPU_FAILURE;
      case HANDED_BACK -> CPU_ROWS_HANDED_BACK;
      case KEYS_TOO_WIDE, RESULT_TYPE_DIFFERS, ARGUMENT_TYPE_DIFFERS, LAMBDA, CONDITIONAL, UNPLANNED_OPERATOR, DISABLED,
          NOT_TRANSLATED -> throw new IllegalArgumentException(cause + " puts no row of the node on the CPU");
    };
  }

  /** The {@code cpuRows*} causes, whose sum is {@link #CPU_ROWS}. */
  public static List<VkMetric> cpuRowCauses() {
    return List.of(CPU_ROWS_NO_DEVICE, CPU_ROWS_ADAPTIVE_TRIAL, CPU_ROWS_ADAPTIVE_CHOICE, CPU_ROWS_NULL_ARGUMENTS,
        CPU_ROWS_WIDE_ROW, CPU_ROWS_LOOP_LIMIT, CPU_ROWS_RECOMPUTE, CPU_ROWS_GPU_FAILURE,
        CPU_ROWS_HANDED_BACK);
  }

  /** How Spark aggregates a metric over tasks and prints it (the matching {@code SQLMetrics.create*}). */
  public enum Kind {
    /** a count, summed over tasks */
    SUM,
    /** bytes: total, and min / median / max over tasks */
    SIZE,
    /** nanoseconds: total, and min / median / max over tasks */
    NS_TIMING,
    /** an average over tasks */
    AVERAGE;

    public SQLMetric create(SparkContext sc, String name) {
      return switch (this) {
        case SUM -> SQLMetrics.createMetric(sc, name);
        case SIZE -> SQLMetrics.createSizeMetric(sc, name, -1);
        case NS_TIMING -> SQLMetrics.createNanoTimingMetric(sc, name, -1);
        case AVERAGE -> SQLMetrics.createAverageMetric(sc, name);
      };
    }

    String label() {
      return switch (this) {
        case SUM -> "sum";
        case SIZE -> "size";
        case NS_TIMING -> "timing (ns)";
        case AVERAGE -> "average";
      };
    }
  }

  private final String key;
  private final Kind kind;
  private final MetricsLevel level;
  private final String description;

  VkMetric(String key, Kind kind, MetricsLevel level, String description) {
    this.key = key;
    this.kind = kind;
    this.level = level;
    this.description = description;
  }

  /** The key in the node's metrics map (and in {@code SparkPlan.metrics()}). */
  public String key() {
    return key;
  }

  public Kind kind() {
    return kind;
  }

  public MetricsLevel level() {
    return level;
  }

  /** The name the Spark UI shows. */
  public String description() {
    return description;
  }

  /** The metrics a node at {@code level} shows, in enum order. */
  public static List<VkMetric> at(MetricsLevel level) {
    return Arrays.stream(values()).filter(m -> level.shows(m.level)).toList();
  }

  /** The metrics as the markdown table of docs/METRICS.md. */
  public static String markdownTable() {
    StringBuilder b = new StringBuilder("| Key | Spark UI name | Kind | Level |\n|---|---|---|---|\n");
    for (VkMetric m : values()) {
      b.append("| `").append(m.key).append("` | ").append(m.description).append(" | ").append(m.kind.label())
          .append(" | ").append(m.level.value()).append(" |\n");
    }
    return b.toString();
  }
}
