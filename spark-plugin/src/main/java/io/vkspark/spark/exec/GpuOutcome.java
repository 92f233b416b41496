package io.vkspark.spark.exec;

import io.vkspark.gpu.GpuException;
import io.vkspark.spark.exec.call.Placement;

/**
 * What one GPU run of a batch came to: its value, or the reason its GPU calls are recomputed
 * elsewhere. A value, never null plus side flags, so the iterator's one loop sees every way a GPU
 * run can end ({@link GpuBatchStep#underLease}, {@link ReductionStep#reduce}).
 *
 * @param <T> what a run that succeeds gives (result vectors, or a reduction's partials)
 */
sealed interface GpuOutcome<T> {
  /** The run succeeded. */
  record Done<T>(T value) implements GpuOutcome<T> {}

  /**
   * The batch's GPU calls run again on another route: with {@code call()} for {@code cause} (a loop
   * limit, a row that throws), or, for {@link Placement.Cause#KEYS_TOO_WIDE}, on the GPU with their
   * rows read back.
   */
  record Recompute<T>(Placement.Cause cause, String detail) implements GpuOutcome<T> {}

  /**
   * A decimal result overflowed under ANSI: {@code call()} recomputes the batch to raise Spark's
   * own error for the row; where it does not, {@code error} is the task's.
   */
  record Overflow<T>(GpuException error) implements GpuOutcome<T> {}
}
