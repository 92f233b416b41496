package io.vkspark.gpu.column;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.MemoryKind;
import io.vkspark.gpu.Program;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The generated side of variable-width arguments (string, binary, array&lt;float|double|int&gt;):
 * their extra buffers and the accessor functions a body calls instead of reading a value.
 *
 * <p>Layout (Arrow's): argument {@code i} binds its int32 offsets (rows + 1, rebased to the data
 * staged for the dispatch) at binding {@code i + 1}, as a fixed-width argument binds its values;
 * its data (bytes packed four to a {@code uint}, or the array elements) and, for arrays, the
 * element validity bits follow the control buffer, in argument order.
 *
 * <p>Accessors, for an argument {@code s} of type string or binary: {@code int s_length()} (bytes)
 * and {@code uint s_byte(int i)} (0..255); for an argument {@code v} of an array type:
 * {@code int v_length()}, {@code T v_at(int i)} ({@code T} = float, double or int) and
 * {@code bool v_isNull(int i)}. An index outside {@code [0, length)} reads 0 (and is null); a null
 * element reads 0. Every read is also checked against the length of its buffer, so a body never
 * reads outside its data whatever the offsets say.
 */
final class VarArgs {
  private VarArgs() {}

  /** Bytes per element: 1 for string and binary, the element width for arrays. */
  static int elementBytes(SqlType t) {
    return switch (t) {
      case STRING, BINARY -> 1;
      case ARRAY_FLOAT, ARRAY_INT -> 4;
      case ARRAY_DOUBLE -> 8;
      default -> throw new IllegalArgumentException(t + " is not variable-width");
    };
  }

  static boolean isArray(SqlType t) {
    return t.isVariableWidth() && t != SqlType.STRING && t != SqlType.BINARY;
  }

  /** The buffers after the control buffer for argument type {@code t}: data, then element validity for arrays. */
  static int extraBuffers(SqlType t) {
    return !t.isVariableWidth() ? 0 : isArray(t) ? 2 : 1;
  }

  /** The accessor functions the body sees for argument {@code a}, as {@code type name(params)}. */
  static List<String> accessors(KernelSignature.Arg a) {
    String n = a.name();
    if (!isArray(a.type())) {
      return List.of("int " + n + "_length()", "uint " + n + "_byte(int i)");
    }
    return List.of("int " + n + "_length()", a.type().glsl() + " " + n + "_at(int i)", "bool " + n + "_isNull(int i)");
  }

  /** What the body sees of argument {@code a}: its GLSL parameter, or its accessors. */
  static String describe(KernelSignature.Arg a) {
    return !a.type().isVariableWidth() ? a.type().glsl() + " " + a.name()
        : isArray(a.type()) ? String.join(", ", accessors(a))
        : "vk_string " + a.name() + " (" + String.join(", ", accessors(a)) + ")";
  }

  /**
   * Refuses array results and accessor names that another argument already uses.
   *
   * @throws GpuException INVALID_ARGUMENT naming the UDF
   */
  static void check(String udf, List<KernelSignature.Arg> args, SqlType result) {
    if (isArray(result)) {
      throw GpuException.of(Code.UNSUPPORTED, "GPU UDF '" + udf + "' returns " + result.sqlName()
              + ": array types are supported as arguments only.",
          "return a fixed-width type (int, bigint, float, double, boolean, date, timestamp), string or binary.");
    }
    Set<String> names = new HashSet<>();
    args.forEach(a -> names.add(a.name()));
    for (KernelSignature.Arg a : args) {
      if (!a.type().isVariableWidth()) {
        continue;
      }
      for (String acc : accessors(a)) {
        String fn = acc.substring(acc.indexOf(' ') + 1, acc.indexOf('('));
        if (names.contains(fn)) {
          throw GpuException.of(Code.INVALID_ARGUMENT, "argument '" + fn + "' of GPU UDF '" + udf
                  + "' has the name of the accessor vkspark generates for " + a.type().sqlName() + " argument '"
                  + a.name() + "'.", "rename argument '" + fn + "'.");
        }
      }
    }
  }

  /** Buffer declarations, per-row globals and accessors, pasted before {@code vk_udf}. */
  static List<String> declarations(KernelSignature sig, int firstBinding) {
    List<String> lines = new ArrayList<>();
    int b = firstBinding;
    for (int i = 0; i < sig.args().size(); i++) {
      KernelSignature.Arg a = sig.args().get(i);
      SqlType t = a.type();
      if (!t.isVariableWidth()) {
        continue;
      }
      String data = "vk_data" + i;
      String start = "vk_start" + i;
      String len = "vk_len" + i;
      String n = a.name();
      boolean array = isArray(t);
      lines.add("layout(std430, set = 0, binding = " + b++ + ") readonly buffer VkData" + i + " { "
          + (array ? t.glsl() : "uint") + " " + data + "[]; };");
      if (array) {
        lines.add("layout(std430, set = 0, binding = " + b++ + ") readonly buffer VkValid" + i + " { uint vk_valid" + i + "[]; };");
      }
      lines.add("int " + start + " = 0;");
      lines.add("int " + len + " = 0;");
      lines.add("// " + t.sqlName() + " argument '" + n + "'");
      lines.add("int " + n + "_length() { return " + len + "; }");
      if (!array) {
        lines.add("uint " + n + "_byte(int vk_k) {");
        lines.add("  if (vk_k < 0 || vk_k >= " + len + ") { return 0u; }");
        lines.add("  uint vk_p = uint(" + start + " + vk_k);");
        lines.add("  uint vk_w = vk_p >> 2u;");
        lines.add("  if (vk_w >= uint(" + data + ".length())) { return 0u; }");
        lines.add("  return (" + data + "[vk_w] >> ((vk_p & 3u) << 3u)) & 255u;");
        lines.add("}");
      } else {
        String zero = switch (t) {
          case ARRAY_FLOAT -> "0.0";
          case ARRAY_DOUBLE -> "0.0lf";
          default -> "0";
        };
        lines.add("bool " + n + "_isNull(int vk_k) {");
        lines.add("  if (vk_k < 0 || vk_k >= " + len + ") { return true; }");
        lines.add("  uint vk_p = uint(" + start + " + vk_k);");
        lines.add("  uint vk_w = vk_p >> 5u;");
        lines.add("  if (vk_w >= uint(vk_valid" + i + ".length())) { return true; }");
        lines.add("  return ((vk_valid" + i + "[vk_w] >> (vk_p & 31u)) & 1u) == 0u;");
        lines.add("}");
        lines.add(t.glsl() + " " + n + "_at(int vk_k) {");
        lines.add("  if (" + n + "_isNull(vk_k)) { return " + zero + "; }");
        lines.add("  uint vk_p = uint(" + start + " + vk_k);");
        lines.add("  if (vk_p >= uint(" + data + ".length())) { return " + zero + "; }");
        lines.add("  return " + data + "[vk_p];");
        lines.add("}");
      }
    }
    return lines;
  }

  /** Lines of {@code main} that set each variable-width argument's start and length for row {@code vk_row}. */
  static List<String> rowSetup(KernelSignature sig) {
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < sig.args().size(); i++) {
      if (sig.args().get(i).type().isVariableWidth()) {
        lines.add("  vk_start" + i + " = max(vk_in" + i + "[vk_row], 0);");
        lines.add("  vk_len" + i + " = max(vk_in" + i + "[vk_row + 1u] - vk_start" + i + ", 0);");
      }
    }
    return lines;
  }

  /** Declares the extra buffers in {@code b}, from {@code firstBinding}, in the order {@link #declarations} binds them. */
  static void addBuffers(Program.Builder b, KernelSignature sig, int firstBinding) {
    int binding = firstBinding;
    for (int i = 0; i < sig.args().size(); i++) {
      SqlType t = sig.args().get(i).type();
      if (!t.isVariableWidth()) {
        continue;
      }
      ElementType data = switch (t) {
        case ARRAY_FLOAT -> ElementType.FLOAT32;
        case ARRAY_DOUBLE -> ElementType.FLOAT64;
        case ARRAY_INT -> ElementType.INT32;
        default -> ElementType.UINT32;
      };
      b.buffer(new BufferDecl("data" + i, 0, binding++, MemoryKind.READ_ONLY, data, false, 0));
      if (isArray(t)) {
        b.buffer(new BufferDecl("valid" + i, 0, binding++, MemoryKind.READ_ONLY, ElementType.UINT32, false, 0));
      }
    }
  }
}
