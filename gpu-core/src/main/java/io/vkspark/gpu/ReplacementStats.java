package io.vkspark.gpu;

/** Full accounting of one output replacement: slot decisions plus byte pressure. */
public record ReplacementStats(SlotStats slots, SlotByteStats bytes) {
  public static final ReplacementStats ZERO = new ReplacementStats(SlotStats.ZERO, SlotByteStats.ZERO);

  public ReplacementStats plus(ReplacementStats o) {
    return new ReplacementStats(slots.plus(o.slots), bytes.plus(o.bytes));
  }
}
