package io.vkspark.gpu.translate;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.column.ColumnGpu;
import io.vkspark.gpu.column.run.CpuCause;
import io.vkspark.gpu.column.SqlType;
import java.lang.reflect.Method;




import java.util.Arrays;

import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Scala string closures as scalac 2.13 compiles them (compiled here with the real compiler):
 * {@code StringOps} extension methods, string interpolation and {@code +} (a
 * {@code java.lang.StringBuilder} chain), {@code String}'s own methods; each against the closure
 * itself on every row ({@link StringRows}), non-ASCII rows handed back only where UTF-16 indices or
 * case mapping need them.
 */
final class ScalaStringsTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  static final String SOURCE = """
      package vkscala

      object T {
        val domain: String => String = (e: String) => e.substring(e.indexOf('@') + 1).toLowerCase
        val field: String => String = (s: String) => { val p = s.split(','); if (p.length > 1) p(1) else "-" }
        val dotted: String => Int = (s: String) => s.split('.').length
        val takeDrop: (String, Int) => String = (s: String, n: Int) => s.take(n) + "|" + s.drop(n) + "|" + s.takeRight(2) + s.dropRight(n)
        val interp: (String, Int) => String = (s: String, n: Int) => s"$s-$n!${s.length}"
        val concat: (String, String) => String = (a: String, b: String) => a + ":" + b
        val nonEmpty: String => Boolean = (s: String) => s.nonEmpty && !s.isEmpty
        val toI: String => Int = (s: String) => if (s.nonEmpty && s.forall(_ => true)) s.trim.length else 0
        val strip: String => String = (s: String) => s.stripPrefix("a").stripSuffix("z").trim.toUpperCase
        val hasAt: String => Boolean = (s: String) => s.contains('@')
        val times: (String, Int) => String = (s: String, n: Int) => s * (n % 4)
      }
      """;

  private static ScalacClasses fixtures;
  private static Object module;

  @BeforeAll
  static void compile() throws Exception {
    fixtures = new ScalacClasses(SOURCE);
    module = fixtures.module("vkscala.T");
  }

  @AfterAll
  static void close() throws Exception {
    fixtures.close();
  }

  @ParameterizedTest
  @ValueSource(strings = {"domain", "field", "dotted", "takeDrop", "interp", "concat", "nonEmpty", "strip", "hasAt", "times"})
  void closureGivesItsOwnBytes(String name) throws Exception {
    Object f = module.getClass().getMethod(name).invoke(module);
    Translation t = JavaTranslator.translate(f);
    Translation.Translated tr = assertInstanceOf(Translation.Translated.class, t, t.toString());
    boolean two = f instanceof scala.Function2;
    List<SqlType> types = tr.args();
    StringRows.Java java = args -> {
      try {
        @SuppressWarnings("unchecked")
        Object r = two ? ((scala.Function2<Object, Object, Object>) f).apply(args[0], args[1])
            : ((scala.Function1<Object, Object>) f).apply(args[0]);
        return r;
      } catch (RuntimeException e) {
        return StringRows.THROWS;
      }
    };
    Random r = new Random(name.hashCode());
    List<byte[]> text = StringRows.text(500, r);
    List<Object[]> rows = new java.util.ArrayList<>();
    for (int i = 0; i < text.size(); i++) {
      Object second = types.size() < 2 ? null : types.get(1) == SqlType.INT ? (Object) (r.nextInt(12) - 3)
          : text.get((i * 7 + 3) % text.size());
      rows.add(types.size() < 2 ? new Object[] {text.get(i)} : new Object[] {text.get(i), second});
    }
    StringRows check = new StringRows(GPU.runtime(), GPU.allocator());
    try {
      StringRows.Seen seen = check.check(name, java, types, tr, rows);
      assertTrue(seen.gpuRows() > 300, name + " " + seen);
      assertEquals(seen.handedBack(), seen.cause(CpuCause.NON_ASCII), name + " " + Arrays.toString(seen.causes()));
    } finally {
      check.close();
    }
  }
}
