package io.vkspark.spark.executor;

/**
 * One of the executor's GPU permits ({@link GpuPermits}), held while a task copies into,
 * dispatches on and reads from the device, and given back on {@link #close()}:
 * {@code try (GpuLease lease = gpu.lease()) { ... }}. Bounding the tasks on the GPU at once bounds
 * its memory (each holds one buffer set) and keeps the executor's shutdown from freeing memory a
 * task still uses.
 */
public final class GpuLease implements AutoCloseable {
  private final GpuPermits permits;
  private final long waitNs;
  private boolean released;

  GpuLease(GpuPermits permits, long waitNs) {
    this.permits = permits;
    this.waitNs = waitNs;
  }

  /** How long the task waited for its permit (the semaphore-wait metric). */
  public long waitNs() {
    return waitNs;
  }

  /** Gives the permit back; once only. */
  @Override
  public void close() {
    if (!released) {
      released = true;
      permits.release();
    }
  }
}
