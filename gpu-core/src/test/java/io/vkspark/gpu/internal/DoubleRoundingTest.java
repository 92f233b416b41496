package io.vkspark.gpu.internal;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.DoubleRounding;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The double-rounding probe and vkspark's correctly rounded division and square root, on the real
 * device (lavapipe in CI, whose own are exact, so the rewrite is forced), bit for bit against Java.
 */
final class DoubleRoundingTest {
  private static final Path CACHE = Path.of("target", "shader-cache");

  private static VulkanDevice open(String mode) {
    String before = System.getProperty(DoubleRounding.PROPERTY);
    System.setProperty(DoubleRounding.PROPERTY, mode);
    try {
      return (VulkanDevice) GpuDevices.open(DeviceOptions.defaults().withValidation(true).withShaderCacheDir(CACHE));
    } finally {
      if (before == null) {
        System.clearProperty(DoubleRounding.PROPERTY);
      } else {
        System.setProperty(DoubleRounding.PROPERTY, before);
      }
    }
  }

  private static void closeClean(VulkanDevice d) {
    long errors = d.validationErrors();
    java.util.List<String> messages = d.validationMessages();
    d.close();
    assertEquals(0, errors, "validation errors: " + messages);
  }

  private static byte[] probeSpirv(String expression) {
    return GlslCompiler.compileOrThrow("probe-variant.comp", DoubleRoundingProbe.source(expression), CACHE);
  }

  @Test
  void forcedRefinementIsJavasBitsOnAMillionPairs() {
    VulkanDevice d = open("refine");
    try {
      DoubleRounding r = d.doubleRounding();
      assertTrue(r.refineDivide() && r.refineSqrt(), r.toString());
      assertTrue(r.refinedExact(), r.toString());
      byte[] refined = DoubleRoundingRewrite.refine(probeSpirv("a / b"), true, true, r.fusedFma());
      DoubleRoundingProbe.Result res = DoubleRoundingProbe.run(d, refined, HardDoubles.pairs(1 << 20, 21));
      assertEquals(0, res.divideMisses(), res.toString());
      assertEquals(0, res.sqrtMisses(), res.toString());
    } finally {
      closeClean(d);
    }
  }

  @Test
  void vectorDivisionsAndSqrtAreRefinedPerComponent() {
    VulkanDevice d = open("refine");
    try {
      byte[] spirv = probeSpirv("dot(dvec2(a, -a) / dvec2(b, b), dvec2(1.0, 0.0))");
      byte[] refined = DoubleRoundingRewrite.refine(spirv, true, true, d.doubleRounding().fusedFma());
      assertNotSame(spirv, refined);
      DoubleRoundingProbe.Result res = DoubleRoundingProbe.run(d, refined, HardDoubles.pairs(1 << 14, 5));
      assertEquals(0, res.divideMisses(), res.example());
    } finally {
      closeClean(d);
    }
  }

  @Test
  void probeCatchesADivisionThatIsNotCorrectlyRounded() {
    VulkanDevice d = open("native");
    try {
      // a * (1 / b) rounds twice: what an inexact device's division looks like
      DoubleRoundingProbe.Result res = DoubleRoundingProbe.run(d, probeSpirv("a * (1.0 / b)"), DoubleRoundingProbe.cases());
      assertTrue(res.divideMisses() > 100, res.toString());
      assertTrue(res.example().matches(".* / .* = .*, Java .*"), res.example());
      if (d.doubleRounding().nativeSqrt()) { // the same cases as the probe's
        assertEquals(0, res.sqrtMisses(), res.toString());
      }
      assertFalse(d.doubleRounding().refines(), "native mode never refines");
    } finally {
      closeClean(d);
    }
  }

  @Test
  void probeAgreesWithTheDeviceOnAMillionPairs() {
    VulkanDevice d = open("auto");
    try {
      DoubleRounding r = d.doubleRounding();
      DoubleRoundingProbe.Result own = DoubleRoundingProbe.run(d, probeSpirv("a / b"), HardDoubles.pairs(1 << 20, 77));
      if (own.divideMisses() > 0) {
        assertFalse(r.nativeDivide(), "the probe missed " + own);
      }
      if (own.sqrtMisses() > 0) {
        assertFalse(r.nativeSqrt(), "the probe missed " + own);
      }
      assertEquals(!r.nativeDivide(), r.refineDivide(), r.toString());
      assertEquals(!r.nativeSqrt(), r.refineSqrt(), r.toString());
      if (d.info().name().contains("llvmpipe")) { // lavapipe's own are exact
        assertEquals(0, own.divideMisses(), own.toString());
        assertEquals(0, own.sqrtMisses(), own.toString());
        assertTrue(own.fmaMisses() > 0, "lavapipe's double fma is not fused: " + own);
        assertEquals(new DoubleRounding(true, true, false, false, false, true, ""), r);
      }
    } finally {
      closeClean(d);
    }
  }

  @Test
  void rewriteLeavesModulesWithoutDoubleDivisionAlone() {
    byte[] floats = GlslCompiler.compileOrThrow("floats.comp", """
        #version 450
        layout(local_size_x = 1) in;
        layout(std430, set = 0, binding = 0) buffer B { float f[]; };
        void main() { f[0] = f[1] / f[2] + sqrt(f[3]); }
        """, CACHE);
    assertSame(floats, DoubleRoundingRewrite.refine(floats, true, true, false));
    byte[] sqrtOnly = probeSpirv("a + b");
    assertSame(sqrtOnly, DoubleRoundingRewrite.refine(sqrtOnly, true, false, false));
    assertNotSame(sqrtOnly, DoubleRoundingRewrite.refine(sqrtOnly, false, true, false));
    byte[] precise = GlslCompiler.compileOrThrow("precise.comp", """
        #version 450
        layout(local_size_x = 1) in;
        layout(std430, set = 0, binding = 0) buffer B { double d[]; };
        void main() { precise double q = d[1] / d[2]; d[0] = q; }
        """, CACHE);
    assertSame(precise, DoubleRoundingRewrite.refine(precise, true, true, false, true), "precise left to the device");
    assertNotSame(precise, DoubleRoundingRewrite.refine(precise, true, true, false, false));
    Program p = Program.spirv("p", ByteBuffer.wrap(sqrtOnly)).workgroupSize(64)
        .buffer(BufferDecl.input("v", 0, ElementType.FLOAT64)).buffer(BufferDecl.output("r", 1, ElementType.FLOAT64))
        .build();
    SpirvSeal.check(p, DoubleRoundingRewrite.refine(probeSpirv("a / b"), true, true, true)); // still sealed
  }

  @Test
  void aBadModeIsRefusedWithAFix() {
    String before = System.getProperty(DoubleRounding.PROPERTY);
    System.setProperty(DoubleRounding.PROPERTY, "sometimes");
    try {
      GpuException e = assertThrows(GpuException.class, DoubleRounding.Mode::fromSystemProperty);
      assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("Fix: set -Dvkspark.doubleRounding=auto"), e.getMessage());
    } finally {
      if (before == null) {
        System.clearProperty(DoubleRounding.PROPERTY);
      } else {
        System.setProperty(DoubleRounding.PROPERTY, before);
      }
    }
  }
}
