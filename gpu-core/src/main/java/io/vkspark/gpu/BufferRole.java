package io.vkspark.gpu;

/** What a {@link GpuBuffer} is for; it decides where the memory lives and which copies exist. */
public enum BufferRole {
  /** The host writes it, shaders read it. */
  INPUT,
  /** Shaders write it, the host reads it after the dispatch. */
  OUTPUT,
  /** Small per-dispatch values the host rewrites before each replay (row count, group counts). */
  PARAMS,
  /**
   * A few words the host and a running shader both see: host-visible, host-coherent memory,
   * never staged, so a host write made while a dispatch runs (an abort request) reaches the
   * shader, and the shader's counters are read back after it.
   */
  CONTROL,
  /**
   * Written and read by shaders only, never by the host: device-local, never staged, without a
   * host copy. The per-row results of a recording that reduces them on the device (the host reads
   * only the reduction's small OUTPUT), so the rows never cross the bus.
   */
  SCRATCH
}
