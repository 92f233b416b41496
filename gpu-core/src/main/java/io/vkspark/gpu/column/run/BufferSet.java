package io.vkspark.gpu.column.run;

import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.DispatchStep;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.PrerecordedDispatch;
import io.vkspark.gpu.Sizes;
import io.vkspark.gpu.column.ArgOps;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.LoopGuard;
import io.vkspark.gpu.column.NullFlags;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.VarArgs;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.reduce.ReductionBuffers;
import io.vkspark.gpu.internal.Closeables;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The GPU side of one batch shape: a parameter buffer, one input buffer per column read, one
 * output buffer per call, and the dispatch recorded once over them. Pooled by
 * {@link ColumnRuntime}, so later tasks replay it without recording anything.
 */
final class BufferSet implements AutoCloseable {
  final Key key;
  final GpuBuffer params;
  /** Abort word, loop limit and cut-short row count ({@link LoopGuard}); host-visible, never staged. */
  final GpuBuffer control;
  /** Input buffers by column index; null for columns no call reads. */
  final GpuBuffer[] inputs;
  final GpuBuffer[] outputs;
  /** Data of each variable-width input column (null for the others): {@code key.varElements()} elements. */
  final GpuBuffer[] varData;
  /** Element validity of each array input column (null for the others): {@code key.varElements()} bits. */
  final GpuBuffer[] varValid;
  /** Literal values of each call's computed arguments ({@link ArgOps}); null for a call without. */
  final GpuBuffer[] literals;
  /** With a reduction ({@code key.reduction()}): its buffers (validity, partials, key parameters); else null. */
  final ReductionBuffers reduction;
  /** Per call: its row status and string or binary result buffers; null for a call without ({@link StringBuffers}). */
  final StringBuffers[] strings;
  /** Validity bits of each column a call computing its null rows reads ({@link NullFlags}); null for the others. */
  final GpuBuffer[] valid;
  /** Per call: the result's validity bits its kernel writes ({@link NullFlags#result()}); null for the others. */
  final GpuBuffer[] outValid;
  /** The recording; replaced when a call's string data buffer grows ({@link #growData}). */
  PrerecordedDispatch dispatch;
  /** Device memory of every buffer; grows with a string data buffer (only while the set is on loan). */
  long deviceBytes;
  private final GpuDevice device;
  /** The recorded steps, and each call's first step in them (its steps are rebuilt when its data grows). */
  private final List<DispatchStep> steps;
  private final int[] firstStep;
  /** Each call's inputs before its string buffers. */
  private final List<List<GpuBuffer>> callInputs;
  private final Map<ColumnKernel, Kernel> kernels;
  private final List<Kernel> scans;

  /**
   * What makes two buffer sets interchangeable: the calls, the input types, rows per dispatch and
   * the elements each variable-width column's data buffer holds (0 when there is none).
   */
  record Key(List<KernelCall> calls, List<SqlType> inputTypes, int capacity, long varElements, ColumnReduction reduction) {
    Key(List<KernelCall> calls, List<SqlType> inputTypes, int capacity) {
      this(calls, inputTypes, capacity, 0, null);
    }

    Key(List<KernelCall> calls, List<SqlType> inputTypes, int capacity, long varElements) {
      this(calls, inputTypes, capacity, varElements, null);
    }

    /** The same with {@code rows} rows per dispatch. */
    Key withCapacity(int rows) {
      return new Key(calls, inputTypes, rows, varElements, reduction);
    }
  }

  private BufferSet(GpuDevice device, Key key, GpuBuffer params, GpuBuffer control, GpuBuffer[] inputs,
                    GpuBuffer[] outputs, GpuBuffer[] varData, GpuBuffer[] varValid, GpuBuffer[] literals,
                    ReductionBuffers reduction, StringBuffers[] strings, GpuBuffer[] valid, GpuBuffer[] outValid,
                    List<DispatchStep> steps, int[] firstStep, List<List<GpuBuffer>> callInputs,
                    Map<ColumnKernel, Kernel> kernels, List<Kernel> scans, PrerecordedDispatch dispatch) {
    this.callInputs = callInputs;
    this.valid = valid;
    this.outValid = outValid;
    this.device = device;
    this.strings = strings;
    this.steps = steps;
    this.firstStep = firstStep;
    this.kernels = kernels;
    this.scans = scans;
    this.key = key;
    this.params = params;
    this.control = control;
    this.inputs = inputs;
    this.outputs = outputs;
    this.varData = varData;
    this.varValid = varValid;
    this.literals = literals;
    this.reduction = reduction;
    this.dispatch = dispatch;
    long bytes = params.byteLength() + control.byteLength();
    for (GpuBuffer b : inputs) {
      bytes += b == null ? 0 : b.byteLength();
    }
    for (GpuBuffer b : outputs) {
      bytes += b.byteLength();
    }
    for (int c = 0; c < varData.length; c++) {
      bytes += (varData[c] == null ? 0 : varData[c].byteLength()) + (varValid[c] == null ? 0 : varValid[c].byteLength());
    }
    for (GpuBuffer b : literals) {
      bytes += b == null ? 0 : b.byteLength();
    }
    for (GpuBuffer b : reduction == null ? List.<GpuBuffer>of() : reduction.buffers()) {
      bytes += b.byteLength();
    }
    for (StringBuffers sb : strings) {
      bytes += sb == null ? 0 : sb.deviceBytes();
    }
    for (GpuBuffer b : nullBuffers()) {
      bytes += b.byteLength();
    }
    this.deviceBytes = bytes;
  }

  /**
   * Creates the buffers and records the dispatch: each call's kernel, then, with a reduction, the
   * reduction over their results ({@code reductionKernels}: its pass, or a grouped reduction's
   * two), whose per-row outputs are then device-only ({@link BufferRole#SCRATCH}). A grouped
   * reduction's key column and a row filter's columns get an input buffer even when no call reads them.
   */
  static BufferSet create(GpuDevice device, Key key, Map<ColumnKernel, Kernel> kernels, List<Kernel> reductionKernels) {
    return create(device, key, kernels, reductionKernels, List.of());
  }

  /**
   * {@link #create(GpuDevice, Key, Map, List)}, with {@code scans}, the two passes of the prefix sum
   * of string and binary results ({@link StringScan}; empty when no call returns one).
   */
  static BufferSet create(GpuDevice device, Key key, Map<ColumnKernel, Kernel> kernels, List<Kernel> reductionKernels,
                          List<Kernel> scans) {
    List<AutoCloseable> made = new ArrayList<>();
    try {
      GpuBuffer params = track(made, device.createBuffer(ColumnKernel.PARAMS_BYTES, BufferRole.PARAMS));
      GpuBuffer control = track(made, device.createBuffer(LoopGuard.CONTROL_BYTES, BufferRole.CONTROL));
      GpuBuffer[] inputs = new GpuBuffer[key.inputTypes().size()];
      GpuBuffer[] varData = new GpuBuffer[inputs.length];
      GpuBuffer[] varValid = new GpuBuffer[inputs.length];
      for (KernelCall call : key.calls()) {
        for (int c : call.argColumns()) {
          if (c < 0) {
            continue; // a constant argument: its literal slot, no column
          }
          SqlType t = key.inputTypes().get(c);
          if (inputs[c] == null) {
            inputs[c] = track(made, device.createBuffer(t.bytesFor(key.capacity()), BufferRole.INPUT));
            if (t.isVariableWidth()) {
              long elements = Math.max(key.varElements(), 1);
              varData[c] = track(made, device.createBuffer(Sizes.multiply(
                  (elements + 7) & ~7L, VarArgs.elementBytes(t), "bytes of " + elements + " " + t.sqlName() + " elements"),
                  BufferRole.INPUT));
              if (VarArgs.isArray(t)) {
                varValid[c] = track(made, device.createBuffer(SqlType.BOOLEAN.bytesFor(elements), BufferRole.INPUT));
              }
            }
          }
        }
      }
      ColumnReduction r = key.reduction();
      if (r != null && r.grouped() && r.keyColumn() >= 0 && inputs[r.keyColumn()] == null) {
        inputs[r.keyColumn()] = track(made, device.createBuffer(r.keyType().bytesFor(key.capacity()), BufferRole.INPUT));
      }
      for (int c : r == null ? new int[0] : r.filterInputs()) { // a row filter's columns, read by the reduction alone
        if (inputs[c] == null) {
          inputs[c] = track(made, device.createBuffer(key.inputTypes().get(c).bytesFor(key.capacity()), BufferRole.INPUT));
        }
      }
      GpuBuffer[] outputs = new GpuBuffer[key.calls().size()];
      GpuBuffer[] valid = new GpuBuffer[inputs.length];
      GpuBuffer[] outValid = new GpuBuffer[outputs.length];
      GpuBuffer[] literals = new GpuBuffer[outputs.length];
      StringBuffers[] strings = new StringBuffers[outputs.length];
      int[] firstStep = new int[outputs.length];
      List<List<GpuBuffer>> callInputs = new ArrayList<>();
      int wg = ColumnKernel.workgroupSize(device.info());
      List<DispatchStep> steps = new ArrayList<>();
      for (int i = 0; i < outputs.length; i++) {
        KernelCall call = key.calls().get(i);
        outputs[i] = track(made, device.createBuffer(call.kernel().signature().result().bytesFor(key.capacity()),
            key.reduction() == null ? BufferRole.OUTPUT : BufferRole.SCRATCH));
        List<GpuBuffer> in = new ArrayList<>();
        for (int c : call.argColumns()) {
          if (c >= 0) {
            in.add(inputs[c]);
          }
        }
        in.add(control);
        for (int c : call.argColumns()) { // data, then element validity, per variable-width argument (VarArgs)
          if (c >= 0 && varData[c] != null) {
            in.add(varData[c]);
            if (varValid[c] != null) {
              in.add(varValid[c]);
            }
          }
        }
        int n = call.kernel().spec().literals();
        if (n > 0) { // last (ColumnKernel.literalBinding); written by each runner that takes the set (writeLiterals)
          literals[i] = track(made, device.createBuffer(Sizes.multiply(n, Double.BYTES, "literal bytes"),
              BufferRole.PARAMS));
          in.add(literals[i]);
        }
        List<GpuBuffer> out = new ArrayList<>(List.of(outputs[i]));
        NullFlags nulls = call.kernel().spec().nulls();
        if (nulls != null) { // after the literals (ColumnKernel.program): each flagged column's validity, the result's
          int[] cols = call.argColumns();
          for (int a = 0; a < cols.length; a++) {
            if (nulls.args().get(a) && cols[a] >= 0) {
              if (valid[cols[a]] == null) {
                valid[cols[a]] = track(made, device.createBuffer(SqlType.BOOLEAN.bytesFor(key.capacity()), BufferRole.INPUT));
              }
              in.add(valid[cols[a]]);
            }
          }
          if (nulls.result()) {
            outValid[i] = track(made, device.createBuffer(SqlType.BOOLEAN.bytesFor(key.capacity()), BufferRole.OUTPUT));
            out.add(outValid[i]);
          }
        }
        firstStep[i] = steps.size();
        callInputs.add(List.copyOf(in));
        // string results: data for as many bytes as the variable-width inputs hold, or 16 a row
        strings[i] = StringBuffers.create(device, call.kernel(), key.capacity(), wg,
            Math.max(key.varElements(), 16L * key.capacity()), b -> track(made, b));
        if (strings[i] == null) {
          steps.add(new DispatchStep(kernels.get(call.kernel()), in, out, params, Groups.of(0)));
        } else {
          steps.addAll(strings[i].steps(kernels.get(call.kernel()), in, outputs[i], params, scans));
        }
      }
      ReductionBuffers reduction = r == null ? null : ReductionBuffers.create(device, r, key.capacity(), inputs, outputs,
          params, reductionKernels, steps, b -> track(made, b));
      PrerecordedDispatch dispatch = device.prerecord(steps);
      return new BufferSet(device, key, params, control, inputs, outputs, varData, varValid, literals, reduction, strings,
          valid, outValid, steps, firstStep, callInputs, Map.copyOf(kernels), scans, dispatch);
    } catch (RuntimeException e) {
      Collections.reverse(made); // newest first
      Closeables.closeAllAfter(e, made);
      throw e;
    }
  }

  /**
   * Writes the literal values of {@code calls} (the runner's: equal to the key's calls but for
   * their values) into the literal buffers; no dispatch may be in flight.
   */
  void writeLiterals(List<KernelCall> calls) {
    for (int i = 0; i < literals.length; i++) {
      if (literals[i] != null) {
        double[] values = calls.get(i).literals();
        ByteBuffer b = ByteBuffer.allocateDirect(values.length * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (double v : values) {
          b.putLong(Double.doubleToRawLongBits(v));
        }
        literals[i].write(0, b.flip());
      }
    }
  }

  /**
   * Grows call {@code i}'s string data buffer to hold at least {@code bytes} and records the set
   * again over the same pipelines (no dispatch may be in flight). The inputs stay as they are, so
   * the rows staged can be dispatched again.
   */
  void growData(int i, long bytes) {
    StringBuffers sb = strings[i];
    long before = sb.deviceBytes();
    dispatch.close();
    sb.growData(device, bytes);
    deviceBytes += sb.deviceBytes() - before;
    KernelCall call = key.calls().get(i);
    List<DispatchStep> mine = sb.steps(kernels.get(call.kernel()), callInputs.get(i), outputs[i], params, scans);
    for (int k = 0; k < mine.size(); k++) {
      steps.set(firstStep[i] + k, mine.get(k));
    }
    dispatch = device.prerecord(steps);
  }

  /** The validity buffers of calls that compute their null rows. */
  private List<GpuBuffer> nullBuffers() {
    List<GpuBuffer> out = new ArrayList<>();
    for (GpuBuffer b : valid) {
      if (b != null) {
        out.add(b);
      }
    }
    for (GpuBuffer b : outValid) {
      if (b != null) {
        out.add(b);
      }
    }
    return out;
  }

  private static GpuBuffer track(List<AutoCloseable> made, GpuBuffer b) {
    made.add(b);
    return b;
  }

  /** Closes the recording, then every buffer, each even when an earlier close fails. */
  @Override
  public void close() {
    List<AutoCloseable> parts = new ArrayList<>();
    parts.add(dispatch);
    parts.add(params);
    parts.add(control);
    for (GpuBuffer b : inputs) {
      if (b != null) {
        parts.add(b);
      }
    }
    parts.addAll(List.of(outputs));
    for (GpuBuffer b : literals) {
      if (b != null) {
        parts.add(b);
      }
    }
    if (reduction != null) {
      parts.addAll(reduction.buffers());
    }
    for (StringBuffers sb : strings) {
      if (sb != null) {
        parts.addAll(sb.all());
      }
    }
    for (int c = 0; c < varData.length; c++) {
      if (varData[c] != null) {
        parts.add(varData[c]);
      }
      if (varValid[c] != null) {
        parts.add(varValid[c]);
      }
    }
    parts.addAll(nullBuffers());
    Closeables.closeAll(parts);
  }
}
