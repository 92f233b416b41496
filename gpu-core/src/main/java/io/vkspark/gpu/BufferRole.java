package io.vkspark.gpu;

/** What a {@link GpuBuffer} is for; it decides where the memory lives and which copies exist. */
public enum BufferRole {
  /** The host writes it, shaders read it. */
  INPUT,
  /** Shaders write it, the host reads it after the dispatch. */
  OUTPUT,
  /** Small per-dispatch values the host rewrites before each replay (row count, group counts). */
  PARAMS
}
