package io.vkspark.gpu.column.input;

import io.vkspark.gpu.column.SqlType;

/**
 * One argument column of a batch, as the {@code BatchRunner} reads it: values are copied straight
 * into GPU input memory in the GPU layout (Arrow's: fixed-width little-endian, booleans
 * bit-packed least significant bit first), and validity is ANDed into the result's bitmap.
 *
 * <p>Implementations adapt Arrow vectors ({@link ArrowInputs}) or Spark's column vectors, so the
 * data moves with one bulk copy from wherever it lives.
 */
public interface InputColumn {
  SqlType type();

  /** Rows in this batch. */
  int rows();

  /**
   * Copies the values of rows {@code [start, start + count)} to native memory at {@code dst}. For
   * bit-packed columns {@code start} is a multiple of 64 and the bits land from bit 0 of dst; at
   * least {@code type().bytesFor(count)} bytes are writable.
   */
  void copyValues(int start, int count, long dst);

  /** Whether any row may be null; false lets the runner skip this column's validity. */
  boolean hasNulls();

  /**
   * ANDs this column's validity (bit set = not null) for rows {@code [0, rows)} into the bitmap at
   * {@code dst}, which holds {@code SqlType.BOOLEAN.bytesFor(rows)} bytes (whole 64-bit words).
   */
  void andValidity(long dst, int rows);
}
