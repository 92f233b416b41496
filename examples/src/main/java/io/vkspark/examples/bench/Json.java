package io.vkspark.examples.bench;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A minimal JSON writer for the benchmark's nested lines (maps keep their insertion order), so the
 * examples need no JSON library of their own beyond what every Spark version ships.
 */
final class Json {
  private Json() {}

  /** {@code value} (a Map, List, String, Number, Boolean or null) as one line of JSON. */
  static String write(Object value) {
    StringBuilder b = new StringBuilder();
    write(b, value);
    return b.toString();
  }

  private static void write(StringBuilder b, Object v) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof Map<?, ?> m) {
      b.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : m.entrySet()) {
        b.append(first ? "" : ", ");
        first = false;
        string(b, String.valueOf(e.getKey()));
        b.append(": ");
        write(b, e.getValue());
      }
      b.append('}');
    } else if (v instanceof List<?> l) {
      b.append('[');
      for (int i = 0; i < l.size(); i++) {
        b.append(i == 0 ? "" : ", ");
        write(b, l.get(i));
      }
      b.append(']');
    } else if (v instanceof Double || v instanceof Float) {
      double d = ((Number) v).doubleValue();
      b.append(Double.isFinite(d) ? String.format(Locale.ROOT, "%.6g", d).replaceFirst("(\\.\\d*?)0+(e|$)", "$1$2")
          .replaceFirst("\\.(e|$)", "$1") : "null");
    } else if (v instanceof Number || v instanceof Boolean) {
      b.append(v);
    } else {
      string(b, v.toString());
    }
  }

  private static void string(StringBuilder b, String s) {
    b.append('"');
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\t' -> b.append("\\t");
        case '\r' -> b.append("\\r");
        default -> {
          if (c < 0x20) {
            b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }
}
