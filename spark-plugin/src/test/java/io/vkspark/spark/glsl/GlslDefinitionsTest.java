package io.vkspark.spark.glsl;

import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.TestUdfs;

import io.vkspark.spark.glsl.GlslDefinitions;
import io.vkspark.spark.glsl.GlslUdf;
import io.vkspark.spark.conf.VkConf;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.spark.conf.Settings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The GLSL definition format of {@code spark.vkspark.glsl} and {@code vkspark_define}, without Spark. */
final class GlslDefinitionsTest {
  @Test
  void parse_functionsWithCommentsTypesAndLines() {
    List<GlslDefinitions.Parsed> fs = GlslDefinitions.parse("""
        // a comment
        double poly(double x) {
          return 1.0 + x * (2.0 + x); // } in a comment
        }
        /* block
           comment { */
        BIGINT span(date a, Timestamp t, long n) { return int64_t(a) + t + n; }
        """, "f.glsl");
    assertEquals(2, fs.size());
    GlslUdf poly = fs.get(0).udf();
    assertEquals("poly", poly.name());
    assertEquals(SqlType.DOUBLE, poly.kernel().result());
    assertEquals(List.of("x"), poly.kernel().argNames());
    assertEquals(2, fs.get(0).line());
    assertEquals(2, fs.get(0).bodyLine());
    assertTrue(poly.kernel().body().contains("return 1.0 + x * (2.0 + x);"), poly.kernel().body());
    assertEquals("f.glsl line 2", poly.origin());
    GlslUdf span = fs.get(1).udf();
    assertEquals(List.of(SqlType.DATE, SqlType.TIMESTAMP, SqlType.BIGINT), span.kernel().argTypes());
    assertEquals(SqlType.BIGINT, span.kernel().result());
    assertEquals(7, fs.get(1).line());
    assertEquals("bigint span(date a, timestamp t, bigint n)", span.signature());
  }

  @Test
  void parse_signatureAndExpressionBody() {
    GlslUdf u = GlslDefinitions.parse("float saxpy(float x, float y)", "2.5 * x + y", "vkspark_define");
    assertEquals(List.of(SqlType.FLOAT, SqlType.FLOAT), u.kernel().argTypes());
    assertEquals("2.5 * x + y", u.kernel().body());
  }

  @Test
  void badInput_failsWithOriginLineUdfAndFix() {
    Map<String, List<String>> cases = Map.of(
        "double f(double x) { return x; }\n\nflaot g(double x) { return x; }",
        List.of("t.glsl line 3", "GPU UDF 'g'", "its result type", "flaot"),
        "double f(dbl x) { return x; }", List.of("t.glsl line 1", "GPU UDF 'f'", "argument 'x'", "dbl"),
        "double f(double) { return 1.0; }", List.of("line 1", "'f'", "is not '<type> <name>'"),
        "double f() { return 1.0; }", List.of("'f'", "no arguments"),
        "double f(double x);", List.of("line 1", "not a function with a body"),
        "\ndouble f(double x) {\n return x;\n", List.of("line 2", "'f'", "no closing '}'"),
        "double f(double x) { return x; }\n double f(double y) { return y; }",
        List.of("line 2", "'f'", "defined twice, on lines 1 and 2"),
        "double f(double int) { return 1.0; }", List.of("line 1", "argument name 'int'", "reserved"),
        "f(double x) { return x; }", List.of("line 1", "is not a signature"),
        "double f(double x) { return x; }\n// \u0000\n", List.of("t.glsl line 2", "NUL character", "at character 37"));
    cases.forEach((text, says) -> {
      GpuException e = assertThrows(GpuException.class, () -> GlslDefinitions.parse(text, "t.glsl"), text);
      for (String s : says) {
        assertTrue(e.getMessage().contains(s), () -> "'" + s + "' in: " + e.getMessage());
      }
      assertFalse(e.fix().isBlank(), e::getMessage);
    });
  }

  /** A test's settings: {@code files} as {@code spark.vkspark.glsl}, its shader cache under {@code dir}. */
  private static VkConf glsl(Path dir, String files) {
    return VkConf.from(Map.of(Settings.SHADER_CACHE_DIR.key(), dir.resolve("cache").toString(), Settings.GLSL.key(),
        files)::get);
  }

  @Test
  void configured_refusesReservedNames(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("reserved.glsl");
    Files.writeString(file, "int fine(int i) { return i; }\nint vkspark_define(int i) { return i; }\n");
    Exception e = assertThrows(Exception.class,
        () -> GlslDefinitions.configured(glsl(dir, file.toString())));
    assertTrue(e.getMessage().contains(file + " line 2: GPU UDF 'vkspark_define' has a name reserved for vkspark's own "
        + "SQL functions"), e.getMessage());
    assertTrue(e.getMessage().contains("Fix: give it a name that does not start with vkspark_."), e.getMessage());
  }

  @Test
  void glslName_mayNotBeAConfiguredClassName() {
    GpuUdf cls = new TestUdfs.IntPoly();
    GlslUdf same = GlslDefinitions.parse("int " + cls.name() + "(int x) { return x; }", "u.glsl").get(0).udf();
    GlslUdf other = GlslDefinitions.parse("int other_name(int x) { return x; }", "u.glsl").get(0).udf();
    GlslDefinitions.checkNoClash(List.of(cls), List.of(other));
    GpuException e = assertThrows(GpuException.class, () -> GlslDefinitions.checkNoClash(List.of(cls), List.of(other, same)));
    assertTrue(e.getMessage().contains("u.glsl line 1: GPU UDF '" + cls.name() + "' has the name of class "
        + TestUdfs.IntPoly.class.getName()), e.getMessage());
  }

  @Test
  void configured_readsFiles_andNamesFileLineOfABodyError(@TempDir Path dir) throws Exception {
    Path good = dir.resolve("good.glsl");
    Files.writeString(good, "int twice(int i) { return 2 * i; }\n");
    Path other = dir.resolve("other.glsl");
    Files.writeString(other, "\n\nint twice(int j) { return j + j; }\n");
    List<GlslUdf> udfs = GlslDefinitions.configured(glsl(dir, good.toString()));
    assertEquals(List.of("twice"), udfs.stream().map(GlslUdf::name).toList());

    GpuException dup = assertThrows(GpuException.class,
        () -> GlslDefinitions.configured(glsl(dir, good + ", " + other)));
    assertTrue(dup.getMessage().contains(other + " line 3: GPU UDF 'twice' is already defined at "
        + Settings.GLSL.key() + " file " + good + " line 1"), dup.getMessage());

    Path bad = dir.resolve("bad.glsl");
    Files.writeString(bad, "// header\ndouble broken(double x) {\n  double y = x * 2.0;\n  return y +* 1.0;\n}\n");
    GpuException e = assertThrows(GpuException.class,
        () -> GlslDefinitions.configured(glsl(dir, bad.toString())));
    assertTrue(e.getMessage().startsWith(Settings.GLSL.key() + " file " + bad + " line 2: "), e.getMessage());
    assertTrue(e.getMessage().contains("'broken'"), e.getMessage());
    assertTrue(e.getMessage().contains("line 3 of its body (line 4 of the file)"), e.getMessage());
    assertTrue(e.getMessage().contains("Fix:"), e.getMessage());

    GpuException missing = assertThrows(GpuException.class,
        () -> GlslDefinitions.configured(glsl(dir, dir.resolve("nope.glsl").toString())));
    assertTrue(missing.getMessage().contains("nope.glsl, which cannot be read"), missing.getMessage());
  }
}
