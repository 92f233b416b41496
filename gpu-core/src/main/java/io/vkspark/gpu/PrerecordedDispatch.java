package io.vkspark.gpu;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;

/**
 * A command buffer recorded once (uploads of staged inputs, output clears, binds, direct or
 * indirect dispatches, barriers, readback copies) and replayed any number of times.
 *
 * <p>Unlike wgpu's single-submit command buffers, Vulkan allows resubmission once the fence has
 * signalled, so a replay costs one {@code vkQueueSubmit}. Between replays the caller rewrites the
 * inputs and the parameter buffer through their host views. One replay may be in flight at a
 * time: {@link #replay()} while one runs is an {@code IN_FLIGHT} error; use several recordings
 * (each with its own buffers) to overlap batches.
 *
 * <p>A recording is used by one thread at a time.
 */
public interface PrerecordedDispatch extends AutoCloseable {
  /** Submits the recording. */
  void replay();

  /**
   * Device-side copies that the next {@link #replay()} runs first, in the same submission, ahead
   * of the recording (which orders its reads after them). Each copy's buffers must stay open until
   * that replay has been awaited. An empty list clears them.
   *
   * @throws GpuException CLOSED or IN_FLIGHT as for {@link #replay()}; BINDING for a buffer of another device
   */
  void copyBeforeNextReplay(List<BufferCopy> copies);

  /**
   * Device-side copies that the next {@link #replay()} runs after the recording, in the same
   * submission, from what it wrote: {@link #await()} returns once they too are done, so a few
   * device-only results can be read back with no submission of their own. Each destination must be
   * an {@link BufferRole#OUTPUT} buffer (read with {@link GpuBuffer#read}); the buffers must stay
   * open until that replay has been awaited. An empty list clears them.
   *
   * @throws GpuException CLOSED or IN_FLIGHT as for {@link #replay()}; BINDING for a buffer of
   *     another device; INVALID_ARGUMENT for a destination that is not an OUTPUT buffer
   */
  void copyAfterNextReplay(List<BufferCopy> copies);

  /**
   * Device time of the copies ({@link #copyBeforeNextReplay}) of the last replay awaited, in
   * nanoseconds from GPU timestamps; 0 when it had none, or the queue has no timestamps. Not part of
   * that replay's {@link TimedDispatch#deviceNs()}, which times the recording.
   */
  long lastCopyNs();

  /**
   * Waits for the last replay; outputs stay in their buffers.
   *
   * @throws GpuException TIMEOUT past the device's fence timeout, DEVICE_LOST when the device is lost
   */
  TimedDispatch await();

  /**
   * Waits at most {@code limit} for the last replay: its timings once it finished (as
   * {@link #await()}), or null while it still runs (it stays in flight; wait again). Callers that
   * must stay responsive (deadlines, cancellation) wait in short slices with this.
   *
   * @throws GpuException DEVICE_LOST when the device is lost
   */
  TimedDispatch awaitFor(Duration limit);

  /** {@link #replay()} then {@link #await()}. */
  TimedDispatch run();

  boolean isInFlight();

  /** Number of completed replays. */
  long replays();

  /** Reads output {@code index} (whole buffer) into a new little-endian buffer. */
  ByteBuffer readOutput(int index);

  /**
   * Reads output {@code index} into caller storage: clears {@code out}, fills it from position 0
   * and flips it, reusing its memory.
   */
  void readOutputInto(int index, ByteBuffer out);

  /** The output buffers, in the order of the recorded steps and their output declarations. */
  List<GpuBuffer> outputs();

  boolean isClosed();

  /** Waits for a replay in flight, then releases the command buffer, fence and owned buffers. */
  @Override
  void close();
}
