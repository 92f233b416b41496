package io.vkspark.gpu.internal;

import static io.vkspark.gpu.TestGpu.assertGpuError;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.CompileResult;
import io.vkspark.gpu.DeviceFeatures;
import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.TestGpu;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

final class GlslCompilerTest {
  @Test
  void compileError_carriesShadercLineAndMessage() {
    String bad = TestGpu.SAXPY.replace("y[i] = 2.5 * x[i] + 1.0;", "y[i] = 2.5 * x[i] + undefined_thing;");
    CompileResult r = GlslCompiler.compile("bad.comp", bad, null);
    assertFalse(r.ok());
    int expectedLine = 1 + (int) bad.substring(0, bad.indexOf("undefined_thing")).chars().filter(c -> c == '\n').count();
    assertEquals(expectedLine, r.errors().get(0).line(), r.log());
    assertTrue(r.errors().get(0).message().contains("undefined_thing"), r.log());
  }

  @Test
  void loadingBadGlsl_isACompileErrorWithFix() {
    GpuDevice d = TestGpu.open();
    try {
      Program p = Program.glsl("broken", "#version 450\nvoid main() { int x = ; }\n").build();
      GpuException e = assertGpuError(GpuException.Code.COMPILE, "'broken' does not compile", () -> d.load(p));
      assertTrue(e.getMessage().contains("broken.comp:2:"), e.getMessage());
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @Test
  void spirv_isCachedOnDiskByContentHash(@TempDir Path dir) throws Exception {
    String source = TestGpu.SAXPY + "\n// " + System.nanoTime();
    CompileResult first = GlslCompiler.compile("saxpy.comp", source, dir);
    CompileResult second = GlslCompiler.compile("saxpy.comp", source, dir);
    assertTrue(first.ok());
    assertFalse(first.fromCache());
    assertTrue(second.fromCache());
    assertArrayEquals(first.spirv().get(), second.spirv().get());
    try (var files = Files.list(dir.resolve("spirv"))) {
      assertEquals(1, files.count());
    }
  }

  @Test
  void pipelineCache_isSavedAtCloseAndLoadedAgain(@TempDir Path dir) throws Exception {
    for (int round = 0; round < 2; round++) {
      GpuDevice d = GpuDevices.open(DeviceOptions.defaults().withValidation(true).withShaderCacheDir(dir));
      try (Kernel k = d.load(TestGpu.saxpy(64))) {
        assertNotNull(k.program());
      } finally {
        TestGpu.closeClean(d);
      }
      try (var files = Files.list(dir)) {
        assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("pipeline-")), "pipeline cache file");
      }
    }
  }

  @Test
  void spirvNeedingAMissingFeature_isRefusedBeforeTheDriver() {
    byte[] spirv = GlslCompiler.compileOrThrow("d.comp", """
        #version 450
        layout(local_size_x = 1) in;
        layout(std430, binding = 0) buffer B { double v[]; };
        void main() { v[0] = v[0] * 2.0lf; }
        """, null);
    Program p = Program.spirv("needs_double", java.nio.ByteBuffer.wrap(spirv)).build();
    DeviceFeatures none = new DeviceFeatures(false, false, false, false, false, false, false, false);
    assertGpuError(GpuException.Code.UNSUPPORTED, "shaderFloat64",
        () -> io.vkspark.gpu.internal.SpirvSeal.requireFeatures(p, spirv, none));
  }

  @Test
  void damagedCacheEntry_ofAGlslProgram_isRecompiledBeforeTheDriverSeesIt(@TempDir Path dir) throws Exception {
    GpuDevice d = GpuDevices.open(DeviceOptions.defaults().withValidation(true).withShaderCacheDir(dir));
    try {
      java.util.Set<Path> before = entries(dir);   // the device's own probe kernels may be cached already
      d.load(TestGpu.saxpy(64)).close();
      java.util.Set<Path> after = entries(dir);
      after.removeAll(before);
      assertEquals(1, after.size(), () -> "one new cache entry for saxpy: " + after);
      Path entry = after.iterator().next();
      byte[] good = Files.readAllBytes(entry);
      for (byte[] damaged : new byte[][] {java.util.Arrays.copyOf(good, good.length - 8), new byte[good.length], {1, 2, 3}}) {
        Files.write(entry, damaged);
        try (Kernel k = d.load(TestGpu.saxpy(64))) {
          assertNotNull(k.program());
        }
        assertArrayEquals(good, Files.readAllBytes(entry), "recompiled and replaced");
      }
    } finally {
      TestGpu.closeClean(d);
    }
  }

  @Test
  void cacheKey_coversCompilerFlavorAndSource() {
    String k = GlslCompiler.key(TestGpu.SAXPY, GlslCompiler.Flavor.OPTIMIZED);
    assertTrue(k.matches("[0-9a-f]{64}"), k);
    assertNotEquals(k, GlslCompiler.key(TestGpu.SAXPY, GlslCompiler.Flavor.DEBUG));
    assertNotEquals(k, GlslCompiler.key(TestGpu.SAXPY + " ", GlslCompiler.Flavor.OPTIMIZED));
    assertTrue(GlslCompiler.compilerIdentity().contains("lwjgl 3."), GlslCompiler.compilerIdentity());
  }

  private static java.util.Set<Path> entries(Path dir) throws java.io.IOException {
    Path spirv = dir.resolve("spirv");
    if (!Files.isDirectory(spirv)) {
      return new java.util.HashSet<>();
    }
    try (var files = Files.list(spirv)) {
      return files.collect(java.util.stream.Collectors.toCollection(java.util.HashSet::new));
    }
  }
}
