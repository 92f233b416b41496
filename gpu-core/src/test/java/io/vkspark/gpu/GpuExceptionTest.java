package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.gpu.GpuException.Code;
import org.junit.jupiter.api.Test;

/** The shape every error has, "what happened. Fix: what to change", and its two parts without parsing. */
final class GpuExceptionTest {

  @Test
  void of_keepsWhatAndFix_andTheMessageJoinsThem() {
    GpuException e = GpuException.of(Code.SIZE, "  a batch of 3 rows needs 12 bytes  ", "raise the limit.");
    assertEquals("a batch of 3 rows needs 12 bytes.", e.what());
    assertEquals("raise the limit.", e.fix());
    assertEquals("a batch of 3 rows needs 12 bytes. Fix: raise the limit.", e.getMessage());
    assertEquals(Code.SIZE, e.code());
  }

  @Test
  void of_doesNotDoubleTheFinalPeriod() {
    GpuException e = GpuException.of(Code.VULKAN, "vkQueueSubmit failed.", "update the driver.");
    assertEquals("vkQueueSubmit failed.", e.what());
    assertEquals("vkQueueSubmit failed. Fix: update the driver.", e.getMessage());
  }

  @Test
  void constructor_splitsAtTheFirstFix() {
    GpuException e = new GpuException(Code.INVALID_ARGUMENT, "x is not a class. Fix: add it; see 'Fix: ' in the docs.",
        new IllegalStateException("cause"));
    assertEquals("x is not a class.", e.what());
    assertEquals("add it; see 'Fix: ' in the docs.", e.fix());
    assertEquals("cause", e.getCause().getMessage());
  }

  @Test
  void toString_startsWithTheCode_asStackTracesAndSparkTaskFailuresShowIt() {
    GpuException e = GpuException.of(Code.TIMEOUT, "'k' ran longer than 500 ms", "raise the timeout.");
    assertEquals("io.vkspark.gpu.GpuException [TIMEOUT]: 'k' ran longer than 500 ms. Fix: raise the timeout.", e.toString());
    java.io.StringWriter trace = new java.io.StringWriter();
    e.printStackTrace(new java.io.PrintWriter(trace));
    assertTrue(trace.toString().startsWith("io.vkspark.gpu.GpuException [TIMEOUT]: 'k' ran"), trace::toString);
    assertEquals("'k' ran longer than 500 ms. Fix: raise the timeout.", e.getMessage());
  }

  @Test
  void messageWithoutFix_isRejected() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new GpuException(Code.VULKAN, "something failed"));
    assertTrue(e.getMessage().contains("must end with 'Fix: ...'"), e.getMessage());
  }
}
