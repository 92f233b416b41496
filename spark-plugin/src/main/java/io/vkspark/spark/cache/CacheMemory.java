package io.vkspark.spark.cache;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.unsafe.Platform;

/**
 * The native memory of vkspark's cache: every cached batch and every builder's scratch space is
 * allocated and freed here, so one counter says how much the cache holds in this JVM (tests assert
 * it falls back when Spark unpersists or evicts a table).
 */
public final class CacheMemory {
  private static final AtomicLong LIVE = new AtomicLong();

  private CacheMemory() {}

  /** Bytes of native memory the cache holds now (cached batches and builders' scratch space). */
  public static long liveBytes() {
    return LIVE.get();
  }

  static long allocate(long bytes) {
    long address = Platform.allocateMemory(Math.max(bytes, 1));
    LIVE.addAndGet(bytes);
    return address;
  }

  static long reallocate(long address, long oldBytes, long newBytes) {
    long moved = Platform.reallocateMemory(address, oldBytes, newBytes);
    LIVE.addAndGet(newBytes - oldBytes);
    return moved;
  }

  static void free(long address, long bytes) {
    Platform.freeMemory(address);
    LIVE.addAndGet(-bytes);
  }
}
