package io.vkspark.gpu.column.run;

import io.vkspark.gpu.BufferCopy;
import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.PrerecordedDispatch;
import io.vkspark.gpu.column.BatchMeter;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.input.Bits;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntToLongFunction;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * The per-row results of the first rows of a reducing {@link BatchRunner}'s batch, read back beside
 * its reduction (e.g. for verify mode to compare with the UDFs' CPU code): the batch's first dispatch
 * also copies those rows of each call's device-only results into a small host-read buffer, in the
 * same submission ({@code PrerecordedDispatch.copyAfterNextReplay}), so the sample costs no dispatch
 * or wait of its own, and holds the very values the reduction read. Results of fixed-width types
 * other than decimal only ({@link #carries}). One runner (one thread).
 */
public final class ReducedSample implements AutoCloseable {
  private final GpuDevice device;
  private final List<KernelCall> calls;
  private final BufferAllocator allocator;
  private final BatchMeter meter;
  /** Per call, the host-read copy of its first results; grown to the rows asked for. */
  private final GpuBuffer[] copies;
  private final List<FieldVector> vectors = new ArrayList<>();
  /** Rows the next batch's first dispatch copies (at most); rows the batch being built copied. */
  private int wanted;
  private int copied;
  /** Bytes of results the last batch taken read back for its sample. */
  private long bytesRead;
  /** The recording given the copies, until the batch is taken or dropped (a pooled set's: cleared if not replayed). */
  private PrerecordedDispatch armed;

  ReducedSample(GpuDevice device, List<KernelCall> calls, BufferAllocator allocator, BatchMeter meter) {
    this.device = device;
    this.calls = calls;
    this.allocator = allocator;
    this.meter = meter;
    this.copies = new GpuBuffer[calls.size()];
    for (KernelCall call : calls) {
      KernelSignature sig = call.kernel().signature();
      vectors.add(new Field(sig.name(), FieldType.nullable(sig.resultArrowType()), null).createVector(allocator));
    }
  }

  /** Whether a sample reads results of type {@code t}: fixed-width, as on the device, so not decimal (widened on the host). */
  public static boolean carries(SqlType t) {
    return !t.isVariableWidth() && t != SqlType.DECIMAL;
  }

  /**
   * Asks the next batch the runner dispatches to read back the results of its first {@code rows}
   * rows (0: none), at most the rows of its first dispatch; replaces an earlier request.
   *
   * @throws GpuException INVALID_ARGUMENT when a call's result type is not {@link #carries carried}
   */
  public void request(int rows) {
    for (KernelCall c : calls) {
      SqlType t = c.kernel().signature().result();
      if (rows > 0 && !carries(t)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "a sample of the results of GPU UDF '" + c.kernel().signature().name()
            + "', of type " + t.sqlName() + ", was asked of a reducing runner.", "check ReducedSample.carries(type) first.");
      }
    }
    wanted = Math.max(0, rows);
  }

  /**
   * The results of the sampled rows of the last batch taken, one vector per call (in call order,
   * owned by the runner, valid until the next batch is taken): 0 rows when none was asked for.
   */
  public List<FieldVector> vectors() {
    return vectors;
  }

  /** Bytes of results the last batch taken read back for its sample (in the runner's stats too); 0 when none. */
  public long bytesRead() {
    return bytesRead;
  }

  /** Before the dispatch of the batch's first {@code n} rows from {@code set}: its copies of the rows asked for. */
  void beforeFirstDispatch(BufferSet set, int n) {
    int m = Math.min(wanted, n);
    if (m == 0) {
      return;
    }
    List<BufferCopy> out = new ArrayList<>();
    for (int i = 0; i < calls.size(); i++) {
      long bytes = type(i).bytesFor(m);
      if (copies[i] == null || copies[i].byteLength() < bytes) {
        if (copies[i] != null) {
          copies[i].close();
          copies[i] = null; // closed, should the larger one fail
        }
        copies[i] = device.createBuffer(type(i).bytesFor(Math.max(m, 64)), BufferRole.OUTPUT);
      }
      out.add(new BufferCopy(set.outputs[i], 0, copies[i], 0, bytes));
    }
    set.dispatch.copyAfterNextReplay(out);
    armed = set.dispatch;
    copied = m;
  }

  /** Once the batch's dispatches are done: each call's sampled results, with its validity from {@code validity} (a slot's address). */
  void take(IntToLongFunction validity) {
    bytesRead = 0;
    for (int i = 0; i < calls.size(); i++) {
      if (copied == 0) {
        vectors.get(i).clear(); // no rows
        continue;
      }
      long bytes = type(i).bytesFor(copied);
      try (ArrowBuf valid = allocator.buffer(SqlType.BOOLEAN.bytesFor(copied)); ArrowBuf data = allocator.buffer(bytes)) {
        valid.setZero(0, valid.capacity());
        Bits.copy(validity.applyAsLong(i), 0, valid.memoryAddress(), 0, copied);
        copies[i].read(0, data.memoryAddress(), bytes);
        meter.read(bytes);
        bytesRead += bytes;
        long nulls = Bits.nullCount(valid.memoryAddress(), valid.capacity(), copied);
        vectors.get(i).loadFieldBuffers(new ArrowFieldNode(copied, nulls), List.of(valid, data));
      }
    }
    armed = null; // its replay ran the copies
    reset();
  }

  /**
   * Forgets the request and the rows copied (the batch was taken, or failed); a failed batch's
   * copies are cleared from a recording that may not have replayed them, so that its pooled set
   * goes back without them.
   */
  void reset() {
    try {
      if (armed != null && !armed.isClosed() && !armed.isInFlight()) {
        armed.copyAfterNextReplay(List.of());
      }
    } catch (GpuException e) {
      // a lost device: nothing replays the recording again
    }
    armed = null;
    wanted = 0;
    copied = 0;
  }

  private SqlType type(int call) {
    return calls.get(call).kernel().signature().result();
  }

  @Override
  public void close() {
    vectors.forEach(FieldVector::close);
    for (GpuBuffer b : copies) {
      if (b != null) {
        b.close();
      }
    }
  }
}
