package io.vkspark.gpu.column.run;

import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.TimedDispatch;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.LoopGuard;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounds the time of one runner's dispatches: arms the kernels' control block ({@link LoopGuard}),
 * waits in slices so a deadline or a cancelled task is noticed, aborts a kernel that runs too long
 * and turns a driver's loop limit into an error instead of silently cut-short rows. Apart from
 * {@link BatchRunner} so that staging and waiting can be read (and changed) on their own.
 */
final class DispatchGuard {
  /** How often a waiting task looks at its deadline and its cancellation. */
  static final Duration WAIT_SLICE = Duration.ofMillis(50);
  /** How long an aborted kernel may take to stop before the device counts as hung. */
  static final Duration ABORT_GRACE = Duration.ofSeconds(5);
  private static final Logger LOG = LoggerFactory.getLogger(BatchRunner.class);

  private final GpuDevice device;
  private final List<KernelCall> calls;
  private final ByteBuffer control = ByteBuffer.allocateDirect(LoopGuard.CONTROL_BYTES).order(ByteOrder.LITTLE_ENDIAN);
  /**
   * Longest one dispatch may run (0: no limit); past it the kernel is aborted with a TIMEOUT error.
   * The device's fence timeout until {@link #bound} sets it.
   */
  private Duration kernelTimeout;
  private BooleanSupplier cancelled = () -> false;

  DispatchGuard(GpuDevice device, List<KernelCall> calls) {
    this.device = device;
    this.calls = calls;
    this.kernelTimeout = device.options().fenceTimeout();
  }

  /** See {@link BatchRunner#bound}. */
  void bound(Duration kernelTimeout, BooleanSupplier cancelled) {
    if (kernelTimeout == null || kernelTimeout.isNegative()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "kernel timeout " + kernelTimeout + " is negative or missing.",
          "use a positive duration, or zero for no limit.");
    }
    this.kernelTimeout = kernelTimeout;
    this.cancelled = cancelled == null ? () -> false : cancelled;
  }

  /** Clears the abort word and the cut-short count and sets the loop-limit canary before a dispatch. */
  void arm(BufferSet set) {
    int loopLimit = device.loopLimit();
    control.clear();
    control.putInt(LoopGuard.ABORT_OFFSET, 0)
        .putInt(LoopGuard.CANARY_OFFSET, loopLimit > 0 ? LoopGuard.CANARY_PASSES : 0)
        .putInt(LoopGuard.TRUNCATED_OFFSET, 0).putInt(LoopGuard.THROWN_OFFSET, 0);
    set.control.write(0, control);
  }

  /**
   * Replays {@code set}'s dispatch and waits for it within the kernel timeout, aborting it when
   * late or cancelled ({@code capacity}: its rows, for the message).
   *
   * @throws GpuException TIMEOUT, CANCELLED, or DEVICE_LOST when the kernel did not stop (the
   *     caller must then abandon the set)
   */
  TimedDispatch run(BufferSet set, int capacity) {
    set.dispatch.replay();
    long start = System.nanoTime();
    while (true) {
      TimedDispatch t = set.dispatch.awaitFor(WAIT_SLICE);
      if (t != null) {
        return t;
      }
      boolean cancel = Thread.currentThread().isInterrupted() || cancelled.getAsBoolean();
      boolean late = !kernelTimeout.isZero() && System.nanoTime() - start >= kernelTimeout.toNanos();
      if (cancel || late) {
        throw abort(set, cancel, start, capacity);
      }
    }
  }

  /** Sets the abort word and waits a bounded grace for the kernel to stop. */
  private GpuException abort(BufferSet set, boolean cancel, long start, int capacity) {
    control.clear();
    control.putInt(0, 1).limit(4);
    set.control.write(LoopGuard.ABORT_OFFSET, control);
    long aborted = System.nanoTime();
    TimedDispatch stopped = set.dispatch.awaitFor(ABORT_GRACE);
    long ms = (System.nanoTime() - start) / 1_000_000;
    long stopMs = (System.nanoTime() - aborted) / 1_000_000;
    String udfs = udfNames(false);
    if (stopped == null) {
      return GpuException.of(Code.DEVICE_LOST, "GPU UDF(s) " + udfs + " did not stop within " + ABORT_GRACE.toSeconds()
          + " s of being aborted (after " + ms + " ms) on '" + device.info().name()
          + "'; the device is treated as hung.", "nothing to do for this query (a Spark executor opens its device "
          + "again for later tasks); if it repeats, bound the UDF's loops or lower spark.vkspark.batchRows.");
    }
    LOG.warn("vkspark: aborted GPU UDF(s) {} after {} ms ({}); the kernel stopped {} ms after the abort", udfs, ms,
        cancel ? "task cancelled" : "kernel timeout " + kernelTimeout, stopMs);
    if (cancel) {
      return GpuException.of(Code.CANCELLED, "GPU UDF(s) " + udfs + " were cancelled after " + ms
          + " ms (the task was killed); the kernel was aborted and the GPU released.",
          "nothing to do: the task was cancelled on purpose.");
    }
    return GpuException.of(Code.TIMEOUT, "GPU UDF(s) " + udfs + " ran longer than the kernel timeout of "
        + kernelTimeout.toMillis() + " ms on one batch of up to " + capacity + " rows; the kernel was aborted after "
        + ms + " ms.", "check the UDF's loops for one that never ends, or raise spark.vkspark.kernelTimeout "
        + "(0 for no limit), or lower spark.vkspark.batchRows.");
  }

  /** Throws LOOP_LIMIT when the driver cut loops short in some of the {@code rows} rows just dispatched. */
  void checkLoops(BufferSet set, int rows) {
    control.clear();
    control.limit(4);
    set.control.read(LoopGuard.TRUNCATED_OFFSET, control);
    int cut = control.getInt(0);
    if (cut > 0) {
      int loopLimit = device.loopLimit();
      throw GpuException.of(Code.LOOP_LIMIT, String.format("GPU UDF(s) %s ran into the loop limit of device '%s' in up "
          + "to %,d of %,d rows: its driver stops loops after %,d iterations in total per invocation (all loops of a "
          + "SIMD group together; lavapipe/llvmpipe does) and carries on with the values it has, so the batch's GPU "
          + "results were discarded.", udfNames(true), device.info().name(), cut, rows, loopLimit),
          "let such batches run on the CPU with the UDF's call() (spark.vkspark.fallback=true), run on a GPU "
              + "without a loop limit, or keep the UDF's loops well below " + loopLimit + " iterations per row in total.");
    }
  }

  /**
   * Throws RECOMPUTE when some of the {@code rows} rows just dispatched called {@code jthrow()}:
   * their {@code call()} throws (or returns null) on the JVM, so the batch's GPU results are
   * discarded and the caller recomputes it with {@code call()}.
   */
  void checkThrown(BufferSet set, int rows) {
    control.clear();
    control.limit(4);
    set.control.read(LoopGuard.THROWN_OFFSET, control);
    int thrown = control.getInt(0);
    if (thrown > 0) {
      throw GpuException.of(Code.RECOMPUTE, String.format("%,d of %,d rows of GPU UDF(s) %s are rows whose Java call() "
          + "throws or returns null, which a kernel cannot; the batch's GPU results were discarded.", thrown, rows,
          udfNames(false)), "recompute the batch with the UDF's call() on the CPU (vkspark's Spark plugin does), so "
          + "the query throws, or not, exactly as without the GPU.");
    }
  }

  /** The calls' UDF names, quoted ({@code loopsOnly}: those with loops), for messages. */
  String udfNames(boolean loopsOnly) {
    List<String> names = new ArrayList<>();
    for (KernelCall c : calls) {
      if (!loopsOnly || c.kernel().hasLoops()) {
        names.add("'" + c.kernel().signature().name() + "'");
      }
    }
    return String.join(", ", names.isEmpty() ? List.of("?") : names);
  }
}
