package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * The typed signature of a GPU UDF: its name, named arguments and result type. Argument names
 * become GLSL parameter names, so they must be identifiers that GLSL does not reserve. The name is
 * the UDF's SQL name and may be any string Spark accepts ({@code geo.dist3}, {@code dist-3},
 * {@code 3d}, {@code sin}, unicode): it never enters GLSL code, only a comment in printable form
 * ({@link #printable}) and the file name shaderc reports ({@link #shaderFileName()}).
 *
 * <p>A {@code decimal(p, s)} argument or result carries its {@link DecimalSpec} beside its
 * {@link SqlType#DECIMAL} ({@code resultDecimal} is null for any other result type). The body sees
 * the unscaled {@code int64_t}, and for each decimal argument {@code x} the constants
 * {@code x_scale} and {@code x_precision} ({@code result_scale} and {@code result_precision} for a
 * decimal result), so these names cannot be argument names.
 */
public record KernelSignature(String name, List<Arg> args, SqlType result, DecimalSpec resultDecimal)
    implements Serializable {
  /** One argument: the name the body uses, its type, and for a decimal its precision and scale (else null). */
  public record Arg(String name, SqlType type, DecimalSpec decimal) implements Serializable {
    public Arg {
      Objects.requireNonNull(type, "type");
      requireDecimal("argument '" + name + "'", type, decimal);
    }

    /** An argument of a type without parameters (not DECIMAL). */
    public Arg(String name, SqlType type) {
      this(name, type, null);
    }

    /** {@code bigint}, {@code decimal(12,2)}, ... */
    public String sqlName() {
      return decimal == null ? type.sqlName() : decimal.sqlName();
    }

    /** The Arrow type of this argument's column. */
    public ArrowType arrowType() {
      return decimal == null ? type.arrowType() : decimal.arrowType();
    }
  }

  /** Every signature without a decimal result. */
  public KernelSignature(String name, List<Arg> args, SqlType result) {
    this(name, args, result, null);
  }

  /** Most arguments a signature may have (Spark's Java UDFs go to UDF22). */
  public static final int MAX_ARGS = 22;

  private static final Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  /** GLSL 4.50 keywords and reserved words, plus names the generated code uses. */
  static final Set<String> RESERVED = Set.of(
      "attribute", "const", "uniform", "varying", "buffer", "shared", "coherent", "volatile", "restrict",
      "readonly", "writeonly", "atomic_uint", "layout", "centroid", "flat", "smooth", "noperspective", "patch",
      "sample", "break", "continue", "do", "for", "while", "switch", "case", "default", "if", "else", "subroutine",
      "in", "out", "inout", "float", "double", "int", "void", "bool", "true", "false", "invariant", "precise",
      "discard", "return", "mat2", "mat3", "mat4", "dmat2", "dmat3", "dmat4", "vec2", "vec3", "vec4", "ivec2",
      "ivec3", "ivec4", "bvec2", "bvec3", "bvec4", "dvec2", "dvec3", "dvec4", "uint", "uvec2", "uvec3", "uvec4",
      "lowp", "mediump", "highp", "precision", "struct", "common", "partition", "active", "asm", "class", "union",
      "enum", "typedef", "template", "this", "resource", "goto", "inline", "noinline", "public", "static",
      "extern", "external", "interface", "long", "short", "half", "fixed", "unsigned", "superp", "input",
      "output", "hvec2", "hvec3", "hvec4", "fvec2", "fvec3", "fvec4", "filter", "sizeof", "cast", "namespace",
      "using", "main", "int64_t", "uint64_t", "int8_t", "uint8_t", "int16_t", "uint16_t", "float64_t",
      "float32_t", "row", "rows");

  public KernelSignature {
    if (name == null || name.isBlank()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a GPU UDF has " + (name == null ? "no name." : "a blank name."),
          "give it the SQL name queries call it by, e.g. black_scholes.");
    }
    Objects.requireNonNull(result, "result type of GPU UDF '" + name + "'");
    requireDecimal("the result of GPU UDF '" + name + "'", result, resultDecimal);
    args = Collections.unmodifiableList(new ArrayList<>(args));
    if (args.size() > MAX_ARGS) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + name + "' has " + args.size() + " arguments.",
          "use at most " + MAX_ARGS + ".");
    }
    Set<String> seen = new HashSet<>();
    for (Arg a : args) {
      String n = a.name();
      String problem = n == null || !IDENT.matcher(n).matches() ? "is not an identifier"
          : RESERVED.contains(n) ? "is a GLSL reserved word"
          : n.startsWith("gl_") || n.startsWith("vk_") ? "starts with a reserved prefix (gl_ or vk_)"
          : n.contains("__") ? "contains '__', which GLSL reserves"
          : !seen.add(n) ? "is used twice"
          : constantNames(args, resultDecimal).contains(n) ? "is the name of a constant vkspark gives the body (a decimal's scale or precision)"
          : null;
      if (problem != null) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "argument name '" + n + "' of GPU UDF '" + name + "' " + problem + ".",
            "rename the argument, e.g. to " + suggestion(n) + ".");
      }
    }
    VarArgs.check(name, args, result); // string, binary and array types: arguments only, accessor names free
  }

  public static KernelSignature of(String name, SqlType result, Arg... args) {
    return new KernelSignature(name, List.of(args), result);
  }

  /** A signature whose result is given as SQL text: {@code "int"}, {@code "decimal(12, 2)"}, ... */
  public static KernelSignature of(String name, String resultSqlType, Arg... args) {
    SqlType t = SqlType.parse(resultSqlType);
    return new KernelSignature(name, List.of(args), t, DecimalSpec.parse(resultSqlType).orElse(null));
  }

  public static Arg arg(String name, SqlType type) {
    return new Arg(name, type);
  }

  /** An argument whose type is given as SQL text: {@code "smallint"}, {@code "decimal(12, 2)"}, ... */
  public static Arg arg(String name, String sqlType) {
    return new Arg(name, SqlType.parse(sqlType), DecimalSpec.parse(sqlType).orElse(null));
  }

  public List<SqlType> argTypes() {
    return args.stream().map(Arg::type).toList();
  }

  /** The result type as SQL text: {@code double}, {@code decimal(12,2)}. */
  public String resultSqlName() {
    return resultDecimal == null ? result.sqlName() : resultDecimal.sqlName();
  }

  /** The Arrow type of the result column. */
  public ArrowType resultArrowType() {
    return resultDecimal == null ? result.arrowType() : resultDecimal.arrowType();
  }

  /**
   * The constants the generated shader declares for the body: {@code x_scale}, {@code x_precision}
   * for each decimal argument {@code x}, {@code result_scale}, {@code result_precision} for a
   * decimal result, as GLSL declarations.
   */
  List<String> decimalConstants() {
    List<String> out = new ArrayList<>();
    for (Arg a : args) {
      if (a.decimal() != null) {
        out.add("const int " + a.name() + "_scale = " + a.decimal().scale() + ";");
        out.add("const int " + a.name() + "_precision = " + a.decimal().precision() + ";");
      }
    }
    if (resultDecimal != null) {
      out.add("const int result_scale = " + resultDecimal.scale() + ";");
      out.add("const int result_precision = " + resultDecimal.precision() + ";");
    }
    return out;
  }

  private static Set<String> constantNames(List<Arg> args, DecimalSpec resultDecimal) {
    Set<String> out = new HashSet<>();
    for (Arg a : args) {
      if (a.decimal() != null) {
        out.add(a.name() + "_scale");
        out.add(a.name() + "_precision");
      }
    }
    if (resultDecimal != null) {
      out.add("result_scale");
      out.add("result_precision");
    }
    return out;
  }

  private static void requireDecimal(String what, SqlType type, DecimalSpec decimal) {
    if ((type == SqlType.DECIMAL) != (decimal != null)) {
      throw GpuException.of(Code.INVALID_ARGUMENT, type == SqlType.DECIMAL
              ? what + " is a decimal without precision and scale."
              : what + " is " + type.sqlName() + " but was given a decimal precision and scale (" + decimal + ").",
          type == SqlType.DECIMAL ? "give the type as decimal(p, s), e.g. KernelSignature.arg(\"price\", \"decimal(12, 2)\")."
              : "give a precision and scale only to decimal types.");
    }
  }

  /**
   * The file name given to shaderc for this UDF's shader, e.g. {@code geo_dist3-1c2d3e4f.comp}:
   * letters, digits and '_' from the name (at most 40), then a hash of the whole name, so names
   * that differ only in other characters get different files. Diagnostics are parsed as
   * {@code file:line: error:}, so the file name may hold no ':' or line end.
   */
  public String shaderFileName() {
    String safe = name.replaceAll("[^A-Za-z0-9_]", "_");
    if (safe.length() > 40) {
      safe = safe.substring(0, 40);
    }
    return safe.equals(name) ? name + ".comp" : safe + "-" + String.format("%08x", name.hashCode()) + ".comp";
  }

  /**
   * {@code s} with every character outside printable ASCII, and the backslash, written as a Java
   * escape ({@code \\n}, {@code \\u540d}): safe in a GLSL {@code //} comment, where a line end would
   * end the comment, a trailing backslash continue it onto the next line of code, and glslang may
   * refuse bytes outside ASCII.
   */
  static String printable(String s) {
    StringBuilder b = new StringBuilder(s.length());
    s.chars().forEach(c -> {
      if (c == '\\') {
        b.append("\\\\");
      } else if (c == '\n') {
        b.append("\\n");
      } else if (c == '\r') {
        b.append("\\r");
      } else if (c == '\t') {
        b.append("\\t");
      } else if (c < 0x20 || c > 0x7e) {
        b.append(String.format("\\u%04x", c));
      } else {
        b.append((char) c);
      }
    });
    return b.toString();
  }

  private static String suggestion(String n) {
    String s = n == null ? "" : n.replaceAll("[^A-Za-z0-9_]", "_").replaceAll("__+", "_").replaceFirst("^(gl_|vk_)", "");
    if (s.isEmpty() || !Character.isLetter(s.charAt(0))) {
      s = "a" + s;
    }
    return RESERVED.contains(s) ? s + "_value" : s;
  }

  /** {@code name(arg type, ...) -> type}, with the name as given: for messages, not for GLSL. */
  @Override
  public String toString() {
    return name + "(" + args.stream().map(a -> a.name() + " " + a.sqlName()).collect(Collectors.joining(", "))
        + ") -> " + resultSqlName();
  }
}
