package io.vkspark.gpu.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/** One JSON object per line, built in insertion order (benchmarks print these). */
public final class Json {
  private final Map<String, Object> fields = new LinkedHashMap<>();

  public static Json of(String bench, String name) {
    Json j = new Json();
    j.put("bench", bench).put("case", name);
    return j;
  }

  public Json put(String key, Object value) {
    fields.put(key, value);
    return this;
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("{");
    fields.forEach((k, v) -> {
      if (s.length() > 1) {
        s.append(", ");
      }
      s.append('"').append(k).append("\": ").append(value(v));
    });
    return s.append('}').toString();
  }

  private static String value(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof Double d) {
      return Double.isFinite(d) ? String.format("%.6g", d) : "null";
    }
    if (v instanceof Number || v instanceof Boolean) {
      return v.toString();
    }
    return '"' + v.toString().replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}
