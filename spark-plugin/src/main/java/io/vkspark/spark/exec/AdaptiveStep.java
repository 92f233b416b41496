package io.vkspark.spark.exec;

import io.vkspark.spark.executor.CpuVulkan;
import io.vkspark.spark.executor.ExecutorDevice;

import io.vkspark.spark.exec.AdaptivePlacement.Choice;
import io.vkspark.spark.exec.AdaptivePlacement.Path;
import io.vkspark.spark.exec.AdaptivePlacement.Shape;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.call.NodeMetrics;
import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.exec.call.VkMetric;
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

  /**
   * One gathered batch on its path: the choice made for its shape, when its work began, and the
   * time spent reading the child meanwhile (not the path's cost: the other path reads the same rows).
   */
  static final class Batch {
    private final Choice choice;
    private final boolean reducing;
    private final int shapeRows;
    private final long start = System.nanoTime();
    private long childNanos;
    private int rows;

    private Batch(Choice choice, boolean reducing, int shapeRows) {
      this.choice = choice;
      this.reducing = reducing;
      this.shapeRows = shapeRows;
    }

    /** The path the batch takes. */
    Path path() {
      return choice.path();
    }

    /** Rows of the batch's first child batch to time with {@code call()} as well (0 for none). */
    int slice() {
      return choice.slice();
    }

    /** Adds time spent in the child's {@code hasNext()}/{@code next()} while gathering. */
    void childTime(long nanos) {
      childNanos += nanos;
    }

    /** The rows the batch holds once gathered (a coalesced batch's, which may sit in the GPU runner). */
    void rows(int n) {
      rows = n;
    }
  }

  /**
   * Starts a batch whose first child batch has {@code childRows} rows: the shape is the child's batch
   * size (a stream of 4,096-row Parquet batches is one shape, whether the GPU path coalesces them or
   * the CPU path takes them one by one), so both paths are timed per row over the same input.
   *
   * @param reducing a fused aggregate's batch (its GPU path reduces on the device)
   */
  Batch begin(boolean reducing, int childRows) {
    return new Batch(placement.choose(Shape.of(key, reducing, childRows), childRows), reducing, childRows);
  }

  /**
   * Reports {@code b}'s slice, {@code rows} rows timed with {@code call()} in {@code nanos}, as a
   * CPU timing of its shape; the slice's time is no part of the batch's GPU time.
   */
  void sliced(Batch b, int rows, long nanos) {
    b.childNanos += nanos;
    if (rows > 0 && placement.record(Shape.of(key, b.reducing, b.shapeRows), names, Path.CPU, rows, nanos).switched()) {
      metrics.add(VkMetric.ADAPTIVE_SWITCHES, 1);
    }
  }

  private Batch open;

  /**
   * Ends {@code b}'s timing when the consumer asks for the next batch ({@link #finish}): a fused
   * aggregate's batch costs what the aggregate does with it too (folding rows on the host, or merging
   * the GPU's partials).
   */
  void endAtNext(Batch b) {
    open = b;
  }

  /** Ends the timing of the batch left open by {@link #endAtNext}, if any. */
  void finish() {
    Batch b = open;
    open = null;
    if (b != null) {
      end(b);
    }
  }

  /**
   * Ends the timing {@code t} (nothing when null) of a batch that took {@code route} (null: none
   * completed): timed when the route is its path's ({@code call()} by adaptive choice for the CPU;
   * the reduction, or for a plain node the GPU, for the GPU), at the aggregate's next request for a
   * fused aggregate (its fold or merge is part of the cost); otherwise only counted.
   */
  void ended(Batch t, BatchRoute route, boolean reducing) {
    if (t == null) {
      return;
    }
    boolean onPath = t.path() == Path.CPU ? route instanceof BatchRoute.Cpu c && c.cause() == Placement.Cause.ADAPTIVE_CHOICE
        : reducing ? route instanceof BatchRoute.GpuReduce || route instanceof BatchRoute.GpuAppend
        : route instanceof BatchRoute.Gpu;
    if (!onPath) {
      untimed(t);
    } else if (reducing) {
      endAtNext(t);
    } else {
      end(t);
    }
  }

  /** Reports {@code b}, now done, to the executor's placement (and counts its rows in the node's metrics). */
  void end(Batch b) {
    long nanos = Math.max(0, System.nanoTime() - b.start - b.childNanos);
    metrics.add(b.path() == Path.GPU ? VkMetric.ADAPTIVE_GPU_ROWS : VkMetric.ADAPTIVE_CPU_ROWS, b.rows);
    if (b.rows > 0 && placement.record(Shape.of(key, b.reducing, b.shapeRows), names, b.path(), b.rows, nanos)
        .switched()) {
      metrics.add(VkMetric.ADAPTIVE_SWITCHES, 1);
    }
  }

  /** Counts {@code b}'s rows without timing it: it left its path (a GPU batch recomputed on the CPU). */
  void untimed(Batch b) {
    metrics.add(b.path() == Path.GPU ? VkMetric.ADAPTIVE_GPU_ROWS : VkMetric.ADAPTIVE_CPU_ROWS, b.rows);
  }
}
