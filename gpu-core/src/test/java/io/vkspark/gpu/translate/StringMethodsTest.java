package io.vkspark.gpu.translate;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.column.ColumnGpu;
import io.vkspark.gpu.column.CpuCause;
import io.vkspark.gpu.column.SqlType;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every {@code String} method the translator maps (issue 32), each in a method of {@code vkgen.S}
 * compiled at test time, against Java on lavapipe ({@link StringRows}: random ASCII and non-ASCII
 * text, surrogate pairs, empty strings, nulls, ill-formed UTF-8; every row's bytes compared, rows
 * handed back to {@code call()} counted). A method whose every operation is exact on every row
 * hands none back; the others hand back only rows that are not ASCII.
 */
final class StringMethodsTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  static final String SOURCE = """
      package vkgen;

      public final class S {
        // issue 32's Done-when case
        public static String domain(String email) { return email.substring(email.indexOf('@') + 1).toLowerCase(); }
        // exact on every row
        public static int length(String s) { return s.length() * 10 + (s.isEmpty() ? 1 : 0); }
        public static int hash(String s) { return s.hashCode(); }
        public static boolean eq(String s, String t) { return s.equals(t) || t.contentEquals(s); }
        public static int affixes(String s, String t) {
          return (s.startsWith(t) ? 1 : 0) + (s.endsWith(t) ? 2 : 0) + (s.contains(t) ? 4 : 0) + (s.startsWith("a") ? 8 : 0);
        }
        public static String trim(String s) { return s.trim(); }
        public static String concat(String s, String t) { return s.concat(t).concat("|"); }
        public static String plus(String s, int k, long n) { return s + k + ":" + n + '/' + (k > 3) + (char) ('a' + (k & 7)); }
        public static String nullPlus(String s) { String none = null; return none + s + none; }
        public static String replaceChar(String s) { return s.replace(',', ';').replace('a', 'é'); }
        public static String replaceStr(String s, String t) { return s.replace("ab", "-").replace(t, "<>"); }
        public static String split1(String s) { return s.split(",")[1]; }
        public static int splitLength(String s) { return s.split("\\\\.").length; }
        public static String splitLoop(String s) {
          String[] parts = s.split("@");
          String r = "";
          for (String p : parts) {
            r = r + p.length() + ";";
          }
          return parts.length > 0 ? r + parts[parts.length - 1] : r;
        }
        public static String builder(String s, int k) {
          StringBuilder b = new StringBuilder();
          b.append(s).append('[').append(k).append(']');
          for (int i = 0; i < (k & 3); i++) {
            b.append(i);
          }
          StringBuilder c = new StringBuilder("x").append(b.length());
          return b.append(c).append((String) null).toString();
        }
        public static String valueOf(int k, long n) {
          return String.valueOf(k) + String.valueOf(n) + Integer.toString(k) + Long.toString(n) + String.valueOf(k < 0);
        }
        public static String label(int k) {
          if (k > 100) {
            return "HIGH";
          } else if (k > 10) {
            return "MID";
          }
          return k < 0 ? null : "LOW";
        }
        public static String day(int d) {
          switch (d) {
            case 1: return "Mon";
            case 2: return "Tue";
            case 3: return "Wed";
            default: return "n/a";
          }
        }
        public static int switchOn(String s) {
          switch (s) {
            case "a": return 1;
            case "Ab": return 2;
            case "": return 3;
            default: return 4;
          }
        }
        public static String nullable(String s) { return s == null ? "none" : s.isEmpty() ? null : s; }
        // exact on ASCII rows, the others handed back
        public static int charAt(String s, int k) { return s.charAt(k); }
        public static String substring(String s, int k) { return s.substring(k) + "|" + s.substring(0, Math.min(k, s.length())); }
        public static int indexes(String s, int k) {
          return s.indexOf('a') + 100 * s.indexOf('@', k) + 10000 * s.lastIndexOf('B') + 1000000 * s.lastIndexOf('a', k);
        }
        public static int indexesStr(String s, String t, int k) {
          return s.indexOf(t) + 100 * s.indexOf(t, k) + 10000 * s.lastIndexOf(t) + 1000000 * s.lastIndexOf(t, k);
        }
        public static boolean startsAt(String s, String t, int k) { return s.startsWith(t, k); }
        public static int compare(String s, String t) { return s.compareTo(t) * 1000 + s.compareToIgnoreCase(t); }
        public static boolean ignoreCase(String s, String t) { return s.equalsIgnoreCase(t); }
        public static String upper(String s) { return s.toUpperCase() + s.toLowerCase(); }
        public static String strip(String s) { return s.strip() + "|" + s.stripLeading() + "|" + s.stripTrailing() + s.isBlank(); }
        public static int parse(String s) { return Integer.parseInt(s.trim()); }
        public static long parseLong(String s) { return Long.parseLong(s) + Long.valueOf(s); }
        public static String chars(String s) {
          if (s.isEmpty()) {
            return s;
          }
          char c = s.charAt(0);
          return Character.toUpperCase(c) + s.substring(1) + (Character.isDigit(c) ? "d" : "")
              + (Character.isLetter(c) ? "l" : "") + (Character.isWhitespace(c) ? "w" : "") + Character.toLowerCase(c);
        }
        public static String repeat(String s, int k) { return s.repeat(k & 3); }
        public static boolean parseBoolean(String s) { return Boolean.parseBoolean(s); }
      }
      """;

  /** Methods exact on every row: none may hand a row back. */
  static final List<String> EXACT = List.of("length", "hash", "eq", "affixes", "trim", "concat", "plus", "nullPlus",
      "split1", "splitLength", "splitLoop", "builder", "valueOf", "label", "day", "switchOn", "nullable");

  private static GeneratedClasses classes;

  @BeforeAll
  static void compile() {
    classes = new GeneratedClasses(Map.of("vkgen.S", SOURCE));
  }

  @AfterAll
  static void close() throws Exception {
    classes.close();
  }

  static List<String> methods() {
    List<String> out = new ArrayList<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("public static \\S+ (\\w+)\\(").matcher(SOURCE);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  static Method method(String name) {
    return java.util.Arrays.stream(classes.load("vkgen.S").getDeclaredMethods()).filter(x -> x.getName().equals(name))
        .findFirst().orElseThrow();
  }

  /** Rows for {@code m}: text for strings (a second string often a piece of the first), small and edge ints. */
  static List<Object[]> rows(Method m, int n, Random r) {
    List<byte[]> text = StringRows.text(n, r);
    List<Object[]> rows = new ArrayList<>();
    int[] ints = {0, 1, -1, 2, 3, 5, 11, 101, Integer.MIN_VALUE, Integer.MAX_VALUE, -2, 7};
    long[] longs = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 40, -(1L << 33), 10, 99};
    for (int i = 0; i < n; i++) {
      Class<?>[] ps = m.getParameterTypes();
      Object[] row = new Object[ps.length];
      String first = null;
      for (int c = 0; c < ps.length; c++) {
        if (ps[c] == String.class) {
          byte[] b = text.get((i + 7 * c) % n);
          if (m.getName().startsWith("parse") && r.nextInt(4) > 0) {
            b = number(r).getBytes(StandardCharsets.UTF_8);
          }
          if (c > 0 && first != null && r.nextInt(3) > 0) {
            int a = first.isEmpty() ? 0 : r.nextInt(first.length());
            String piece = first.substring(a, Math.min(first.length(), a + r.nextInt(4)));
            b = (r.nextBoolean() ? piece : piece.toUpperCase(java.util.Locale.ROOT)).getBytes(StandardCharsets.UTF_8);
          }
          row[c] = b;
          if (c == 0 && b != null) {
            first = new String(b, StandardCharsets.UTF_8);
          }
        } else if (ps[c] == int.class) {
          row[c] = i < ints.length ? ints[i] : r.nextInt(first == null ? 20 : first.length() + 5) - 2;
        } else {
          row[c] = i < longs.length ? longs[i] : r.nextLong() >> r.nextInt(64);
        }
      }
      rows.add(row);
    }
    return rows;
  }

  /** Text that is mostly a number: signs, edges of int and long, overflow, blanks, Unicode digits. */
  static String number(Random r) {
    String[] edges = {"0", "-0", "+0", "2147483647", "-2147483648", "2147483648", "-2147483649", "9223372036854775807",
        "-9223372036854775808", "9223372036854775808", "-9223372036854775809", "-", "+", "", " 12 ", "1_000", "٣", "１２",
        "00012", "+-1", "99999999999999999999"};
    int k = r.nextInt(edges.length + 10);
    return k < edges.length ? edges[k] : String.valueOf(r.nextLong() >> r.nextInt(64));
  }

  @ParameterizedTest
  @MethodSource("methods")
  void givesJavasBytes(String name) {
    Method m = method(name);
    Translation t = JavaTranslator.translate(m);
    if (t instanceof Translation.Refused ref) {
      fail(ref.reason());
    }
    Translation.Translated tr = (Translation.Translated) t;
    StringRows check = new StringRows(GPU.runtime(), GPU.allocator());
    try {
      List<Object[]> rows = rows(m, 600, new Random(name.hashCode()));
      Object[] nulls = rows.get(0).clone(); // every string argument null
      for (int c = 0; c < nulls.length; c++) {
        nulls[c] = m.getParameterTypes()[c] == String.class ? null : nulls[c];
      }
      rows.add(0, nulls);
      StringRows.Seen seen = check.check(m, tr, rows);
      assertTrue(seen.gpuRows() > 100, name + ": rows on the GPU " + seen.gpuRows());
      if (EXACT.contains(name)) {
        assertEquals(0, seen.handedBack(), name + ": exact on every row, yet rows were handed back "
            + java.util.Arrays.toString(seen.causes()));
      } else {
        assertEquals(seen.handedBack(), seen.cause(CpuCause.NON_ASCII) + seen.cause(CpuCause.BODY),
            name + ": " + java.util.Arrays.toString(seen.causes()));
      }
      assertEquals(0, seen.cause(CpuCause.MALFORMED_UTF8) + seen.cause(CpuCause.OVERFLOW), name);
    } finally {
      check.close();
    }
  }

  static final String REFUSED = """
      package vkgen;

      public final class SR {
        public static boolean matches(String s) { return s.matches("[a-z]+"); }
        public static String replaceAll(String s) { return s.replaceAll("a+", "b"); }
        public static String splitRegex(String s) { return s.split("[,;]")[0]; }
        public static String splitDot(String s) { return s.split(".")[0]; }
        public static String format(String s) { return String.format("%s!", s); }
        public static String lowerRoot(String s) { return s.toLowerCase(java.util.Locale.ROOT); }
        public static String doubleText(String s, int k) { return s + (k * 0.5); }
        public static String upperTurkish(String s) { return s.toUpperCase(); }
        public static int lengthOnly(int k) { return String.valueOf(k).length(); }
      }
      """;

  /** Per method of {@code vkgen.SR}: words its refusal must contain (the reason EXPLAIN and UdfCheck show). */
  static final Map<String, String> REASONS = Map.of("matches", "regular expression", "replaceAll", "regular expression",
      "splitRegex", "regular expression", "splitDot", "regular expression", "format", "String.format",
      "lowerRoot", "Locale", "doubleText", "shortest decimal", "lengthOnly", "no string argument or result");

  @Test
  void regexFormatLocaleAndDoubles_stayOnTheCpu_withTheReason() throws Exception {
    try (GeneratedClasses refused = new GeneratedClasses(Map.of("vkgen.SR", REFUSED))) {
      Class<?> c = refused.load("vkgen.SR");
      for (Map.Entry<String, String> e : REASONS.entrySet()) {
        Method m = java.util.Arrays.stream(c.getDeclaredMethods()).filter(x -> x.getName().equals(e.getKey())).findFirst()
            .orElseThrow();
        Translation t = JavaTranslator.translate(m);
        Translation.Refused r = assertInstanceOf(Translation.Refused.class, t, e.getKey());
        assertTrue(r.reason().contains(e.getValue()) && r.reason().contains("vkgen.SR." + e.getKey() + " line "),
            e.getKey() + ": " + r.reason());
      }
      // case mapping under a Turkish default locale (dotted and dotless i) is refused, not guessed
      java.util.Locale before = java.util.Locale.getDefault();
      java.util.Locale.setDefault(java.util.Locale.forLanguageTag("tr-TR"));
      try {
        Method m = c.getDeclaredMethod("upperTurkish", String.class);
        Translation.Refused r = assertInstanceOf(Translation.Refused.class, JavaTranslator.translate(m));
        assertTrue(r.reason().contains("default locale tr_TR"), r.reason());
      } finally {
        java.util.Locale.setDefault(before);
      }
    }
  }

  @Test
  void domain_translatesWithAStringSignature() {
    Translation.Translated tr = (Translation.Translated) JavaTranslator.translate(method("domain"));
    assertEquals(List.of(SqlType.STRING), tr.args());
    assertEquals(SqlType.STRING, tr.result());
    assertTrue(tr.exact());
  }
}
