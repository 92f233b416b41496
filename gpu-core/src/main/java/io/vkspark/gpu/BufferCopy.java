package io.vkspark.gpu;

/**
 * A device-side copy of {@code bytes} bytes from {@code src} at {@code srcOffset} to {@code dst} at
 * {@code dstOffset}, recorded into the submission of a replay ({@link PrerecordedDispatch#copyBeforeNextReplay})
 * so that data already on the device (a cached column's device copy) reaches a dispatch's input
 * buffer without the host touching it.
 */
public record BufferCopy(GpuBuffer src, long srcOffset, GpuBuffer dst, long dstOffset, long bytes) {
  public BufferCopy {
    if (srcOffset < 0 || dstOffset < 0 || bytes <= 0 || bytes > src.byteLength() || srcOffset > src.byteLength() - bytes
        || bytes > dst.byteLength() || dstOffset > dst.byteLength() - bytes) {
      throw GpuException.of(GpuException.Code.SIZE, String.format("a device copy of %,d bytes from offset %,d of a "
          + "%,d-byte buffer to offset %,d of a %,d-byte buffer is out of range.", bytes, srcOffset, src.byteLength(),
          dstOffset, dst.byteLength()), "copy a positive number of bytes within both buffers.");
    }
  }
}
