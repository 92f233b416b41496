package io.vkspark.gpu;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Output buffers that keep their native allocations across batches (the seed's
 * {@code replace_output_buffers_preserving_slots}). Slot {@code i} keeps its allocation (same
 * native address) whenever the new bytes fit its capacity; a larger result replaces the
 * allocation ("moved"); extra slots are appended, missing ones truncated and freed. Every
 * replacement returns {@link ReplacementStats}, so steady-state reuse is measurable.
 *
 * <p>Slots are Arrow {@link ArrowBuf}s: the length of a slot is its {@code writerIndex}, so they
 * load straight into Arrow vectors. Not thread-safe; one owner per task.
 */
public final class OutputSlots implements AutoCloseable {
  private final BufferAllocator allocator;
  private ArrowBuf[] slots = new ArrowBuf[0];
  private int size;
  private long tableGrowths;
  private boolean closed;

  public OutputSlots(BufferAllocator allocator) {
    this.allocator = Objects.requireNonNull(allocator, "allocator");
  }

  /**
   * Replaces the outputs with {@code incoming}, taking ownership of every incoming buffer (its
   * bytes are {@code [0, writerIndex)}): bytes that fit a slot are copied into it and the incoming
   * buffer is released; an oversized incoming buffer is moved into the slot without a copy.
   */
  public ReplacementStats replace(List<ArrowBuf> incoming) {
    return replaceWith(incoming.size(), new Source() {
      @Override
      public long length(int i) {
        return incoming.get(i).writerIndex();
      }

      @Override
      public void fill(int i, ArrowBuf slot) {
        ArrowBuf in = incoming.get(i);
        slot.setBytes(0, in, 0, in.writerIndex());
        in.close();
      }

      @Override
      public ArrowBuf take(int i) {
        return incoming.get(i);
      }
    });
  }

  /**
   * Prepares {@code lengths.length} slots of the given byte lengths for the caller to fill: a slot
   * whose capacity fits keeps its allocation, a smaller one gets a new allocation (counted as
   * moved), new slots are allocated (appended), extra slots are freed. After this call,
   * {@link #slot(int)} has {@code writerIndex == lengths[i]} and undefined contents.
   */
  public ReplacementStats prepare(long[] lengths) {
    return replaceWith(lengths.length, new Source() {
      @Override
      public long length(int i) {
        return lengths[i];
      }

      @Override
      public void fill(int i, ArrowBuf slot) {
        // the caller writes the bytes
      }

      @Override
      public ArrowBuf take(int i) {
        return allocator.buffer(lengths[i]);
      }
    });
  }

  /** Where the bytes of a replacement come from: {@link #replace} and {@link #prepare} differ only here. */
  private interface Source {
    long length(int i);

    /** Puts output {@code i} into a retained slot that fits it. */
    void fill(int i, ArrowBuf slot);

    /** A buffer holding output {@code i}, to become the slot (moved in or appended). */
    ArrowBuf take(int i);
  }

  /** The seed's replacement: reuse slots that fit, move larger outputs in, truncate, append. */
  private ReplacementStats replaceWith(int total, Source source) {
    ensureOpen();
    int previous = size;
    reserve(total);
    long incomingBytes = 0;
    long copied = 0;
    long moved = 0;
    long appended = 0;
    int reused = 0;
    int movedSlots = 0;
    int retained = Math.min(previous, total);
    for (int i = 0; i < retained; i++) {
      long n = source.length(i);
      incomingBytes = Sizes.add(incomingBytes, n, "incoming output bytes");
      if (n <= slots[i].capacity()) {
        source.fill(i, slots[i]);
        copied = Sizes.add(copied, n, "copied output bytes");
        reused++;
      } else {
        ArrowBuf bigger = source.take(i);
        slots[i].close();
        slots[i] = bigger;
        moved = Sizes.add(moved, n, "moved output bytes");
        movedSlots++;
      }
      slots[i].writerIndex(n);
    }
    truncate(retained);
    for (int i = retained; i < total; i++) {
      long n = source.length(i);
      incomingBytes = Sizes.add(incomingBytes, n, "incoming output bytes");
      appended = Sizes.add(appended, n, "appended output bytes");
      ArrowBuf b = source.take(i);
      b.writerIndex(n);
      slots[size++] = b;
    }
    return stats(total, previous, reused, movedSlots, incomingBytes, copied, moved, appended);
  }

  private ReplacementStats stats(int total, int previous, int reused, int moved, long incoming, long copied,
                                 long movedBytes, long appended) {
    long capacity = 0;
    for (int i = 0; i < size; i++) {
      capacity = Sizes.add(capacity, slots[i].capacity(), "retained output capacity bytes");
    }
    return new ReplacementStats(
        new SlotStats(total, reused, moved, Math.max(0, total - previous)),
        new SlotByteStats(incoming, copied, movedBytes, appended, capacity));
  }

  /** Grows the slot table once to hold {@code total} slots, before any slot is appended. */
  private void reserve(int total) {
    if (total > slots.length) {
      slots = Arrays.copyOf(slots, total);
      tableGrowths++;
    }
  }

  private void truncate(int keep) {
    for (int i = keep; i < size; i++) {
      slots[i].close();
      slots[i] = null;
    }
    size = Math.min(size, keep);
  }

  /**
   * Lengthens slot {@code i} to {@code length} bytes keeping its current bytes (a batch built in
   * several appends). A slot whose capacity is too small moves to an allocation of at least twice
   * its capacity, so n appends move it O(log n) times.
   *
   * @return whether the slot moved to a new allocation
   */
  public boolean grow(int i, long length) {
    ArrowBuf slot = slot(i);
    long kept = slot.writerIndex();
    if (length <= slot.capacity()) {
      slot.writerIndex(Math.max(kept, length));
      return false;
    }
    ArrowBuf bigger = allocator.buffer(Math.max(length, Sizes.multiply(slot.capacity(), 2, "grown output slot bytes")));
    bigger.setBytes(0, slot, 0, kept);
    bigger.writerIndex(length);
    slot.close();
    slots[i] = bigger;
    return true;
  }

  /** The buffer of slot {@code i}; its length is its {@code writerIndex}. */
  public ArrowBuf slot(int i) {
    ensureOpen();
    Objects.checkIndex(i, size);
    return slots[i];
  }

  public int size() {
    return size;
  }

  /** Slots the table holds without growing. */
  public int tableCapacity() {
    return slots.length;
  }

  /** How often the slot table grew (once per replacement at most). */
  public long tableGrowths() {
    return tableGrowths;
  }

  private void ensureOpen() {
    if (closed) {
      throw GpuException.of(GpuException.Code.CLOSED, "output slots used after close().",
          "create new OutputSlots; closed slots have released their memory.");
    }
  }

  /** Releases every slot's allocation. Idempotent. */
  @Override
  public void close() {
    if (!closed) {
      truncate(0);
      closed = true;
    }
  }
}
