package io.vkspark.gpu;

import static io.vkspark.gpu.TestGpu.assertGpuError;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float8Vector;
import org.junit.jupiter.api.Test;

/** Faults and bad input in gpu-core: nothing lost, no crash, every error says how to fix it. */
final class ReliabilityTest {
  private static final ColumnKernel PLUS = ColumnKernel.compile(KernelSignature.of("plus", SqlType.DOUBLE,
      KernelSignature.arg("x", SqlType.DOUBLE), KernelSignature.arg("y", SqlType.DOUBLE)), "x + y");

  private static Float8Vector doubles(BufferAllocator a, int n, java.util.function.IntToDoubleFunction f) {
    Float8Vector v = new Float8Vector("v", a);
    v.allocateNew(n);
    for (int i = 0; i < n; i++) {
      v.set(i, f.applyAsDouble(i));
    }
    v.setValueCount(n);
    return v;
  }

  @Test
  void outOfDeviceMemory_splitsTheBatchAndCompletes() {
    // 1 M rows of doubles need 3 x 8 MiB; the device may hold 5 MiB, so dispatches shrink until they fit.
    GpuDevice d = GpuDevices.open(DeviceOptions.defaults().withValidation(true).withMemoryLimit(5L << 20));
    try (ColumnRuntime rt = new ColumnRuntime(d); BufferAllocator a = new RootAllocator();
         Float8Vector x = doubles(a, 300_000, i -> i); Float8Vector y = doubles(a, 300_000, i -> 0.5)) {
      try (BatchRunner r = rt.runner(List.of(new KernelCall(PLUS, new int[] {0, 1})), List.of(SqlType.DOUBLE, SqlType.DOUBLE),
          1 << 20, a)) {
        Float8Vector out = (Float8Vector) r.run(List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(y, SqlType.DOUBLE)),
            300_000).get(0);
        for (int i = 0; i < 300_000; i++) {
          assertEquals(i + 0.5, out.get(i), "row " + i);
        }
        assertTrue(r.outOfMemorySplits() > 0);
        assertTrue(r.capacity() * 24L <= 5L << 20, "capacity " + r.capacity());
        assertTrue(r.stats().dispatches() > 1);
      }
      assertGpuError(GpuException.Code.OUT_OF_MEMORY, "would exceed the device memory limit of 5,242,880 bytes",
          () -> d.createBuffer(6L << 20, BufferRole.INPUT));
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @Test
  void useAfterClose_andDoubleClose_areStructuredErrors() {
    GpuDevice d = TestGpu.open();
    Kernel k = d.load(TestGpu.saxpy(64));
    GpuBuffer x = d.createBuffer(256, BufferRole.INPUT);
    GpuBuffer y = d.createBuffer(256, BufferRole.OUTPUT);
    PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), null, Groups.of(1));
    rec.run();
    ColumnRuntime rt = new ColumnRuntime(d);
    BufferAllocator a = new RootAllocator();
    BatchRunner runner = rt.runner(List.of(new KernelCall(PLUS, new int[] {0, 1})), List.of(SqlType.DOUBLE, SqlType.DOUBLE), 64, a);
    runner.close();
    runner.close();
    assertGpuError(GpuException.Code.CLOSED, "batch runner used after close()", () -> runner.run(List.of(), 0));
    rt.close();
    rt.close();
    assertGpuError(GpuException.Code.CLOSED, "column runtime", () -> rt.runner(List.of(new KernelCall(PLUS, new int[] {0, 1})),
        List.of(SqlType.DOUBLE, SqlType.DOUBLE), 64, a));
    d.close();
    d.close();
    assertGpuError(GpuException.Code.CLOSED, "which is closed", rec::replay);
    assertGpuError(GpuException.Code.CLOSED, "closed", () -> k.prerecord(List.of(x), List.of(y), null, Groups.of(1)));
    assertGpuError(GpuException.Code.CLOSED, "closed", () -> y.read(0, ByteBuffer.allocateDirect(4)));
    rec.close();
    k.close();
    x.close();
    y.close();
    a.close();
    assertTrue(d.counters().nothingLive(), d.counters().toString());
    assertEquals(0, d.validationErrors(), d.validationMessages().toString());
  }

  @Test
  void eightThreadsOnOneDevice_1000Batches_allCorrect() throws Exception {
    GpuDevice d = TestGpu.open();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try (ColumnRuntime rt = new ColumnRuntime(d)) {
      List<Future<Integer>> done = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        final int seed = t;
        done.add(pool.submit(() -> {
          Random r = new Random(seed);
          int batches = 0;
          try (BufferAllocator a = new RootAllocator();
               BatchRunner runner = rt.runner(List.of(new KernelCall(PLUS, new int[] {0, 1})),
                   List.of(SqlType.DOUBLE, SqlType.DOUBLE), 512, a)) {
            for (int b = 0; b < 125; b++) {
              int n = r.nextInt(1500);
              double shift = r.nextDouble();
              try (Float8Vector x = doubles(a, n, i -> i * 0.25); Float8Vector y = doubles(a, n, i -> shift)) {
                Float8Vector out = (Float8Vector) runner.run(List.of(ArrowInputs.of(x, SqlType.DOUBLE),
                    ArrowInputs.of(y, SqlType.DOUBLE)), n).get(0);
                for (int i = 0; i < n; i++) {
                  if (out.get(i) != i * 0.25 + shift) {
                    throw new AssertionError("thread " + seed + " batch " + b + " row " + i);
                  }
                }
              }
              runner.releaseBuffers();
              batches++;
            }
          }
          return batches;
        }));
      }
      int total = 0;
      for (Future<Integer> f : done) {
        total += f.get(5, TimeUnit.MINUTES);
      }
      assertEquals(1000, total);
      assertTrue(rt.bufferSetsCreated() <= 8, "pooled buffer sets: " + rt.bufferSetsCreated());
    } finally {
      pool.shutdownNow();
      TestGpu.closeClean(d);
    }
  }

  /**
   * A body that indexes the generated buffers (to write and read far outside them) no longer
   * compiles: the lexical body check refuses the generated names and built-ins, with the line.
   * (robustBufferAccess, on in every device, stays the second line of defence.)
   */
  @Test
  void outOfBoundsIndexing_isRefusedBeforeCompiling() {
    GpuException e = assertGpuError(GpuException.Code.COMPILE, "line 1 of its body [uint i = gl_GlobalInvocationID.x;]",
        () -> ColumnKernel.compile(KernelSignature.of("evil", SqlType.DOUBLE, KernelSignature.arg("x", SqlType.DOUBLE)), """
        uint i = gl_GlobalInvocationID.x;
        vk_out[i + 3000000u] = -1.0;
        return x + vk_in0[i + 5000000u];
        """));
    assertTrue(e.getMessage().startsWith("GPU UDF 'evil' is not allowed"), e.getMessage());
    assertGpuError(GpuException.Code.COMPILE, "line 2 of its body [vk_out[4096u] = -2.0;] contains 'vk_out'",
        () -> ColumnKernel.compile(KernelSignature.of("evil", SqlType.DOUBLE, KernelSignature.arg("x", SqlType.DOUBLE)), """
        double y = x;
        vk_out[4096u] = -2.0;
        return y;
        """));
  }

  @Test
  void noVulkanDriver_isNoVulkanWithAFix() throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(System.getProperty("java.home") + "/bin/java", "-cp",
        TestGpu.childClassPath(), "io.vkspark.gpu.tools.Devices");
    pb.environment().put("VK_DRIVER_FILES", "/nonexistent/vkspark_icd.json");
    pb.environment().put("VK_ICD_FILENAMES", "/nonexistent/vkspark_icd.json");
    pb.redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(2, p.exitValue(), out);
    assertTrue(out.contains("NO_VULKAN: vkCreateInstance failed with VK_ERROR_INCOMPATIBLE_DRIVER: no usable Vulkan driver."), out);
    assertTrue(out.contains("Fix: install a Vulkan driver (Debian: apt-get install libvulkan1 mesa-vulkan-drivers)"), out);
  }

  @Test
  void sizeArithmeticNear2to31And2to63_isChecked() {
    assertGpuError(GpuException.Code.SIZE, "overflowed 64-bit arithmetic", () -> SqlType.DOUBLE.bytesFor(Long.MAX_VALUE / 4));
    assertEquals(8L * Integer.MAX_VALUE, SqlType.BIGINT.bytesFor(Integer.MAX_VALUE));
    assertEquals(((Integer.MAX_VALUE + 63L) >>> 6) << 3, SqlType.BOOLEAN.bytesFor(Integer.MAX_VALUE));
    Groups g = Groups.covering(Integer.MAX_VALUE, 64, 65535);
    assertTrue(g.total() * 64 >= Integer.MAX_VALUE, g.toString());
    assertGpuError(GpuException.Code.SIZE, "workgroup count in y", () -> Groups.covering(Long.MAX_VALUE / 2, 1, 1));
    assertGpuError(GpuException.Code.SIZE, "overflowed", () -> Sizes.multiply(1L << 32, 1L << 31, "bytes"));
    GpuDevice d = TestGpu.open();
    try (ColumnRuntime rt = new ColumnRuntime(d); BufferAllocator a = new RootAllocator();
         BatchRunner r = rt.runner(List.of(new KernelCall(PLUS, new int[] {0, 1})), List.of(SqlType.DOUBLE, SqlType.DOUBLE),
             Integer.MAX_VALUE, a)) {
      assertTrue(r.capacity() * 8L <= d.info().maxStorageBufferRange(),
          "capacity near 2^31 rows is capped to the device's binding limit: " + r.capacity());
      assertEquals(0, r.capacity() % 64);
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @Test
  void allNullsSingleRowAndEmpty() {
    GpuDevice d = TestGpu.open();
    try (ColumnRuntime rt = new ColumnRuntime(d); BufferAllocator a = new RootAllocator();
         BatchRunner r = rt.runner(List.of(new KernelCall(PLUS, new int[] {0, 1})), List.of(SqlType.DOUBLE, SqlType.DOUBLE), 256, a)) {
      try (Float8Vector x = doubles(a, 300, i -> i); Float8Vector y = doubles(a, 300, i -> 1)) {
        for (int i = 0; i < 300; i++) {
          y.setNull(i);
        }
        Float8Vector out = (Float8Vector) r.run(List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(y, SqlType.DOUBLE)), 300).get(0);
        assertEquals(300, out.getNullCount());
        out = (Float8Vector) r.run(List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(x, SqlType.DOUBLE)), 1).get(0);
        assertEquals(1, out.getValueCount());
        assertEquals(0.0, out.get(0));
        out = (Float8Vector) r.run(List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(x, SqlType.DOUBLE)), 0).get(0);
        assertEquals(0, out.getValueCount());
      }
    } finally {
      TestGpu.closeClean(d);
    }
  }

  static ByteBuffer le(int n) {
    return ByteBuffer.allocateDirect(n).order(ByteOrder.LITTLE_ENDIAN);
  }
}
