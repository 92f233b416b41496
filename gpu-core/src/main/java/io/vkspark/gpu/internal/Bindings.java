package io.vkspark.gpu.internal;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.MemoryKind;
import io.vkspark.gpu.Program;
import java.util.ArrayList;
import java.util.List;

/**
 * Matches caller buffers to a program's declarations, as the seed's {@code bind_handles}: outputs
 * to output declarations in order, the parameter buffer to the UNIFORM/PUSH declaration, inputs to
 * the rest; every count, size and kind mismatch is a BINDING error that says how to fix it.
 */
final class Bindings {
  /** A declaration and the buffer bound to it. */
  record Bound(BufferDecl decl, VulkanBuffer buffer) {}

  private Bindings() {}

  static List<Bound> bind(VulkanDevice device, Program program, List<GpuBuffer> inputs, List<GpuBuffer> outputs,
                          GpuBuffer params) {
    String who = "dispatch of '" + program.name() + "'";
    int inputIndex = 0;
    int outputIndex = 0;
    boolean paramsUsed = false;
    List<Bound> bound = new ArrayList<>(program.buffers().size());
    for (BufferDecl decl : program.buffers()) {
      if (decl.kind() == MemoryKind.SHARED) {
        continue;
      }
      GpuBuffer buffer;
      if (decl.isOutput()) {
        if (outputIndex >= outputs.size()) {
          throw GpuException.of(Code.BINDING, who + " is missing an output buffer for binding " + decl.binding()
              + " (`" + decl.name() + "`).", "pass one output buffer per output BufferDecl.");
        }
        buffer = outputs.get(outputIndex++);
      } else if (decl.kind().isParams() && params != null && !paramsUsed) {
        paramsUsed = true;
        buffer = params;
      } else {
        if (inputIndex >= inputs.size()) {
          throw GpuException.of(Code.BINDING, who + " is missing an input buffer for binding " + decl.binding()
              + " (`" + decl.name() + "`).", "pass non-output buffers in BufferDecl order.");
        }
        buffer = inputs.get(inputIndex++);
      }
      bound.add(new Bound(decl, validate(device, who, decl, buffer)));
    }
    if (inputIndex != inputs.size()) {
      throw GpuException.of(Code.BINDING, who + " received " + inputs.size() + " input buffers but consumed "
          + inputIndex + ".", "pass buffers matching the non-output BufferDecl order.");
    }
    if (outputIndex != outputs.size()) {
      throw GpuException.of(Code.BINDING, who + " received " + outputs.size() + " output buffers but consumed "
          + outputIndex + ".", "pass buffers matching the output BufferDecl order.");
    }
    if (params != null && !paramsUsed) {
      throw GpuException.of(Code.BINDING, who + " received a parameter buffer but declares no UNIFORM or PUSH buffer.",
          "pass null for params, or declare the parameter buffer in the program.");
    }
    program.indirect().ifPresent(ind -> {
      Bound b = bound.stream().filter(x -> x.decl().name().equals(ind.countBuffer())).findFirst().orElseThrow(() ->
          GpuException.of(Code.BINDING, "indirect dispatch count buffer `" + ind.countBuffer() + "` of '"
              + program.name() + "' is not bound.", "supply the declared buffer."));
      if (b.buffer().role() == BufferRole.OUTPUT || b.buffer().role() == BufferRole.SCRATCH) {
        throw GpuException.of(Code.BINDING, "indirect count buffer `" + ind.countBuffer() + "` of '" + program.name()
            + "' is an OUTPUT buffer.", "create it with BufferRole.PARAMS and write the group counts from the host.");
      }
      if (ind.offset() + 12 > b.buffer().byteLength()) {
        throw GpuException.of(Code.BINDING, "indirect count buffer `" + ind.countBuffer() + "` has "
            + b.buffer().byteLength() + " bytes, too few for 3 group counts at offset " + ind.offset() + ".",
            "make it at least " + (ind.offset() + 12) + " bytes.");
      }
    });
    return bound;
  }

  private static VulkanBuffer validate(VulkanDevice device, String who, BufferDecl decl, GpuBuffer buffer) {
    String at = " for binding " + decl.binding() + " (`" + decl.name() + "`)";
    if (!(buffer instanceof VulkanBuffer vb) || vb.device() != device) {
      throw GpuException.of(Code.BINDING, who + " received a buffer" + at + " that this device did not create.",
          "create buffers with this GpuDevice's createBuffer.");
    }
    if (vb.isClosed()) {
      throw GpuException.of(Code.CLOSED, who + " received closed buffer #" + vb.allocationId() + at + ".",
          "bind open buffers only.");
    }
    long size = vb.byteLength();
    int element = decl.elementType().bytes();
    if (size % element != 0) {
      throw GpuException.of(Code.BINDING, who + " received " + size + " bytes" + at + ", not a whole number of "
          + decl.elementType() + " elements (" + element + " bytes each).", "size buffers in whole elements.");
    }
    if (decl.count() > 0 && size < decl.declaredBytes()) {
      throw GpuException.of(Code.BINDING, who + " received " + size + " bytes" + at + " but the declaration needs "
          + decl.declaredBytes() + " (" + decl.count() + " x " + decl.elementType() + ").",
          "allocate at least the declared size.");
    }
    if (decl.isOutput() && vb.role() != BufferRole.OUTPUT && vb.role() != BufferRole.SCRATCH) {
      throw GpuException.of(Code.BINDING, who + " received a " + vb.role() + " buffer" + at + ", which is an output.",
          "create output buffers with BufferRole.OUTPUT, so the host can read them back.");
    }
    if (decl.kind().isParams() && vb.role() != BufferRole.PARAMS) {
      throw GpuException.of(Code.BINDING, who + " received a " + vb.role() + " buffer" + at + ", which is the "
          + decl.kind() + " parameter buffer.", "create parameter buffers with BufferRole.PARAMS.");
    }
    DeviceInfo info = device.info();
    long limit = decl.kind().isParams() ? info.maxUniformBufferRange() : info.maxStorageBufferRange();
    if (vb.paddedLength > limit) {
      throw GpuException.of(Code.SIZE, String.format("%s binds %,d bytes%s, over this device's %s limit of %,d bytes.",
          who, vb.paddedLength, at, decl.kind().isParams() ? "maxUniformBufferRange" : "maxStorageBufferRange", limit),
          "use smaller batches (fewer rows per batch) so each buffer fits.");
    }
    return vb;
  }
}
