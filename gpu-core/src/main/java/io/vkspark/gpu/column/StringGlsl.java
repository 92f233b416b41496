package io.vkspark.gpu.column;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.MemoryKind;
import io.vkspark.gpu.Program;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The generated side of strings in a kernel: the {@code vk_string} value each string or binary
 * argument is, the helpers a body computes with ({@code vk_str_*}), the writer of a string or
 * binary result ({@code vk_out_*}) and the row status a body hands a row back to {@code call()}
 * with ({@code vk_to_cpu}, {@code vk_str_require_ascii}). The helpers are one GLSL resource
 * ({@code vkstring.glsl}); this class adds what depends on the signature: the source readers and
 * the buffers. Semantics: docs/GLSL-SEMANTICS.md, "Strings".
 *
 * <p>A string or binary result is computed in two passes of the same pipeline over the same rows
 * ({@link StringScan}): phase 0 measures each row's bytes, a prefix sum gives each row its offsets,
 * and phase 1 writes the bytes there. Bindings, after the literals' ({@link ColumnKernel}): status
 * (+0), flagged rows (+1), then for a string or binary result the phase (+2), the lengths (+3), the
 * scan's in-block sums (+4) and block prefixes (+5), and the data (+6).
 */
final class StringGlsl {
  private static final String RESOURCE = "/io/vkspark/gpu/glsl/vkstring.glsl";
  private static volatile Map<String, String> sections;

  /** The names a body may use although they start with {@code vk_} (BodyCheck). */
  static final Set<String> PUBLIC = Set.of("vk_string", "vk_str_len", "vk_str_at", "vk_str_is_null", "vk_str_is_ascii",
      "vk_str_require_ascii", "vk_str_utf16_len", "vk_str_eq", "vk_str_eq_ignore_case", "vk_str_cmp", "vk_str_find",
      "vk_str_rfind", "vk_str_find_str", "vk_str_rfind_str", "vk_str_starts", "vk_str_ends", "vk_str_contains",
      "vk_str_sub", "vk_str_trim", "vk_str_lower", "vk_str_upper", "vk_str_empty", "vk_str_null", "vk_str_hash",
      "vk_ascii_lower", "vk_ascii_upper", "vk_out_byte", "vk_out_str", "vk_out_int", "vk_out_long", "vk_out_len",
      "vk_to_cpu");
  private static final Pattern USES_HELPERS = Pattern.compile("\\bvk_(str|ascii|out|to_cpu)");
  private static final Pattern USES_STATUS = Pattern.compile("\\bvk_(to_cpu|str_require_ascii)\\b");
  /** The prototype of the reader of sources other than the arguments (see {@link #readers}). */
  static final String MORE_SOURCES = "uint vkt_s_word(int src, uint w)";
  private static final Pattern USES_LONG = Pattern.compile("\\bvk_out_long\\b");

  /** Row statuses the kernel reports (the status buffer's counts, from word 2). */
  static final int STATUS_WORDS = 8;
  /** Words of the status buffer: the bytes phase 1 needed (when they did not fit), flagged rows, then per cause. */
  static final int NEED = 0;
  static final int FLAGGED = 1;
  /** Most bytes one row may produce; a longer row is computed by call() (cause 5). */
  static final long MAX_ROW_BYTES = 1L << 27;
  /** The prefix sums saturate here: more bytes in one dispatch than Arrow's int32 offsets hold. */
  static final long SATURATED = 0x7FFFFFFFL;

  private StringGlsl() {}

  /** Whether the result is a string or binary: two passes, offsets and data. */
  static boolean varResult(KernelSignature sig) {
    return sig.result() == SqlType.STRING || sig.result() == SqlType.BINARY;
  }

  /** A string or binary argument: the body sees it as a {@code vk_string} value (and its accessors). */
  static boolean isString(SqlType t) {
    return t == SqlType.STRING || t == SqlType.BINARY;
  }

  /** Whether the kernel declares the {@code vk_string} type (a string or binary argument or result). */
  static boolean declares(KernelSignature sig) {
    return varResult(sig) || sig.args().stream().anyMatch(a -> isString(a.type()));
  }

  /** Whether the kernel pastes the helpers (the result needs them, or {@code all}, the body and functions, calls one). */
  static boolean helpers(KernelSignature sig, String all) {
    return declares(sig) && (varResult(sig) || USES_HELPERS.matcher(all).find());
  }

  /** Whether the kernel reports row statuses: a string or binary result, or a body that hands rows to call(). */
  static boolean status(KernelSignature sig, String all) {
    return varResult(sig) || (declares(sig) && USES_STATUS.matcher(all).find());
  }

  /** The GLSL type of the result as {@code vk_udf} returns it. */
  static String resultGlsl(KernelSignature sig) {
    return varResult(sig) ? "vk_string" : sig.result().glsl();
  }

  /** The struct, before the variable-width declarations. */
  static List<String> struct(KernelSignature sig) {
    return declares(sig) ? List.of("struct vk_string { int src; int start; int len; int mode; };") : List.of();
  }

  /**
   * After the variable-width declarations ({@link VarArgs}): the buffers from {@code binding}, the
   * source readers and the helpers {@code all} needs.
   */
  static List<String> declarations(KernelSignature sig, String all, int binding) {
    List<String> l = new ArrayList<>();
    if (!helpers(sig, all)) {
      return l;
    }
    boolean status = status(sig, all);
    if (status) {
      l.add("layout(std430, set = 0, binding = " + binding + ") buffer VkStatus { uint vk_o_status[" + STATUS_WORDS + "]; };");
      l.add("layout(std430, set = 0, binding = " + (binding + 1) + ") buffer VkFlagged { uint vk_o_flagged[]; };");
    }
    if (varResult(sig)) {
      l.add("layout(std430, set = 0, binding = " + (binding + 2) + ") readonly buffer VkPhase { uint vk_o_phase_word[]; };");
      l.add("layout(std430, set = 0, binding = " + (binding + 3) + ") buffer VkLens { uint vk_o_lens[]; };");
      l.add("layout(std430, set = 0, binding = " + (binding + 4) + ") readonly buffer VkLocal { uint vk_o_local[]; };");
      l.add("layout(std430, set = 0, binding = " + (binding + 5) + ") readonly buffer VkBlocks { uint vk_o_blocks[]; };");
      l.add("layout(std430, set = 0, binding = " + (binding + 6) + ") buffer VkData { uint vk_o_data[]; };");
    }
    l.addAll(readers(sig, all));
    Map<String, String> s = sections();
    l.addAll(List.of(s.get("helpers").split("\n")));
    if (status) {
      l.addAll(List.of(s.get("status").split("\n")));
    }
    if (varResult(sig)) {
      l.addAll(List.of(s.get("state").split("\n")));
      l.addAll(List.of(s.get(sig.result() == SqlType.STRING ? "utf8" : "bytes").split("\n")));
      l.addAll(List.of(s.get("writer").split("\n")));
      if (USES_LONG.matcher(all).find()) {
        l.addAll(List.of(s.get("long").split("\n")));
      }
    }
    return l;
  }

  /**
   * {@code vk_s_raw(src, p)}: byte {@code p} of argument {@code src}'s data; its row's end; whether it is binary.
   * Sources other than the arguments are read from {@code vkt_s_word} where the spec's functions
   * define it (a translated UDF's string constants and the strings it builds, gpu-core {@code translate/StringPool}).
   */
  private static List<String> readers(KernelSignature sig, String all) {
    List<String> l = new ArrayList<>();
    boolean more = all.contains(MORE_SOURCES);
    if (more) {
      l.add(MORE_SOURCES + ";");
    }
    l.add("uint vk_s_word(int src, uint w) {");
    l.add("  switch (src) {");
    StringBuilder ends = new StringBuilder();
    StringBuilder binary = new StringBuilder();
    for (int i = 0; i < sig.args().size(); i++) {
      SqlType t = sig.args().get(i).type();
      if (isString(t)) {
        l.add("    case " + i + ": return w < uint(vk_data" + i + ".length()) ? vk_data" + i + "[w] : 0u;");
        ends.append("    case ").append(i).append(": return vk_start").append(i).append(" + vk_len").append(i).append(";\n");
        if (t == SqlType.BINARY) {
          binary.append(binary.length() == 0 ? "" : " || ").append("src == ").append(i);
        }
      }
    }
    l.add(more ? "    default: return vkt_s_word(src, w);" : "    default: return 0u;");
    l.add("  }");
    l.add("}");
    l.add("uint vk_s_raw(int src, int p) { return p < 0 ? 0u : (vk_s_word(src, uint(p) >> 2u) >> ((uint(p) & 3u) << 3u)) & 255u; }");
    l.add("int vk_s_end(int src) {");
    l.add("  switch (src) {");
    if (!ends.isEmpty()) {
      l.add(ends.toString().stripTrailing());
    }
    l.add("    default: return 0;");
    l.add("  }");
    l.add("}");
    l.add("bool vk_s_binary(int src) { return " + (binary.length() == 0 ? "false" : binary) + "; }");
    return l;
  }

  /** The argument of {@code vk_udf} for string or binary argument {@code i}, as main passes it. */
  static String load(int i) {
    return "vk_string(" + i + ", vk_start" + i + ", vk_len" + i + ", 0)";
  }

  /** Lines of main before the call: phase 1 places the row's bytes from the scan. */
  static List<String> beforeCall(KernelSignature sig) {
    if (!varResult(sig)) {
      return List.of();
    }
    return List.of(
        "  vk_o_phase = vk_o_phase_word[0];",
        "  if (vk_o_phase != 0u) {",
        "    uint vk_len_row = vk_o_lens[vk_row] & " + SATURATED + "u; // the top bit: a row phase 0 flagged",
        "    vk_o_end = min(vk_o_blocks[vk_row / gl_WorkGroupSize.x] + vk_o_local[vk_row], " + SATURATED + "u);",
        "    vk_o_start = vk_o_end - min(vk_len_row, vk_o_end);",
        "    vk_out[vk_row + 1u] = int(vk_o_end);",
        "    if (vk_row == 0u) { vk_out[0] = 0; }",
        "    vk_o_fits = vk_o_end <= uint(vk_o_data.length()) * 4u;",
        "    if (!vk_o_fits) { atomicMax(vk_o_status[" + NEED + "], vk_o_end); }",
        "    vk_o_at = vk_o_start;",
        "    if (vk_o_lens[vk_row] > " + SATURATED + "u) { return; } // null, or for call(): nothing to write",
        "  }");
  }

  /** Lines of main after the call: the result's bytes, the row's length (phase 0) and its status. */
  static List<String> afterCall(KernelSignature sig, String all) {
    List<String> l = new ArrayList<>();
    if (varResult(sig)) {
      l.add("  if (vk_result.src == -2) { vk_o_flag(1u); }");
      l.add("  vk_out_str(vk_result);");
      l.add("  if (vk_o_phase == 0u) {");
      l.add("    if (vk_o_utf != 0) { vk_o_flag(4u); }");
      l.add("    if (vk_o_at > " + MAX_ROW_BYTES + "u) { vk_o_flag(5u); }");
      l.add("    vk_o_lens[vk_row] = vk_o_state == 0u ? vk_o_at : 2147483648u; // flagged: no bytes, and no phase 1");
      l.add("    if (vk_o_state != 0u) { vk_o_report(vk_row, vk_o_state); }");
      l.add("  } else if (vk_o_fits && (vk_o_state == 0u ? vk_o_over || vk_o_at != vk_o_end : vk_o_end != vk_o_start)) {");
      l.add("    vk_o_report(vk_row, 5u); // phase 1 wrote otherwise than phase 0 measured");
      l.add("  }");
    } else if (status(sig, all)) {
      l.add("  if (vk_o_state != 0u) { vk_o_report(vk_row, vk_o_state); }");
    }
    return l;
  }

  /** Declares the buffers {@link #declarations} binds, from {@code binding}, in its order. */
  static void addBuffers(Program.Builder b, KernelSignature sig, String all, int binding) {
    if (!helpers(sig, all) || !status(sig, all)) {
      return;
    }
    b.buffer(new BufferDecl("status", 0, binding, MemoryKind.STORAGE, ElementType.UINT32, false, 0));
    b.buffer(BufferDecl.output("flagged", binding + 1, ElementType.UINT32));
    if (varResult(sig)) {
      b.buffer(new BufferDecl("phase", 0, binding + 2, MemoryKind.READ_ONLY, ElementType.UINT32, false, 0));
      b.buffer(new BufferDecl("lens", 0, binding + 3, MemoryKind.STORAGE, ElementType.UINT32, false, 0));
      b.buffer(new BufferDecl("local", 0, binding + 4, MemoryKind.READ_ONLY, ElementType.UINT32, false, 0));
      b.buffer(new BufferDecl("blocks", 0, binding + 5, MemoryKind.READ_ONLY, ElementType.UINT32, false, 0));
      b.buffer(BufferDecl.output("data", binding + 6, ElementType.UINT32));
    }
  }

  private static Map<String, String> sections() {
    Map<String, String> s = sections;
    if (s == null) {
      String text;
      try (InputStream in = StringGlsl.class.getResourceAsStream(RESOURCE)) {
        if (in == null) {
          throw new IllegalStateException(RESOURCE + " is missing from the classpath");
        }
        text = new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("\r\n", "\n");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      s = new HashMap<>();
      String[] parts = text.split("(?m)^//@section ");
      for (int i = 1; i < parts.length; i++) {
        int nl = parts[i].indexOf('\n');
        s.put(parts[i].substring(0, nl).strip(), parts[i].substring(nl + 1).stripTrailing());
      }
      sections = Map.copyOf(s);
    }
    return s;
  }
}
