package io.vkspark.gpu;

import static io.vkspark.gpu.TestGpu.assertGpuError;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.vulkan.GpuDevices;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Closing a recording whose dispatch outlives the fence timeout: a clear TIMEOUT, and nothing leaks. */
final class CloseTimeoutTest {
  private static final int WG = 64;
  /**
   * Over a second of dependent work: on lavapipe 60,000 iterations a row (under its 65,535 loop
   * limit), on devices without a loop limit 200 million (about half a second on an H200).
   */
  private static final String SLOW = """
      #version 450
      layout(local_size_x_id = 0) in;
      layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
      layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
      void main() {
        uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
        if (i < x.length()) {
          float s = x[i];
          for (int k = 0; k < ITERATIONS; k++) {
            s = s * 0.999 + 0.5;
          }
          y[i] = s;
        }
      }
      """;

  @Test
  void closeWhileStillRunning_isTimeoutNotADriverBug_andTheDeviceFreesItLater() {
    GpuDevice d = GpuDevices.open(DeviceOptions.defaults().withValidation(true).withFenceTimeout(Duration.ofMillis(50))
        .withShaderCacheDir(java.nio.file.Path.of("target", "shader-cache")));
    int n = 1 << 15;
    int iterations = d.loopLimit() > 0 ? 60_000 : 200_000_000;
    Program p = Program.glsl("slow_close", SLOW.replace("ITERATIONS", Integer.toString(iterations))).workgroupSize(WG)
        .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32))
        .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32, n)).build();
    Kernel k = d.load(p);
    GpuBuffer x = d.createBuffer(4L * n, BufferRole.INPUT);
    GpuBuffer y = d.createBuffer(4L * n, BufferRole.OUTPUT);
    x.write(0, TestGpu.floats(n, i -> i % 100));
    PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), null, Groups.covering(n, WG, 65535));
    rec.replay();
    GpuException e = assertGpuError(GpuException.Code.TIMEOUT, "'slow_close' did not finish within 50 ms", rec::close);
    assertTrue(e.getMessage().contains("while closing"), e.getMessage());
    assertFalse(e.getMessage().contains("driver or vkspark bug"), e.getMessage());
    assertFalse(d.isLost());
    // The device waits for the dispatch, then frees the recording, kernel and buffers.
    d.close();
    assertTrue(d.counters().nothingLive(), "objects left alive after the device closed: " + d.counters());
    assertEquals(0, d.validationErrors(), () -> "validation errors: " + d.validationMessages());
  }
}
