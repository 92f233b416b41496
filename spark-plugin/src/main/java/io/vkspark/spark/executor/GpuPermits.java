package io.vkspark.spark.executor;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The permits of one executor device: at most {@code spark.vkspark.concurrentGpuTasks} tasks hold
 * a {@link GpuLease} at once (fair, first come first served). Closing the device goes through
 * {@link #closeWhenIdle}: it takes every permit, so no task is copying into or waiting on GPU memory
 * while it is freed, then gives them back, so tasks still waiting wake, find the device closed and
 * fail fast, each passing its permit on. Thread-safe.
 */
public final class GpuPermits {
  private final Semaphore semaphore;
  private final int count;
  private volatile boolean closed;

  GpuPermits(int count) {
    this.semaphore = new Semaphore(count, true);
    this.count = count;
  }

  /**
   * Waits for a permit. Interruptible: a killed task stops waiting (CANCELLED).
   *
   * @throws GpuException CANCELLED when interrupted; CLOSED when the device was closed meanwhile
   */
  GpuLease lease() {
    long t0 = System.nanoTime();
    try {
      semaphore.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw GpuException.of(Code.CANCELLED, "vkspark: the task was interrupted while waiting for the GPU (it was killed).",
          "nothing to do: the task was cancelled on purpose.");
    }
    GpuLease lease = new GpuLease(this, System.nanoTime() - t0);
    if (closed) {
      lease.close(); // pass it on: the next waiter finds the device closed too
      throw GpuException.of(Code.CLOSED, "vkspark: the executor's Vulkan device was closed while this task waited for it "
          + "(the executor is shutting down, or the device was lost).", "nothing to do: Spark retries the task; a "
          + "later task opens the device again.");
    }
    return lease;
  }

  void release() {
    semaphore.release();
  }

  /** Marks the device closed: leases taken from now on fail with CLOSED. */
  void markClosed() {
    closed = true;
  }

  boolean isClosed() {
    return closed;
  }

  /** Permits free now (tests watch a task take and give back the GPU). */
  int available() {
    return semaphore.availablePermits();
  }

  /**
   * Takes every permit (waiting up to {@code wait} for the tasks holding one), marks the device
   * closed, runs {@code close}, then gives the permits back so waiting tasks wake and fail fast.
   * When tasks still hold permits after {@code wait}, closes anyway and still gives {@code count}
   * permits, so waiters fail fast now rather than when the stuck tasks end (the device is closed for
   * good, so the extra permits admit no one).
   *
   * @return whether every permit was taken (no task was using the device when it closed)
   */
  boolean closeWhenIdle(Duration wait, Runnable close) {
    boolean quiet = false;
    try {
      quiet = semaphore.tryAcquire(count, wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    closed = true;
    try {
      close.run();
    } finally {
      semaphore.release(count);
    }
    return quiet;
  }
}
