package io.vkspark.gpu.internal;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Test-only switches for failures a CPU driver cannot produce. lavapipe never loses its device, so
 * the tests of vkspark's {@code VK_ERROR_DEVICE_LOST} handling arm {@link #loseDeviceOnNextWait()}:
 * the next fence wait on any device of this JVM then reports {@code VK_ERROR_DEVICE_LOST} and the
 * device is treated as lost from then on (its real work still finishes, so closing it is safe).
 *
 * <p><b>Warning:</b> not for production use; nothing in vkspark arms it.
 */
public final class FaultInjection {
  private static final AtomicBoolean LOSE_DEVICE = new AtomicBoolean();

  private FaultInjection() {}

  /** Makes the next fence wait (on any device of this JVM) report {@code VK_ERROR_DEVICE_LOST}. */
  public static void loseDeviceOnNextWait() {
    LOSE_DEVICE.set(true);
  }

  /** Disarms {@link #loseDeviceOnNextWait()} if no wait has taken it yet. */
  public static void reset() {
    LOSE_DEVICE.set(false);
  }

  static boolean takeDeviceLoss() {
    return LOSE_DEVICE.getAndSet(false);
  }
}
