package io.vkspark.gpu;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * A {@link Program} loaded on a device: its pipeline, layouts and descriptor-set cache. (A GPU
 * UDF's {@link io.vkspark.gpu.column.KernelSpec} compiles to a {@link io.vkspark.gpu.column.ColumnKernel},
 * whose program is loaded as one of these per device.)
 *
 * <p>Thread-safe. Closing a kernel does not close the dispatches recorded from it; close those
 * first.
 */
public interface Kernel extends AutoCloseable {
  Program program();

  /**
   * One call: uploads {@code inputs} (one per non-output declaration in order, the parameter
   * buffer included), runs, and returns each output's bytes (outputs sized by
   * {@link BufferDecl#count()}).
   */
  List<ByteBuffer> dispatch(List<ByteBuffer> inputs, Groups groups);

  /** {@link #dispatch} with timings. */
  TimedDispatch dispatchTimed(List<ByteBuffer> inputs, Groups groups);

  /**
   * Records a dispatch over caller-owned buffers once, for any number of
   * {@link PrerecordedDispatch#replay() replays}.
   *
   * @throws GpuException BINDING when the buffers do not match the declarations
   */
  PrerecordedDispatch prerecord(List<GpuBuffer> inputs, List<GpuBuffer> outputs, GpuBuffer params, Groups groups);

  /**
   * Uploads borrowed host inputs into buffers the returned dispatch owns, allocates its outputs
   * from the declared counts, and records. The caller's buffers are not retained.
   */
  PrerecordedDispatch prerecordBorrowed(List<ByteBuffer> inputs, Groups groups);

  /** Hits and misses of this kernel's descriptor-set cache. */
  CacheStats descriptorCacheStats();

  boolean isClosed();

  @Override
  void close();
}
