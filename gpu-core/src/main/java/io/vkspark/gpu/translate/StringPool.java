package io.vkspark.gpu.translate;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The strings of one translation that are not the UDF's arguments: its string constants, packed
 * once into a constant array, and the row's scratch bytes where the strings it builds
 * (concatenation, {@code StringBuilder}, {@code replace}, {@code valueOf}) are written. Both are
 * sources of {@code vk_string} views like the arguments: the kernel's byte reader asks
 * {@code vkt_s_word} for them (gpu-core {@code column/StringGlsl}). The scratch is append-only,
 * so a view of it never changes: strings stay immutable.
 *
 * <p>Row state declared here: {@code vkt_na} (the row was handed back to {@code call()}: its
 * result is not the kernel's, so the code returns at once), {@code vkt_bad} (the last
 * {@code parseInt} found no number) and the builders' table.
 */
final class StringPool {
  /** The empty string, and the zero of {@link JType#S}. */
  static final String EMPTY = "vk_string(-1, 0, 0, 0)";
  /** Source ids of the views: the constants, the scratch (argument sources are 0 .. 21). */
  static final int CONSTANTS = 64;
  static final int SCRATCH = 65;
  /** Bytes one row may build; a row that builds more is handed back to {@code call()}. */
  static final int SCRATCH_WORDS = 1024;
  /** Builders one row may create; a row that creates more is handed back. */
  static final int BUILDERS = 8;

  static final Var TOP = new Var("vkt_top", JType.I, Var.Kind.GLOBAL);
  static final Var HANDED_BACK = new Var("vkt_na", JType.Z, Var.Kind.GLOBAL);
  static final Var BAD = new Var("vkt_bad", JType.Z, Var.Kind.GLOBAL);

  /** The reader of these sources, as column/StringGlsl's byte reader declares and calls it (same text there). */
  static final String MORE_SOURCES = "uint vkt_s_word(int src, uint w)";

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final Map<String, Integer> offsets = new HashMap<>();
  private final Map<Integer, String> byOffset = new HashMap<>();
  private boolean used;
  /** Where the translation first used a string, for a refusal: {@code vkgen.R.f line 4: uses a string [ldc "abc"]}. */
  String firstUse;
  private boolean scratch;
  private boolean builders;

  /**
   * The view of constant {@code s}, or null when {@code s} is not well-formed UTF-16 (an unpaired
   * surrogate, which Spark would not encode as Java keeps it).
   */
  Expr constant(String s) {
    used = true;
    if (s.isEmpty()) {
      return Expr.zero(JType.S);
    }
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (!new String(b, StandardCharsets.UTF_8).equals(s)) {
      return null;
    }
    Integer at = offsets.get(s);
    if (at == null) {
      at = bytes.size();
      bytes.writeBytes(b);
      offsets.put(s, at);
      byOffset.put(at, s);
    }
    return view(CONSTANTS, Expr.i(at), Expr.i(b.length));
  }

  /** The text of {@code e} when it is the view of a constant made here ("" for the empty string), else null. */
  String textOf(Expr e) {
    if (e instanceof Expr.Const c && c.type() == JType.S) {
      return "";
    }
    if (e instanceof Expr.Call c && c.function().equals("vk_string") && c.args().get(0) instanceof Expr.Const src
        && src.value().equals(CONSTANTS) && c.args().get(1) instanceof Expr.Const at) {
      return byOffset.get((Integer) at.value());
    }
    return null;
  }

  static Expr view(int src, Expr start, Expr len) {
    return new Expr.Call(JType.S, "vk_string", List.of(Expr.i(src), start, len, Expr.i(0)));
  }

  /** Notes that the translation uses strings (the declarations are needed). */
  void use() {
    used = true;
  }

  /** Notes that the translation builds strings in the row's scratch. */
  void useScratch() {
    used = true;
    scratch = true;
  }

  /** Notes that the translation creates builders. */
  void useBuilders() {
    useScratch();
    builders = true;
  }

  boolean used() {
    return used;
  }

  /** The declarations, before the translator's helpers; empty when no string is used. */
  String declarations() {
    if (!used) {
      return "";
    }
    byte[] b = bytes.toByteArray();
    int words = Math.max(1, (b.length + 3) / 4);
    StringBuilder s = new StringBuilder("// string constants and the strings this row builds (translate/StringPool)\n");
    s.append("const uint vkt_lit[").append(words).append("] = uint[").append(words).append("](");
    for (int w = 0; w < words; w++) {
      int v = 0;
      for (int k = 0; k < 4 && 4 * w + k < b.length; k++) {
        v |= (b[4 * w + k] & 0xFF) << (8 * k);
      }
      s.append(w == 0 ? "" : ", ").append(Integer.toUnsignedString(v)).append('u');
    }
    s.append(");\n");
    if (scratch) {
      s.append("uint vkt_scr[").append(SCRATCH_WORDS).append("];\nint vkt_top = 0;\n");
    }
    if (builders) {
      s.append("int vkt_bs[").append(BUILDERS).append("];\nint vkt_bl[").append(BUILDERS).append("];\nint vkt_nb = 0;\n");
    }
    s.append("bool vkt_na = false;\nbool vkt_bad = false;\n");
    s.append(MORE_SOURCES).append(" {\n");
    s.append("  if (src == ").append(CONSTANTS).append(") { return w < ").append(words).append("u ? vkt_lit[w] : 0u; }\n");
    if (scratch) {
      s.append("  if (src == ").append(SCRATCH).append(") { return w < ").append(SCRATCH_WORDS).append("u ? vkt_scr[w] : 0u; }\n");
    }
    s.append("  return 0u;\n}\n");
    return s.toString();
  }
}
