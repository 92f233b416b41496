package io.vkspark.gpu.column;

import io.vkspark.gpu.ReplacementStats;
import io.vkspark.gpu.TimedDispatch;

/**
 * What one batch of a {@code BatchRunner} cost so far: bytes each way, device, wait and host time,
 * dispatches and the output slots' reuse. The runner and its reduction ({@code column.reduce})
 * count into the same meter, so {@link BatchStats} sees every byte that crossed the bus whoever
 * moved it. Belongs to one runner (one thread).
 */
public final class BatchMeter {
  private ReplacementStats slots = ReplacementStats.ZERO;
  private long uploaded;
  private long read;
  private long deviceNs;
  private long waitNs;
  private long hostNs;
  private long dispatches;

  public BatchMeter() {
  }

  /** {@code bytes} more written to device buffers. */
  public void uploaded(long bytes) {
    uploaded += bytes;
  }

  /** {@code bytes} more read back from device buffers. */
  public void read(long bytes) {
    read += bytes;
  }

  /** Host time spent since {@code startNs} (a {@link System#nanoTime()}). */
  public void hostSince(long startNs) {
    hostNs += System.nanoTime() - startNs;
  }

  /** Forgets the host time so far (a batch handed back untouched). */
  public void clearHost() {
    hostNs = 0;
  }

  public void slots(ReplacementStats s) {
    slots = s;
  }

  /** One more dispatch, and its wait and device time. */
  public void dispatched(TimedDispatch t) {
    dispatches++;
    waitNs += t.waitNs();
    deviceNs += t.deviceNs() == null ? 0 : t.deviceNs();
  }

  /** The batch of {@code rows} rows as one entry of the runner's totals. */
  public BatchStats batch(long rows) {
    return new BatchStats(1, rows, dispatches, uploaded, read, deviceNs, waitNs, hostNs, slots);
  }

  /** Starts a new batch. */
  public void reset() {
    slots = ReplacementStats.ZERO;
    uploaded = 0;
    read = 0;
    deviceNs = 0;
    waitNs = 0;
    hostNs = 0;
    dispatches = 0;
  }
}
