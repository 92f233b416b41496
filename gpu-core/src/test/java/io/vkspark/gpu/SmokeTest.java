package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

class SmokeTest {
  static final String SAXPY = """
      #version 450
      layout(local_size_x_id = 0) in;
      layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
      layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
      void main() {
        uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
        if (i < x.length()) y[i] = 2.5 * x[i] + 1.0;
      }
      """;

  @Test
  void saxpy() {
    System.out.println(GpuDevice.list());
    try (GpuDevice d = GpuDevice.open(DeviceOptions.defaults().withValidation(true))) {
      Program p = Program.glsl("saxpy", SAXPY).workgroupSize(64)
          .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32))
          .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32, 1000)).build();
      try (Kernel k = d.load(p)) {
        ByteBuffer x = ByteBuffer.allocate(4000).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 1000; i++) x.putFloat(i);
        x.flip();
        TimedDispatch t = k.dispatchTimed(List.of(x), Groups.of(16));
        ByteBuffer y = t.outputs().get(0).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 1000; i++) assertEquals(2.5f * i + 1f, y.getFloat(4 * i));
        System.out.println(t);
      }
      System.out.println(d.counters());
      assertEquals(0, d.validationErrors(), d.validationMessages().toString());
    }
  }
}
