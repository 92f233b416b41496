package io.vkspark.gpu.column;

import io.vkspark.gpu.CompileResult;
import io.vkspark.gpu.internal.GlslCompiler;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.internal.SpirvModule;
import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Where GLSL means something else than Java, for a UDF whose {@code call()} is its Java twin: the
 * prelude of Java-semantics helpers ({@code jrem}, {@code jdiv}, {@code jmin}, {@code jmax},
 * {@code jint}, {@code jlong}, {@code jshl}, {@code jshr}, {@code jushr}) and the check that finds,
 * in the compiled body, operations whose result GLSL leaves undefined or defines differently.
 *
 * <p>The check reads an unoptimized module with debug information (so {@code vk_udf} and each
 * instruction's source line are known) and scans the instructions of {@code vk_udf} only: the
 * generated code and the helpers are not the user's. A remainder ({@code %}) is refused, because
 * GPUs really disagree on it (NVIDIA takes the divisor's sign); division by a non-constant,
 * float {@code min}/{@code max}/{@code clamp}, float-to-integer conversion and shifts by a
 * non-constant or too wide count are warnings. See docs/GLSL-SEMANTICS.md.
 */
final class JavaSemantics {
  private static final String RESOURCE = "/io/vkspark/gpu/glsl/vkjava.glsl";
  private static final Pattern CALLS_HELPER = Pattern.compile("\\bj(rem|div|min|max|int|long|shl|shr|ushr)\\s*\\(");
  private static final Pattern USES_INT64 = Pattern.compile(
      "\\b(u?int64_t|[iu]64vec[234])\\b|\\b[0-9]+[uU]?[lL]\\b|\\b0[xX][0-9a-fA-F]+[uU]?[lL]\\b|\\bjlong\\s*\\(");
  private static final Pattern USES_DOUBLE = Pattern.compile("\\bdouble\\b|\\bdvec[234]\\b|[0-9.]lf\\b|[0-9.]LF\\b");
  /** Tokens without which none of the checked operations can occur (comments removed first). */
  private static final Pattern SUSPECT = Pattern.compile(
      "[%/\\[]|<<|>>|\\b(min|max|clamp|u?int(8|16|32|64)?(_t)?|[iu](8|16|64)?vec[234])\\s*\\(");
  private static final Map<String, List<String>> ANALYSED = new ConcurrentHashMap<>();
  private static volatile Map<String, String> sections;

  // opcodes and GLSL.std.450 instructions read here
  private static final int OP_NAME = 5;
  private static final int OP_LINE = 8;
  private static final int OP_EXT_INST_IMPORT = 11;
  private static final int OP_EXT_INST = 12;
  private static final int OP_TYPE_INT = 21;
  private static final int OP_TYPE_FLOAT = 22;
  private static final int OP_TYPE_VECTOR = 23;
  private static final int OP_CONSTANT = 43;
  private static final int OP_FUNCTION = 54;
  private static final int OP_FUNCTION_END = 56;
  private static final int OP_NO_LINE = 317;
  private static final int OP_VARIABLE = 59;
  private static final int OP_ACCESS_CHAIN = 65;
  private static final int OP_IN_BOUNDS_ACCESS_CHAIN = 66;
  private static final int OP_VECTOR_EXTRACT_DYNAMIC = 77;
  private static final int OP_VECTOR_INSERT_DYNAMIC = 78;
  private static final int OP_BITWISE_AND = 199;

  private JavaSemantics() {}

  /** The helper lines to paste before {@code vk_udf}: none unless the body calls a helper. */
  static List<String> prelude(KernelSignature sig, String body) {
    if (!CALLS_HELPER.matcher(body).find()) {
      return List.of();
    }
    boolean int64 = sig.argTypes().stream().anyMatch(t -> t.glsl().equals("int64_t"))
        || sig.result().glsl().equals("int64_t") || USES_INT64.matcher(body).find();
    boolean dbl = sig.argTypes().contains(SqlType.DOUBLE) || sig.argTypes().contains(SqlType.ARRAY_DOUBLE)
        || sig.result() == SqlType.DOUBLE
        || USES_DOUBLE.matcher(body).find();
    Map<String, String> s = sections();
    List<String> lines = new ArrayList<>();
    lines.add("// Java-semantics helpers (vkjava.glsl)");
    lines.addAll(List.of(s.get("int").split("\n")));
    if (int64) {
      lines.addAll(List.of(s.get("int64").split("\n")));
    }
    if (dbl) {
      lines.addAll(List.of(s.get("double").split("\n")));
    }
    if (int64 && dbl) {
      lines.addAll(List.of(s.get("int64+double").split("\n")));
    }
    return lines;
  }

  private static Map<String, String> sections() {
    Map<String, String> s = sections;
    if (s == null) {
      String text;
      try (InputStream in = JavaSemantics.class.getResourceAsStream(RESOURCE)) {
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

  /**
   * Finds the operations of the body whose GLSL meaning differs from Java.
   *
   * @return warnings, each naming the UDF, the body line and the helper in a {@code Fix:}
   * @throws GpuException COMPILE when the body uses {@code %}
   */
  static List<String> analyze(KernelSignature sig, String body, ColumnKernel.Generated g, Path cacheDir) {
    String text = BodyCheck.lines(body);
    String code = GlslSource.code(text);
    int percent = code.indexOf('%');
    if (percent >= 0) { // from the text too: glslang folds constant operands (and x % 0 to x) before SPIR-V
      int lead = g.expression() ? text.length() - text.stripLeading().length() : 0; // expression lines count from its text
      int line = 1 + (int) code.substring(lead, percent).chars().filter(c -> c == '\n').count();
      String[] shown = (g.expression() ? text.strip() : text).split("\n", -1);
      throw remainder(sig, "line " + line + " of its body [" + shown[Math.min(line, shown.length) - 1].strip() + "]",
          "line " + line);
    }
    if (!SUSPECT.matcher(code).find()) {
      return List.of();
    }
    String key = GlslCompiler.key(g.source(), GlslCompiler.Flavor.DEBUG);
    List<String> known = ANALYSED.get(key);
    if (known != null) {
      return known;
    }
    CompileResult r = GlslCompiler.compile(sig.shaderFileName(), g.source(), cacheDir, GlslCompiler.Flavor.DEBUG,
        spirv -> SpirvModule.parse("debug SPIR-V of GPU UDF '" + sig.name() + "'", spirv));
    if (!r.ok()) {
      throw GpuException.of(Code.COMPILE, "GPU UDF '" + sig.name() + "' compiled optimized but not for analysis: "
          + r.log().strip(), "report this with the body; it is a vkspark bug.");
    }
    List<String> warnings = scan(sig, body, g, SpirvModule.parse("GPU UDF '" + sig.name() + "'", r.spirv().get()));
    if (ANALYSED.size() > 4096) {
      ANALYSED.clear();
    }
    ANALYSED.put(key, warnings);
    return warnings;
  }

  static List<String> scan(KernelSignature sig, String body, ColumnKernel.Generated g, SpirvModule m) {
    Set<Integer> udf = new HashSet<>();
    Map<Integer, Integer> intWidth = new HashMap<>();
    Set<Integer> floatTypes = new HashSet<>();
    Map<Integer, Integer> vectorOf = new HashMap<>();
    Map<Integer, Long> constants = new HashMap<>();
    int glsl450 = -1;
    Set<Integer> local = new HashSet<>(); // Function and Private variables, and pointers into them
    Set<Integer> bounded = new HashSet<>(); // results of clamp, min and & (the user bounded them)
    for (Insn in : m.instructions()) {
      switch (in.opcode()) {
        case OP_NAME -> {
          if (m.string(in, 1).startsWith("vk_udf(")) {
            udf.add(m.operand(in, 0));
          }
        }
        case OP_EXT_INST_IMPORT -> {
          if (m.string(in, 1).equals("GLSL.std.450")) {
            glsl450 = m.operand(in, 0);
          }
        }
        case OP_TYPE_INT -> intWidth.put(m.operand(in, 0), m.operand(in, 1));
        case OP_TYPE_FLOAT -> floatTypes.add(m.operand(in, 0));
        case OP_TYPE_VECTOR -> vectorOf.put(m.operand(in, 0), m.operand(in, 1));
        case OP_VARIABLE -> {
          if (m.operand(in, 2) == 7 || m.operand(in, 2) == 6) {
            local.add(m.operand(in, 1));
          }
        }
        case OP_EXT_INST -> {
          int inst = m.has(in, 3) ? m.operand(in, 3) : -1;
          if (inst == 38 || inst == 39 || inst == 44 || inst == 45) { // UMin, SMin, UClamp, SClamp
            bounded.add(m.operand(in, 1));
          }
        }
        case OP_BITWISE_AND -> bounded.add(m.operand(in, 1));
        case OP_CONSTANT -> {
          Integer width = intWidth.get(m.operand(in, 0));
          if (width != null) {
            long v = width == 64 && m.has(in, 3)
                ? (m.operand(in, 2) & 0xffffffffL) | ((long) m.operand(in, 3) << 32)
                : width == 32 ? m.operand(in, 2) : m.operand(in, 2) & ((1L << width) - 1);
            constants.put(m.operand(in, 1), v);
          }
        }
        default -> { }
      }
    }
    if (udf.isEmpty()) {
      throw GpuException.of(Code.COMPILE, "the analysis module of GPU UDF '" + sig.name() + "' names no vk_udf.",
          "report this with the body; it is a vkspark bug.");
    }
    String text = BodyCheck.lines(body);
    String[] shown = (g.expression() ? text.strip() : text).split("\n", -1);
    Set<String> warnings = new LinkedHashSet<>();
    boolean inside = false;
    int line = -1;
    for (Insn in : m.instructions()) {
      int op = in.opcode();
      if (op == OP_FUNCTION) {
        inside = udf.contains(m.operand(in, 1));
        continue;
      }
      if (op == OP_FUNCTION_END) {
        inside = false;
        continue;
      }
      if (op == OP_LINE) {
        line = m.operand(in, 1);
        continue;
      }
      if (op == OP_NO_LINE || !inside) {
        continue;
      }
      int bodyLine = line - g.bodyFirstLine() + 1;
      String at = bodyLine >= 1 && bodyLine <= shown.length
          ? "line " + bodyLine + " of its body [" + shown[bodyLine - 1].strip() + "]" : "its body";
      String where = bodyLine >= 1 && bodyLine <= shown.length ? "line " + bodyLine : "the body";
      switch (op) {
        case 137, 138, 139 -> throw remainder(sig, at, where);
        case 134, 135 -> {
          Long d = constants.get(m.operand(in, 3));
          if (d == null || d == 0 || (op == 135 && d == -1)) {
            warnings.add(warning(sig, at, "integer division by " + (d == null ? "a value that may be 0 or -1" : d)
                + " is undefined in GLSL for a zero divisor and for MIN / -1 (Java throws or wraps)",
                "use jdiv(a, b) for Java's a / b (0 when b is 0, MIN when MIN / -1)"));
          }
        }
        case 109, 110 -> warnings.add(warning(sig, at, "a float-to-integer conversion is undefined in GLSL for NaN and"
                + " out-of-range values (Java gives 0 for NaN and saturates)",
            "use jint(x) or jlong(x) for Java's (int) x or (long) x"));
        case 194, 195, 196 -> {
          Long n = constants.get(m.operand(in, 3));
          int width = intWidth.getOrDefault(vectorOf.getOrDefault(m.operand(in, 0), m.operand(in, 0)), 32);
          if (n == null || n < 0 || n >= width) {
            String helper = op == 196 ? "jshl" : op == 195 ? "jshr" : "jushr";
            warnings.add(warning(sig, at, "a shift by " + (n == null ? "a non-constant count" : "" + n)
                    + " is undefined in GLSL when the count is negative or at least " + width
                    + " (Java masks it to " + (width == 64 ? 6 : 5) + " bits)",
                "use " + helper + "(a, n) for Java's " + (op == 196 ? "<<" : op == 195 ? ">>" : ">>>")));
          }
        }
        case OP_ACCESS_CHAIN, OP_IN_BOUNDS_ACCESS_CHAIN, OP_VECTOR_EXTRACT_DYNAMIC, OP_VECTOR_INSERT_DYNAMIC -> {
          boolean chain = op == OP_ACCESS_CHAIN || op == OP_IN_BOUNDS_ACCESS_CHAIN;
          if (chain && !local.contains(m.operand(in, 2))) {
            continue; // not the body's own memory (nothing else is reachable from a body)
          }
          if (chain) {
            local.add(m.operand(in, 1));
          }
          for (int k = chain ? 3 : op == OP_VECTOR_EXTRACT_DYNAMIC ? 3 : 4; m.has(in, k); k++) {
            int index = m.operand(in, k);
            if (!constants.containsKey(index) && !bounded.contains(index)) {
              warnings.add(warning(sig, at, "an array or vector index that is not a constant: GLSL leaves an index"
                      + " outside the array undefined (Vulkan's robustness covers buffers, not a body's own arrays;"
                      + " Java throws ArrayIndexOutOfBoundsException)",
                  "use clamp(i, 0, n - 1) as the index (or i & (n - 1) for a power of two n)"));
              break;
            }
            if (!chain) {
              break;
            }
          }
        }
        case OP_EXT_INST -> {
          int inst = m.operand(in, 3);
          boolean onFloats = floatTypes.contains(vectorOf.getOrDefault(m.operand(in, 0), m.operand(in, 0)));
          if (m.operand(in, 2) == glsl450 && onFloats && (inst == 37 || inst == 40 || inst == 43 || inst >= 79 && inst <= 81)) {
            String fn = inst == 37 || inst == 79 ? "min" : inst == 40 || inst == 80 ? "max" : "clamp";
            warnings.add(warning(sig, at, "float " + fn + " with a NaN operand may return the other operand in GLSL"
                    + " (Java's Math." + (fn.equals("clamp") ? "min/max" : fn) + " returns NaN; it also orders -0.0 < 0.0)",
                fn.equals("clamp") ? "use jmin(jmax(x, lo), hi) for Java's Math.min(Math.max(x, lo), hi)"
                    : "use j" + fn + "(a, b) for Java's Math." + fn + "(a, b)"));
          }
        }
        default -> { }
      }
    }
    return List.copyOf(warnings);
  }

  private static GpuException remainder(KernelSignature sig, String at, String where) {
    return GpuException.of(Code.COMPILE, "GPU UDF '" + sig.name() + "' uses % at " + at
            + ": GLSL leaves the remainder of negative operands undefined (NVIDIA gives it the sign of the divisor,"
            + " Java the sign of the dividend) and of a zero divisor",
        "write jrem(a, b) for Java's a % b (0 when b is 0) at " + where + " of the body of '" + sig.name() + "'.");
  }

  private static String warning(KernelSignature sig, String at, String what, String fix) {
    return "GPU UDF '" + sig.name() + "' at " + at + ": " + what + ". Fix: " + fix + ".";
  }
}
