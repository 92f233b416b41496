package io.vkspark.gpu.column.run;

import java.util.function.LongFunction;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * A runner's host scratch memory, grown on demand: bit-packed rows that start or land off a 64-row
 * boundary pass through it (staged, read back, or their validity), and so do decimal results before
 * they are widened. Shared by the runner, its results and its reduction; what one use wrote is gone
 * at the next. One runner (one thread).
 */
final class Scratch implements LongFunction<ArrowBuf>, AutoCloseable {
  private final BufferAllocator allocator;
  private ArrowBuf buf;

  Scratch(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  /** At least {@code bytes} bytes (1 KiB at least), valid until the next call. */
  @Override
  public ArrowBuf apply(long bytes) {
    if (buf == null || buf.capacity() < bytes) {
      if (buf != null) {
        buf.close();
      }
      buf = allocator.buffer(Math.max(bytes, 1024));
    }
    return buf;
  }

  @Override
  public void close() {
    if (buf != null) {
      buf.close();
      buf = null;
    }
  }
}
