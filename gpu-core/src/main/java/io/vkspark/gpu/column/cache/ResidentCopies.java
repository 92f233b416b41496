package io.vkspark.gpu.column.cache;

import io.vkspark.gpu.BufferCopy;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.PrerecordedDispatch;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.input.InputColumn;
import java.util.ArrayList;
import java.util.List;

/**
 * A runner's use of a {@link DeviceColumnCache}: the device copies that the next dispatch copies
 * into its input buffers, and the cached columns they read, pinned until that dispatch has been
 * awaited. Made without a cache, it copies nothing: every column is read from the host. One runner
 * (one thread).
 */
public final class ResidentCopies {
  private final DeviceColumnCache cache;
  private final List<BufferCopy> copies = new ArrayList<>();
  private final List<DeviceColumnCache.Pin> pins = new ArrayList<>();
  private long hits;
  private long uploads;
  private long copyNs;

  /** {@code cache}: null for none. */
  public ResidentCopies(DeviceColumnCache cache) {
    this.cache = cache;
  }

  /**
   * Copies rows {@code [from, from + n)} of {@code in} to row {@code at} of {@code dst} on the
   * device, in the next dispatch's submission, when the column is a cached one the cache holds (or
   * can take now). Bits move in whole 64-row words only: a last partial word would overwrite, at
   * dispatch time, bits of rows staged behind it.
   *
   * @return the rows copied this way, from {@code from} on (0 to {@code n}); the caller copies the
   *     rest from the host
   */
  public int copy(InputColumn in, SqlType t, GpuBuffer dst, int from, int n, int at) {
    if (cache == null || !(in instanceof ResidentColumn column) || dst.isStaged() || !serves(t)
        || (t.isBitPacked() && ((from & 63) != 0 || (at & 63) != 0))) {
      return 0;
    }
    int rows = t.isBitPacked() ? n & ~63 : n;
    if (rows == 0) {
      return 0;
    }
    DeviceColumnCache.Pin pin = cache.pin(column, t);
    if (pin == null) {
      return 0;
    }
    if (pin.uploaded) {
      uploads++;
    } else {
      hits++;
    }
    pins.add(pin);
    long src = t.isBitPacked() ? from / 8 : (long) from * t.byteWidth();
    long offset = t.isBitPacked() ? at / 8 : (long) at * t.byteWidth();
    long bytes = t.isBitPacked() ? rows / 8 : (long) rows * t.byteWidth();
    copies.add(new BufferCopy(pin.buffer(), src, dst, offset, bytes));
    return rows;
  }

  /**
   * Whether a cached column of type {@code t} can be read from a device copy: fixed-width values
   * other than decimals and the byte-packed tinyints and smallints; booleans in whole 64-row words.
   */
  public static boolean serves(SqlType t) {
    return !t.isVariableWidth() && !t.isBytePacked() && t != SqlType.DECIMAL;
  }

  /** Hands the pending copies to the dispatch about to be replayed. */
  public void beforeDispatch(PrerecordedDispatch dispatch) {
    if (!copies.isEmpty()) {
      dispatch.copyBeforeNextReplay(copies);
      copies.clear();
    }
  }

  /** The dispatch was awaited: adds its copies' device time; then {@link #release}. */
  public void afterDispatch(PrerecordedDispatch dispatch) {
    if (cache != null) {
      copyNs += dispatch.lastCopyNs();
    }
    release();
  }

  /** The dispatch was awaited (or failed): the columns it read are no longer pinned. */
  public void release() {
    copies.clear();
    pins.forEach(DeviceColumnCache.Pin::release);
    pins.clear();
  }

  /** Cached column uses read from the device copy already there. */
  public long hits() {
    return hits;
  }

  /** Device time of the copies from device copies into input buffers (GPU timestamps; 0 without them). */
  public long copyNs() {
    return copyNs;
  }

  /** Cached column uses that wrote the device copy first. */
  public long uploads() {
    return uploads;
  }
}
