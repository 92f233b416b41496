package io.vkspark.gpu.tools;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.PrerecordedDispatch;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.TimedDispatch;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Lists the Vulkan devices and runs saxpy ({@code y = 2.5 x + 1}) over a million floats on the best
 * one, through a pre-recorded dispatch, checking every element against the CPU. A program of the
 * tests, not of the jar: {@code ExitCodeTest} and {@code MissingLayerTest} run it in a child JVM.
 */
public final class Demo {
  static final String SAXPY = """
      #version 450
      layout(local_size_x_id = 0) in;
      layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
      layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
      void main() {
        uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x
            + gl_LocalInvocationID.x;
        if (i < x.length()) {
          y[i] = 2.5 * x[i] + 1.0;
        }
      }
      """;

  private Demo() {}

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 1 << 20;
    List<DeviceInfo> devices = GpuDevices.list();
    System.out.println("Vulkan devices:");
    devices.forEach(d -> System.out.println("  " + d.summary()));
    try (GpuDevice device = GpuDevices.open(DeviceOptions.defaults().withDevice(System.getProperty("vkspark.device", "")))) {
      System.out.println("running on " + device.info().summary());
      int wg = Math.max(64, device.info().subgroupSize());
      Program saxpy = Program.glsl("saxpy", SAXPY).workgroupSize(wg)
          .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32))
          .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32))
          .build();
      try (Kernel k = device.load(saxpy);
           GpuBuffer x = device.createBuffer(4L * n, BufferRole.INPUT);
           GpuBuffer y = device.createBuffer(4L * n, BufferRole.OUTPUT);
           PrerecordedDispatch d = k.prerecord(List.of(x), List.of(y), null,
               Groups.covering(n, wg, device.info().maxWorkgroupCountX()))) {
        ByteBuffer host = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer out = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.LITTLE_ENDIAN);
        for (int round = 1; round <= 3; round++) {
          for (int i = 0; i < n; i++) {
            host.putFloat(4 * i, i * 0.5f + round);
          }
          x.write(0, host);
          TimedDispatch t = d.run();
          d.readOutputInto(0, out);
          int bad = 0;
          for (int i = 0; i < n; i++) {
            if (out.getFloat(4 * i) != 2.5f * (i * 0.5f + round) + 1f) {
              bad++;
            }
          }
          System.out.printf("replay %d: y[0..3] = %s, %s, %s; %,d elements, %d wrong; wall %.3f ms, device %s%n",
              round, out.getFloat(0), out.getFloat(4), out.getFloat(8), n, bad, t.wallNs() / 1e6,
              t.deviceNs() == null ? "n/a" : String.format("%.3f ms", t.deviceNs() / 1e6));
          if (bad > 0) {
            throw new IllegalStateException(bad + " wrong results");
          }
        }
      }
    }
  }
}
