package io.vkspark.gpu.translate;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * Methods {@link JavaTranslator} must refuse, each for one construct, and the reason it gives: it
 * names the class and method ({@code vkgen.R.alloc}), the source line of the instruction
 * ({@code line N}) and the instruction. The class is compiled at test time with {@code -g}, so the
 * lines are known: each refused construct sits on a line marked {@code // <method>}.
 */
final class TranslatorRefusalsTest {
  static final String SOURCE = """
      package vkgen;

      public final class R {
        static int counter;
        public static final int K = 3;

        public static int ok(int a0) {
          return a0 * K + 1;
        }

        public static int alloc(int a0) {
          int x = a0 + 1;
          Object o = new Object(); // alloc
          return x;
        }

        public static int string(int a0) {
          int x = a0 * 2;
          return x + "abc".length(); // string
        }

        public static int concat(int a0) {
          int x = a0 * 2;
          String s = "v" + x; // concat
          return x;
        }

        public static int array(int a0) {
          int x = a0 - 1;
          int[] a = new int[a0 & 3]; // array
          return x;
        }

        public static int arrayParam(int a0, int a1) {
          int x = a0 - a1;
          return x + Math.max(a1, 2) * new long[] {a0}.length; // arrayParam
        }

        public static int recursion(int a0) {
          if (a0 <= 0) {
            return 0;
          }
          return recursion(a0 - 1) + 1; // recursion
        }

        public static int mutual(int a0) {
          if (a0 <= 0) {
            return 1;
          }
          return mutual2(a0 - 1);
        }

        private static int mutual2(int a0) {
          return mutual(a0 / 2) + 1; // mutual
        }

        public static int sync(int a0) {
          int x = a0 + 3;
          synchronized (R.class) { // sync
            x++;
          }
          return x;
        }

        public static synchronized int syncMethod(int a0) {
          return a0 + 3;
        }

        public static int field(int a0) {
          int x = a0 + 7;
          return x + counter; // field
        }

        public static int fieldWrite(int a0) {
          int x = a0 + 7;
          counter = x; // fieldWrite
          return x;
        }

        public static int random(int a0) {
          int x = a0 ^ 5;
          java.util.Random r = new java.util.Random(x); // random
          return x;
        }

        public static long nanoTime(long a0) {
          long x = a0 << 2;
          return x + System.nanoTime(); // nanoTime
        }

        public static int tryCatch(int a0, int a1) {
          int x = a0 + a1;
          try {
            x = a0 / a1;
          } catch (ArithmeticException e) { // tryCatch
            x = -1;
          }
          return x;
        }
      }
      """;

  /**
   * Per method, the words of which the reason must name one (lower case): the refused instruction,
   * in whatever form the translator prints it.
   */
  static final Map<String, List<String>> INSTRUCTION = Map.ofEntries(
      Map.entry("alloc", List.of("new java.lang.object", "new java/lang/object", "allocation")),
      Map.entry("string", List.of("string", "ldc")),
      Map.entry("concat", List.of("string", "concat", "invokedynamic")),
      Map.entry("array", List.of("newarray", "array", "int[]")),
      Map.entry("arrayParam", List.of("newarray", "array", "long[]")),
      Map.entry("recursion", List.of("recurs", "cycle", "invokestatic", "calls itself")),
      Map.entry("mutual", List.of("recurs", "cycle", "invokestatic", "mutual2")),
      Map.entry("sync", List.of("synchronized", "monitorenter", "ldc", "class")),
      Map.entry("syncMethod", List.of("synchronized")),
      Map.entry("field", List.of("counter")),
      Map.entry("fieldWrite", List.of("counter")),
      Map.entry("random", List.of("java.util.random", "java/util/random")),
      Map.entry("nanoTime", List.of("nanotime")),
      Map.entry("tryCatch", List.of("try", "catch", "exception handler", "handler")));

  /** Methods whose construct is not one instruction on one line: any line of the method will do. */
  static final List<String> ANY_LINE = List.of("sync", "tryCatch", "mutual");

  private static GeneratedClasses classes;
  private static Class<?> r;

  @BeforeAll
  static void compile() {
    classes = new GeneratedClasses(Map.of("vkgen.R", SOURCE));
    r = classes.load("vkgen.R");
  }

  @AfterAll
  static void close() throws Exception {
    if (classes != null) {
      classes.close();
    }
  }

  static Method method(String name) {
    return Arrays.stream(r.getDeclaredMethods()).filter(m -> m.getName().equals(name)).findFirst().orElseThrow();
  }

  /** The 1-based line of {@code // marker}. */
  static int line(String marker) {
    String[] lines = SOURCE.split("\n");
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].endsWith("// " + marker)) {
        return i + 1;
      }
    }
    throw new IllegalArgumentException(marker);
  }

  /** The 1-based lines of method {@code name}'s declaration to its closing brace. */
  static int[] methodLines(String name) {
    String[] lines = SOURCE.split("\n");
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].matches(".*static .* " + name + "\\(.*")) {
        int j = i;
        while (!lines[j].equals("  }")) {
          j++;
        }
        return new int[] {i + 1, j + 1};
      }
    }
    throw new IllegalArgumentException(name);
  }

  @Test
  void aPlainMethodWithAStaticFinalConstantTranslates() {
    Translation t = JavaTranslator.translate(method("ok"));
    assertInstanceOf(Translation.Translated.class, t, t.toString());
  }

  @ParameterizedTest
  @ValueSource(strings = {"alloc", "string", "concat", "array", "arrayParam", "recursion", "mutual", "sync",
      "syncMethod", "field", "fieldWrite", "random", "nanoTime", "tryCatch"})
  void isRefusedNamingClassMethodLineAndInstruction(String name) {
    Translation t = JavaTranslator.translate(method(name));
    Translation.Refused refused = assertInstanceOf(Translation.Refused.class, t, name + " must be refused: " + t);
    String reason = refused.reason();
    System.out.println("[refusal] " + name + ": " + reason);
    // mutual2 is where mutual's recursion closes; either method may be named
    assertTrue(reason.contains("vkgen.R." + name) || name.equals("mutual") && reason.contains("vkgen.R.mutual2"),
        "the reason names the class and method: " + reason);
    // the instruction, not the method's own name (nanoTime, string ...)
    String lower = reason.replace("vkgen.R." + name + " ", " ").replace("vkgen.R." + name + ":", ":")
        .toLowerCase(Locale.ROOT);
    assertTrue(INSTRUCTION.get(name).stream().anyMatch(lower::contains), "the reason names the instruction (one of "
        + INSTRUCTION.get(name) + "): " + reason);
    if (name.equals("syncMethod")) {
      return; // a flag of the method, not an instruction: no line to name
    }
    Matcher m = Pattern.compile("line (\\d+)").matcher(reason);
    assertTrue(m.find(), "the reason names the source line ('line N'): " + reason);
    int line = Integer.parseInt(m.group(1));
    if (ANY_LINE.contains(name)) {
      int[] span = name.equals("mutual") ? new int[] {methodLines("mutual")[0], methodLines("mutual2")[1]} : methodLines(name);
      assertTrue(line >= span[0] && line <= span[1], "line " + line + " is not in " + name + " (lines " + span[0] + " to "
          + span[1] + "): " + reason);
    } else {
      assertEquals(line(name), line, "the line of the refused instruction: " + reason);
    }
    assertEquals("vkgen.R." + name, refused.source(), "source");
  }
}
