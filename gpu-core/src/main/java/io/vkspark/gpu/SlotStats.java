package io.vkspark.gpu;

/**
 * Slot-reuse accounting of one {@link OutputSlots} replacement (the seed's {@code OutputSlotStats}).
 *
 * @param totalSlots output slots after the replacement
 * @param reusedSlots existing slots whose allocation was kept (same native address)
 * @param movedSlots existing slots whose allocation was replaced by a larger one
 * @param appendedSlots slots added beyond the previous count
 */
public record SlotStats(long totalSlots, long reusedSlots, long movedSlots, long appendedSlots) {
  public static final SlotStats ZERO = new SlotStats(0, 0, 0, 0);

  /** Sums two accounts (checked), for totals over many batches. */
  public SlotStats plus(SlotStats o) {
    return new SlotStats(Sizes.add(totalSlots, o.totalSlots, "total slots"), Sizes.add(reusedSlots, o.reusedSlots, "reused slots"),
        Sizes.add(movedSlots, o.movedSlots, "moved slots"), Sizes.add(appendedSlots, o.appendedSlots, "appended slots"));
  }
}
