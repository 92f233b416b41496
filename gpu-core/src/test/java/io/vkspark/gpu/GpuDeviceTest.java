package io.vkspark.gpu;

import static io.vkspark.gpu.TestGpu.assertGpuError;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.vulkan.GpuDevices;
import java.util.List;
import org.junit.jupiter.api.Test;

final class GpuDeviceTest {
  @Test
  void list_findsAtLeastOneDeviceWithIdentity() {
    List<DeviceInfo> devices = GpuDevices.list();
    assertFalse(devices.isEmpty());
    for (DeviceInfo d : devices) {
      assertTrue(d.uuid().matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), d.uuid());
      assertTrue(d.subgroupSize() >= 1);
      assertTrue(d.maxWorkgroupCountX() >= 65535);
    }
  }

  @Test
  void open_byIndexNameAndUuid_selectTheSameDevice() {
    DeviceInfo first = GpuDevices.list().get(0);
    for (String selector : List.of(Integer.toString(first.index()), first.name().substring(0, 4).toUpperCase(),
        first.uuid(), "GPU-" + first.uuid())) {
      GpuDevice d = GpuDevices.open(DeviceOptions.defaults().withDevice(selector).withValidation(true));
      try {
        assertEquals(first.uuid(), d.info().uuid(), selector);
      } finally {
        TestGpu.closeClean(d);
      }
    }
  }

  @Test
  void open_unknownSelector_listsDevicesAndSaysHowToFix() {
    GpuException e = assertGpuError(GpuException.Code.NO_DEVICE, "no Vulkan device matches 'no-such-gpu'",
        () -> GpuDevices.open(DeviceOptions.defaults().withDevice("no-such-gpu")));
    assertTrue(e.getMessage().contains(GpuDevices.list().get(0).name()), e.getMessage());
    assertGpuError(GpuException.Code.NO_DEVICE, "matches '99'", () -> GpuDevices.open(DeviceOptions.defaults().withDevice("99")));
  }

  @Test
  void select_prefersDiscreteOverIntegratedOverCpu() {
    DeviceFeatures f = new DeviceFeatures(true, true, true, true, true, true, true, true);
    DeviceInfo cpu = info(0, "llvmpipe", DeviceType.CPU, 1L << 30, f);
    DeviceInfo igpu = info(1, "Intel", DeviceType.INTEGRATED_GPU, 1L << 30, f);
    DeviceInfo dgpu = info(2, "NVIDIA", DeviceType.DISCRETE_GPU, 1L << 34, f);
    assertEquals(2, io.vkspark.gpu.internal.DeviceSelector.select("", List.of(cpu, igpu, dgpu)).position());
    assertEquals(1, io.vkspark.gpu.internal.DeviceSelector.select("", List.of(cpu, igpu)).position());
    assertTrue(io.vkspark.gpu.internal.DeviceSelector.select("", List.of(cpu, igpu, dgpu)).reason()
        .contains("preferred over 'llvmpipe'"));
    assertEquals(0, io.vkspark.gpu.internal.DeviceSelector.select("llvm", List.of(cpu, igpu, dgpu)).position());
  }

  private static DeviceInfo info(int index, String name, DeviceType type, long mem, DeviceFeatures f) {
    return new DeviceInfo(index, name, type, String.format("%08x-0000-0000-0000-000000000000", index), 0, 0,
        "1.3.0", "test", 32, 65535, 1024, 1L << 30, 65536, 1, f, true, mem);
  }

  @Test
  void open_enablesOnlyFeaturesTheDeviceHasAndReportsTimestamps() {
    GpuDevice d = TestGpu.open();
    try {
      DeviceInfo listed = GpuDevices.list().stream().filter(x -> x.uuid().equals(d.info().uuid())).findFirst().orElseThrow();
      DeviceFeatures has = listed.features();
      DeviceFeatures on = d.info().features();
      assertEquals(has.shaderFloat64(), on.shaderFloat64());
      assertEquals(has.shaderInt64(), on.shaderInt64());
      assertEquals(has.robustBufferAccess(), on.robustBufferAccess(), "robustBufferAccess is on by default where present");
      assertTrue(d.info().timestamps(), "lavapipe's compute queue has timestamps");
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @Test
  void close_isIdempotentAndLaterUseFailsWithClosed() {
    GpuDevice d = TestGpu.open();
    Kernel k = d.load(TestGpu.saxpy(64));
    GpuBuffer b = d.createBuffer(64, BufferRole.INPUT);
    d.close();
    d.close();
    assertTrue(k.isClosed(), "the device closes what is still open");
    assertTrue(b.isClosed());
    assertTrue(d.counters().nothingLive(), d.counters().toString());
    assertEquals(0, d.validationErrors(), d.validationMessages().toString());
    assertGpuError(GpuException.Code.CLOSED, "which is closed", () -> d.createBuffer(16, BufferRole.INPUT));
    assertGpuError(GpuException.Code.CLOSED, "closed", () -> d.load(TestGpu.saxpy(64)));
    assertGpuError(GpuException.Code.CLOSED, "closed", () -> b.write(0, TestGpu.ints(1)));
    k.close();
    b.close();
  }

  @Test
  void createBuffer_negativeSize_isASizeError() {
    GpuDevice d = TestGpu.open();
    try {
      assertGpuError(GpuException.Code.SIZE, "-1 bytes", () -> d.createBuffer(-1, BufferRole.INPUT));
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @Test
  void buffers_rangeChecksAndRoleChecks() {
    GpuDevice d = TestGpu.open();
    try (GpuBuffer in = d.createBuffer(8, BufferRole.INPUT); GpuBuffer out = d.createBuffer(8, BufferRole.OUTPUT)) {
      assertGpuError(GpuException.Code.SIZE, "outside buffer", () -> in.write(4, TestGpu.ints(1, 2)));
      assertGpuError(GpuException.Code.SIZE, "outside buffer", () -> in.write(Long.MAX_VALUE, TestGpu.ints(1)));
      assertGpuError(GpuException.Code.INVALID_ARGUMENT, "host read from INPUT", () -> in.read(0, TestGpu.ints(0)));
      assertGpuError(GpuException.Code.INVALID_ARGUMENT, "host write to output", () -> out.write(0, TestGpu.ints(1)));
      assertGpuError(GpuException.Code.INVALID_ARGUMENT, "heap ByteBuffer",
          () -> in.write(0, java.nio.ByteBuffer.allocate(4)));
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @Test
  void scratchBuffer_isDeviceOnly_hostWritesReadsAndFlushesAreRefused() {
    GpuDevice d = TestGpu.open();
    try (GpuBuffer s = d.createBuffer(64, BufferRole.SCRATCH)) {
      assertFalse(s.isStaged(), "no host copy");
      assertGpuError(GpuException.Code.INVALID_ARGUMENT, "host write to device-only SCRATCH", () -> s.write(0, TestGpu.ints(1)));
      assertGpuError(GpuException.Code.INVALID_ARGUMENT, "host read from SCRATCH", () -> s.read(0, TestGpu.ints(0)));
      assertGpuError(GpuException.Code.INVALID_ARGUMENT, "host flush of SCRATCH", () -> s.flush(0, 4));
    } finally {
      TestGpu.closeClean(d);
    }
  }
}
