package io.vkspark.gpu.column.run;

import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.NullFlags;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.input.Bits;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.input.RawMemory;
import io.vkspark.gpu.column.input.VarColumn;
import java.util.List;
import java.util.function.LongFunction;
import org.apache.arrow.memory.ArrowBuf;

/**
 * A batch's argument columns as a runner takes them: checked against the runner's types before
 * anything changes, their strict null semantics (a call's result is null where any of its
 * arguments is), and the copy of a run of fixed-width or bit-packed rows to any row of an input
 * buffer. Variable-width columns are {@link VarStaging}'s.
 */
final class BatchColumns {
  private BatchColumns() {
  }

  /** Refuses columns that do not match {@code inputTypes} or hold fewer than {@code rows} rows. */
  static void check(List<SqlType> inputTypes, List<InputColumn> inputs, int rows) {
    if (inputs.size() != inputTypes.size()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "batch has " + inputs.size() + " columns but the runner expects "
          + inputTypes.size() + ".", "pass the columns the runner was created with, in order.");
    }
    for (int c = 0; c < inputs.size(); c++) {
      InputColumn in = inputs.get(c);
      if (in.type() != inputTypes.get(c) || in.rows() < rows || (in.type().isVariableWidth() && !(in instanceof VarColumn))) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "column " + c + " is " + in.type().sqlName() + " with " + in.rows()
            + " rows; expected " + inputTypes.get(c).sqlName() + " with at least " + rows + ".",
            "pass columns of the runner's types holding every row of the batch.");
      }
    }
    if (rows < 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "batch of " + rows + " rows.", "pass 0 or more rows.");
    }
  }

  /**
   * Refuses a reduction over a call that computes its null rows ({@link NullFlags}): the reduction
   * reads the host's validity of the results, and such a call's is written on the device.
   */
  static void checkReduced(List<KernelCall> calls, ColumnReduction reduction) {
    for (KernelCall c : calls) {
      if (reduction != null && c.kernel().spec().nulls() != null) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + c.kernel().signature().name() + "' computes its null "
            + "rows on the device, and a reduction on the device does not read them yet.",
            "run it with a runner that reads its results back (no reduction), or give it the strict rule.");
      }
    }
  }

  /**
   * Copies the validity bits of rows {@code [from, from + n)} of {@code in} to bit {@code at} of
   * {@code buf} (a call computing its null rows reads them) and flushes them; all set for a column
   * without nulls.
   *
   * @return the bytes written to the device
   */
  static long copyValidity(InputColumn in, GpuBuffer buf, int from, int n, int at, LongFunction<ArrowBuf> scratch) {
    if (n == 0) {
      return 0;
    }
    if (!in.hasNulls()) {
      Bits.fill(buf.hostAddress(), at, n);
    } else {
      long bytes = SqlType.BOOLEAN.bytesFor((long) from + n);
      ArrowBuf s = scratch.apply(bytes);
      RawMemory.memSet(s.memoryAddress(), 0xff, bytes);
      in.andValidity(s.memoryAddress(), from + n); // from row 0: InputColumn has no other
      Bits.copy(s.memoryAddress(), from, buf.hostAddress(), at, n);
    }
    long first = (long) (at >>> 6) << 3;
    long bytes = SqlType.BOOLEAN.bytesFor((long) at + n) - first;
    buf.flush(first, bytes);
    return bytes;
  }

  /** Writes the AND of the call's argument validity to {@code address}; returns the null count. */
  static long validity(KernelCall call, List<InputColumn> inputs, long address, int rows) {
    long bytes = SqlType.BOOLEAN.bytesFor(rows);
    RawMemory.memSet(address, 0xff, bytes);
    boolean any = false;
    int[] cols = call.argColumns();
    NullFlags flags = call.kernel().spec().nulls(); // a flagged argument's nulls are the kernel's to compute
    for (int a = 0; a < cols.length; a++) {
      if (cols[a] >= 0 && strictAt(flags, a) && first(cols, flags, a) && inputs.get(cols[a]).hasNulls()) { // a constant is never null
        inputs.get(cols[a]).andValidity(address, rows);
        any = true;
      }
    }
    return any ? Bits.nullCount(address, bytes, rows) : 0;
  }

  private static boolean strictAt(NullFlags flags, int a) {
    return flags == null || !flags.args().get(a);
  }

  /** Whether argument {@code a} is the first strict one reading its column. */
  private static boolean first(int[] cols, NullFlags flags, int a) {
    for (int i = 0; i < a; i++) {
      if (cols[i] == cols[a] && strictAt(flags, i)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Copies rows {@code [from, from + n)} of a fixed-width or bit-packed column {@code in} of type
   * {@code t} to row {@code at} of {@code buf} and flushes them.
   *
   * @param scratch host memory of at least the given bytes, for bits off a 64-row boundary
   * @return the bytes written to the device
   */
  static long copy(InputColumn in, SqlType t, GpuBuffer buf, int from, int n, int at, LongFunction<ArrowBuf> scratch) {
    if (!t.isBitPacked()) {
      long offset = (long) at * t.byteWidth();
      long bytes = (long) n * t.byteWidth(); // tinyints and smallints land mid-word: no rounding up to the word
      in.copyValues(from, n, buf.hostAddress() + offset);
      buf.flush(offset, bytes);
      return bytes;
    }
    if ((from & 63) == 0 && (at & 63) == 0) {
      long bytes = t.bytesFor(n);
      in.copyValues(from, n, buf.hostAddress() + at / 8);
      buf.flush(at / 8, bytes);
      return bytes;
    }
    // Bits off a 64-row boundary: copy whole words from the aligned start, then shift them into place.
    int lead = from & 63;
    ArrowBuf s = scratch.apply(t.bytesFor(lead + n));
    in.copyValues(from - lead, lead + n, s.memoryAddress());
    Bits.copy(s.memoryAddress(), lead, buf.hostAddress(), at, n);
    long first = (long) (at >>> 6) << 3;
    long bytes = t.bytesFor(at + n) - first;
    buf.flush(first, bytes);
    return bytes;
  }
}
