package io.vkspark.gpu;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Outputs of one dispatch with where its time went (the seed's {@code TimedDispatchResult}).
 *
 * @param outputs output bytes in the program's output order; empty for replays, whose outputs
 *     stay in their buffers until read
 * @param wallNs host time from the start of the call to its return
 * @param deviceNs GPU time between the first and last command, from timestamp queries; null when
 *     the queue has no timestamps
 * @param enqueueNs host time spent before waiting (recording or host writes, and the submit)
 * @param waitNs host time spent waiting for the fence and collecting outputs
 */
public record TimedDispatch(List<ByteBuffer> outputs, long wallNs, Long deviceNs, long enqueueNs, long waitNs) {
  public TimedDispatch {
    outputs = List.copyOf(outputs);
  }
}
