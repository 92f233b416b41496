package io.vkspark.gpu.column.run;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A runner's buffer set on loan from the device's {@link BufferPool}, and the shape it asks for:
 * rows per dispatch grow in powers of two with the batches seen, up to a ceiling that the device's
 * memory may lower (the pool then hands out a smaller set, and the runner splits its batches into
 * more dispatches instead of failing). One per runner (one thread).
 */
final class BufferLease {
  private static final int MIN_SHAPE = 4096;
  private static final Logger LOG = LoggerFactory.getLogger(BatchRunner.class);

  private final BufferPool pool;
  private final List<KernelCall> calls;
  private final List<SqlType> inputTypes;
  private final ColumnReduction reduction;
  /** Most rows per dispatch: the configured batch size, lowered when the device runs out of memory. */
  private int ceiling;
  /** Rows the current buffer set holds: grows in powers of two with the batches seen, up to the ceiling. */
  private int capacity;
  private BufferSet set;
  private long oomSplits;
  private long bufferBytes;

  BufferLease(BufferPool pool, List<KernelCall> calls, List<SqlType> inputTypes, ColumnReduction reduction, int ceiling) {
    this.pool = pool;
    this.calls = calls;
    this.inputTypes = inputTypes;
    this.reduction = reduction;
    this.ceiling = ceiling;
  }

  /** The set on loan; null between loans. */
  BufferSet set() {
    return set;
  }

  /** Most rows per dispatch. */
  int ceiling() {
    return ceiling;
  }

  /** Rows per dispatch of the sets asked for now. */
  int capacity() {
    return capacity;
  }

  /** The smallest power of two (at least 4,096) that holds {@code rows}, at most the ceiling. */
  int shapeFor(int rows) {
    int pow2 = Integer.highestOneBit(Math.max(rows, MIN_SHAPE) - 1) << 1;
    return Math.min(ceiling, pow2 <= 0 ? Integer.MAX_VALUE : pow2);
  }

  /** Asks for sets of at least {@code rows} rows from the next loan on. */
  void grow(int rows) {
    capacity = Math.max(capacity, rows);
  }

  /**
   * Takes a buffer set of the current capacity, with data buffers of {@code varElements} elements,
   * from the pool. The pool may hand out a smaller one when device memory is short.
   */
  BufferSet acquire(long varElements) {
    set = pool.acquire(new BufferSet.Key(calls, inputTypes, capacity, varElements, reduction));
    set.writeLiterals(calls); // another runner's values may be there (they are not part of the key)
    int got = set.key.capacity();
    if (got < capacity) {
      // out of device memory: later sets are no larger. A small set asked for small batches (a
      // runner appending child batches one by one) leaves the ceiling where it was.
      ceiling = Math.min(ceiling, got);
    }
    while (capacity > got) {
      capacity = BufferPool.smaller(capacity);
      oomSplits++;
    }
    capacity = got;
    bufferBytes = Math.max(bufferBytes, set.deviceBytes);
    return set;
  }

  /** Gives the set back to the pool (no dispatch may be in flight on it). */
  void release() {
    if (set != null) {
      pool.release(set);
      set = null;
    }
  }

  /** A set whose dispatch may still run: never reused; the device closes it. */
  void abandon() {
    BufferSet s = set;
    set = null;
    pool.abandon(s);
  }

  /** Gives the set back once its last dispatch ends, within the abort grace; abandons it otherwise. */
  void close() {
    if (set == null) {
      return;
    }
    boolean idle = !set.dispatch.isInFlight();
    if (!idle) {
      try {
        idle = set.dispatch.awaitFor(DispatchGuard.ABORT_GRACE) != null;
      } catch (GpuException e) {
        LOG.warn("vkspark: waiting for the last dispatch while closing: {}", e.getMessage());
      }
    }
    if (idle) {
      release();
    } else {
      abandon();
    }
  }

  /** Device memory of the largest set on loan so far. */
  long bufferBytes() {
    return bufferBytes;
  }

  /** How often the capacity was halved because the device ran out of memory. */
  long outOfMemorySplits() {
    return oomSplits;
  }
}
