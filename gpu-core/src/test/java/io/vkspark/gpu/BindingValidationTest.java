package io.vkspark.gpu;

import static io.vkspark.gpu.TestGpu.assertGpuError;
import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every binding mistake of the seed's {@code bind_handles}, each with its message and Fix. */
final class BindingValidationTest {
  private static GpuDevice d;
  private static Kernel saxpy;
  private static Kernel rows;

  @BeforeAll
  static void open() {
    d = TestGpu.open();
    saxpy = d.load(TestGpu.saxpy(64));
    rows = d.load(TestGpu.saxpyRows(64));
  }

  @AfterAll
  static void close() {
    saxpy.close();
    rows.close();
    TestGpu.closeClean(d);
  }

  @Test
  void missingOutput() {
    try (GpuBuffer x = d.createBuffer(64, BufferRole.INPUT)) {
      assertGpuError(GpuException.Code.BINDING, "missing an output buffer for binding 1 (`y`)",
          () -> saxpy.prerecord(List.of(x), List.of(), null, Groups.of(1)));
    }
  }

  @Test
  void missingInput() {
    try (GpuBuffer y = d.createBuffer(64, BufferRole.OUTPUT)) {
      GpuException e = assertGpuError(GpuException.Code.BINDING, "missing an input buffer for binding 0 (`x`)",
          () -> saxpy.prerecord(List.of(), List.of(y), null, Groups.of(1)));
      assertTrue(e.getMessage().endsWith("Fix: pass non-output buffers in BufferDecl order."), e.getMessage());
    }
  }

  @Test
  void extraInputsAndOutputs() {
    try (GpuBuffer x = d.createBuffer(64, BufferRole.INPUT); GpuBuffer y = d.createBuffer(64, BufferRole.OUTPUT)) {
      assertGpuError(GpuException.Code.BINDING, "received 2 input buffers but consumed 1",
          () -> saxpy.prerecord(List.of(x, x), List.of(y), null, Groups.of(1)));
      assertGpuError(GpuException.Code.BINDING, "received 2 output buffers but consumed 1",
          () -> saxpy.prerecord(List.of(x), List.of(y, y), null, Groups.of(1)));
    }
  }

  @Test
  void sizeNotAWholeNumberOfElements() {
    try (GpuBuffer x = d.createBuffer(6, BufferRole.INPUT); GpuBuffer y = d.createBuffer(64, BufferRole.OUTPUT)) {
      assertGpuError(GpuException.Code.BINDING, "received 6 bytes for binding 0 (`x`), not a whole number of FLOAT32",
          () -> saxpy.prerecord(List.of(x), List.of(y), null, Groups.of(1)));
    }
  }

  @Test
  void smallerThanDeclared() {
    Program p = Program.glsl("saxpy", TestGpu.SAXPY).workgroupSize(64)
        .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32))
        .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32, 100)).build();
    try (Kernel k = d.load(p); GpuBuffer x = d.createBuffer(400, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(396, BufferRole.OUTPUT)) {
      assertGpuError(GpuException.Code.BINDING, "received 396 bytes for binding 1 (`y`) but the declaration needs 400",
          () -> k.prerecord(List.of(x), List.of(y), null, Groups.of(1)));
    }
  }

  @Test
  void wrongKinds() {
    try (GpuBuffer x = d.createBuffer(64, BufferRole.INPUT); GpuBuffer x2 = d.createBuffer(64, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(64, BufferRole.OUTPUT); GpuBuffer p = d.createBuffer(32, BufferRole.PARAMS)) {
      assertGpuError(GpuException.Code.BINDING, "received a INPUT buffer for binding 1 (`y`), which is an output",
          () -> saxpy.prerecord(List.of(x), List.of(x2), null, Groups.of(1)));
      assertGpuError(GpuException.Code.BINDING, "received a parameter buffer but declares no UNIFORM or PUSH buffer",
          () -> saxpy.prerecord(List.of(x), List.of(y), p, Groups.of(1)));
      assertGpuError(GpuException.Code.BINDING, "received a INPUT buffer for binding 0 (`params`)",
          () -> rows.prerecord(List.of(x2, x), List.of(y), null, Groups.of(1)));
    }
  }

  @Test
  void indirectCountBufferTooSmall() {
    try (GpuBuffer x = d.createBuffer(64, BufferRole.INPUT); GpuBuffer y = d.createBuffer(64, BufferRole.OUTPUT);
         GpuBuffer p = d.createBuffer(20, BufferRole.PARAMS)) {
      assertGpuError(GpuException.Code.BINDING, "too few for 3 group counts at offset 16",
          () -> rows.prerecord(List.of(x), List.of(y), p, Groups.of(1)));
    }
  }

  @Test
  void closedBufferAndForeignBuffer() {
    GpuBuffer x = d.createBuffer(64, BufferRole.INPUT);
    x.close();
    GpuDevice other = TestGpu.open();
    try (GpuBuffer y = d.createBuffer(64, BufferRole.OUTPUT); GpuBuffer foreign = other.createBuffer(64, BufferRole.INPUT)) {
      assertGpuError(GpuException.Code.CLOSED, "closed buffer #" + x.allocationId(),
          () -> saxpy.prerecord(List.of(x), List.of(y), null, Groups.of(1)));
      assertGpuError(GpuException.Code.BINDING, "that this device did not create",
          () -> saxpy.prerecord(List.of(foreign), List.of(y), null, Groups.of(1)));
    } finally {
      TestGpu.closeClean(other);
    }
  }

  @Test
  void bindingOverTheDeviceStorageLimit() {
    long over = d.info().maxStorageBufferRange() + 16;
    if (over > (1L << 31)) {
      return; // only devices with a small limit (lavapipe: 128 MiB) can be tested cheaply
    }
    try (GpuBuffer x = d.createBuffer(over, BufferRole.INPUT); GpuBuffer y = d.createBuffer(64, BufferRole.OUTPUT)) {
      assertGpuError(GpuException.Code.SIZE, "over this device's maxStorageBufferRange limit",
          () -> saxpy.prerecord(List.of(x), List.of(y), null, Groups.of(1)));
    }
  }

  @Test
  void programDeclarationsAreCheckedWhenBuilt() {
    assertGpuError(GpuException.Code.INVALID_ARGUMENT, "declares buffer 'x' twice", () -> Program.glsl("p", "")
        .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32)).buffer(BufferDecl.input("x", 1, ElementType.FLOAT32)).build());
    assertGpuError(GpuException.Code.INVALID_ARGUMENT, "binds two buffers at set 0, binding 0", () -> Program.glsl("p", "")
        .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32)).buffer(BufferDecl.input("z", 0, ElementType.FLOAT32)).build());
    assertGpuError(GpuException.Code.INVALID_ARGUMENT, "indirect count buffer 'c'",
        () -> Program.glsl("p", "").indirect("c", 0).build());
    assertGpuError(GpuException.Code.INVALID_ARGUMENT, "is not an identifier",
        () -> BufferDecl.input("1x", 0, ElementType.FLOAT32));
    assertGpuError(GpuException.Code.INVALID_ARGUMENT, "output buffer 'y' is declared READ_ONLY",
        () -> new BufferDecl("y", 0, 0, MemoryKind.READ_ONLY, ElementType.FLOAT32, true, 0));
  }

  @Test
  void sizesUseCheckedArithmetic() {
    assertGpuError(GpuException.Code.SIZE, "overflowed 64-bit arithmetic",
        () -> BufferDecl.output("y", 0, ElementType.FLOAT64, Long.MAX_VALUE / 4).declaredBytes());
    assertGpuError(GpuException.Code.SIZE, "outside 0..2147483647", () -> Sizes.toInt(1L << 31, "rows"));
    assertEquals(Long.MAX_VALUE - 15, Sizes.alignUp(Long.MAX_VALUE - 20, 16, "x"));
    assertGpuError(GpuException.Code.SIZE, "overflowed", () -> Sizes.alignUp(Long.MAX_VALUE - 2, 16, "x"));
  }

  /**
   * Specialization constants 0 (the workgroup size) and 1 (the fused-fma verdict) are set by
   * vkspark: a program declaring either as the other kind is refused at load, and its own
   * constants from 2 on load and keep their values.
   */
  @Test
  void reservedSpecializationConstants() {
    for (String decl : List.of("layout(constant_id = 1) const int SCALE = 3;",
        "layout(constant_id = 1) const float SCALE = 3.0;")) {
      GpuException e = assertGpuError(GpuException.Code.INVALID_ARGUMENT, "declares specialization constant 1 as a number",
          () -> d.load(scaled(decl)).close());
      assertTrue(e.getMessage().endsWith("Fix: number the program's own specialization constants from 2 (constant_id = 2 and up)."),
          e.getMessage());
    }
    assertGpuError(GpuException.Code.INVALID_ARGUMENT, "declares specialization constant 0 as a bool",
        () -> d.load(Program.glsl("flag0", """
            #version 450
            layout(local_size_x = 64) in;
            layout(constant_id = 0) const bool FLAG = true;
            layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
            layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
            void main() {
              uint i = gl_GlobalInvocationID.x;
              if (i < x.length()) {
                y[i] = FLAG ? 3.0 * x[i] : x[i];
              }
            }
            """).workgroupSize(64).buffer(BufferDecl.input("x", 0, ElementType.FLOAT32))
            .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32)).build()).close());
    try (Kernel k = d.load(scaled("layout(constant_id = 2) const int SCALE = 3;"));
         GpuBuffer x = d.createBuffer(256, BufferRole.INPUT);
         GpuBuffer y = d.createBuffer(256, BufferRole.OUTPUT);
         PrerecordedDispatch rec = k.prerecord(List.of(x), List.of(y), null, Groups.of(1))) {
      java.nio.ByteBuffer in = java.nio.ByteBuffer.allocateDirect(256).order(java.nio.ByteOrder.LITTLE_ENDIAN);
      for (int i = 0; i < 64; i++) {
        in.putFloat(4 * i, i);
      }
      x.write(0, in);
      rec.run();
      java.nio.ByteBuffer out = rec.readOutput(0);
      for (int i = 0; i < 64; i++) {
        assertEquals(3f * i, out.getFloat(4 * i), "row " + i + ": the program's own constant 2 keeps its value");
      }
    }
  }

  /** y = SCALE * x, with {@code decl} declaring SCALE. */
  private static Program scaled(String decl) {
    return Program.glsl("scaled", """
        #version 450
        layout(local_size_x_id = 0) in;
        %s
        layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
        layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
        void main() {
          uint i = gl_GlobalInvocationID.x;
          if (i < x.length()) {
            y[i] = float(SCALE) * x[i];
          }
        }
        """.formatted(decl)).workgroupSize(64).buffer(BufferDecl.input("x", 0, ElementType.FLOAT32))
        .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32)).build();
  }
}
