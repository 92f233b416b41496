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
   * limit), on devices without a loop limit 200 million (about half a second on an H200), ended
   * early by the stop word the test sets once the close has timed out (as DispatchGuard's abort
   * word): on the H200, a dispatch that ran on for half a second beside other processes' GPU work
   * (the suites side by side) was lost, VK_ERROR_DEVICE_LOST from vkDeviceWaitIdle.
   */
  private static final String SLOW = """
      #version 450
      layout(local_size_x_id = 0) in;
      layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
      layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
      layout(std430, set = 0, binding = 2) coherent volatile readonly buffer Stop { uint stop[]; };
      void main() {
        uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
        if (i < x.length()) {
          float s = x[i];
          for (int k = 0; k < ITERATIONS; k++) {
            s = s * 0.999 + 0.5;
            if ((k & 1023) == 0 && stop[0] != 0u) {
              break;
            }
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
        .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32, n))
        .buffer(BufferDecl.input("stop", 2, ElementType.UINT32)).build();
    Kernel k = d.load(p);
    GpuBuffer x = d.createBuffer(4L * n, BufferRole.INPUT);
    GpuBuffer y = d.createBuffer(4L * n, BufferRole.OUTPUT);
    GpuBuffer stop = d.createBuffer(4, BufferRole.INPUT);
    x.write(0, TestGpu.floats(n, i -> i % 100));
    stop.write(0, TestGpu.ints(0));
    PrerecordedDispatch rec = k.prerecord(List.of(x, stop), List.of(y), null, Groups.covering(n, WG, 65535));
    rec.replay();
    GpuException e = assertGpuError(GpuException.Code.TIMEOUT, "'slow_close' did not finish within 50 ms", rec::close);
    assertTrue(e.getMessage().contains("while closing"), e.getMessage());
    assertFalse(e.getMessage().contains("driver or vkspark bug"), e.getMessage());
    assertFalse(d.isLost());
    stop.write(0, TestGpu.ints(1));
    // The device waits for the dispatch, then frees the recording, kernel and buffers.
    d.close();
    assertTrue(d.counters().nothingLive(), "objects left alive after the device closed: " + d.counters());
    assertEquals(0, d.validationErrors(), () -> "validation errors: " + d.validationMessages());
  }
}
