package io.vkspark.gpu.column.input;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.VarArgs;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A variable-width column built row by row on the Java heap, for sources that are not Arrow
 * vectors (Spark's own column vectors, tests): strings and binary as bytes, arrays element by
 * element, nulls of rows and of elements. Reusable: {@link #reset()} keeps the arrays it grew.
 *
 * <pre>{@code
 * StagedVarColumn v = StagedVarColumn.of(SqlType.ARRAY_FLOAT);
 * v.addFloat(1f); v.addNullElement(); v.endRow();   // [1.0, null]
 * v.appendNull();                                   // null
 * v.endRow();                                       // []
 * }</pre>
 *
 * <p>Not thread-safe.
 */
public final class StagedVarColumn implements VarColumn {
  private final SqlType type;
  private final int width;
  private int rows;
  private int[] offsets = new int[65];
  private ByteBuffer data;
  private int elements;
  private long[] validity = new long[1];
  private long[] elementValidity = new long[1];
  private boolean anyNull;
  private boolean anyElementNull;

  private StagedVarColumn(SqlType type) {
    if (!type.isVariableWidth()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, type.sqlName() + " is not a variable-width type.",
          "stage string, binary or array columns here; fixed-width columns go through ArrowInputs.");
    }
    this.type = type;
    this.width = VarArgs.elementBytes(type);
    this.data = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** An empty column of {@code type} (string, binary or an array type). */
  public static StagedVarColumn of(SqlType type) {
    return new StagedVarColumn(type);
  }

  /** Drops every row, keeping the memory. */
  public StagedVarColumn reset() {
    rows = 0;
    elements = 0;
    anyNull = false;
    anyElementNull = false;
    data.clear();
    Arrays.fill(validity, 0L);
    Arrays.fill(elementValidity, 0L);
    return this;
  }

  /** Appends a row of bytes (string as UTF-8, binary). */
  public StagedVarColumn appendBytes(byte[] bytes) {
    return appendBytes(bytes, 0, bytes.length);
  }

  /** Appends a row of {@code len} bytes of {@code bytes} from {@code off}. */
  public StagedVarColumn appendBytes(byte[] bytes, int off, int len) {
    requireBytes();
    room(len);
    data.put(bytes, off, len);
    markValid(elements, len);
    elements = Math.addExact(elements, len);
    return endRow();
  }

  /** Adds an element to the row being built (array<float>). */
  public StagedVarColumn addFloat(float v) {
    room(1);
    data.putFloat(v);
    return added(true);
  }

  /** Adds an element to the row being built (array<double>). */
  public StagedVarColumn addDouble(double v) {
    room(1);
    data.putDouble(v);
    return added(true);
  }

  /** Adds an element to the row being built (array<int>). */
  public StagedVarColumn addInt(int v) {
    room(1);
    data.putInt(v);
    return added(true);
  }

  /** Adds a null element (zeros in the data) to the row being built. */
  public StagedVarColumn addNullElement() {
    room(1);
    data.put(new byte[width]);
    anyElementNull = true;
    return added(false);
  }

  /** Ends the row being built: it holds the elements added since the last row ended. */
  public StagedVarColumn endRow() {
    if (rows + 2 > offsets.length) {
      offsets = Arrays.copyOf(offsets, Math.max(rows + 2, offsets.length * 2));
    }
    offsets[rows + 1] = elements;
    validity = grow(validity, rows + 1);
    validity[rows >>> 6] |= 1L << (rows & 63);
    rows++;
    return this;
  }

  /** Appends a null row (no elements). Elements added since the last row ended would belong to it: none may be. */
  public StagedVarColumn appendNull() {
    if (elements != offsets[rows]) {
      throw new IllegalStateException("appendNull() after elements of an unfinished row; call endRow() first");
    }
    if (rows + 2 > offsets.length) {
      offsets = Arrays.copyOf(offsets, Math.max(rows + 2, offsets.length * 2));
    }
    offsets[rows + 1] = elements;
    validity = grow(validity, rows + 1);
    anyNull = true;
    rows++;
    return this;
  }

  private StagedVarColumn added(boolean valid) {
    if (valid) {
      markValid(elements, 1);
    }
    elements = Math.addExact(elements, 1);
    return this;
  }

  private void requireBytes() {
    if (type != SqlType.STRING && type != SqlType.BINARY) {
      throw new IllegalStateException(type.sqlName() + " rows are built with add...() and endRow()");
    }
  }

  private void room(int count) {
    long need = (long) data.position() + (long) count * width;
    if (need > Integer.MAX_VALUE - 16) {
      throw GpuException.of(Code.SIZE, "a staged " + type.sqlName() + " column would exceed 2 GiB of elements.",
          "use smaller batches (spark.vkspark.batchRows).");
    }
    if (need > data.capacity()) {
      ByteBuffer bigger = ByteBuffer.allocate((int) Math.min(Integer.MAX_VALUE - 16, Math.max(need, 2L * data.capacity())))
          .order(ByteOrder.LITTLE_ENDIAN);
      data.flip();
      bigger.put(data);
      data = bigger;
    }
  }

  private void markValid(int from, int count) {
    elementValidity = grow(elementValidity, from + count);
    for (int e = from; e < from + count; e++) {
      elementValidity[e >>> 6] |= 1L << (e & 63);
    }
  }

  private static long[] grow(long[] bits, int count) {
    int words = (count + 63) >>> 6;
    return words <= bits.length ? bits : Arrays.copyOf(bits, Math.max(words, bits.length * 2));
  }

  @Override
  public SqlType type() {
    return type;
  }

  @Override
  public int rows() {
    return rows;
  }

  @Override
  public int offset(int row) {
    return offsets[row];
  }

  @Override
  public void copyElements(int from, int count, long dst) {
    RawMemory.copyFromArray(data.array(), (long) from * width, dst, (long) count * width);
  }

  @Override
  public boolean hasElementNulls() {
    return anyElementNull;
  }

  @Override
  public void copyElementValidity(int from, int count, long dst, long dstBit) {
    for (int done = 0; done < count; done += 64) {
      int k = Math.min(64, count - done);
      long bits = 0;
      for (int b = 0; b < k; b++) {
        int e = from + done + b;
        bits |= ((elementValidity[e >>> 6] >>> (e & 63)) & 1L) << b;
      }
      Bits.write(dst, dstBit + done, bits, k);
    }
  }

  @Override
  public boolean hasNulls() {
    return anyNull;
  }

  @Override
  public void andValidity(long dst, int n) {
    for (int w = 0; w < (n + 63) >>> 6; w++) {
      long v = w < validity.length ? validity[w] : 0L;
      RawMemory.memPutLong(dst + 8L * w, RawMemory.memGetLong(dst + 8L * w) & v);
    }
  }
}
