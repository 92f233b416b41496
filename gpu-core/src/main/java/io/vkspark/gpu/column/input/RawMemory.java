package io.vkspark.gpu.column.input;

import org.lwjgl.system.MemoryUtil;

/**
 * Reads and writes at raw addresses (public for {@code column.reduce}, not for users) (Arrow buffers, mapped device memory) through LWJGL, not
 * Arrow's MemoryUtil: Arrow 12 (what Spark 3.5 brings to the cluster) has no address helpers and
 * Arrow 18+ hides its Unsafe, so no Arrow call works on every Spark line vkspark supports.
 */
public final class RawMemory {
  private RawMemory() {}

  public static long memGetLong(long address) {
    return MemoryUtil.memGetLong(address);
  }

  public static void memPutLong(long address, long value) {
    MemoryUtil.memPutLong(address, value);
  }

  public static byte memGetByte(long address) {
    return MemoryUtil.memGetByte(address);
  }

  public static void memPutByte(long address, byte value) {
    MemoryUtil.memPutByte(address, value);
  }

  /** {@code bytes} bytes from {@code src} to {@code dst} (Arrow's copyMemory argument order). */
  public static void memCopy(long src, long dst, long bytes) {
    MemoryUtil.memCopy(src, dst, bytes);
  }

  /** {@code bytes} bytes at {@code address} set to {@code value}'s low byte. */
  public static void memSet(long address, int value, long bytes) {
    MemoryUtil.memSet(address, value, bytes);
  }

  public static int memGetInt(long address) {
    return MemoryUtil.memGetInt(address);
  }

  public static void memPutInt(long address, int value) {
    MemoryUtil.memPutInt(address, value);
  }

  /** {@code bytes} bytes of {@code src} from {@code srcIndex} to {@code dst}. */
  public static void copyFromArray(byte[] src, long srcIndex, long dst, long bytes) {
    MemoryUtil.memByteBuffer(dst, Math.toIntExact(bytes)).put(src, Math.toIntExact(srcIndex), Math.toIntExact(bytes));
  }
}
