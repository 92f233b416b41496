package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import java.util.List;
import org.junit.jupiter.api.Test;

final class ColumnKernelTest {
  private static GpuException assertError(GpuException.Code code, String text, org.junit.jupiter.api.function.Executable body) {
    GpuException e = assertThrows(GpuException.class, body);
    assertEquals(code, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(text), () -> "message lacks '" + text + "': " + e.getMessage());
    assertTrue(e.getMessage().contains(". Fix: "), e.getMessage());
    return e;
  }

  @Test
  void expressionBody_compiles() {
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("saxpy", SqlType.FLOAT,
        arg("x", SqlType.FLOAT), arg("y", SqlType.FLOAT)), "2.5 * x + y");
    assertTrue(k.source().contains("return (2.5 * x + y);"), k.source());
    assertEquals(5, k.program(64).buffers().size(), "params, two inputs, output, control");
    assertEquals("control", k.program(64).buffers().get(4).name());
    assertEquals(4, k.program(64).buffers().get(4).binding());
    assertFalse(k.source().contains("vk_tick"), "no loops, no guard");
  }

  @Test
  void functionBody_compiles() {
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("clamp01", SqlType.DOUBLE, arg("v", SqlType.DOUBLE)), """
        if (v < 0.0) {
          return 0.0;
        }
        return min(v, 1.0);
        """);
    assertNotNull(k.id());
  }

  @Test
  void undeclaredIdentifier_namesTheUdfAndTheLineOfTheBody() {
    GpuException e = assertError(GpuException.Code.COMPILE, "GPU UDF 'f' does not compile: line 3 of its body", () ->
        ColumnKernel.compile(KernelSignature.of("f", SqlType.DOUBLE, arg("a", SqlType.DOUBLE), arg("b", SqlType.DOUBLE)), """
            double x = a * 2.0;
            double y = b + x;
            double z = nope * y;
            return z;
            """));
    assertTrue(e.getMessage().contains("'nope' : undeclared identifier"), e.getMessage());
    assertTrue(e.getMessage().contains("[double z = nope * y;]"), e.getMessage());
    assertTrue(e.getMessage().endsWith("Fix: correct line 3 of the body of 'f'."), e.getMessage());
  }

  @Test
  void wrongReturnType_pointsAtTheReturnLine() {
    assertError(GpuException.Code.COMPILE, "line 2 of its body", () ->
        ColumnKernel.compile(KernelSignature.of("g", SqlType.INT, arg("a", SqlType.INT)), """
            int x = a + 1;
            return vec2(1.0);
            """));
  }

  @Test
  void missingReturn_isReportedAfterTheBody() {
    GpuException e = assertThrows(GpuException.class, () ->
        ColumnKernel.compile(KernelSignature.of("h", SqlType.INT, arg("a", SqlType.INT)), "int x = a; return;"));
    assertEquals(GpuException.Code.COMPILE, e.code());
    assertTrue(e.getMessage().contains("'h'"), e.getMessage());
  }

  @Test
  void syntaxErrorInAnExpressionBody_isLine1() {
    assertError(GpuException.Code.COMPILE, "line 1 of its body", () ->
        ColumnKernel.compile(KernelSignature.of("e", SqlType.FLOAT, arg("x", SqlType.FLOAT)), "x * * 2.0"));
  }

  @Test
  void emptyBody_isRefused() {
    assertError(GpuException.Code.INVALID_ARGUMENT, "empty GLSL body", () ->
        ColumnKernel.compile(KernelSignature.of("e", SqlType.FLOAT, arg("x", SqlType.FLOAT)), "  "));
  }

  @Test
  void badSignatures_areRefusedWithTheUdfName() {
    assertError(GpuException.Code.INVALID_ARGUMENT, "argument name 'float' of GPU UDF 'f' is a GLSL reserved word",
        () -> KernelSignature.of("f", SqlType.FLOAT, arg("float", SqlType.FLOAT)));
    assertError(GpuException.Code.INVALID_ARGUMENT, "argument name 'a b' of GPU UDF 'f' is not an identifier",
        () -> KernelSignature.of("f", SqlType.FLOAT, arg("a b", SqlType.FLOAT)));
    assertError(GpuException.Code.INVALID_ARGUMENT, "'x' of GPU UDF 'f' is used twice",
        () -> KernelSignature.of("f", SqlType.FLOAT, arg("x", SqlType.FLOAT), arg("x", SqlType.INT)));
    assertError(GpuException.Code.INVALID_ARGUMENT, "reserved prefix",
        () -> KernelSignature.of("f", SqlType.FLOAT, arg("gl_x", SqlType.FLOAT)));
    assertError(GpuException.Code.INVALID_ARGUMENT, "contains '__'",
        () -> KernelSignature.of("f", SqlType.FLOAT, arg("a__b", SqlType.FLOAT)));
    assertError(GpuException.Code.INVALID_ARGUMENT, "a GPU UDF has a blank name", () -> KernelSignature.of(" ", SqlType.FLOAT));
    assertEquals("my-udf", KernelSignature.of("my-udf", SqlType.FLOAT).name(), "any SQL name (see UdfNamesTest)");
  }

  @Test
  void unsupportedTypes_sayWhichAreSupported() {
    GpuException e = assertError(GpuException.Code.UNSUPPORTED, "type 'interval' is not supported",
        () -> SqlType.parse("interval"));
    assertTrue(e.getMessage().contains("int, bigint, tinyint, smallint, decimal(p, s) with p <= 18, float, double, boolean, "
        + "date, timestamp"), e.getMessage());
    assertError(GpuException.Code.UNSUPPORTED, "decimal(20, 2) is not supported by GPU UDFs (precision 1 to 18",
        () -> SqlType.parse("decimal(20,2)"));
    assertEquals(SqlType.BIGINT, SqlType.parse("LONG"));
  }

  @Test
  void kernelCall_checksColumnTypes() {
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("neg", SqlType.INT, arg("a", SqlType.INT)), "-a");
    assertError(GpuException.Code.INVALID_ARGUMENT, "takes 1 arguments but 2 columns",
        () -> new KernelCall(k, new int[] {0, 1}));
    assertError(GpuException.Code.INVALID_ARGUMENT, "argument 1 ('a') of GPU UDF 'neg' is int but reads column 0 of type double",
        () -> new KernelCall(k, new int[] {0}).check(List.of(SqlType.DOUBLE)));
  }
}
