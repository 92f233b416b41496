package io.vkspark.gpu.column.cache;

import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.SqlType;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Device copies of cached columns' values ({@link ResidentColumn}s), so that queries over a table
 * cache read them on the device instead of copying them from the host again: the first use writes
 * the host copy into a device buffer once (through its mapping: ReBAR or unified memory), later uses
 * record a device-to-device copy into the runner's input buffer, in the dispatch's own submission
 * ({@code BatchRunner.readResident}). The host copy stays the source of truth; validity is read there.
 *
 * <p>Why copies rather than binding the cached buffer itself (buffer device addresses): a copy keeps
 * the kernels, their descriptor sets and the pooled recordings exactly as they are for host data,
 * and costs one pass over the column in device memory (a read and a write at the device's memory
 * bandwidth); binding the device copy by its buffer device address instead would save at most that
 * copy's time, which the H200 benchmark measures (docs/BENCHMARKS.md).
 *
 * <p>Budget: at most {@code budgetBytes} of device memory; when a new column does not fit, the least
 * recently used columns no dispatch is reading are freed (their host copies remain, and they are
 * written again on their next use). A column that still does not fit, one whose buffer the device
 * cannot give (out of memory, or memory the host cannot write), and one another task is writing
 * right now are read from the host this time ({@link Stats#refused()}).
 *
 * <p>Thread-safe: the tasks of an executor share one. Columns are pinned while a submission reads
 * them ({@link Pin}); {@link #drop} (the cached batch was freed) and {@link #close} free pinned
 * columns when their last pin is released. Owned by the executor's device, closed before it.
 */
public final class DeviceColumnCache implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DeviceColumnCache.class);

  /**
   * Counters since the cache was made.
   *
   * @param uploads columns written to the device (first use, or again after an eviction)
   * @param hits uses of a column already on the device
   * @param evictions columns freed to make room (their host copies remain)
   * @param refused uses read from the host because the column could not be put on the device
   * @param residentBytes device memory the cache holds now
   * @param columns columns on the device now
   * @param budgetBytes the most device memory the cache holds
   */
  public record Stats(long uploads, long hits, long evictions, long refused, long residentBytes, int columns,
                      long budgetBytes) {}

  private record Key(long batch, int column) {}

  /** One column's device copy; {@code buffer} is null while it is being written. */
  private static final class Entry {
    final Key key;
    final long bytes;
    GpuBuffer buffer;
    int pins;
    boolean dropped;

    Entry(Key key, long bytes) {
      this.key = key;
      this.bytes = bytes;
    }
  }

  /** A column's device copy held for one submission; {@link #release()} once it has been awaited. */
  final class Pin {
    private final Entry entry;
    /** Whether this use wrote the device copy (else it was there already). */
    final boolean uploaded;
    private boolean released;

    private Pin(Entry entry, boolean uploaded) {
      this.entry = entry;
      this.uploaded = uploaded;
    }

    GpuBuffer buffer() {
      return entry.buffer;
    }

    void release() {
      synchronized (DeviceColumnCache.this) {
        if (released) {
          return;
        }
        released = true;
        entry.pins--;
        if (entry.pins == 0 && entry.dropped) {
          free(entry);
        }
      }
    }
  }

  private final GpuDevice device;
  private final long budget;
  /** In access order: the least recently used first. */
  private final LinkedHashMap<Key, Entry> entries = new LinkedHashMap<>(64, 0.75f, true);
  private long resident;
  private long uploads;
  private long hits;
  private long evictions;
  private long refused;
  private boolean closed;
  /** The device gives only staged memory for inputs: every column is read from the host. */
  private boolean hostOnly;

  /**
   * @param budgetBytes the most device memory the copies may hold, at least 1
   */
  public DeviceColumnCache(GpuDevice device, long budgetBytes) {
    if (budgetBytes <= 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a device column cache with a budget of " + budgetBytes + " bytes.",
          "give it a positive number of bytes of device memory.");
    }
    this.device = device;
    this.budget = budgetBytes;
  }

  /**
   * The device copy of {@code column}, pinned, written now if it is not on the device yet; null when
   * it cannot be (the caller copies from the host).
   */
  Pin pin(ResidentColumn column, SqlType type) {
    long bytes = type.bytesFor(column.rows());
    Key key = new Key(column.residentBatch(), column.residentColumn());
    Entry e;
    synchronized (this) {
      if (closed || bytes <= 0) {
        return null;
      }
      if (hostOnly) {
        refused++;
        return null;
      }
      e = entries.get(key);
      if (e != null) {
        if (e.buffer == null) {
          refused++; // another task is writing it
          return null;
        }
        e.pins++;
        hits++;
        return new Pin(e, false);
      }
      if (!makeRoom(bytes)) {
        refused++;
        return null;
      }
      e = new Entry(key, bytes);
      entries.put(key, e);
      resident += bytes; // reserved while it is written
    }
    GpuBuffer b = null;
    try {
      b = device.createBuffer(bytes, BufferRole.INPUT);
      if (b.isStaged()) {
        synchronized (this) {
          hostOnly = true;
        }
        throw GpuException.of(Code.UNSUPPORTED, "the device gave staged memory for a cached column.",
            "use spark.vkspark.transfers=auto on a device with host-writable device memory (ReBAR, unified memory).");
      }
      column.copyValues(0, column.rows(), b.hostAddress());
      b.flush(0, bytes);
    } catch (GpuException ex) {
      if (b != null) {
        b.close();
      }
      LOG.debug("vkspark: a cached column stays on the host: {}", ex.getMessage());
      synchronized (this) {
        entries.remove(key, e);
        resident -= bytes;
        refused++;
      }
      return null;
    }
    synchronized (this) {
      uploads++;
      e.buffer = b;
      if (e.dropped || closed) {
        free(e);
        return null;
      }
      e.pins++;
      return new Pin(e, true);
    }
  }

  /** Frees unpinned columns, least recently used first, until {@code bytes} more fit the budget. */
  private boolean makeRoom(long bytes) {
    if (bytes > budget) {
      return false;
    }
    Iterator<Entry> it = entries.values().iterator();
    while (resident + bytes > budget && it.hasNext()) {
      Entry old = it.next();
      if (old.buffer != null && old.pins == 0) {
        it.remove();
        free(old);
        evictions++;
      }
    }
    return resident + bytes <= budget;
  }

  /** Frees the device copies of every column of {@code batch} (its host copy was freed); pinned ones when released. */
  public synchronized void drop(long batch) {
    List<Entry> gone = new ArrayList<>();
    entries.values().removeIf(e -> {
      if (e.key.batch() == batch) {
        gone.add(e);
        return true;
      }
      return false;
    });
    for (Entry e : gone) {
      e.dropped = true;
      if (e.buffer != null && e.pins == 0) {
        free(e);
      }
    }
  }

  private void free(Entry e) {
    e.dropped = true;
    GpuBuffer b = e.buffer;
    e.buffer = null;
    if (b != null) {
      resident -= e.bytes;
      b.close();
    }
  }

  public synchronized Stats stats() {
    return new Stats(uploads, hits, evictions, refused, resident, entries.size(), budget);
  }

  /** The most device memory the copies may hold. */
  public long budgetBytes() {
    return budget;
  }

  /** Frees every device copy (pinned ones when released); later uses read from the host. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    List<Entry> all = new ArrayList<>(entries.values());
    entries.clear();
    for (Entry e : all) {
      e.dropped = true;
      if (e.buffer != null && e.pins == 0) {
        free(e);
      }
    }
  }
}
