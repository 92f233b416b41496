package io.vkspark.spark.exec;

import io.vkspark.spark.exec.call.Placement;
import java.util.Objects;

/**
 * The route one batch's GPU calls take through a GPU node, decided once per batch by
 * {@link BatchRouter} as a value. Calls placed on the CPU for the whole query (no device, a missing
 * feature) are not part of it: they run with {@code call()} on every batch, for their placement's
 * cause. To add a route (a device-resident input, say), add a record here and its case to
 * {@code GpuEvalIterator.run}: the compiler then finds every switch that must handle it.
 */
sealed interface BatchRoute {
  /** On the GPU, the results read back into the node's output vectors (or, for a fused aggregate, folded on the host). */
  record Gpu() implements BatchRoute {}

  /** A fused aggregate's batch, reduced on the GPU in the UDFs' own submission: only partials come back. */
  record GpuReduce() implements BatchRoute {}

  /**
   * A fused aggregate's small child batches appended straight into the GPU's input buffers as they
   * arrive (one copy, no host staging), then reduced like {@link GpuReduce}.
   */
  record GpuAppend() implements BatchRoute {}

  /** With {@code call()} on the CPU, for {@code cause} (a per-batch {@link Placement.Cause}). */
  record Cpu(Placement.Cause cause) implements BatchRoute {
    public Cpu {
      Objects.requireNonNull(cause, "cause");
    }
  }

  BatchRoute GPU = new Gpu();
  BatchRoute GPU_REDUCE = new GpuReduce();
  BatchRoute GPU_APPEND = new GpuAppend();

  /** Whether the batch's rows must be kept on the host until the route ends (not appended to the GPU). */
  default boolean staged() {
    return !(this instanceof GpuAppend);
  }
}
