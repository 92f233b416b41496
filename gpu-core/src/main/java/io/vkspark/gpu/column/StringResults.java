package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A runner's host side of string and binary results and of row statuses ({@link StringGlsl}): per
 * call, the data bytes of the batch being built (a slot reused across batches, like the
 * fixed-width ones), the offsets read back and rebased behind the bytes of the earlier dispatches,
 * and the rows the kernel flagged: null results, and rows to be computed by {@code call()}, by
 * cause. After each dispatch it also says when a call's bytes outgrew its data buffer: the runner
 * grows the buffer ({@link BufferSet#growData}) and dispatches the same rows again. One per runner.
 */
final class StringResults implements AutoCloseable {
  private final List<KernelCall> calls;
  private final BufferAllocator allocator;
  private final ArrowBuf[] data;
  private final long[] used;
  /** Per call, the batch's flagged rows (batch rows) and their statuses, in the order read. */
  private final int[][] flaggedRows;
  private final byte[][] flaggedCause;
  private final int[] flaggedCount;
  /** Per call, after {@link #apply}: the batch's rows for call(), ascending. */
  private final int[][] cpuRows;
  private final long[] causeCounts = new long[CpuCause.values().length];
  private final ByteBuffer words = ByteBuffer.allocateDirect(4 * StringGlsl.STATUS_WORDS).order(ByteOrder.LITTLE_ENDIAN);
  private ArrowBuf scratch;

  StringResults(List<KernelCall> calls, BufferAllocator allocator) {
    this.calls = calls;
    this.allocator = allocator;
    int n = calls.size();
    this.data = new ArrowBuf[n];
    this.used = new long[n];
    this.flaggedRows = new int[n][];
    this.flaggedCause = new byte[n][];
    this.flaggedCount = new int[n];
    this.cpuRows = new int[n][];
    Arrays.fill(cpuRows, new int[0]);
    for (int i = 0; i < n; i++) {
      if (StringGlsl.varResult(calls.get(i).kernel().signature())) {
        data[i] = allocator.buffer(StringBuffers.MIN_DATA_BYTES);
      }
    }
  }

  /** Whether call {@code i} returns a string or binary (its vector takes a data buffer too). */
  boolean varResult(int i) {
    return data[i] != null;
  }

  /** Call {@code i}'s data bytes over the batch so far (length: its writer index). */
  ArrowBuf data(int i) {
    data[i].writerIndex(used[i]);
    return data[i];
  }

  /** Clears the status words of {@code set}'s calls before a dispatch. */
  void beforeDispatch(BufferSet set) {
    for (StringBuffers sb : set.strings) {
      if (sb != null) {
        words.clear();
        for (int k = 0; k < StringGlsl.STATUS_WORDS; k++) {
          words.putInt(0);
        }
        sb.status.write(0, words.flip());
      }
    }
  }

  /**
   * After a dispatch: grows the data buffer of each call whose bytes did not fit it. True when one
   * grew: the runner dispatches the same rows again.
   *
   * @throws GpuException SIZE when one dispatch's results of a call exceed what a buffer or Arrow holds
   */
  boolean grow(BufferSet set, long maxBufferBytes, String udf) {
    boolean grew = false;
    for (int i = 0; i < set.strings.length; i++) {
      StringBuffers sb = set.strings[i];
      if (sb == null || !sb.varResult()) {
        continue;
      }
      long need = Integer.toUnsignedLong(status(sb, StringGlsl.NEED));
      if (need > sb.dataBytes()) {
        long limit = Math.min(StringBuffers.MAX_DATA_BYTES, maxBufferBytes);
        if (need >= StringGlsl.SATURATED || need > limit) {
          throw GpuException.of(Code.SIZE, "the " + calls.get(i).kernel().signature().result().sqlName()
                  + " results of GPU UDF " + udf + " over one dispatch of rows need " + (need >= StringGlsl.SATURATED
                  ? "2 GiB or more" : need + " bytes") + ", more than one buffer holds (" + limit + " bytes).",
              "lower spark.vkspark.batchRows (rows per dispatch) so that one dispatch's results stay below " + limit
                  + " bytes.");
        }
        set.growData(i, need);
        grew = true;
      }
    }
    return grew;
  }

  /** Writes offset 0 of call {@code i}'s offsets slot for a new batch. */
  void begin(int i, ArrowBuf offsets) {
    if (varResult(i)) {
      offsets.setInt(0, 0);
    }
  }

  /**
   * Reads call {@code i}'s results of the {@code n} rows just dispatched, which are batch rows
   * {@code [at, at + n)}: offsets into {@code offsets} (rebased behind the batch's bytes so far) and
   * data into the call's data slot; and the rows it flagged. Returns the bytes read.
   */
  long read(BufferSet set, int i, int at, int n, ArrowBuf offsets) {
    StringBuffers sb = set.strings[i];
    long bytes = 0;
    if (varResult(i)) {
      ArrowBuf s = scratch(4L * (n + 1));
      set.outputs[i].read(0, s.memoryAddress(), 4L * (n + 1));
      long base = used[i];
      long end = Integer.toUnsignedLong(s.getInt(4L * n));
      if (base + end > Integer.MAX_VALUE) {
        throw GpuException.of(Code.SIZE, "the string results of GPU UDF '" + calls.get(i).kernel().signature().name()
            + "' over one batch exceed 2 GiB, the most an Arrow string vector holds.",
            "lower spark.vkspark.batchRows so that one batch's results stay below 2 GiB.");
      }
      for (int r = 1; r <= n; r++) {
        offsets.setInt(4L * (at + r), (int) (base + Integer.toUnsignedLong(s.getInt(4L * r))));
      }
      if (data[i].capacity() < base + end) {
        ArrowBuf bigger = allocator.buffer(Math.max(base + end, 2 * data[i].capacity()));
        bigger.setBytes(0, data[i], 0, base);
        data[i].close();
        data[i] = bigger;
      }
      if (end > 0) {
        sb.data.read(0, data[i].memoryAddress() + base, end);
      }
      used[i] = base + end;
      bytes = 4L * (n + 1) + end;
    }
    if (sb != null) {
      bytes += readFlagged(sb, i, at);
    }
    return bytes;
  }

  private long readFlagged(StringBuffers sb, int i, int at) {
    int count = status(sb, StringGlsl.FLAGGED);
    if (count == 0) {
      return 0;
    }
    ArrowBuf s = scratch(8L * count);
    sb.flagged.read(0, s.memoryAddress(), 8L * count);
    int have = flaggedCount[i];
    if (flaggedRows[i] == null || flaggedRows[i].length < have + count) {
      int size = Math.max(have + count, flaggedRows[i] == null ? 64 : 2 * flaggedRows[i].length);
      flaggedRows[i] = flaggedRows[i] == null ? new int[size] : Arrays.copyOf(flaggedRows[i], size);
      flaggedCause[i] = flaggedCause[i] == null ? new byte[size] : Arrays.copyOf(flaggedCause[i], size);
    }
    for (int k = 0; k < count; k++) {
      flaggedRows[i][have + k] = at + s.getInt(8L * k);
      flaggedCause[i][have + k] = (byte) s.getInt(8L * k + 4);
    }
    flaggedCount[i] = have + count;
    return 8L * count;
  }

  /**
   * Applies call {@code i}'s flagged rows to its validity (a null result, or a row for call(), is
   * not the kernel's value): rows whose arguments were all non-null become null, and those flagged
   * for call() are kept, ascending, for {@link #cpuRows}. Returns how many rows became null.
   */
  long apply(int i, ArrowBuf validity) {
    int n = flaggedCount[i];
    if (n == 0) {
      cpuRows[i] = new int[0];
      return 0;
    }
    long nulls = 0;
    int[] cpu = new int[n];
    int m = 0;
    for (int k = 0; k < n; k++) {
      int row = flaggedRows[i][k];
      long word = validity.getLong(8L * (row >>> 6));
      long bit = 1L << (row & 63);
      if ((word & bit) == 0) {
        continue; // a null argument: null without the kernel, and without call()
      }
      validity.setLong(8L * (row >>> 6), word & ~bit);
      nulls++;
      int status = flaggedCause[i][k];
      if (status >= 2) {
        cpu[m++] = row;
        causeCounts[Math.min(status - 2, CpuCause.values().length - 1)]++;
      }
    }
    cpuRows[i] = Arrays.copyOf(cpu, m);
    Arrays.sort(cpuRows[i]);
    return nulls;
  }

  /** Call {@code i}'s rows of the last batch taken that {@code call()} must compute, ascending (null in the vector). */
  int[] cpuRows(int i) {
    return cpuRows[i].clone();
  }

  /** Rows handed to call() so far, per {@link CpuCause}. */
  long[] causeCounts() {
    return causeCounts.clone();
  }

  /** Forgets the batch being built (taken, or dropped). */
  void reset() {
    Arrays.fill(used, 0);
    Arrays.fill(flaggedCount, 0);
  }

  private int status(StringBuffers sb, int word) {
    words.clear().limit(4);
    sb.status.read(4L * word, words);
    return words.getInt(0);
  }

  private ArrowBuf scratch(long bytes) {
    if (scratch == null || scratch.capacity() < bytes) {
      if (scratch != null) {
        scratch.close();
      }
      scratch = allocator.buffer(Math.max(bytes, 1024));
    }
    return scratch;
  }

  @Override
  public void close() {
    for (ArrowBuf b : data) {
      if (b != null) {
        b.close();
      }
    }
    if (scratch != null) {
      scratch.close();
    }
  }
}
