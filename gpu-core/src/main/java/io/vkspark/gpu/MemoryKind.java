package io.vkspark.gpu;

/** How a program declares a buffer binding (the seed's {@code MemoryKind}). */
public enum MemoryKind {
  /** Read-write storage buffer. */
  STORAGE,
  /** Storage buffer the shader only reads. */
  READ_ONLY,
  /** Uniform buffer: small per-dispatch parameters. */
  UNIFORM,
  /**
   * Per-dispatch parameters. Vulkan push constants are baked in at record time, which defeats
   * replay, so PUSH parameters are bound as a uniform buffer the host rewrites between replays.
   */
  PUSH,
  /** Workgroup-shared memory: declared in the shader, never bound. */
  SHARED;

  /** Whether a buffer is bound for this kind (SHARED is not). */
  public boolean isBound() {
    return this != SHARED;
  }

  /** Whether this kind carries the dispatch parameters (the {@code params} handle). */
  public boolean isParams() {
    return this == UNIFORM || this == PUSH;
  }
}
