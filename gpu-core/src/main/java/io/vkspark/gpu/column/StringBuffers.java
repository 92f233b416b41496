package io.vkspark.gpu.column;

import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.DispatchStep;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.Sizes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * One call's row status and, for a string or binary result, the buffers of its two passes in one
 * {@link BufferSet} ({@link StringGlsl} declares them): the status words and flagged rows the host
 * reads, the two phase words, the lengths and the scan's sums (device-only), and the data. The data
 * buffer grows in place when a batch's bytes outgrow it ({@link #growData}): a new buffer and a new
 * recording over the same pipelines, kept with the set for later batches.
 */
final class StringBuffers {
  /** Bytes of the smallest data buffer. */
  static final long MIN_DATA_BYTES = 1L << 16;
  /** Most bytes of one dispatch's string results: Arrow's int32 offsets. */
  static final long MAX_DATA_BYTES = 1L << 30;

  final GpuBuffer status;
  final GpuBuffer flagged;
  /** For a string or binary result (else null): phase words, device-only lengths and sums, the data. */
  final GpuBuffer phase0;
  final GpuBuffer phase1;
  final GpuBuffer lens;
  final GpuBuffer local;
  final GpuBuffer blocks;
  GpuBuffer data;

  private StringBuffers(GpuBuffer status, GpuBuffer flagged, GpuBuffer phase0, GpuBuffer phase1, GpuBuffer lens,
                        GpuBuffer local, GpuBuffer blocks, GpuBuffer data) {
    this.status = status;
    this.flagged = flagged;
    this.phase0 = phase0;
    this.phase1 = phase1;
    this.lens = lens;
    this.local = local;
    this.blocks = blocks;
    this.data = data;
  }

  /**
   * The buffers of {@code kernel} for {@code capacity} rows ({@code dataBytes} of data to start), or
   * null for a kernel without row status; each is passed to {@code track} as it is made.
   */
  static StringBuffers create(GpuDevice device, ColumnKernel kernel, int capacity, int workgroupSize, long dataBytes,
                              UnaryOperator<GpuBuffer> track) {
    if (!kernel.rowStatus()) {
      return null;
    }
    GpuBuffer status = track.apply(device.createBuffer(4L * StringGlsl.STATUS_WORDS, BufferRole.CONTROL));
    GpuBuffer flagged = track.apply(device.createBuffer(Sizes.multiply(capacity, 8, "flagged row bytes"), BufferRole.OUTPUT));
    if (!StringGlsl.varResult(kernel.signature())) {
      return new StringBuffers(status, flagged, null, null, null, null, null, null);
    }
    GpuBuffer phase0 = track.apply(phase(device, 0));
    GpuBuffer phase1 = track.apply(phase(device, 1));
    long rowBytes = Sizes.multiply(capacity, 4, "string length bytes");
    GpuBuffer lens = track.apply(device.createBuffer(rowBytes, BufferRole.SCRATCH));
    GpuBuffer local = track.apply(device.createBuffer(rowBytes, BufferRole.SCRATCH));
    long groups = Sizes.divideRoundingUp(capacity, workgroupSize) + 1;
    GpuBuffer blocks = track.apply(device.createBuffer(4 * groups, BufferRole.SCRATCH));
    GpuBuffer data = track.apply(device.createBuffer(dataShape(dataBytes), BufferRole.OUTPUT));
    return new StringBuffers(status, flagged, phase0, phase1, lens, local, blocks, data);
  }

  /** A data buffer of at least {@code bytes}: a power of two from {@link #MIN_DATA_BYTES}, at most {@link #MAX_DATA_BYTES}. */
  static long dataShape(long bytes) {
    return Math.min(MAX_DATA_BYTES, Long.highestOneBit(Math.max(bytes, MIN_DATA_BYTES) - 1) << 1);
  }

  private static GpuBuffer phase(GpuDevice device, int phase) {
    GpuBuffer b = device.createBuffer(16, BufferRole.INPUT);
    b.write(0, ByteBuffer.allocateDirect(16).order(ByteOrder.LITTLE_ENDIAN).putInt(0, phase));
    return b;
  }

  /** Whether the call has a string or binary result (two passes and a scan). */
  boolean varResult() {
    return data != null;
  }

  /** Bytes the data buffer holds. */
  long dataBytes() {
    return data == null ? 0 : data.byteLength();
  }

  /**
   * The call's steps: one dispatch of {@code kernel} over {@code in} (its inputs before these
   * buffers) with {@code out}, or, for a string or binary result, the measuring pass, the scan
   * ({@code scans}: the block pass and the top pass) and the writing pass.
   */
  List<DispatchStep> steps(Kernel kernel, List<GpuBuffer> in, GpuBuffer out, GpuBuffer params, List<Kernel> scans) {
    List<GpuBuffer> inputs = new ArrayList<>(in);
    inputs.add(status);
    if (!varResult()) {
      return List.of(new DispatchStep(kernel, inputs, List.of(out, flagged), params, Groups.of(0)));
    }
    List<GpuBuffer> measure = new ArrayList<>(inputs);
    measure.addAll(List.of(phase0, lens, local, blocks));
    List<GpuBuffer> write = new ArrayList<>(inputs);
    write.addAll(List.of(phase1, lens, local, blocks));
    List<GpuBuffer> outs = List.of(out, flagged, data);
    return List.of(new DispatchStep(kernel, measure, outs, params, Groups.of(0)),
        new DispatchStep(scans.get(0), List.of(lens), List.of(local, blocks), params, Groups.of(0)),
        new DispatchStep(scans.get(1), List.of(), List.of(blocks), params, Groups.of(1)),
        new DispatchStep(kernel, write, outs, params, Groups.of(0)));
  }

  /** Replaces the data buffer with one of at least {@code bytes} (the old one is closed; re-record the set after). */
  void growData(GpuDevice device, long bytes) {
    GpuBuffer bigger = device.createBuffer(dataShape(bytes), BufferRole.OUTPUT);
    data.close();
    data = bigger;
  }

  /** Every buffer, for closing. */
  List<GpuBuffer> all() {
    List<GpuBuffer> out = new ArrayList<>(List.of(status, flagged));
    if (varResult()) {
      out.addAll(List.of(phase0, phase1, lens, local, blocks, data));
    }
    return out;
  }

  /** Device bytes of every buffer. */
  long deviceBytes() {
    return all().stream().mapToLong(GpuBuffer::byteLength).sum();
  }
}
