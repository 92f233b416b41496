package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.gpu.vulkan.GpuDevices;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Opens the real Vulkan device for tests (lavapipe in CI) and checks it closes clean. Public for
 * the tests of other packages ({@code column.ColumnGpu} builds on it).
 */
public final class TestGpu {
  private TestGpu() {}

  /**
   * The class path for a child JVM that runs gpu-core's main or test classes: surefire runs this
   * module's tests on the module path (gpu-core has a module-info), so java.class.path alone lacks
   * gpu-core and its modules; the child gets them all on its class path, as a Spark executor does.
   */
  static String childClassPath() {
    java.util.Set<String> parts = new java.util.LinkedHashSet<>();
    parts.add(root(TestGpu.class));
    parts.add(root(GpuDevice.class));
    for (String property : new String[] {"jdk.module.path", "java.class.path"}) {
      String v = System.getProperty(property);
      if (v != null && !v.isEmpty()) {
        parts.addAll(java.util.List.of(v.split(java.io.File.pathSeparator)));
      }
    }
    return String.join(java.io.File.pathSeparator, parts);
  }

  /** The directory or jar {@code c}'s class file was loaded from. */
  private static String root(Class<?> c) {
    String resource = c.getName().replace('.', '/') + ".class";
    java.net.URL url = c.getClassLoader().getResource(resource);
    try {
      if (url != null && "file".equals(url.getProtocol())) {
        String file = java.nio.file.Path.of(url.toURI()).toString();
        return file.substring(0, file.length() - resource.length() - 1);
      }
      return java.nio.file.Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The test device with the validation layer on, moving data by {@code mode}; SPIR-V cached under target/. */
  public static GpuDevice open(TransferMode mode) {
    return GpuDevices.open(DeviceOptions.defaults().withValidation(true).withTransfers(mode)
        .withShaderCacheDir(java.nio.file.Path.of("target", "shader-cache")));
  }

  /** {@link #open(TransferMode)} with the transfers the device prefers. */
  public static GpuDevice open() {
    return open(TransferMode.AUTO);
  }

  /** Asserts nothing is left alive and the validation layer reported no error, then closes. */
  /**
   * Lavapipe with correctly rounded double division and square root forced on
   * ({@code DoubleRounding.PROPERTY=refine} while it opens), as the H200 runs them.
   */
  public static GpuDevice openRefining() {
    String before = System.getProperty(DoubleRounding.PROPERTY);
    System.setProperty(DoubleRounding.PROPERTY, "refine");
    try {
      return open();
    } finally {
      if (before == null) {
        System.clearProperty(DoubleRounding.PROPERTY);
      } else {
        System.setProperty(DoubleRounding.PROPERTY, before);
      }
    }
  }

  public static void closeClean(GpuDevice device) {
    DeviceCounters c = device.counters();
    device.close();
    assertTrue(c.nothingLive(), "objects left alive before close: " + c);
    assertEquals(0, device.validationErrors(), () -> "validation errors: " + device.validationMessages());
  }

  static ByteBuffer floats(int n, java.util.function.IntToDoubleFunction f) {
    ByteBuffer b = ByteBuffer.allocateDirect(4 * n).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < n; i++) {
      b.putFloat(4 * i, (float) f.applyAsDouble(i));
    }
    return b;
  }

  static ByteBuffer ints(int... values) {
    ByteBuffer b = ByteBuffer.allocateDirect(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < values.length; i++) {
      b.putInt(4 * i, values[i]);
    }
    return b;
  }

  /** Asserts a GpuException with {@code code} whose message contains {@code text} and a Fix. */
  public static GpuException assertGpuError(GpuException.Code code, String text, org.junit.jupiter.api.function.Executable body) {
    GpuException e = org.junit.jupiter.api.Assertions.assertThrows(GpuException.class, body);
    assertEquals(code, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(text), () -> "message lacks '" + text + "': " + e.getMessage());
    assertTrue(e.getMessage().matches("(?s).*\\. Fix: .+"), () -> "message lacks 'Fix: ': " + e.getMessage());
    return e;
  }

  public static final String SAXPY = """
      #version 450
      layout(local_size_x_id = 0) in;
      layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
      layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
      void main() {
        uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
        if (i < x.length()) {
          y[i] = 2.5 * x[i] + 1.0;
        }
      }
      """;

  /** y[i] = a * x[i] + b for i < rowCount, with the group counts read from params at byte 16. */
  static final String SAXPY_ROWS = """
      #version 450
      layout(local_size_x_id = 0) in;
      layout(std140, set = 0, binding = 0) uniform Params { uint rowCount; float a; float b; uint pad; uvec4 groups; } p;
      layout(std430, set = 0, binding = 1) readonly buffer X { float x[]; };
      layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
      void main() {
        uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
        if (i < p.rowCount) {
          y[i] = p.a * x[i] + p.b;
        }
      }
      """;

  public static Program saxpy(int wg) {
    return Program.glsl("saxpy", SAXPY).workgroupSize(wg)
        .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32))
        .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32))
        .build();
  }

  static Program saxpyRows(int wg) {
    return Program.glsl("saxpy_rows", SAXPY_ROWS).workgroupSize(wg)
        .buffer(BufferDecl.params("params", 0))
        .buffer(BufferDecl.input("x", 1, ElementType.FLOAT32))
        .buffer(BufferDecl.output("y", 2, ElementType.FLOAT32))
        .indirect("params", 16)
        .build();
  }

}
