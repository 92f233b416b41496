package io.vkspark.spark.cache;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.apache.spark.unsafe.Platform;
import org.slf4j.LoggerFactory;

/**
 * The native memory of vkspark's cache: every cached batch and every builder's scratch space is
 * allocated and freed here, so one counter says how much the cache holds in this JVM (tests assert
 * it falls back when Spark unpersists or evicts a table). Listeners hear when a cached batch's
 * memory is freed ({@link #onFree}), so copies of it elsewhere (the executor device's) go with it.
 */
public final class CacheMemory {
  private static final AtomicLong LIVE = new AtomicLong();
  private static final List<LongConsumer> LISTENERS =
      new CopyOnWriteArrayList<>();

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

  /**
   * Calls {@code listener} with a cached batch's id (as {@link CachedColumn#batchId()} gives it) once
   * its memory is freed (unpersist, eviction, or the batch became unreachable), on the thread that
   * frees it. Returns what removes the listener.
   */
  public static Runnable onFree(LongConsumer listener) {
    LISTENERS.add(listener);
    return () -> LISTENERS.remove(listener);
  }

  static void freed(long batchId) {
    for (LongConsumer l : LISTENERS) {
      try {
        l.accept(batchId);
      } catch (RuntimeException e) { // a listener's failure must not keep the memory or the other listeners
        LoggerFactory.getLogger(CacheMemory.class).warn("vkspark: dropping copies of cached batch {} failed: {}",
            batchId, e.toString());
      }
    }
  }

  static void free(long address, long bytes) {
    Platform.freeMemory(address);
    LIVE.addAndGet(-bytes);
  }
}
