package io.vkspark.gpu.column.input;

import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.VarArgs;

/**
 * An argument column of a variable-width type ({@link SqlType#isVariableWidth()}: string, binary,
 * arrays), as the {@code BatchRunner} reads it: Arrow's layout of offsets into a run of elements
 * (bytes for strings and binary, values for arrays), plus, for arrays, the validity of each element.
 * The runner rebases the offsets of the rows it stages, so they need not start at 0.
 *
 * <p>{@link #copyValues} is not used for these columns. Implementations: Arrow vectors
 * ({@link ArrowInputs}) and rows staged on the heap ({@link StagedVarColumn}).
 */
public interface VarColumn extends InputColumn {
  /**
   * The index of row {@code row}'s first element, for {@code row} in {@code [0, rows()]}; row
   * {@code r} holds elements {@code [offset(r), offset(r + 1))}. Non-decreasing.
   */
  int offset(int row);

  /** Copies elements {@code [from, from + count)} (each {@link VarArgs#elementBytes} wide) to {@code dst}. */
  void copyElements(int from, int count, long dst);

  /** Whether an element may be null (arrays only); false lets the runner mark every element valid. */
  boolean hasElementNulls();

  /**
   * Copies the validity bits of elements {@code [from, from + count)} to bit {@code dstBit} of the
   * bitmap at {@code dst} (whole 64-bit words; bits below {@code dstBit} in its word are kept).
   */
  void copyElementValidity(int from, int count, long dst, long dstBit);

  @Override
  default void copyValues(int start, int count, long dst) {
    throw new UnsupportedOperationException(type().sqlName() + " columns are staged through offset() and copyElements()");
  }
}
