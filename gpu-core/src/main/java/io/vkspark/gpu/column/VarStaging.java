package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Staging of a runner's variable-width arguments (strings, binaries, arrays): how many elements
 * the data buffers hold, how many the pending rows use, which rows still fit, and the copy of a
 * run of rows (offsets rebased behind the elements already staged, elements, element validity).
 * Rows and elements fill up independently, so a batch of long strings dispatches before its rows
 * fill the buffers.
 */
final class VarStaging implements AutoCloseable {
  /** Fewest elements per variable-width data buffer. */
  static final long MIN_ELEMENTS = 1L << 16;

  private final List<SqlType> inputTypes;
  private final BufferAllocator allocator;
  /** Input columns of a variable-width type that some call reads. */
  private final int[] columns;
  /** Elements each variable-width column's data buffer holds (grows in powers of two with the rows seen). */
  private long capacity;
  /** Elements of each variable-width column staged in the buffer set for the rows not yet dispatched. */
  private final long[] used;
  /**
   * Host copy of each array column's element validity for the pending rows: bits are assembled here
   * and written to the device with a plain copy, because reading device memory from the CPU (as a
   * read-modify-write of a shared word would) is very slow on discrete GPUs.
   */
  private final ArrowBuf[] validHost;

  VarStaging(List<KernelCall> calls, List<SqlType> inputTypes, BufferAllocator allocator) {
    this.inputTypes = inputTypes;
    this.allocator = allocator;
    Set<Integer> read = new TreeSet<>();
    calls.forEach(c -> Arrays.stream(c.argColumns()).filter(i -> i >= 0 && inputTypes.get(i).isVariableWidth()).forEach(read::add));
    this.columns = read.stream().mapToInt(Integer::intValue).toArray();
    this.used = new long[inputTypes.size()];
    this.validHost = new ArrowBuf[inputTypes.size()];
  }

  /** Whether some call reads a variable-width column. */
  boolean any() {
    return columns.length > 0;
  }

  /** Elements each data buffer holds. */
  long capacity() {
    return capacity;
  }

  void capacity(long elements) {
    capacity = elements;
  }

  /** Data buffers of {@code need} elements: a power of two from {@link #MIN_ELEMENTS}, at most {@link BatchRunner#MAX_VAR_ELEMENTS}. */
  static long shape(long need) {
    return Math.min(BatchRunner.MAX_VAR_ELEMENTS, Long.highestOneBit(Math.max(need, MIN_ELEMENTS) - 1) << 1);
  }

  /**
   * Elements the data buffers should hold for the first {@code rows} rows of this append behind
   * what is staged: a power of two, at least {@link #MIN_ELEMENTS}, at most
   * {@link BatchRunner#MAX_VAR_ELEMENTS}; 0 without variable-width columns.
   */
  long shapeFor(List<InputColumn> inputs, int rows) {
    if (columns.length == 0) {
      return 0;
    }
    long need = Math.max(MIN_ELEMENTS, need(inputs, 0, rows));
    return Math.min(BatchRunner.MAX_VAR_ELEMENTS, Long.highestOneBit(need - 1) << 1);
  }

  /** The most elements any variable-width column needs for rows {@code [from, from + n)} behind those staged. */
  long need(List<InputColumn> inputs, int from, int n) {
    long need = 0;
    for (int c : columns) {
      VarColumn v = (VarColumn) inputs.get(c);
      need = Math.max(need, used[c] + v.offset(from + n) - v.offset(from));
    }
    return need;
  }

  /** The most rows from {@code from}, up to {@code n}, whose elements fit every data buffer behind what is staged. */
  int fit(List<InputColumn> inputs, int from, int n) {
    for (int c : columns) {
      VarColumn v = (VarColumn) inputs.get(c);
      long room = capacity - used[c];
      int base = v.offset(from);
      if (v.offset(from + n) - base <= room) {
        continue;
      }
      int lo = 0;
      int hi = n; // offset(from + lo) fits, offset(from + hi) does not
      while (hi - lo > 1) {
        int mid = (lo + hi) >>> 1;
        if (v.offset(from + mid) - base <= room) {
          lo = mid;
        } else {
          hi = mid;
        }
      }
      n = lo;
    }
    return n;
  }

  /** The data buffers are free again (their rows were dispatched, or dropped). */
  void reset() {
    Arrays.fill(used, 0L);
  }

  /**
   * Copies rows {@code [from, from + n)} of variable-width column {@code c} to device row
   * {@code at}: the offsets rebased behind the elements already staged, the elements and, for
   * arrays, their validity.
   */
  void upload(BufferSet set, int c, VarColumn v, int from, int n, int at, BatchMeter meter) {
    SqlType t = inputTypes.get(c);
    GpuBuffer offsets = set.inputs[c];
    int base = v.offset(from);
    long staged = used[c];
    long address = offsets.hostAddress();
    for (int k = 0; k <= n; k++) {
      RawMemory.memPutInt(address + 4L * (at + k), (int) (staged + v.offset(from + k) - base));
    }
    offsets.flush(4L * at, 4L * (n + 1));
    meter.uploaded(4L * (n + 1));
    int elements = v.offset(from + n) - base;
    if (elements == 0) {
      return;
    }
    int width = VarArgs.elementBytes(t);
    GpuBuffer data = set.varData[c];
    v.copyElements(base, elements, data.hostAddress() + staged * width);
    data.flush(staged * width, (long) elements * width);
    meter.uploaded((long) elements * width);
    GpuBuffer valid = set.varValid[c];
    if (valid != null) {
      long host = validHost(c).memoryAddress();
      if (v.hasElementNulls()) {
        v.copyElementValidity(base, elements, host, staged);
      } else {
        Bits.fill(host, staged, elements);
      }
      long first = (staged >>> 6) << 3;
      long end = ((staged + elements + 63) >>> 6) << 3;
      RawMemory.memCopy(host + first, valid.hostAddress() + first, end - first);
      valid.flush(first, end - first);
      meter.uploaded(end - first);
    }
    used[c] = staged + elements;
  }

  /** The host bitmap of array column {@code c}'s element validity, holding the data buffers' elements. */
  private ArrowBuf validHost(int c) {
    long bytes = SqlType.BOOLEAN.bytesFor(capacity);
    if (validHost[c] == null || validHost[c].capacity() < bytes) {
      if (validHost[c] != null) {
        validHost[c].close();
      }
      validHost[c] = allocator.buffer(bytes);
    }
    return validHost[c];
  }

  @Override
  public void close() {
    for (ArrowBuf b : validHost) {
      if (b != null) {
        b.close();
      }
    }
  }
}
