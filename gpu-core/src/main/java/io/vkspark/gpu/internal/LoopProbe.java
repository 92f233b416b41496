package io.vkspark.gpu.internal;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.Program;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Measures whether a device cuts loops short. Mesa's llvmpipe (lavapipe) stops every loop after
 * 65,535 iterations and carries on with the values it has; a GPU UDF looping longer would return
 * wrong rows. One invocation loops {@link #ITERATIONS} times, with the bound read from a buffer so
 * no compiler can fold it, and reports how far it got.
 */
final class LoopProbe {
  /** Iterations the probe asks for; a device that stops earlier has a loop limit. */
  static final int ITERATIONS = 200_000;

  private static final String SOURCE = """
      #version 450
      layout(local_size_x_id = 0) in;
      layout(std430, set = 0, binding = 0) readonly buffer N { uint n; uint stride; };
      layout(std430, set = 0, binding = 1) buffer Count { uint count; uint mix; };
      void main() {
        uint i = 0u;
        uint m = 1u;
        while (i < n) {
          m = m * 1664525u + 1013904223u;
          i += stride;
        }
        count = i;
        mix = m;
      }
      """;

  private LoopProbe() {}

  /** Iterations after which {@code device} stops a loop, or 0 when it ran the whole probe. */
  static int measure(VulkanDevice device) {
    Program p = Program.glsl("vk_loop_probe", SOURCE).workgroupSize(1)
        .buffer(BufferDecl.input("n", 0, ElementType.UINT32))
        .buffer(BufferDecl.output("count", 1, ElementType.UINT32, 2))
        .build();
    try (Kernel k = device.load(p)) {
      ByteBuffer in = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN).putInt(ITERATIONS).putInt(1).flip();
      ByteBuffer out = k.dispatch(List.of(in), Groups.of(1)).get(0).order(ByteOrder.LITTLE_ENDIAN);
      int count = out.getInt(0);
      return Integer.compareUnsigned(count, ITERATIONS) >= 0 ? 0 : count;
    }
  }
}
