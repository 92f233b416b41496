package io.vkspark.gpu.column;

import io.vkspark.gpu.ReplacementStats;

/**
 * What a {@code BatchRunner} did, summed over its batches: the figures behind the Spark metrics.
 *
 * @param batches batches run
 * @param rows rows run
 * @param dispatches GPU submissions (a batch above capacity takes several)
 * @param bytesUploaded bytes written into GPU input memory
 * @param bytesRead bytes read back from GPU output memory
 * @param deviceNs GPU time from timestamps (0 where the device has none)
 * @param waitNs host time spent waiting for the GPU
 * @param hostNs host time spent copying inputs and results and computing validity
 * @param slots output-slot reuse, summed
 */
public record BatchStats(long batches, long rows, long dispatches, long bytesUploaded, long bytesRead, long deviceNs,
                         long waitNs, long hostNs, ReplacementStats slots) {
  public static final BatchStats ZERO = new BatchStats(0, 0, 0, 0, 0, 0, 0, 0, ReplacementStats.ZERO);

  public BatchStats plus(BatchStats o) {
    return new BatchStats(batches + o.batches, rows + o.rows, dispatches + o.dispatches, bytesUploaded + o.bytesUploaded,
        bytesRead + o.bytesRead, deviceNs + o.deviceNs, waitNs + o.waitNs, hostNs + o.hostNs, slots.plus(o.slots));
  }
}
