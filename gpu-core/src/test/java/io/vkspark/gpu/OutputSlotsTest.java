package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.AllocationListener;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The seed's dispatch_result.rs tests, on native memory. */
final class OutputSlotsTest {
  private BufferAllocator allocator;

  @BeforeEach
  void open() {
    // Exact capacities, like the seed's Vec::with_capacity (Arrow's default rounds 1 up to 2).
    allocator = new RootAllocator(AllocationListener.NOOP, Long.MAX_VALUE, size -> size);
  }

  @AfterEach
  void close() {
    assertEquals(0, allocator.getAllocatedMemory(), "every slot released");
    allocator.close();
  }

  /** A slot of {@code capacity} bytes, empty (writerIndex 0). */
  private ArrowBuf withCapacity(long capacity) {
    ArrowBuf b = allocator.buffer(capacity);
    b.writerIndex(0);
    return b;
  }

  private ArrowBuf bytes(int... values) {
    ArrowBuf b = allocator.buffer(values.length);
    for (int i = 0; i < values.length; i++) {
      b.setByte(i, values[i]);
    }
    b.writerIndex(values.length);
    return b;
  }

  private static List<List<Integer>> contents(OutputSlots s) {
    List<List<Integer>> out = new ArrayList<>();
    for (int i = 0; i < s.size(); i++) {
      List<Integer> slot = new ArrayList<>();
      for (long j = 0; j < s.slot(i).writerIndex(); j++) {
        slot.add((int) s.slot(i).getByte(j));
      }
      out.add(slot);
    }
    return out;
  }

  private OutputSlots slots(long... capacities) {
    OutputSlots s = new OutputSlots(allocator);
    List<ArrowBuf> initial = new ArrayList<>();
    for (long c : capacities) {
      initial.add(withCapacity(c));
    }
    s.replace(initial);
    return s;
  }

  @Test
  void replace_preservesExistingSlots() {
    try (OutputSlots s = slots(8, 4)) {
      long first = s.slot(0).memoryAddress();
      long second = s.slot(1).memoryAddress();
      s.replace(List.of(bytes(1, 2), bytes(3)));
      assertEquals(List.of(List.of(1, 2), List.of(3)), contents(s));
      assertEquals(first, s.slot(0).memoryAddress());
      assertEquals(second, s.slot(1).memoryAddress());
    }
  }

  @Test
  void replace_truncatesWithoutDroppingReusedSlots() {
    try (OutputSlots s = slots(8, 4)) {
      long first = s.slot(0).memoryAddress();
      s.replace(List.of(bytes(9)));
      assertEquals(List.of(List.of(9)), contents(s));
      assertEquals(first, s.slot(0).memoryAddress());
    }
  }

  @Test
  void replace_movesOversizedIncomingSlotWithoutCopy() {
    try (OutputSlots s = slots(1)) {
      ArrowBuf incoming = bytes(1, 2, 3, 4);
      long incomingAddress = incoming.memoryAddress();
      s.replace(List.of(incoming));
      assertEquals(List.of(List.of(1, 2, 3, 4)), contents(s));
      assertEquals(incomingAddress, s.slot(0).memoryAddress(),
          "an oversized incoming output is moved into place, not copied through a too-small slot");
    }
  }

  @Test
  void replace_reportsReuseMoveAndAppendStats() {
    try (OutputSlots s = slots(8, 1)) {
      ReplacementStats stats = s.replace(List.of(bytes(1, 2), bytes(3, 4), bytes(5)));
      assertEquals(List.of(List.of(1, 2), List.of(3, 4), List.of(5)), contents(s));
      assertEquals(new SlotStats(3, 1, 1, 1), stats.slots());
    }
  }

  @Test
  void replace_reservesOuterSlotsBeforeAppending() {
    try (OutputSlots s = new OutputSlots(allocator)) {
      ArrowBuf first = withCapacity(4);
      first.setByte(0, 0xaa);
      first.writerIndex(1);
      s.replace(List.of(first));
      long firstAddress = s.slot(0).memoryAddress();
      long growths = s.tableGrowths();

      ReplacementStats stats = s.replace(List.of(bytes(1, 2), bytes(3), bytes(4, 5, 6)));

      assertEquals(List.of(List.of(1, 2), List.of(3), List.of(4, 5, 6)), contents(s));
      assertEquals(growths + 1, s.tableGrowths(), "the slot table grows once, before appending, not per slot");
      assertEquals(3, s.tableCapacity());
      assertEquals(firstAddress, s.slot(0).memoryAddress(),
          "the first slot is reused because the incoming bytes fit its retained allocation");
      assertEquals(2, stats.slots().appendedSlots());
      assertEquals(4, stats.bytes().appendedBytes());
    }
  }

  @Test
  void replace_reportsBytePressureStats() {
    try (OutputSlots s = slots(8, 1)) {
      ReplacementStats stats = s.replace(List.of(bytes(1, 2), bytes(3, 4), bytes(5)));
      assertEquals(List.of(List.of(1, 2), List.of(3, 4), List.of(5)), contents(s));
      assertEquals(new SlotByteStats(5, 2, 2, 1, 11), stats.bytes());
    }
  }

  @Test
  void prepare_reusesFittingSlotsAndReallocatesLargerOnes() {
    try (OutputSlots s = new OutputSlots(allocator)) {
      ReplacementStats first = s.prepare(new long[] {64, 128});
      assertEquals(new SlotStats(2, 0, 0, 2), first.slots());
      long a0 = s.slot(0).memoryAddress();
      long a1 = s.slot(1).memoryAddress();

      ReplacementStats same = s.prepare(new long[] {64, 100});
      assertEquals(new SlotStats(2, 2, 0, 0), same.slots());
      assertEquals(a0, s.slot(0).memoryAddress());
      assertEquals(a1, s.slot(1).memoryAddress());
      assertEquals(100, s.slot(1).writerIndex());

      ReplacementStats grow = s.prepare(new long[] {4096});
      assertEquals(new SlotStats(1, 0, 1, 0), grow.slots());
      assertEquals(4096, grow.bytes().movedBytes());
      assertEquals(1, s.size());
    }
  }

  @Test
  void closed_slotsFailWithFix() {
    OutputSlots s = slots(8);
    s.close();
    s.close();
    GpuException e = assertThrows(GpuException.class, () -> s.slot(0));
    assertEquals(GpuException.Code.CLOSED, e.code());
    assertTrue(e.getMessage().contains("Fix: "));
  }
}
