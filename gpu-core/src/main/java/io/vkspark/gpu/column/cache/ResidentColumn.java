package io.vkspark.gpu.column.cache;

import io.vkspark.gpu.column.input.InputColumn;

/**
 * An argument column whose values never change once made and have a stable identity: a batch of a
 * table cache and a column of it. A runner that reads a {@link DeviceColumnCache} keeps a device
 * copy of such a column's values, keyed by {@link #residentBatch()} and {@link #residentColumn()},
 * and copies from it on the device instead of from the host ({@code BatchRunner.readResident}).
 * The host copy stays the source of truth: {@link #copyValues} fills the device copy, and the
 * validity is still read on the host.
 */
public interface ResidentColumn extends InputColumn {
  /** An id of the batch, unique in this JVM and never reused while a device copy of it may exist. */
  long residentBatch();

  /** The column's index in its batch. */
  int residentColumn();
}
