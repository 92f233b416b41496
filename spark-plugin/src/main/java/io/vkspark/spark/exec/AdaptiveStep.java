package io.vkspark.spark.exec;

import io.vkspark.spark.executor.CpuVulkan;
import io.vkspark.spark.executor.ExecutorDevice;

import io.vkspark.spark.exec.AdaptivePlacement.Choice;
import io.vkspark.spark.exec.AdaptivePlacement.Path;
import io.vkspark.spark.exec.AdaptivePlacement.Shape;
import java.util.List;
import java.util.stream.Collectors;

/**
 * One task's side of adaptive placement: the shape its GPU calls make, the path each batch takes,
 * and the timing of that batch reported to the executor's {@link AdaptivePlacement} (and counted in
 * the node's metrics). Apart from the iterator so that plain batches and a fused aggregate's batches
 * are timed the same way.
 */
final class AdaptiveStep {
  private final AdaptivePlacement placement;
  private final String key;
  private final String names;
  private final NodeMetrics metrics;

  private AdaptiveStep(AdaptivePlacement placement, String key, String names, NodeMetrics metrics) {
    this.placement = placement;
    this.key = key;
    this.names = names;
    this.metrics = metrics;
  }

  /**
   * The adaptive side of a task whose GPU calls are {@code gpuCalls}, or null when its batches always
   * run on the GPU: {@code spark.vkspark.placement=gpu} (no call placed adaptively), no GPU call, or
   * a GLSL-only call that has no CPU path here (its SPIR-V needs a CPU Vulkan device besides the GPU;
   * on lavapipe alone, the GPU path is that device already).
   */
  static AdaptiveStep of(List<GpuUdfCall> gpuCalls, ExecutorDevice device, NodeMetrics metrics) {
    if (gpuCalls.isEmpty() || device == null || !gpuCalls.stream().allMatch(c -> c.placement().adaptive())) {
      return null;
    }
    if (gpuCalls.stream().anyMatch(GpuUdfCall::glslOnly) && !CpuVulkan.besides(device.device().info())) {
      return null; // must run on the GPU: never moved
    }
    String key = gpuCalls.stream().map(c -> c.kernel().id()).collect(Collectors.joining(","));
    String names = gpuCalls.stream().map(GpuUdfCall::name).collect(Collectors.joining(","));
    return new AdaptiveStep(AdaptivePlacement.shared(), key, names, metrics);
  }

  /** The path of a batch of {@code rows} rows; {@code reducing}: a fused aggregate's batch reduced on the GPU. */
  Choice choose(boolean reducing, int rows) {
    return placement.choose(Shape.of(key, reducing, rows));
  }

  /** A fused aggregate's batch whose timing ends when the aggregate has folded what it got ({@link #finish}). */
  private record Pending(Choice choice, int rows, long start) {}

  private Pending pending;

  /**
   * Starts timing a fused aggregate's batch: its cost includes what the aggregate does with the
   * step (folding rows on the host, or merging the GPU's partials), so it ends at {@link #finish},
   * when the aggregate asks for the next step.
   */
  void timedUntilNext(Choice choice, int rows, long start) {
    pending = new Pending(choice, rows, start);
  }

  /** Ends the timing of the fused aggregate's last batch, if one is open (the aggregate is done with it). */
  void finish() {
    Pending p = pending;
    pending = null;
    if (p != null) {
      timed(p.choice(), true, p.rows(), p.start());
    }
  }

  /** Reports the batch that {@code choice} sent down its path at {@code start} ({@link System#nanoTime}), now done. */
  void timed(Choice choice, boolean reducing, int rows, long start) {
    long nanos = System.nanoTime() - start;
    metrics.add(choice.path() == Path.GPU ? VkMetric.ADAPTIVE_GPU_ROWS : VkMetric.ADAPTIVE_CPU_ROWS, rows);
    if (placement.record(Shape.of(key, reducing, rows), names, choice.path(), rows, nanos).switched()) {
      metrics.add(VkMetric.ADAPTIVE_SWITCHES, 1);
    }
  }
}
