package io.vkspark.gpu.translate;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random Java static methods over strings, for the generated suite ({@link GeneratedStringMethodsTest}):
 * {@code static String mN(String a0, String a1, int a2)} (or {@code int} results) whose body is a
 * random expression of the {@code String} methods the translator maps, nested a few levels, with
 * locals, a branch and concatenation. Exceptions Java throws on some rows (an index out of range, a
 * null) are part of the grammar: those rows must be recomputed or handed back, never answered.
 */
final class StringMethodGenerator {
  private final Random r;

  StringMethodGenerator(long seed) {
    this.r = new Random(seed);
  }

  /** A class {@code pkg.cls} with {@code n} methods {@code m0 ..}; returns its source. */
  String classSource(String pkg, String cls, int n) {
    StringBuilder s = new StringBuilder("package " + pkg + ";\n\npublic final class " + cls + " {\n");
    for (int i = 0; i < n; i++) {
      boolean str = r.nextInt(3) > 0;
      s.append("  public static ").append(str ? "String" : "int").append(" m").append(i)
          .append("(String a0, String a1, int a2) {\n");
      s.append("    String v = a1;\n    int k = a2;\n");
      s.append("    v = ").append(string(2)).append(";\n");
      s.append("    k = ").append(integer(2)).append(";\n");
      s.append("    if (").append(condition(1)).append(") {\n      v = ").append(string(1)).append(";\n    }\n");
      s.append("    return ").append(str ? string(2) : integer(2)).append(";\n  }\n");
    }
    return s.append("}\n").toString();
  }

  private static final String[] LITERALS = {"\"\"", "\",\"", "\"@\"", "\"ab\"", "\"X-\"", "\" \"", "\"é\"", "\"Q\""};
  private static final String[] CHARS = {"'a'", "','", "'@'", "' '", "'B'", "'.'"};

  private String string(int depth) {
    if (depth <= 0) {
      return switch (r.nextInt(5)) {
        case 0, 1 -> "a0";
        case 2 -> "a1";
        case 3 -> "v";
        default -> LITERALS[r.nextInt(LITERALS.length)];
      };
    }
    String s = string(depth - 1);
    return switch (r.nextInt(16)) {
      case 0 -> "(" + s + ").trim()";
      case 1 -> "(" + s + ").toLowerCase()";
      case 2 -> "(" + s + ").toUpperCase()";
      case 3 -> "(" + s + " + " + string(depth - 1) + ")";
      case 4 -> "(" + s + " + " + integer(depth - 1) + " + " + CHARS[r.nextInt(CHARS.length)] + ")";
      case 5 -> "(" + s + ").substring(Math.min(Math.max(" + integer(depth - 1) + ", 0), (" + s + ").length()))";
      case 6 -> "(" + s + ").replace(" + CHARS[r.nextInt(CHARS.length)] + ", " + CHARS[r.nextInt(CHARS.length)] + ")";
      case 7 -> "(" + s + ").concat(" + string(depth - 1) + ")";
      case 8 -> "String.valueOf(" + integer(depth - 1) + ")";
      case 9 -> "(" + s + ").strip()";
      case 10 -> "(" + condition(depth - 1) + " ? " + s + " : " + string(depth - 1) + ")";
      case 11 -> "(" + s + " + \",\").split(\",\")[0]";
      case 12 -> "new StringBuilder(" + s + ").append(" + integer(depth - 1) + ").append(" + string(depth - 1) + ").toString()";
      case 13 -> "(" + s + ").replace(\"a\", " + string(depth - 1) + ")";
      case 14 -> "(" + s + ").substring(1)"; // throws on an empty string
      default -> s;
    };
  }

  private String integer(int depth) {
    if (depth <= 0) {
      return r.nextBoolean() ? "a2" : r.nextBoolean() ? "k" : String.valueOf(r.nextInt(7) - 1);
    }
    String s = string(depth - 1);
    return switch (r.nextInt(11)) {
      case 0 -> "(" + s + ").length()";
      case 1 -> "(" + s + ").indexOf(" + CHARS[r.nextInt(CHARS.length)] + ")";
      case 2 -> "(" + s + ").indexOf(" + string(depth - 1) + ")";
      case 3 -> "(" + s + ").lastIndexOf(" + CHARS[r.nextInt(CHARS.length)] + ", " + integer(depth - 1) + ")";
      case 4 -> "(" + s + ").compareTo(" + string(depth - 1) + ")";
      case 5 -> "(" + s + ").hashCode()";
      case 6 -> "(" + integer(depth - 1) + " + " + integer(depth - 1) + ")";
      case 7 -> "(" + s + ").split(\",\").length";
      case 8 -> "(" + condition(depth - 1) + " ? 1 : 0)";
      case 9 -> "(int) (" + s + ").charAt(0)"; // throws on an empty string
      default -> "(" + s + ").compareToIgnoreCase(" + string(depth - 1) + ")";
    };
  }

  private String condition(int depth) {
    String s = string(depth);
    return switch (r.nextInt(6)) {
      case 0 -> "(" + s + ").isEmpty()";
      case 1 -> "(" + s + ").equals(" + string(depth) + ")";
      case 2 -> "(" + s + ").startsWith(" + string(depth) + ")";
      case 3 -> "(" + s + ").contains(" + LITERALS[r.nextInt(LITERALS.length)] + ")";
      case 4 -> "(" + s + ").equalsIgnoreCase(" + string(depth) + ")";
      default -> integer(depth) + " > " + (r.nextInt(5) - 1);
    };
  }

  /** The names {@code m0 ..} of a class of {@code n} methods. */
  static List<String> names(int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add("m" + i);
    }
    return out;
  }
}
