package io.vkspark.gpu.column.run;

import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.OutputSlots;
import io.vkspark.gpu.column.BatchMeter;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.NullFlags;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.input.Bits;
import io.vkspark.gpu.column.input.InputColumn;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongFunction;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * The host side of a {@link BatchRunner}'s results for the batch being built: per call, a validity
 * and a data slot reused from batch to batch ({@link OutputSlots}), the validity of the rows as
 * they are staged (the AND of the call's arguments'), the readback of each dispatch's results
 * behind the rows read before (fixed-width, bit-packed at any row, decimals widened and checked,
 * strings and row statuses through {@link StringResults}), and the vectors handed out over them.
 * Apart from the runner so that staging and dispatching read on their own. A reducing runner keeps
 * only the validity here (the device reads it) and, when asked, a {@link ReducedSample} of its
 * first rows' results; the others stay on the device. One runner (one thread).
 */
final class BatchResults implements AutoCloseable {
  private final List<KernelCall> calls;
  private final OutputSlots slots;
  private final List<FieldVector> vectors = new ArrayList<>();
  /** Bytes of each slot for the rows staged: validity of call i at 2i, its data at 2i + 1. */
  private final long[] lengths;
  /** Null count of each call's result over the staged rows. */
  private final long[] nullCounts;
  /** String and binary results, and the rows kernels flag (null, or for call()). */
  private final StringResults strings;
  private final boolean reducing;
  /** A reducing runner's sample of each batch's first results; null for a runner that reads them all back. */
  private final ReducedSample sample;
  /** The runner's host memory for rows that start or land off a 64-row boundary. */
  private final LongFunction<ArrowBuf> scratch;
  private final BatchMeter meter;
  private DecimalOverflow decimalOverflow = DecimalOverflow.ERROR;
  private boolean begun;

  /** @param sample a reducing runner's sample of its results (null: a runner that reads every result back) */
  BatchResults(List<KernelCall> calls, BufferAllocator allocator, ReducedSample sample, LongFunction<ArrowBuf> scratch,
               BatchMeter meter) {
    this.calls = calls;
    this.reducing = sample != null;
    this.sample = sample;
    this.scratch = scratch;
    this.meter = meter;
    this.slots = new OutputSlots(allocator);
    this.lengths = new long[2 * calls.size()];
    this.nullCounts = new long[calls.size()];
    this.strings = new StringResults(calls, allocator);
    for (KernelCall call : calls) {
      KernelSignature sig = call.kernel().signature();
      vectors.add(new Field(sig.name(), FieldType.nullable(sig.resultArrowType()), null).createVector(allocator));
    }
  }

  /** String and binary results and row statuses, which the dispatch arms and grows. */
  StringResults strings() {
    return strings;
  }

  /** The reducing runner's sample of its results; null for a runner that reads them all back. */
  ReducedSample sample() {
    return sample;
  }

  /** Before a dispatch of the batch's rows {@code [at, at + n)} from {@code set}: the string results', and a sample's copies. */
  void beforeDispatch(BufferSet set, int at, int n) {
    strings.beforeDispatch(set);
    if (sample != null && at == 0) {
      sample.beforeFirstDispatch(set, n);
    }
  }

  /** A reducing runner's batch, once dispatched: the sample's rows, with their validity from the slots. */
  void takeSample() {
    sample.take(this::validityAddress);
  }

  /** Whether a batch is being built (its slots sized), since the last {@link #reset}. */
  boolean begun() {
    return begun;
  }

  /** Sizes the output slots for {@code total} staged rows: fresh for a new batch, grown keeping their bytes otherwise. */
  void size(int total) {
    for (int i = 0; i < calls.size(); i++) {
      lengths[2 * i] = SqlType.BOOLEAN.bytesFor(total);
      // reducing: only the validity is kept on the host (the device needs it); results stay on the device
      lengths[2 * i + 1] = reducing ? 0 : calls.get(i).kernel().signature().result().arrowBytesFor(total);
    }
    if (!begun) {
      meter.slots(slots.prepare(lengths));
      begun = true;
      for (int i = 0; i < calls.size() && !reducing; i++) {
        strings.begin(i, slots.slot(2 * i + 1));
      }
      return;
    }
    for (int j = 0; j < lengths.length; j++) {
      slots.grow(j, lengths[j]);
    }
  }

  /** Writes every call's validity for {@code rows} rows of {@code inputs} at row {@code at}, counting its nulls. */
  void stageValidity(List<InputColumn> inputs, int at, int rows) {
    for (int i = 0; i < calls.size(); i++) {
      nullCounts[i] += validity(i, inputs, at, rows);
    }
  }

  /**
   * Writes the AND of call {@code i}'s argument validity for {@code rows} rows into its validity
   * slot at row {@code at}; returns the null count.
   */
  private long validity(int i, List<InputColumn> inputs, int at, int rows) {
    ArrowBuf slot = slots.slot(2 * i);
    if ((at & 63) == 0) {
      return BatchColumns.validity(calls.get(i), inputs, slot.memoryAddress() + at / 8, rows);
    }
    ArrowBuf s = scratch.apply(SqlType.BOOLEAN.bytesFor(rows));
    long nulls = BatchColumns.validity(calls.get(i), inputs, s.memoryAddress(), rows);
    Bits.copy(s.memoryAddress(), 0, slot.memoryAddress(), at, rows);
    return nulls;
  }

  /** Null count of each call's result over the staged rows (a reduction reads which calls have nulls). */
  long[] nullCounts() {
    return nullCounts;
  }

  /** Address of call {@code call}'s validity slot. */
  long validityAddress(int call) {
    return slots.slot(2 * call).memoryAddress();
  }

  /** Reads {@code n} result rows of every call from {@code set} into its data slot at row {@code at}. */
  void read(BufferSet set, int at, int n) {
    for (int i = 0; i < calls.size(); i++) {
      SqlType type = calls.get(i).kernel().signature().result();
      ArrowBuf data = slots.slot(2 * i + 1);
      if (set.strings[i] != null) {
        meter.read(strings.read(set, i, at, n, data));
      }
      if (set.outValid[i] != null) { // the validity the kernel wrote (NullFlags), ANDed in; counted in vectors()
        long bytes = SqlType.BOOLEAN.bytesFor(n);
        ArrowBuf s = scratch.apply(bytes);
        set.outValid[i].read(0, s.memoryAddress(), bytes);
        Bits.andAt(s.memoryAddress(), slots.slot(2 * i).memoryAddress(), at, n);
        meter.read(bytes);
      }
      if (strings.varResult(i)) {
        continue; // offsets and data, read above
      } else if (type == SqlType.DECIMAL) {
        long bytes = (long) n * type.byteWidth();
        ArrowBuf s = scratch.apply(bytes);
        set.outputs[i].read(0, s.memoryAddress(), bytes);
        nullCounts[i] += DecimalResults.widen(calls.get(i).kernel().signature(), decimalOverflow, s.memoryAddress(),
            data.memoryAddress(), slots.slot(2 * i).memoryAddress(), at, n);
        meter.read(bytes);
      } else if (!type.isBitPacked()) {
        long bytes = (long) n * type.byteWidth();
        set.outputs[i].read(0, data.memoryAddress() + (long) at * type.byteWidth(), bytes);
        meter.read(bytes);
      } else {
        meter.read(readBits(set.outputs[i], data, at, n));
      }
    }
  }

  /** Reads {@code n} bits of {@code from} into {@code to} at bit {@code at}; returns the bytes read. */
  private long readBits(GpuBuffer from, ArrowBuf to, int at, int n) {
    if ((at & 63) == 0) {
      long bytes = (n + 7) / 8;
      from.read(0, to.memoryAddress() + at / 8, bytes);
      return bytes;
    }
    long bytes = SqlType.BOOLEAN.bytesFor(n);
    ArrowBuf s = scratch.apply(bytes);
    from.read(0, s.memoryAddress(), bytes);
    Bits.copy(s.memoryAddress(), 0, to.memoryAddress(), at, n);
    return bytes;
  }

  /** One vector per call over the {@code rows} rows read back, with the rows kernels flagged applied. */
  List<FieldVector> vectors(int rows) {
    for (int i = 0; i < calls.size(); i++) {
      NullFlags nulls = calls.get(i).kernel().spec().nulls();
      if (nulls != null && nulls.result()) { // the bits the kernel wrote
        nullCounts[i] = Bits.nullCount(slots.slot(2 * i).memoryAddress(), lengths[2 * i], rows);
      }
      nullCounts[i] += strings.apply(i, slots.slot(2 * i)); // null results and rows for call()
      vectors.get(i).loadFieldBuffers(new ArrowFieldNode(rows, nullCounts[i]), strings.varResult(i)
          ? List.of(slots.slot(2 * i), slots.slot(2 * i + 1), strings.data(i)) : List.of(slots.slot(2 * i), slots.slot(2 * i + 1)));
    }
    return vectors;
  }

  /** See {@link BatchRunner#onDecimalOverflow}. */
  void onDecimalOverflow(DecimalOverflow policy) {
    this.decimalOverflow = policy;
  }

  /** Forgets the batch being built (taken, or failed); the slots stay for the next. */
  void reset() {
    begun = false;
    Arrays.fill(nullCounts, 0);
    strings.reset();
    if (sample != null) {
      sample.reset();
    }
  }

  @Override
  public void close() {
    vectors.forEach(FieldVector::close);
    slots.close();
    strings.close();
    if (sample != null) {
      sample.close();
    }
  }
}
