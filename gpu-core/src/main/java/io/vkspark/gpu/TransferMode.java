package io.vkspark.gpu;

/** How data moves between host and device. */
public enum TransferMode {
  /**
   * The host writes inputs straight into device memory where the device allows it (ReBAR on
   * discrete GPUs, any memory on unified-memory devices) and reads results from host-cached
   * memory; otherwise inputs are staged through a copy. The default.
   */
  AUTO,
  /**
   * Always stage: inputs are written to host memory and copied to device-local buffers, results
   * are copied back. Forces the path discrete GPUs without ReBAR take, so lavapipe tests it too.
   */
  STAGED
}
