package io.vkspark.gpu.column;

import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.DispatchStep;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.PrerecordedDispatch;
import io.vkspark.gpu.internal.Closeables;
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
  final PrerecordedDispatch dispatch;
  final long deviceBytes;

  /** What makes two buffer sets interchangeable. */
  record Key(List<KernelCall> calls, List<SqlType> inputTypes, int capacity) {}

  private BufferSet(Key key, GpuBuffer params, GpuBuffer control, GpuBuffer[] inputs, GpuBuffer[] outputs,
                    PrerecordedDispatch dispatch) {
    this.key = key;
    this.params = params;
    this.control = control;
    this.inputs = inputs;
    this.outputs = outputs;
    this.dispatch = dispatch;
    long bytes = params.byteLength() + control.byteLength();
    for (GpuBuffer b : inputs) {
      bytes += b == null ? 0 : b.byteLength();
    }
    for (GpuBuffer b : outputs) {
      bytes += b.byteLength();
    }
    this.deviceBytes = bytes;
  }

  static BufferSet create(GpuDevice device, Key key, Map<ColumnKernel, Kernel> kernels) {
    List<AutoCloseable> made = new ArrayList<>();
    try {
      GpuBuffer params = track(made, device.createBuffer(ColumnKernel.PARAMS_BYTES, BufferRole.PARAMS));
      GpuBuffer control = track(made, device.createBuffer(LoopGuard.CONTROL_BYTES, BufferRole.CONTROL));
      GpuBuffer[] inputs = new GpuBuffer[key.inputTypes().size()];
      for (KernelCall call : key.calls()) {
        for (int c : call.argColumns()) {
          if (inputs[c] == null) {
            inputs[c] = track(made, device.createBuffer(key.inputTypes().get(c).bytesFor(key.capacity()), BufferRole.INPUT));
          }
        }
      }
      GpuBuffer[] outputs = new GpuBuffer[key.calls().size()];
      List<DispatchStep> steps = new ArrayList<>();
      for (int i = 0; i < outputs.length; i++) {
        KernelCall call = key.calls().get(i);
        outputs[i] = track(made, device.createBuffer(call.kernel().signature().result().bytesFor(key.capacity()), BufferRole.OUTPUT));
        List<GpuBuffer> in = new ArrayList<>();
        for (int c : call.argColumns()) {
          in.add(inputs[c]);
        }
        in.add(control);
        steps.add(new DispatchStep(kernels.get(call.kernel()), in, List.of(outputs[i]), params, Groups.of(0)));
      }
      PrerecordedDispatch dispatch = device.prerecord(steps);
      return new BufferSet(key, params, control, inputs, outputs, dispatch);
    } catch (RuntimeException e) {
      Collections.reverse(made); // newest first
      Closeables.closeAllAfter(e, made);
      throw e;
    }
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
    Closeables.closeAll(parts);
  }
}
