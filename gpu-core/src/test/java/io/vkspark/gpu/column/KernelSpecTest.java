package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.DeviceFeatures;
import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.ShaderFeature;
import io.vkspark.gpu.internal.SpirvSeal;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** One kernel spec, by value, keys compiled kernels; a kernel's device needs are data, not a message. */
final class KernelSpecTest {
  private static GpuRows gpu;

  @BeforeAll
  static void open() {
    gpu = new GpuRows();
  }

  @AfterAll
  static void close() {
    gpu.close();
  }

  private static KernelSpec dbl(String name) {
    return KernelSpec.of(KernelSignature.of(name, SqlType.DOUBLE, arg("x", SqlType.DOUBLE)), "x * 2.0lf + 1.0lf");
  }

  private static KernelSpec integer(String name) {
    return KernelSpec.of(KernelSignature.of(name, SqlType.INT, arg("a", SqlType.INT), arg("b", SqlType.INT)), "a * 3 - b");
  }

  /** The device this suite runs on, with {@code f} as its features. */
  private static DeviceInfo with(DeviceFeatures f) {
    DeviceInfo d = gpu.device().info();
    return new DeviceInfo(d.index(), d.name(), d.type(), d.uuid(), d.vendorId(), d.deviceId(), d.apiVersion(), d.driver(),
        d.subgroupSize(), d.maxWorkgroupCountX(), d.maxWorkgroupSizeX(), d.maxStorageBufferRange(),
        d.maxUniformBufferRange(), d.timestampPeriodNs(), f, d.directHostWrites(), d.deviceLocalBytes());
  }

  @Test
  void specs_areEqualByValue_andTheNameIsPartOfThem() throws Exception {
    KernelSpec a = dbl("twice");
    KernelSpec b = dbl("twice");
    assertNotSame(a, b);
    assertEquals(a, b);
    assertEquals(a.hashCode(), b.hashCode());
    assertSame(a, a.named("twice"), "the same name: the same spec, not a new one");
    KernelSpec renamed = a.named("geo.twice");
    assertNotEquals(a, renamed);
    assertEquals("geo.twice", renamed.name());
    assertEquals(a.args(), renamed.args());
    assertEquals(a.body(), renamed.body());
    assertNotEquals(a, KernelSpec.of(a.signature(), "x * 2.0lf + 2.0lf"), "another body is another spec");

    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(a);
    }
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      assertEquals(a, in.readObject(), "a spec travels to executors and stays the same key");
    }
    GpuException e = assertThrows(GpuException.class, () -> KernelSpec.of(a.signature(), " \n"));
    assertTrue(e.getMessage().contains("'twice' has an empty GLSL body"), e.getMessage());
  }

  @Test
  void compile_keepsItsSpec_andComputesRowsAsJava() {
    KernelSpec spec = integer("lin3");
    ColumnKernel k = ColumnKernel.compile(spec);
    assertEquals(spec, k.spec());
    assertSame(spec.signature(), k.signature());
    assertEquals(k.id(), ColumnKernel.compile(integer("lin3"), null).id(), "equal specs compile to the same kernel");
    assertNotEquals(k.id(), ColumnKernel.compile(spec.named("lin4")).id(), "the name is in the generated source");
    Object[] a = {1, -7, Integer.MAX_VALUE, 0};
    Object[] b = {2, 5, 1, Integer.MIN_VALUE};
    List<Object> got = gpu.run(k, a, b);
    for (int i = 0; i < a.length; i++) {
      assertEquals((Integer) a[i] * 3 - (Integer) b[i], got.get(i), "row " + i);
    }
  }

  @Test
  void requirements_comeFromTheSpirv_andMissingSaysWhatADeviceLacks() {
    ColumnKernel d = ColumnKernel.compile(dbl("twice"));
    ColumnKernel i = ColumnKernel.compile(integer("lin3"));
    ColumnKernel l = ColumnKernel.compile(KernelSpec.of(
        KernelSignature.of("wide", SqlType.BIGINT, arg("v", SqlType.BIGINT)), "v * 5l"));
    assertTrue(d.requirements().contains(ShaderFeature.FLOAT64), d.requirements().toString());
    assertFalse(i.requirements().contains(ShaderFeature.FLOAT64), i.requirements().toString());
    assertTrue(l.requirements().contains(ShaderFeature.INT64), l.requirements().toString());
    assertFalse(l.requirements().contains(ShaderFeature.FLOAT64), l.requirements().toString());

    DeviceFeatures has = gpu.device().info().features();
    DeviceFeatures noDouble = new DeviceFeatures(has.shaderInt64(), false, has.storage8Bit(), has.storage16Bit(),
        has.robustBufferAccess(), has.hostQueryReset(), has.denormPreserveFloat32(), has.denormPreserveFloat64());
    DeviceFeatures none = new DeviceFeatures(false, false, false, false, false, false, false, false);
    assertEquals(Set.of(ShaderFeature.FLOAT64), d.missingOn(with(noDouble)));
    assertEquals(Set.of(), i.missingOn(with(noDouble)));
    assertEquals(Set.of(ShaderFeature.INT64), l.missingOn(with(none)));
    assertEquals(Set.of(), noDouble.missing(Set.of(ShaderFeature.INT64)));
    assertEquals(Set.of(ShaderFeature.INT8, ShaderFeature.FLOAT16),
        has.missing(Set.of(ShaderFeature.INT8, ShaderFeature.FLOAT16)), "vkspark never enables 8-bit or half arithmetic");

    String why = d.unsupportedOn(with(noDouble)).orElseThrow();
    assertTrue(why.contains("'twice' needs shaderFloat64 (double)") && !why.contains("Fix:"), why);
    assertTrue(i.unsupportedOn(with(noDouble)).isEmpty());

    // the device's load path refuses exactly what missing() names
    byte[] spirv = spirv(d);
    GpuException e = assertThrows(GpuException.class, () -> SpirvSeal.requireFeatures(d.program(64), spirv, noDouble));
    assertEquals(GpuException.Code.UNSUPPORTED, e.code());
    assertTrue(e.getMessage().contains("needs shaderFloat64 (double), which"), e.getMessage());
    SpirvSeal.requireFeatures(i.program(64), spirv(i), noDouble);

    // and where nothing is missing, the kernel loads and runs: lavapipe has float64 and int64
    assertEquals(Set.of(), d.missingOn(gpu.device().info()));
    assertEquals(Set.of(), l.missingOn(gpu.device().info()));
    assertEquals(List.of(7.0, -1.0), gpu.run(d, new Object[] {3.0, -1.0}));
    assertEquals(List.of(5L * (1L << 40), -5L), gpu.run(l, new Object[] {1L << 40, -1L}));
  }

  private static byte[] spirv(ColumnKernel k) {
    return k.program(64).spirvCode().orElseThrow();
  }
}
