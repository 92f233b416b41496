package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.DispatchStep;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.SqlType;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A reduction's buffers in one buffer set and its steps in the set's recorded dispatch, after the
 * kernels' steps: the validity of each call it reads, the partials and, grouped, the key
 * parameters, the key's validity and the per-key partials. Built with the set
 * ({@code column.BufferSet}) and closed with it; {@link BatchReducer} writes and reads them.
 */
public final class ReductionBuffers {
  /** Each reduced call's result validity (host-written when it has nulls); null for calls not read. */
  final GpuBuffer[] valid;
  /**
   * Each workgroup's partial per aggregate, the only output the host reads. Grouped: each
   * first-pass workgroup's partial per key slot and aggregate, device-only.
   */
  final GpuBuffer partials;
  /** Grouped: the key base, null slot and first-pass group counts the host writes per dispatch; else null. */
  final GpuBuffer keyParams;
  /** Grouped: the key column's validity (host-written when the batch has null keys); else null. */
  final GpuBuffer keyValid;
  /** Grouped: one partial per key slot and aggregate, the only output the host reads; else null. */
  final GpuBuffer keyed;
  /** Grouped: workgroup-sized chunks of rows per first-pass workgroup ({@link ReductionPasses#chunks}); else 0. */
  final int keyChunks;
  /** Each row filter input's validity (host-written when it has nulls), in {@link ReductionPasses#filterInputs} order. */
  final GpuBuffer[] filterValid;

  private ReductionBuffers(GpuBuffer[] valid, GpuBuffer partials, GpuBuffer keyParams, GpuBuffer keyValid,
                           GpuBuffer keyed, int keyChunks, GpuBuffer[] filterValid) {
    this.filterValid = filterValid;
    this.valid = valid;
    this.partials = partials;
    this.keyParams = keyParams;
    this.keyValid = keyValid;
    this.keyed = keyed;
    this.keyChunks = keyChunks;
  }

  /**
   * Creates the reduction's buffers for {@code capacity} rows and appends its steps ({@code kernels}:
   * its pass, or a grouped reduction's two) to {@code steps}.
   *
   * @param inputs the set's input buffers by column (a grouped reduction's key column's and its row
   *     filter's among them)
   * @param outputs the calls' per-row results, which the reduction reads on the device
   * @param track registers each buffer made, so a failure part-way closes them
   */
  public static ReductionBuffers create(GpuDevice device, ColumnReduction r, int capacity, GpuBuffer[] inputs,
                                        GpuBuffer[] outputs, GpuBuffer params, List<Kernel> kernels,
                                        List<DispatchStep> steps, UnaryOperator<GpuBuffer> track) {
    ReductionPasses p = r.passes();
    GpuBuffer[] valid = new GpuBuffer[outputs.length];
    GpuBuffer keyParams = null;
    GpuBuffer keyValid = null;
    List<GpuBuffer> in = new ArrayList<>();
    if (r.grouped()) {
      keyParams = track.apply(device.createBuffer(ReductionPasses.KEY_PARAMS_BYTES, BufferRole.PARAMS));
      keyValid = track.apply(device.createBuffer(SqlType.BOOLEAN.bytesFor(capacity), BufferRole.INPUT));
      in.add(keyParams);
      in.add(r.keyColumn() >= 0 ? inputs[r.keyColumn()] : outputs[r.key().call()]); // the key's source
      in.add(keyValid);
    }
    for (int c : p.reads()) {
      valid[c] = track.apply(device.createBuffer(SqlType.BOOLEAN.bytesFor(capacity), BufferRole.INPUT));
      in.add(outputs[c]);
      in.add(valid[c]);
    }
    int[] filterInputs = p.filterInputs();
    GpuBuffer[] filterValid = new GpuBuffer[filterInputs.length];
    for (int j = 0; j < filterInputs.length; j++) {
      filterValid[j] = track.apply(device.createBuffer(SqlType.BOOLEAN.bytesFor(capacity), BufferRole.INPUT));
      in.add(inputs[filterInputs[j]]);
      in.add(filterValid[j]);
    }
    int wg = ColumnKernel.workgroupSize(device.info());
    if (!r.grouped()) {
      long groups = (capacity + (long) wg - 1) / wg;
      GpuBuffer partials = track.apply(device.createBuffer(p.partialBytes(groups), BufferRole.OUTPUT));
      steps.add(new DispatchStep(kernels.get(0), in, List.of(partials), params, Groups.of(0)));
      return new ReductionBuffers(valid, partials, null, null, null, 0, filterValid);
    }
    int keyChunks = p.chunks(capacity, wg, device.loopLimit());
    long perGroup = (long) keyChunks * wg;
    long groups = (capacity + perGroup - 1) / perGroup;
    GpuBuffer partials = track.apply(device.createBuffer(p.keyedPartialBytes(groups), BufferRole.SCRATCH));
    steps.add(new DispatchStep(kernels.get(0), in, List.of(partials), params, Groups.of(0)));
    GpuBuffer keyed = track.apply(device.createBuffer(p.keyedResultBytes(r.slots()), BufferRole.OUTPUT));
    steps.add(new DispatchStep(kernels.get(1), List.of(keyParams, partials), List.of(keyed), null,
        Groups.of(p.secondPassWorkgroups()))); // a workgroup per key slot and aggregate
    return new ReductionBuffers(valid, partials, keyParams, keyValid, keyed, keyChunks, filterValid);
  }

  /** Every buffer of the reduction, for the set's size and its close. */
  public List<GpuBuffer> buffers() {
    List<GpuBuffer> all = new ArrayList<>();
    for (GpuBuffer b : valid) {
      if (b != null) {
        all.add(b);
      }
    }
    all.addAll(List.of(filterValid));
    for (GpuBuffer b : new GpuBuffer[] {partials, keyParams, keyValid, keyed}) {
      if (b != null) {
        all.add(b);
      }
    }
    return all;
  }
}
