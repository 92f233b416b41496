package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The lexical check a UDF body passes before vkspark pastes it into a shader: no preprocessor, no
 * line continuations, brackets that nest and close within the body, and none of the names that
 * belong to the generated code or to storage declarations. Together these keep a body inside its
 * function: it cannot close {@code vk_udf} (or the {@code return (} of an expression body), declare
 * buffers, enable extensions or reach the generated variables. The compiled module is sealed again
 * afterwards ({@link io.vkspark.gpu.internal.SpirvSeal}); this check gives the user the line.
 */
final class BodyCheck {
  private static final Pattern IDENTIFIER = Pattern.compile("\\b[A-Za-z_][A-Za-z0-9_]*");
  /** Library functions under the generated prefix that bodies may call (vkmath; the string API is {@link StringGlsl#PUBLIC}). */
  private static final Set<String> PUBLIC_VK = Set.of("vk_norm_cdf", "vk_norm_pdf");
  /** Storage and interface keywords: a body declares locals only. */
  private static final Set<String> STORAGE = Set.of("layout", "buffer", "uniform", "shared", "coherent", "volatile",
      "restrict", "readonly", "writeonly", "attribute", "varying", "subroutine", "invariant", "nonuniformEXT");
  /** Built-ins that synchronise invocations: a body runs for one row and may return early. */
  private static final Set<String> SYNC = Set.of("barrier", "memoryBarrier", "memoryBarrierBuffer",
      "memoryBarrierShared", "memoryBarrierImage", "memoryBarrierAtomicCounter", "groupMemoryBarrier",
      "subgroupBarrier", "subgroupMemoryBarrier", "subgroupMemoryBarrierBuffer", "subgroupMemoryBarrierShared",
      "subgroupMemoryBarrierImage", "controlBarrier");

  private BodyCheck() {}

  /**
   * Checks {@code body} of the UDF {@code sig}.
   *
   * @throws GpuException COMPILE naming the UDF, the line of the body and what is not allowed
   */
  static void check(KernelSignature sig, String body) {
    String text = lines(body);
    String[] lines = text.split("\n", -1);
    char[] code = withoutComments(sig, text, lines);
    Deque<int[]> open = new ArrayDeque<>(); // {char, line}
    int line = 1;
    for (int i = 0; i < code.length; i++) {
      char c = code[i];
      switch (c) {
        case '\n' -> line++;
        case '#' -> throw refuse(sig, lines, line, "a preprocessor directive ('#')",
            "remove it: vkspark declares the version, extensions and helpers; use a const local instead of #define");
        case '(', '[', '{' -> open.push(new int[] {c, line});
        case ')', ']', '}' -> {
          char want = c == ')' ? '(' : c == ']' ? '[' : '{';
          if (open.isEmpty() || open.peek()[0] != want) {
            throw refuse(sig, lines, line, "a '" + c + "' that closes " + (open.isEmpty()
                    ? "nothing the body opened (it would close the code vkspark generates around the body)"
                    : "the '" + (char) open.peek()[0] + "' of line " + open.peek()[1]),
                "balance the brackets within the body");
          }
          open.pop();
        }
        default -> {
          if (c != '\t' && c != ' ' && (c < 0x21 || c > 0x7e)) {
            throw refuse(sig, lines, line, "the character U+" + String.format(Locale.ROOT, "%04X", (int) c)
                + " outside a comment", "write the body in ASCII; non-ASCII text may stand in comments only");
          }
        }
      }
    }
    if (!open.isEmpty()) {
      int[] last = open.peek();
      throw refuse(sig, lines, last[1], "a '" + (char) last[0] + "' that is never closed",
          "close it within the body");
    }
    Matcher m = IDENTIFIER.matcher(new String(code));
    while (m.find()) {
      String id = m.group();
      String why = reserved(id);
      if (why != null) {
        int at = 1 + (int) new String(code, 0, m.start()).chars().filter(ch -> ch == '\n').count();
        throw refuse(sig, lines, at, "'" + id + "', " + why,
            "rename it, or compute without it: the body sees its arguments and local variables only");
      }
    }
  }

  /** The body with CRLF and bare CR as LF: glslang ends a line at either, so the generated shader must too. */
  static String lines(String body) {
    return body.replace("\r\n", "\n").replace('\r', '\n');
  }

  private static String reserved(String id) {
    String lower = id.toLowerCase(Locale.ROOT);
    if ((lower.startsWith("vk_") && !PUBLIC_VK.contains(id) && !StringGlsl.PUBLIC.contains(id)) || lower.startsWith("vkm_") || lower.startsWith("vkj_")) {
      return "a name reserved for the code vkspark generates";
    }
    if (id.startsWith("Vk") && id.length() > 2 && Character.isUpperCase(id.charAt(2))) {
      return "a name reserved for the blocks vkspark generates";
    }
    if (id.startsWith("gl_")) {
      return "a GLSL built-in variable (the body computes one row from its arguments)";
    }
    if (STORAGE.contains(id)) {
      return "a storage or interface keyword (a body declares local variables only)";
    }
    if (SYNC.contains(id)) {
      return "a barrier (invocations of other rows may already have returned)";
    }
    return null;
  }

  /** The body with comments blanked (newlines kept, so lines still count); refuses backslashes. */
  private static char[] withoutComments(KernelSignature sig, String text, String[] lines) {
    char[] out = text.toCharArray();
    int line = 1;
    for (char c : out) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
        throw refuse(sig, lines, line, "the control character U+" + String.format(Locale.ROOT, "%04X", (int) c),
            "remove it");
      }
      line += c == '\n' ? 1 : 0;
    }
    line = 1;
    int i = 0;
    while (i < out.length) {
      int end = GlslSource.commentEnd(text, i);
      if (end == i) {
        if (out[i] == '\\') {
          throw refuse(sig, lines, line, "a backslash (a line continuation for the preprocessor)", "remove it");
        }
        line += out[i++] == '\n' ? 1 : 0;
        continue;
      }
      boolean block = out[i + 1] == '*';
      int startLine = line;
      for (int stop = end < 0 ? out.length : end; i < stop; i++) {
        if (out[i] == '\\') {
          throw refuse(sig, lines, line, block ? "a backslash in a comment"
              : "a backslash in a comment (it would continue the comment onto the next line)", "remove it");
        }
        if (out[i] == '\n') {
          line++;
        } else {
          out[i] = ' ';
        }
      }
      if (end < 0) {
        throw refuse(sig, lines, startLine, "a '/*' comment that is never closed", "close it with */");
      }
    }
    return out;
  }

  private static GpuException refuse(KernelSignature sig, String[] lines, int line, String what, String fix) {
    String shown = line >= 1 && line <= lines.length ? " [" + lines[line - 1].strip() + "]" : "";
    return GpuException.of(Code.COMPILE, "GPU UDF '" + sig.name() + "' is not allowed: line " + line
        + " of its body" + shown + " contains " + what + ".", fix + " (line " + line + " of the body of '"
        + sig.name() + "').");
  }
}
