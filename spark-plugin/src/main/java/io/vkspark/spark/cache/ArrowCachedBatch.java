package io.vkspark.spark.cache;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoSerializable;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import java.io.Externalizable;
import java.io.IOException;
import java.io.ObjectInput;
import java.io.ObjectOutput;
import java.io.UncheckedIOException;
import java.lang.ref.Cleaner;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.sql.columnar.CachedBatch;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.util.KnownSizeEstimation;

/**
 * One cached batch of vkspark's cache: all its columns, uncompressed in Arrow layout, in one block of
 * native memory (each buffer 64-byte aligned), which scans read in place through {@link CachedColumn}s.
 *
 * <p>Lifetime: Spark's memory store holds the batch as a deserialized value. Spark 4.2 closes
 * {@code AutoCloseable} values when it removes or evicts a block ({@code MemoryStore.freeMemoryEntry}),
 * which calls {@link #close}; scans that still read the batch hold a reference ({@link #retain}), so
 * the memory is freed when the last of them lets go. Where Spark drops a batch without closing it
 * (older Spark lines, a block that did not fit in memory, batches read back from disk), a
 * {@link Cleaner} frees the memory once the batch is unreachable. Its size reaches Spark's storage
 * accounting through {@link KnownSizeEstimation}, so the memory store evicts by the bytes it really holds.
 *
 * <p>Serialization (a MEMORY_AND_DISK block spilled to disk, or a serialized storage level) writes
 * the block's bytes, with Java serialization and with Kryo alike.
 */
public final class ArrowCachedBatch implements CachedBatch, KnownSizeEstimation, AutoCloseable, Externalizable,
    KryoSerializable {
  private static final long serialVersionUID = 1L;
  private static final Cleaner CLEANER = Cleaner.create();
  private static final long ALIGN = 64;
  private static final int CHUNK = 1 << 16;
  private static final AtomicLong IDS = new AtomicLong();

  private int rows;
  private CachedType[] types;
  private int[] nullCounts;
  private long[] dataBytes;
  /** Least and greatest non-null value of each int32/int64 column (min > max: none), found when built. */
  private long[] mins;
  private long[] maxs;
  private transient long[] validity;
  private transient long[] values;
  private transient long[] data;
  private transient long bytes;
  private transient long address;
  private transient Cleaner.Cleanable cleanable;
  private final transient AtomicInteger refs = new AtomicInteger(1);
  private final transient AtomicBoolean closed = new AtomicBoolean();
  /** This JVM's id of the batch (a deserialized copy gets its own): the key of its columns' device copies. */
  private final transient long id = IDS.incrementAndGet();

  /** For deserialization only. */
  public ArrowCachedBatch() {}

  /** A batch of {@code rows} rows with room for {@code dataBytes[c]} string bytes in column c; contents unset. */
  ArrowCachedBatch(int rows, CachedType[] types, int[] nullCounts, long[] dataBytes) {
    this.rows = rows;
    this.types = types;
    this.nullCounts = nullCounts;
    this.dataBytes = dataBytes;
    this.mins = new long[types.length];
    this.maxs = new long[types.length];
    Arrays.fill(mins, 0);
    Arrays.fill(maxs, -1); // unknown until bound(): "no value", never read before
    allocate();
  }

  /**
   * Finds the range of each int32/int64 column's non-null values (once, when the batch is built), so
   * a grouping key over the column is bounded without reading it again ({@link CachedColumn#hasBounds}).
   */
  void bound() {
    for (int c = 0; c < types.length; c++) {
      if (types[c] != CachedType.INT32 && types[c] != CachedType.INT64) {
        continue;
      }
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      boolean wide = types[c] == CachedType.INT64;
      long v = valuesAddress(c);
      long valid = validityAddress(c);
      for (int r = 0; r < rows; r++) {
        if (nullCounts[c] > 0 && (Platform.getByte(null, valid + (r >>> 3)) & (1 << (r & 7))) == 0) {
          continue;
        }
        long x = wide ? Platform.getLong(null, v + 8L * r) : Platform.getInt(null, v + 4L * r);
        min = Math.min(min, x);
        max = Math.max(max, x);
      }
      mins[c] = min <= max ? min : 0;
      maxs[c] = min <= max ? max : -1;
    }
  }

  private void allocate() {
    int n = types.length;
    validity = new long[n];
    values = new long[n];
    data = new long[n];
    long at = 0;
    for (int c = 0; c < n; c++) {
      validity[c] = at;
      at = align(at + CachedType.bitmapBytes(rows));
      values[c] = at;
      at = align(at + switch (types[c]) {
        case BOOLEAN -> CachedType.bitmapBytes(rows);
        case STRING -> 4L * (rows + 1);
        default -> (long) types[c].width() * rows;
      });
      data[c] = at;
      at = align(at + dataBytes[c]);
    }
    bytes = at;
    address = CacheMemory.allocate(bytes);
    cleanable = CLEANER.register(this, new Free(id, address, bytes));
  }

  private static long align(long at) {
    return Math.addExact(at, ALIGN - 1) & -ALIGN;
  }

  /**
   * Frees the block, and tells the device copies of its columns to go ({@link CacheMemory#onFree});
   * holds no reference to the batch, so the batch can become unreachable.
   */
  private record Free(long id, long address, long bytes) implements Runnable {
    @Override
    public void run() {
      CacheMemory.free(address, bytes);
      CacheMemory.freed(id);
    }
  }

  @Override
  public int numRows() {
    return rows;
  }

  /** The native bytes this batch holds: Spark's statistics and storage accounting see the real size. */
  @Override
  public long sizeInBytes() {
    return bytes;
  }

  @Override
  public long estimatedSize() {
    return bytes + 64L + 56L * types.length; // the header: type, null count, text bytes and bounds per column
  }

  /** This JVM's id of the batch, never reused. */
  long id() {
    return id;
  }

  int columns() {
    return types.length;
  }

  CachedType type(int c) {
    return types[c];
  }

  int nullCount(int c) {
    return nullCounts[c];
  }

  long validityAddress(int c) {
    return address + validity[c];
  }

  long valuesAddress(int c) {
    return address + values[c];
  }

  long dataAddress(int c) {
    return address + data[c];
  }

  long dataBytes(int c) {
    return dataBytes[c];
  }

  /** Least non-null value of int32/int64 column {@code c} (greater than {@link #max}: none, or not an integer column). */
  long min(int c) {
    return mins[c];
  }

  long max(int c) {
    return maxs[c];
  }

  /** Columns {@code select} (indexes into the cached columns) as a batch viewing this batch's memory. */
  ColumnarBatch view(int[] select, DataType[] sparkTypes) {
    ColumnVector[] out = new ColumnVector[select.length];
    for (int i = 0; i < select.length; i++) {
      out[i] = new CachedColumn(this, select[i], sparkTypes[i]);
    }
    return new ColumnarBatch(out, rows);
  }

  /** A reader starts using the memory; fails if the batch was already freed. */
  void retain() {
    while (true) {
      int r = refs.get();
      if (r == 0) {
        throw new IllegalStateException("cached batch read after it was freed");
      }
      if (refs.compareAndSet(r, r + 1)) {
        return;
      }
    }
  }

  /** A reader is done with the memory. */
  void release() {
    if (refs.decrementAndGet() == 0) {
      cleanable.clean();
    }
  }

  /** Whether the native memory is still held. */
  boolean live() {
    return refs.get() > 0;
  }

  /** Spark's memory store drops the batch (unpersist, eviction): freed now, or when the last reader lets go. */
  @Override
  public void close() {
    if (cleanable != null && closed.compareAndSet(false, true)) {
      release();
    }
  }

  @Override
  public void writeExternal(ObjectOutput out) throws IOException {
    writeHeader(out::writeInt, out::writeLong);
    byte[] chunk = new byte[(int) Math.min(CHUNK, bytes)];
    for (long at = 0; at < bytes; at += chunk.length) {
      int n = (int) Math.min(chunk.length, bytes - at);
      Platform.copyMemory(null, address + at, chunk, Platform.BYTE_ARRAY_OFFSET, n);
      out.write(chunk, 0, n);
    }
  }

  @Override
  public void readExternal(ObjectInput in) throws IOException {
    readHeader(in::readInt, in::readLong);
    byte[] chunk = new byte[(int) Math.min(CHUNK, bytes)];
    for (long at = 0; at < bytes; at += chunk.length) {
      int n = (int) Math.min(chunk.length, bytes - at);
      in.readFully(chunk, 0, n);
      Platform.copyMemory(chunk, Platform.BYTE_ARRAY_OFFSET, null, address + at, n);
    }
  }

  @Override
  public void write(Kryo kryo, Output out) {
    writeHeader(out::writeInt, out::writeLong);
    byte[] chunk = new byte[(int) Math.min(CHUNK, bytes)];
    for (long at = 0; at < bytes; at += chunk.length) {
      int n = (int) Math.min(chunk.length, bytes - at);
      Platform.copyMemory(null, address + at, chunk, Platform.BYTE_ARRAY_OFFSET, n);
      out.writeBytes(chunk, 0, n);
    }
  }

  @Override
  public void read(Kryo kryo, Input in) {
    try {
      readHeader(in::readInt, in::readLong);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    byte[] chunk = new byte[(int) Math.min(CHUNK, bytes)];
    for (long at = 0; at < bytes; at += chunk.length) {
      int n = (int) Math.min(chunk.length, bytes - at);
      in.readBytes(chunk, 0, n);
      Platform.copyMemory(chunk, Platform.BYTE_ARRAY_OFFSET, null, address + at, n);
    }
  }

  private interface IntOut {
    void put(int v) throws IOException;
  }

  private interface LongOut {
    void put(long v) throws IOException;
  }

  private interface IntIn {
    int get() throws IOException;
  }

  private interface LongIn {
    long get() throws IOException;
  }

  private void writeHeader(IntOut ints, LongOut longs) {
    try {
      ints.put(rows);
      ints.put(types.length);
      for (int c = 0; c < types.length; c++) {
        ints.put(types[c].ordinal());
        ints.put(nullCounts[c]);
        longs.put(dataBytes[c]);
        longs.put(mins[c]);
        longs.put(maxs[c]);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void readHeader(IntIn ints, LongIn longs) throws IOException {
    rows = ints.get();
    int n = ints.get();
    types = new CachedType[n];
    nullCounts = new int[n];
    dataBytes = new long[n];
    mins = new long[n];
    maxs = new long[n];
    for (int c = 0; c < n; c++) {
      types[c] = CachedType.values()[ints.get()];
      nullCounts[c] = ints.get();
      dataBytes[c] = longs.get();
      mins[c] = longs.get();
      maxs[c] = longs.get();
    }
    allocate();
  }
}
