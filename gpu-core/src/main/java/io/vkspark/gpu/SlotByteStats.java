package io.vkspark.gpu;

/**
 * Byte-pressure accounting of one {@link OutputSlots} replacement (the seed's
 * {@code OutputSlotByteStats}).
 *
 * @param incomingBytes bytes presented by the incoming outputs
 * @param copiedBytes bytes placed into retained slots
 * @param movedBytes bytes placed by replacing a too-small slot's allocation
 * @param appendedBytes bytes in slots beyond the previous count
 * @param retainedCapacityBytes total capacity of the slots after the replacement
 */
public record SlotByteStats(long incomingBytes, long copiedBytes, long movedBytes, long appendedBytes,
                            long retainedCapacityBytes) {
  public static final SlotByteStats ZERO = new SlotByteStats(0, 0, 0, 0, 0);

  /** Sums the flows; retained capacity is the latest, not a sum. */
  public SlotByteStats plus(SlotByteStats o) {
    return new SlotByteStats(Sizes.add(incomingBytes, o.incomingBytes, "incoming output bytes"),
        Sizes.add(copiedBytes, o.copiedBytes, "copied output bytes"),
        Sizes.add(movedBytes, o.movedBytes, "moved output bytes"),
        Sizes.add(appendedBytes, o.appendedBytes, "appended output bytes"), o.retainedCapacityBytes);
  }
}
