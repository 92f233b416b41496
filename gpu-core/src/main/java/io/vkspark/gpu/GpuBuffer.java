package io.vkspark.gpu;

import java.nio.ByteBuffer;

/**
 * A device buffer with a host view. Inputs and parameters are written through the host view
 * before a dispatch; outputs are read through it after one.
 *
 * <p>Where the device allows, the host view <em>is</em> the buffer (ReBAR or unified memory);
 * otherwise it is a staging twin and recorded dispatches copy between the two
 * ({@link #isStaged()}). The CPU never reads device-local memory: outputs are always read from
 * host-cached memory.
 *
 * <p>Not thread-safe for concurrent writes to overlapping ranges; {@link #close()} is idempotent.
 */
public interface GpuBuffer extends AutoCloseable {
  /** Usable size in bytes. */
  long byteLength();

  /** A process-unique id of the allocation, never reused (descriptor-cache key). */
  long allocationId();

  BufferRole role();

  /** Whether recorded dispatches copy between a staging twin and the device buffer. */
  boolean isStaged();

  /**
   * Address of the mapped host view, valid until {@link #close()}. For zero-copy writers (e.g.
   * Arrow vectors built in place); most callers use {@link #write} and {@link #read}.
   */
  long hostAddress();

  /**
   * Declares that the caller wrote {@code [offset, offset + bytes)} through {@link #hostAddress()}:
   * flushes the range where the memory is not host-coherent, and counts the bytes.
   */
  void flush(long offset, long bytes);

  /** Copies {@code src}'s remaining bytes to {@code offset} of the host view. */
  void write(long offset, ByteBuffer src);

  /** Copies {@code bytes} bytes from native memory at {@code srcAddress} to {@code offset}. */
  void write(long offset, long srcAddress, long bytes);

  /** Copies {@code dst.remaining()} bytes from {@code offset} of the host view into {@code dst}. */
  void read(long offset, ByteBuffer dst);

  /** Copies {@code bytes} bytes from {@code offset} of the host view to native memory. */
  void read(long offset, long dstAddress, long bytes);

  boolean isClosed();

  @Override
  void close();
}
