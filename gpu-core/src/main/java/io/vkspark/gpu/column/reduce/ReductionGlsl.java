package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction.Aggregate;
import io.vkspark.gpu.column.reduce.ColumnReduction.Function;
import java.util.List;

/**
 * The GLSL pieces every reduction pass shares ({@link UngroupedShader}, {@link GroupedShader}):
 * one place for the params block the kernels also bind, Spark's order of doubles and the choice
 * between int64 and double accumulators, so the passes cannot disagree on them.
 */
final class ReductionGlsl {
  /** The first lines of every generated reduction shader. */
  static final List<String> PREAMBLE = List.of("#version 450",
      "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require");
  /**
   * The kernels' params buffer (binding 0): rows, a bit per call saying its validity buffer holds
   * nulls, a bit per row filter input saying the same ({@link RowFilterGlsl}).
   */
  static final String PARAMS = "layout(std140, set = 0, binding = 0) uniform VkParams { uint vk_rows; uint vk_nulls;"
      + " uint vk_fnulls; uint vk_pad2; uvec4 vk_groups; };";
  /**
   * Spark's order of doubles: NaN (tested on the bits) above everything, {@code -0.0 == 0.0}; and
   * {@code vk_f2d}, a float widened to double exactly as Java's {@code (double) f} on every device.
   * {@code double(f)} is a floating-point conversion, which a device without
   * {@code shaderDenormPreserveFloat32} (the H200) may flush to zero for a subnormal {@code f};
   * {@code vk_f2d} builds the double from the float's bits (sign, exponent rebiased by
   * {@code 1023 - 127}, significand shifted by 29; Inf and NaN keep an all-ones exponent), and a
   * subnormal as its integer significand times {@code 2^-149}, both exact.
   */
  static final List<String> ORDER = List.of("bool vk_isnan(double x) { uvec2 u = unpackDouble2x32(x);"
          + " return (u.y & 0x7ff00000u) == 0x7ff00000u && ((u.y & 0xfffffu) | u.x) != 0u; }",
      "bool vk_gt(double x, double y) { return vk_isnan(x) ? !vk_isnan(y) : (!vk_isnan(y) && x > y); }",
      "double vk_f2d(float f) { uint u = floatBitsToUint(f); uint s = u & 0x80000000u; uint e = (u >> 23u) & 0xffu;"
          + " uint m = u & 0x7fffffu; if (e == 0u) { precise double d = double(m) * packDouble2x32(uvec2(0u, 0x36a00000u));"
          + " return s != 0u ? -d : d; }"
          + " return packDouble2x32(uvec2(m << 29u, s | ((e == 0xffu ? 0x7ffu : e + 896u) << 20u) | (m >> 3u))); }");

  private ReductionGlsl() {
  }

  /** Declares each read call's result and validity buffer from binding {@code b} on; returns the next binding. */
  static int bindReads(List<String> l, int[] reads, List<SqlType> types, int b) {
    for (int c : reads) {
      l.add("layout(std430, set = 0, binding = " + b++ + ") readonly buffer VkV" + c + " { "
          + types.get(c).bufferElement() + " vk_v" + c + "[]; };");
      l.add("layout(std430, set = 0, binding = " + b++ + ") readonly buffer VkN" + c + " { uint vk_n" + c + "[]; };");
    }
    return b;
  }

  /** Whether the aggregate accumulates an int64 (else a double). */
  static boolean integral(Aggregate a, List<SqlType> types) {
    if (a.argument() == null || a.function() == Function.COUNT || a.function() == Function.AVG) {
      return true; // COUNT: the value is unused
    }
    SqlType t = a.argument().type(types);
    return t == SqlType.INT || t == SqlType.BIGINT;
  }

  /** Whether the aggregate's running value is an int64 (else a double; AVG sums doubles). */
  static boolean whole(Aggregate a, List<SqlType> types) {
    return integral(a, types) && a.function() != Function.AVG;
  }

  /** Whether {@code e} or an operand of it is a float or double. */
  static boolean floating(DeviceExpr e, List<SqlType> types) {
    SqlType t = e.type(types);
    return t == SqlType.FLOAT || t == SqlType.DOUBLE || e.children().stream().anyMatch(c -> floating(c, types));
  }

  /** Whether an aggregate accumulates a double (the shader then needs double arrays and {@link #ORDER}). */
  static boolean anyDouble(List<Aggregate> aggs, List<SqlType> types) {
    return aggs.stream().anyMatch(a -> !integral(a, types) || a.function() == Function.AVG);
  }

  /** Whether an argument expression computes with floats or doubles (the shader then needs {@link DeviceExprGlsl#HELPERS}). */
  static boolean exprFloating(List<Aggregate> aggs, List<SqlType> types) {
    return aggs.stream().anyMatch(a -> ArgumentGlsl.computed(a) && floating(a.argument(), types));
  }

  /**
   * GLSL for "{@code x} replaces {@code v}" in a MIN or MAX ({@code whole}: int64 values, else
   * doubles in Spark's order, NaN above everything); equal values keep {@code v}, the first.
   */
  static String better(Function f, boolean whole, String x, String v) {
    boolean max = f == Function.MAX;
    return whole ? x + (max ? " > " : " < ") + v : max ? "vk_gt(" + x + ", " + v + ")" : "vk_gt(" + v + ", " + x + ")";
  }

  /** The calls whose results the aggregates read, ascending. */
  static int[] reads(List<Aggregate> aggs) {
    return aggs.stream().filter(a -> a.argument() != null).flatMap(a -> a.argument().calls().stream())
        .mapToInt(Integer::intValue).distinct().sorted().toArray();
  }
}
