package io.vkspark.gpu;

import java.util.List;
import java.util.Objects;

/**
 * One dispatch inside a recording: a kernel and its buffers. Several steps recorded together share
 * one submission and their uploads (several UDFs over the same batch); later steps see earlier
 * steps' writes.
 *
 * @param inputs buffers for the kernel's non-output, non-parameter declarations, in order
 * @param outputs buffers for its output declarations, in order
 * @param params the parameter buffer, or null when the program declares none
 * @param groups workgroup counts; ignored for indirect programs
 */
public record DispatchStep(Kernel kernel, List<GpuBuffer> inputs, List<GpuBuffer> outputs, GpuBuffer params, Groups groups) {
  public DispatchStep {
    Objects.requireNonNull(kernel, "kernel");
    inputs = List.copyOf(inputs);
    outputs = List.copyOf(outputs);
    Objects.requireNonNull(groups, "groups");
  }
}
