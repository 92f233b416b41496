package io.vkspark.spark.executor;

import io.vkspark.spark.executor.CpuVulkan;
import io.vkspark.spark.api.GpuKernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.gpu.DeviceFeatures;
import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.DeviceType;
import io.vkspark.gpu.column.ColumnKernel;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Which device runs a row of a GLSL-only UDF's {@code call()} (a call Spark evaluates itself): the
 * JVM's own device, a GPU on a GPU host even without lavapipe; lavapipe only where there is no usable
 * GPU. The devices are described, not opened; whether one runs the kernel is the real compiled
 * kernel's own check.
 */
final class CpuVulkanTest {
  private static final DeviceFeatures ALL = new DeviceFeatures(true, true, true, true, true, true, true, true);
  private static final DeviceFeatures NO_FLOAT64 = new DeviceFeatures(true, false, true, true, true, true, true, true);
  private static final DeviceInfo H200 = info(0, "NVIDIA H200", DeviceType.DISCRETE_GPU, ALL);
  private static final DeviceInfo LAVAPIPE = info(1, "llvmpipe (LLVM 15.0.6, 256 bits)", DeviceType.CPU, ALL);
  private static final DeviceInfo NO_DOUBLES_GPU = info(0, "a GPU without float64", DeviceType.INTEGRATED_GPU, NO_FLOAT64);
  /** A double kernel: it needs float64. */
  private static final Predicate<DeviceInfo> RUNS = runs(GpuKernel.returns("double").arg("x", "double").body("x * 2.0"));

  private static DeviceInfo info(int index, String name, DeviceType type, DeviceFeatures f) {
    return new DeviceInfo(index, name, type, String.format("%08x-0000-0000-0000-000000000000", index), 0, 0,
        "1.3.0", "test", 32, 65535, 1024, 1L << 30, 65536, 1, f, true, 1L << 30);
  }

  private static Predicate<DeviceInfo> runs(GpuKernel k) {
    ColumnKernel kernel = ColumnKernel.compile(k.spec("twice"));
    return d -> kernel.unsupportedOn(d).isEmpty();
  }

  @Test
  void rowDevice_onlyADiscreteGpu_isThatGpu() {
    assertEquals(Optional.of(H200), CpuVulkan.rowDevice(Optional.of(H200), List.of(H200), RUNS));
  }

  @Test
  void rowDevice_gpuAndLavapipe_isTheOwnGpu() {
    assertEquals(Optional.of(H200), CpuVulkan.rowDevice(Optional.of(H200), List.of(LAVAPIPE, H200), RUNS));
  }

  @Test
  void rowDevice_onlyLavapipe_isLavapipe() {
    // The executor opened lavapipe (the best it has), or opened nothing: lavapipe either way.
    assertEquals(Optional.of(LAVAPIPE), CpuVulkan.rowDevice(Optional.of(LAVAPIPE), List.of(LAVAPIPE), RUNS));
    assertEquals(Optional.of(LAVAPIPE), CpuVulkan.rowDevice(Optional.empty(), List.of(LAVAPIPE), RUNS));
  }

  @Test
  void rowDevice_gpuUnusable_isLavapipe() {
    assertEquals(Optional.of(LAVAPIPE), CpuVulkan.rowDevice(Optional.empty(), List.of(H200, LAVAPIPE), RUNS));
  }

  @Test
  void rowDevice_ownGpuLacksTheKernelsFeature_isLavapipe() {
    assertTrue(RUNS.test(LAVAPIPE) && !RUNS.test(NO_DOUBLES_GPU));
    assertEquals(Optional.of(LAVAPIPE),
        CpuVulkan.rowDevice(Optional.of(NO_DOUBLES_GPU), List.of(NO_DOUBLES_GPU, LAVAPIPE), RUNS));
  }

  @Test
  void rowDevice_gpuUnusableAndNoLavapipe_isNone() {
    assertEquals(Optional.empty(), CpuVulkan.rowDevice(Optional.empty(), List.of(H200), RUNS));
  }
}
