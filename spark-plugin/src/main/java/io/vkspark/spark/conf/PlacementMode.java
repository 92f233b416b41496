package io.vkspark.spark.conf;

/**
 * {@code spark.vkspark.placement}: whether each batch of GPU calls may run on the CPU when the CPU
 * measures faster ({@code exec.AdaptivePlacement}), or always runs on the GPU. A cheap UDF over
 * small batches can lose to {@code call()} on the CPU; measuring per executor keeps such queries
 * from getting slower when the plugin is turned on.
 */
public enum PlacementMode {
  /** Per batch shape, time both paths and send later batches to the faster one (the default). */
  ADAPTIVE,
  /** Every batch of a call planned for the GPU runs on the GPU. */
  GPU
}
