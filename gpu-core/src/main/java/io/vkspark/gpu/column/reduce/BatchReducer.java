package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.column.BatchMeter;
import io.vkspark.gpu.column.input.Bits;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.input.RawMemory;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction.Grouped;
import io.vkspark.gpu.column.reduce.ColumnReduction.Result;
import io.vkspark.gpu.column.reduce.ColumnReduction.Value;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntToLongFunction;
import java.util.function.LongFunction;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * The reducing half of a {@code BatchRunner} built with a {@link ColumnReduction}: the runner stages
 * and dispatches the rows as for any batch, and around each dispatch this writes what the
 * reduction reads (the calls' validity, a grouped batch's key range) and folds what it wrote
 * back, so the per-row results never leave the device. Also finds a grouped batch's key range
 * before the batch is staged. One per runner (one thread).
 */
public final class BatchReducer implements AutoCloseable {
  private final ColumnReduction reduction;
  private final HostFold fold;
  private final BufferAllocator allocator;
  private final BatchMeter meter;
  /** The runner's scratch host memory, grown on demand (shared: one is in use at a time). */
  private final LongFunction<ArrowBuf> scratch;
  private final int workgroupSize;
  private final int maxGroupsX;
  /** The staged batch's reduced values so far (one per aggregate); null before its first dispatch. */
  private Value[] reduced;
  /** Grouped: the staged batch's values so far per key slot; null before its first dispatch. */
  private Value[][] reducedByKey;
  /** Grouped: the staged batch's key range (slot s is key keyBase + s) and null keys' slot, if it has any. */
  private long keyBase;
  private int keyNullSlot;
  private boolean keyNulls;
  /** Grouped: host copy of the staged batch's key validity (uploaded per dispatch when it has null keys). */
  private ArrowBuf keyValidHost;
  /** Grouped: host side of the key parameters written before each dispatch. */
  private ArrowBuf keyParams;
  /** Grouped: batches whose key range did not fit the slots (left to the caller). */
  private long wideBatches;
  /** Grouped: batches whose key range the key's expression bounded alone. */
  private long staticRanges;
  /** Grouped: batches whose key range came from their source column's known bounds ({@link BoundedColumn}). */
  private long boundedRanges;
  /** The row filter's input columns (empty without one) and, per input, whether the staged rows have nulls. */
  private final int[] filterInputs;
  private final boolean[] filterNulls;
  /** Per filter input: the staged rows' validity, kept on the host once one of them is null (else unused). */
  private final ArrowBuf[] filterValidHost;
  /** The bits of {@code vk_fnulls} the last {@link #beforeDispatch} wrote (filter inputs whose validity it uploaded). */
  private int filterNullMask;
  /** Grouped and filtered: the staged batch's slot of the rows the filter drops. */
  private int filterSlot;

  /**
   * @param meter the runner's meter of the batch, which counts the bytes this moves
   * @param scratch the runner's scratch memory of at least the given bytes
   */
  public BatchReducer(ColumnReduction reduction, BufferAllocator allocator, BatchMeter meter,
                      LongFunction<ArrowBuf> scratch, int workgroupSize, int maxGroupsX) {
    this.reduction = reduction;
    this.fold = reduction.fold();
    this.allocator = allocator;
    this.meter = meter;
    this.scratch = scratch;
    this.workgroupSize = workgroupSize;
    this.maxGroupsX = maxGroupsX;
    this.filterInputs = reduction.filterInputs();
    this.filterNulls = new boolean[filterInputs.length];
    this.filterValidHost = new ArrowBuf[filterInputs.length];
  }

  public ColumnReduction reduction() {
    return reduction;
  }

  /**
   * Grouped: bounds the key's range over {@code rows} rows: from its expression alone where that
   * bounds it within the slots ({@link GroupKey#staticRange}: no value is read), else from the
   * source's known bounds ({@link BoundedColumn}: a cached column's) or its values, read on the host; keeps a host copy of the source's validity. Whether
   * the range, plus a slot for null keys, fits the slots; a batch that does not fit is left to the
   * caller.
   *
   * @param inputs the batch's input columns; the key is computed from one of them, or from a call's
   *     result (whose nulls are known only once the batch is staged, so a slot is kept for them)
   */
  public boolean admit(List<InputColumn> inputs, int rows) {
    int column = reduction.keyColumn();
    if (!keyRange(column >= 0 ? inputs.get(column) : null, rows)) {
      wideBatches++;
      return false;
    }
    return true;
  }

  /** Grouped batches whose key range was too wide for the slots ({@link #admit} said no). */
  public long wideBatches() {
    return wideBatches;
  }

  /** Grouped batches whose key range came from the key's expression alone (no value read on the host). */
  public long staticRanges() {
    return staticRanges;
  }

  /** Grouped batches whose key range came from their source's known bounds (no value read on the host). */
  public long boundedRanges() {
    return boundedRanges;
  }

  /** Finds the key's range (sets keyBase, keyNullSlot, keyNulls and the host copy of the key validity); whether it fits. */
  private boolean keyRange(InputColumn source, int rows) {
    GroupKey key = reduction.key();
    boolean nulls = true; // a call's result: its nulls are known once staged
    long valid = 0;
    if (source != null) {
      long vbytes = SqlType.BOOLEAN.bytesFor(rows);
      if (keyValidHost == null || keyValidHost.capacity() < vbytes) {
        if (keyValidHost != null) {
          keyValidHost.close();
        }
        keyValidHost = allocator.buffer(Math.max(vbytes, 64));
      }
      valid = keyValidHost.memoryAddress();
      RawMemory.memSet(valid, 0xff, vbytes);
      nulls = false;
      if (source.hasNulls() && rows > 0) {
        source.andValidity(valid, rows);
        nulls = Bits.nullCount(valid, vbytes, rows) > 0;
      }
    }
    int slots = reduction.slots();
    int nullSlots = (nulls ? 1 : 0) + (reduction.filter() != null ? 1 : 0); // and the slot of the rows a filter drops
    KeyRange range = key.staticRange();
    if (range.values() > slots - nullSlots) {
      if (source == null) {
        return false; // a call's results are on the device only
      }
      KeyRange known = source instanceof BoundedColumn b ? b.bounds() : null;
      if (known != null) {
        boundedRanges++;
      }
      range = key.range(known != null ? known : sourceRange(source, rows, nulls, valid));
    } else {
      staticRanges++;
    }
    long values = range.values();
    if (values > slots - nullSlots) {
      return false;
    }
    keyBase = values > 0 ? range.lo() : 0;
    keyNullSlot = (int) values;
    keyNulls = nulls;
    filterSlot = keyNullSlot + (nulls ? 1 : 0);
    return true;
  }

  /** The range of the source's non-null values over {@code rows} rows (validity at {@code valid} when {@code nulls}), read on the host. */
  private KeyRange sourceRange(InputColumn source, int rows, boolean nulls, long valid) {
    SqlType t = reduction.keyType();
    int width = t.byteWidth();
    ArrowBuf s = scratch.apply((long) rows * width);
    long at = s.memoryAddress();
    if (rows > 0) {
      source.copyValues(0, rows, at);
    }
    boolean floating = t == SqlType.FLOAT || t == SqlType.DOUBLE;
    long min = Long.MAX_VALUE;
    long max = Long.MIN_VALUE;
    double dmin = Double.POSITIVE_INFINITY;
    double dmax = Double.NEGATIVE_INFINITY;
    boolean any = false;
    boolean nan = false;
    for (int r = 0; r < rows; r++) {
      if (nulls && (RawMemory.memGetLong(valid + 8L * (r >>> 6)) & (1L << (r & 63))) == 0) {
        continue;
      }
      if (floating) {
        double v = t == SqlType.DOUBLE ? Double.longBitsToDouble(RawMemory.memGetLong(at + 8L * r))
            : Float.intBitsToFloat(RawMemory.memGetInt(at + 4L * r));
        if (Double.isNaN(v)) {
          nan = true;
        } else {
          any = true;
          dmin = Math.min(dmin, v);
          dmax = Math.max(dmax, v);
        }
      } else {
        long v = width == 8 ? RawMemory.memGetLong(at + 8L * r) : RawMemory.memGetInt(at + 4L * r);
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
    }
    if (floating) {
      return any ? KeyRange.ofDoubles(dmin, dmax, nan) : KeyRange.ofDoubles(1, 0, nan);
    }
    return min <= max ? KeyRange.ofLongs(min, max) : KeyRange.ofLongs(0, -1);
  }

  /**
   * Rows {@code [at, at + rows)} of the batch being staged are {@code inputs}' first {@code rows}: keeps
   * the validity of the row filter's input columns once one has a null, for {@link #beforeDispatch}
   * (columns without nulls upload none). Called by the runner as it stages them.
   */
  public void staged(List<InputColumn> inputs, int at, int rows) {
    for (int j = 0; j < filterInputs.length; j++) {
      InputColumn in = inputs.get(filterInputs[j]);
      if (rows == 0 || (!in.hasNulls() && !filterNulls[j])) {
        continue;
      }
      long bytes = SqlType.BOOLEAN.bytesFor((long) at + rows);
      ArrowBuf host = filterValidHost[j];
      if (host == null || host.capacity() < bytes) {
        ArrowBuf grown = allocator.buffer(Math.max(bytes, 2 * (host == null ? 64 : host.capacity())));
        if (host != null) {
          RawMemory.memCopy(host.memoryAddress(), grown.memoryAddress(), host.capacity());
          host.close();
        }
        filterValidHost[j] = host = grown;
      }
      if (!filterNulls[j]) {
        RawMemory.memSet(host.memoryAddress(), 0xff, SqlType.BOOLEAN.bytesFor(at)); // the rows before had no null
        filterNulls[j] = true;
      }
      long own = SqlType.BOOLEAN.bytesFor(rows);
      ArrowBuf s = scratch.apply(own);
      RawMemory.memSet(s.memoryAddress(), 0xff, own);
      in.andValidity(s.memoryAddress(), rows);
      Bits.copy(s.memoryAddress(), 0, host.memoryAddress(), at, rows);
    }
  }

  /** The bits of the params' {@code vk_fnulls} for the dispatch {@link #beforeDispatch} prepared. */
  public int filterNullMask() {
    return filterNullMask;
  }

  /**
   * Before the dispatch of the staged batch's rows {@code [from, from + n)}: writes the validity of
   * each call the reduction reads that has nulls among them, of each row filter input that has (its
   * bits then in {@link #filterNullMask}) and, grouped, the key parameters.
   *
   * @param nullCounts each call's null count over the staged rows
   * @param validity the address of call {@code c}'s validity bitmap over the staged rows
   * @return a bit per call whose validity was written (the params' word at byte 4), so calls
   *     without nulls upload nothing
   */
  public int beforeDispatch(ReductionBuffers b, int from, int n, long[] nullCounts, IntToLongFunction validity) {
    int mask = 0;
    long bytes = SqlType.BOOLEAN.bytesFor(n);
    for (int c : reduction.passes().reads()) {
      if (nullCounts[c] == 0) {
        continue;
      }
      ArrowBuf s = scratch.apply(bytes);
      Bits.copy(validity.applyAsLong(c), from, s.memoryAddress(), 0, n);
      long valid = 0;
      for (long w = 0; w < bytes; w += 8) {
        valid += Long.bitCount(RawMemory.memGetLong(s.memoryAddress() + w));
      }
      if (valid < n) {
        b.valid[c].write(0, s.memoryAddress(), bytes);
        meter.uploaded(bytes);
        mask |= 1 << c;
      }
    }
    filterNullMask = 0;
    for (int j = 0; j < filterInputs.length; j++) {
      if (!filterNulls[j]) {
        continue;
      }
      ArrowBuf s = scratch.apply(bytes);
      Bits.copy(filterValidHost[j].memoryAddress(), from, s.memoryAddress(), 0, n);
      if (Bits.nullCount(s.memoryAddress(), bytes, n) > 0) {
        b.filterValid[j].write(0, s.memoryAddress(), bytes);
        meter.uploaded(bytes);
        filterNullMask |= 1 << j;
      }
    }
    if (reduction.grouped()) {
      writeKeyParams(b, from, n, validity);
    }
    return mask;
  }

  /**
   * Grouped: writes the key parameters (base, null slot, whether keys are null, the first pass's
   * group counts and their total) and, when the batch has null keys, the key validity of the
   * {@code n} rows being dispatched.
   */
  private void writeKeyParams(ReductionBuffers b, int from, int n, IntToLongFunction validity) {
    if (keyParams == null) {
      keyParams = allocator.buffer(ReductionPasses.KEY_PARAMS_BYTES);
    }
    long perGroup = (long) b.keyChunks * workgroupSize;
    Groups g = Groups.covering(n, (int) perGroup, maxGroupsX);
    keyParams.setLong(0, keyBase);
    keyParams.setInt(8, keyNullSlot);
    keyParams.setInt(12, keyNulls ? 1 : 0);
    keyParams.setInt(ReductionPasses.KEY_GROUPS_OFFSET, g.x());
    keyParams.setInt(ReductionPasses.KEY_GROUPS_OFFSET + 4, g.y());
    keyParams.setInt(ReductionPasses.KEY_GROUPS_OFFSET + 8, g.z());
    keyParams.setInt(28, (int) ((n + perGroup - 1) / perGroup));
    keyParams.setInt(32, usedSlots()); // the slots in use
    keyParams.setInt(36, b.keyChunks);
    keyParams.setInt(40, filterSlot);
    keyParams.setInt(44, 0);
    b.keyParams.write(0, keyParams.memoryAddress(), ReductionPasses.KEY_PARAMS_BYTES);
    if (keyNulls) {
      long bytes = SqlType.BOOLEAN.bytesFor(n);
      ArrowBuf s = scratch.apply(bytes);
      int call = reduction.key().call();
      // an input's validity as admit() copied it; a call's result validity as the runner computed it
      Bits.copy(call >= 0 ? validity.applyAsLong(call) : keyValidHost.memoryAddress(), from, s.memoryAddress(), 0, n);
      b.keyValid.write(0, s.memoryAddress(), bytes);
      meter.uploaded(bytes);
    }
  }

  /** After the dispatch of {@code n} rows: reads their partials and folds them, in row order, into the batch's values. */
  public void afterDispatch(ReductionBuffers b, int n) {
    if (reduction.grouped()) {
      int used = usedSlots(); // the slots the batch's key range spans (and the dropped rows'): only they are read
      long bytes = reduction.passes().keyedResultBytes(used);
      ArrowBuf s = scratch.apply(bytes);
      b.keyed.read(0, s.memoryAddress(), bytes);
      meter.read(bytes);
      if (reducedByKey == null) {
        reducedByKey = fold.emptySlots();
      }
      checkRows(s.memoryAddress(), used, n);
      fold.foldKeyed(s.memoryAddress(), used, reducedByKey);
      return;
    }
    int groups = (int) ((n + (long) workgroupSize - 1) / workgroupSize);
    long bytes = reduction.passes().partialBytes(groups);
    ArrowBuf s = scratch.apply(bytes);
    b.partials.read(0, s.memoryAddress(), bytes);
    meter.read(bytes);
    if (reduced == null) {
      reduced = fold.empty();
    }
    fold.fold(s.memoryAddress(), groups, reduced);
  }

  /** Grouped: the key slots the staged batch uses: its key range, null keys, the rows a filter drops. */
  private int usedSlots() {
    return keyNullSlot + (keyNulls ? 1 : 0) + (reduction.filter() != null ? 1 : 0);
  }

  /**
   * Checks that the hidden COUNT(*) (the last partial of each slot) counted every dispatched row: a
   * key outside the bounded range would be left out by the shader, never counted in a wrong group.
   * The rows a filter drops are counted in their own slot.
   */
  private void checkRows(long address, int used, int n) {
    int perSlot = (int) (reduction.passes().keyedResultBytes(1) / HostFold.PARTIAL_BYTES);
    long counted = 0;
    for (int s = 0; s < used; s++) {
      counted += RawMemory.memGetInt(address + ((long) s * perSlot + perSlot - 1) * HostFold.PARTIAL_BYTES + 8) & 0xffffffffL;
    }
    if (counted != n) {
      throw GpuException.of(GpuException.Code.UNSUPPORTED, "the GPU reduction by key " + reduction.key() + " counted "
          + counted + " of " + n + " rows: a key fell outside the range vkspark bounded for the batch.",
          "set spark.vkspark.fuseAggregates.onGpu=false, and report the key expression.");
    }
  }

  /**
   * The staged batch's values over its {@code rows} rows (empty values when nothing was dispatched);
   * filtered, without the hidden COUNT(*) of the rows kept, which gives the rows dropped.
   */
  public Result result(long rows) {
    Value[] v = reduced == null ? fold.empty() : reduced;
    if (reduction.filter() == null) {
      return new Result(rows, List.of(v));
    }
    int n = reduction.aggregates().size();
    return new Result(rows, List.of(v).subList(0, n), rows - v[n].count());
  }

  /** Grouped: the staged batch's groups over its {@code rows} rows. */
  public Grouped grouped(long rows) {
    Value[][] acc = reducedByKey == null ? fold.emptySlots() : reducedByKey;
    return fold.groups(rows, acc, keyBase, keyNullSlot, keyNulls, reduction.filter() != null ? filterSlot : -1);
  }

  /** Forgets the staged batch's values (taken, or failed). */
  public void discard() {
    reduced = null;
    reducedByKey = null;
    Arrays.fill(filterNulls, false);
  }

  @Override
  public void close() {
    for (ArrowBuf b : filterValidHost) {
      if (b != null) {
        b.close();
      }
    }
    if (keyValidHost != null) {
      keyValidHost.close();
    }
    if (keyParams != null) {
      keyParams.close();
    }
  }
}
