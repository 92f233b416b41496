package io.vkspark.gpu.column;

/**
 * Puts a guard into every loop of a GPU UDF body, so that no loop runs unseen: the condition of
 * each {@code for (init; cond; step)}, {@code while (cond)} and {@code do ... while (cond);}
 * becomes {@code vk_tick() && (cond)} (an empty {@code for} condition becomes {@code vk_tick()}).
 *
 * <p>The generated {@code vk_tick()} reads, on a loop's first pass and every 1,024th after, an
 * abort word the host sets on a kernel timeout or a cancelled task; once set, every guarded loop
 * ends, so the kernel stops within about 1,024 iterations. Rows a driver's loop limit may have cut
 * short (lavapipe) are found by a canary loop after the call ({@link #countTruncatedRow()}) and are
 * never returned. See {@link ColumnKernel}.
 *
 * <p>The rewrite only inserts text inside lines, never a line break, so compile errors keep their
 * body line numbers. Comments are skipped. The body is expected to have passed the lexical check
 * (balanced brackets, no preprocessor); on anything it cannot parse it leaves the rest unchanged
 * and the compiler reports the problem. A condition that declares a variable
 * ({@code while (bool b = f())}) cannot be guarded and fails to compile.
 */
public final class LoopGuard {
  /** The guard function's name; generated only for bodies with loops. */
  static final String TICK = "vk_tick()";

  /** Byte offsets of the words of the control buffer, one per buffer set (see {@link #controlBlock}). */
  public static final int ABORT_OFFSET = 0;
  public static final int CANARY_OFFSET = 4;
  /** Passes of the canary loop on a device with a loop limit. */
  public static final int CANARY_PASSES = 2;
  public static final int TRUNCATED_OFFSET = 8;
  /** Rows whose body called {@code jthrow()} (see {@link ColumnKernel}). */
  public static final int THROWN_OFFSET = 12;
  public static final int CONTROL_BYTES = 16;
  /** Iterations between two reads of the abort word. */
  static final int ABORT_CHECK_EVERY = 1024;

  private LoopGuard() {}

  /**
   * The control block every column kernel declares, one array of four words (the shape the seal
   * accepts for every generated buffer): {@code vk_control[0]} the abort word (the host sets it to
   * stop a running kernel), {@code [1]} the canary bound (2 on a device with a loop limit, else 0)
   * and {@code [2]} the rows whose loops the limit may have cut, counted by the shader. Coherent and
   * volatile: the host writes the abort word while the dispatch runs.
   */
  static String controlBlock(int binding) {
    return "layout(std430, set = 0, binding = " + binding + ") coherent volatile buffer VkControl {"
        + " uint vk_control[" + (CONTROL_BYTES / 4) + "]; };";
  }

  /** The guard, declared before the UDF's function when its body has loops. */
  static String tickFunction() {
    // Checks the abort word on the first tick and every 1,024th after; once aborted, every later
    // tick is false too, so outer loops end as well as the inner one.
    return "uint vk_ticks = 0u;\n"
        + "bool vk_stopped = false;\n"
        + "bool vk_tick() {\n"
        + "  vk_ticks++;\n"
        + "  if ((vk_ticks & " + (ABORT_CHECK_EVERY - 1) + "u) == 1u && vk_control[0] != 0u) { vk_stopped = true; }\n"
        + "  return !vk_stopped;\n"
        + "}";
  }

  /**
   * After the call in main, on a device with a loop limit: a canary loop of {@code vk_control[1]} (2)
   * passes. llvmpipe's limiter is one counter per shader invocation of a SIMD vector, shared by
   * every loop (passes with no active lane count too) and never reset; once it has run out, every
   * loop ends after one pass. So a canary that does not complete both passes proves the limiter
   * ran out, and the row (with the others of its vector) may have been cut: it is counted, and
   * the host discards the batch. Conservative: a limiter that ran out exactly at a loop's natural
   * end also counts.
   */
  static String countTruncatedRow() {
    return "  uint vk_passes = 0u;\n"
        + "  for (uint vk_c = 0u; vk_c < vk_control[1]; vk_c++) { vk_passes++; }\n"
        + "  if (vk_passes != vk_control[1]) { atomicAdd(vk_control[2], 1u); }";
  }

  /** A rewritten body and how many loops it guards. */
  record Guarded(String body, int loops) {}

  static Guarded rewrite(String body) {
    StringBuilder out = new StringBuilder(body.length() + 64);
    int loops = 0;
    int i = 0;
    int n = body.length();
    int copied = 0;
    while (i < n) {
      char c = body.charAt(i);
      if (c == '/' && i + 1 < n && (body.charAt(i + 1) == '/' || body.charAt(i + 1) == '*')) {
        i = skipComment(body, i);
        continue;
      }
      if (!Character.isJavaIdentifierStart(c)) {
        i++;
        continue;
      }
      int end = i;
      while (end < n && Character.isJavaIdentifierPart(body.charAt(end))) {
        end++;
      }
      String word = body.substring(i, end);
      boolean isFor = word.equals("for");
      if ((isFor || word.equals("while")) && (i == 0 || !Character.isJavaIdentifierPart(body.charAt(i - 1)))) {
        int open = skipSpace(body, end);
        if (open < n && body.charAt(open) == '(') {
          int close = matching(body, open);
          if (close < 0) {
            break;
          }
          int condStart;
          int condEnd;
          if (isFor) {
            int first = topLevelSemicolon(body, open + 1, close);
            int second = first < 0 ? -1 : topLevelSemicolon(body, first + 1, close);
            if (second < 0) {
              i = close + 1;
              continue;
            }
            condStart = first + 1;
            condEnd = second;
          } else {
            condStart = open + 1;
            condEnd = close;
          }
          out.append(body, copied, condStart);
          if (isBlank(body, condStart, condEnd)) {
            out.append(' ').append(TICK).append(body, condStart, condEnd);
          } else {
            out.append(TICK).append(" && (").append(body, condStart, condEnd).append(')');
          }
          copied = condEnd;
          loops++;
          // Continue inside the parentheses: a for's step or init cannot hold a loop, but scanning
          // on from the condition's end keeps nested text (comments) handled the same way.
          i = condEnd;
          continue;
        }
      }
      i = end;
    }
    out.append(body, copied, n);
    return new Guarded(out.toString(), loops);
  }

  private static boolean isBlank(String s, int from, int to) {
    for (int i = from; i < to; i++) {
      if (!Character.isWhitespace(s.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  /** Index after the comment starting at {@code i} (an unclosed one runs to the end). */
  private static int skipComment(String s, int i) {
    int end = GlslSource.commentEnd(s, i);
    return end < 0 ? s.length() : end;
  }

  private static int skipSpace(String s, int i) {
    while (i < s.length()) {
      char c = s.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '/' && i + 1 < s.length() && (s.charAt(i + 1) == '/' || s.charAt(i + 1) == '*')) {
        i = skipComment(s, i);
      } else {
        break;
      }
    }
    return i;
  }

  /** Index of the ')' matching the '(' at {@code open}, skipping comments; -1 if none. */
  private static int matching(String s, int open) {
    int depth = 0;
    int i = open;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c == '/' && i + 1 < s.length() && (s.charAt(i + 1) == '/' || s.charAt(i + 1) == '*')) {
        i = skipComment(s, i);
        continue;
      }
      if (c == '(') {
        depth++;
      } else if (c == ')' && --depth == 0) {
        return i;
      }
      i++;
    }
    return -1;
  }

  /** First ';' in {@code [from, to)} outside nested brackets and comments; -1 if none. */
  private static int topLevelSemicolon(String s, int from, int to) {
    int depth = 0;
    int i = from;
    while (i < to) {
      char c = s.charAt(i);
      if (c == '/' && i + 1 < to && (s.charAt(i + 1) == '/' || s.charAt(i + 1) == '*')) {
        i = skipComment(s, i);
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        depth++;
      } else if (c == ')' || c == ']' || c == '}') {
        depth--;
      } else if (c == ';' && depth == 0) {
        return i;
      }
      i++;
    }
    return -1;
  }
}
