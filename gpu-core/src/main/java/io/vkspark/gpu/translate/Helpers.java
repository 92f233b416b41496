package io.vkspark.gpu.translate;

import java.util.List;
import java.util.Map;

/**
 * The translator's own GLSL helpers, pasted before the translated functions when used. Division
 * goes through {@code vkt_ddiv}, outside the {@code precise} code: vkspark refines a kernel's plain
 * double divisions to Java's correctly rounded ones where the device's are not
 * ({@code DoubleRounding}), and its divisor is multiplied by a 1.0 the compiler cannot see, so no
 * constant divisor is folded into a multiplication by its (rounded) reciprocal. A float division is
 * a double division rounded to float, which is correctly rounded (53 >= 2 * 24 + 2 bits).
 *
 * <p>Two helpers work around lavapipe (Mesa 22.3): its double {@code roundEven} gives 1.0 for 1.5
 * (so {@code rint}, {@code floor} and {@code ceil} are computed with the 2^52 trick, exact for every
 * double), and a signed 64-bit comparison of a widened {@code int} with a constant can come out
 * wrong ({@code int64_t(0) > 17l} was true), so ordered {@code long} comparisons compare
 * unsigned after flipping the sign bits.
 */
final class Helpers {
  private Helpers() {}

  static final String ONE = GlslWriter.ONE;

  static final Map<String, String> TEXT = Map.ofEntries(
      Map.entry("vkt_ddiv", "double vkt_ddiv(double a, double b) { return a / (b * " + ONE + "); }"),
      Map.entry("vkt_fdiv", "float vkt_fdiv(float a, float b) { return float(double(a) / (double(b) * " + ONE + ")); }"),
      Map.entry("vkt_isnan", "bool vkt_isnan(double x) { uvec2 w = unpackDouble2x32(x); uint h = w.y & 0x7fffffffu;"
          + " return h > 0x7ff00000u || (h == 0x7ff00000u && w.x != 0u); }"),
      Map.entry("vkt_isinf", "bool vkt_isinf(double x) { uvec2 w = unpackDouble2x32(x);"
          + " return (w.y & 0x7fffffffu) == 0x7ff00000u && w.x == 0u; }"),
      Map.entry("vkt_isnanf", "bool vkt_isnanf(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }"),
      Map.entry("vkt_isinff", "bool vkt_isinff(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }"),
      Map.entry("vkt_dbits", "int64_t vkt_dbits(double x) { uvec2 w = unpackDouble2x32(x);"
          + " return (int64_t(w.y) << 32) | int64_t(w.x); }"),
      Map.entry("vkt_bitsd", "double vkt_bitsd(int64_t v) { return packDouble2x32(uvec2(uint(v & 0xffffffffl), uint(v >> 32))); }"),
      Map.entry("vkt_rint", "double vkt_rint(double x) { precise double big = 4503599627370496.0LF; precise double a = abs(x);"
          + " if (!(a < big)) { return x; } precise double r = (a + big) - big;"
          + " return (unpackDouble2x32(x).y & 0x80000000u) != 0u ? -r : r; }"),
      Map.entry("vkt_floor", "double vkt_floor(double x) { double r = vkt_rint(x); return r > x ? r - 1.0LF : r; }"),
      Map.entry("vkt_ceil", "double vkt_ceil(double x) { double r = vkt_rint(x); return r < x ? r + 1.0LF : r; }"),
      Map.entry("vkt_lcmp", "int vkt_lcmp(int64_t a, int64_t b) { uint64_t x = uint64_t(a) ^ 0x8000000000000000ul;"
          + " uint64_t y = uint64_t(b) ^ 0x8000000000000000ul; return x < y ? -1 : x > y ? 1 : 0; }"),
      // Double.compare without 64-bit integers: ordered values by <, >; then NaN above everything (NaNs
      // equal), then -0.0 below 0.0 by the sign bit. The form that compared doubleToLongBits with
      // vkt_lcmp made NVIDIA's compiler (driver 580) fail vkCreateComputePipelines with
      // VK_ERROR_UNKNOWN when the kernel also held vkmath's double tan (seed 23 G4.m18).
      Map.entry("vkt_dcompare", "int vkt_dcompare(double a, double b) { if (a < b) { return -1; } if (a > b) { return 1; }"
          + " bool na = vkt_isnan(a); bool nb = vkt_isnan(b); if (na || nb) { return na == nb ? 0 : na ? 1 : -1; }"
          + " bool sa = (unpackDouble2x32(a).y & 0x80000000u) != 0u; bool sb = (unpackDouble2x32(b).y & 0x80000000u) != 0u;"
          + " return sa == sb ? 0 : sa ? -1 : 1; }"));

  /** The text of helper {@code name} (here or in {@link MathHelpers}). */
  static String text(String name) {
    String t = TEXT.get(name);
    t = t != null ? t : MathHelpers.TEXT.get(name);
    t = t != null ? t : DateHelpers.TEXT.get(name);
    return t != null ? t : StringHelpers.TEXT.get(name);
  }

  /** The helpers {@code name} needs first. */
  static List<String> needs(String name) {
    return NEEDS.getOrDefault(name, MathHelpers.NEEDS.getOrDefault(name, DateHelpers.NEEDS.getOrDefault(name,
        StringHelpers.NEEDS.getOrDefault(name, List.of()))));
  }

  /** Helpers that another helper needs first. */
  static final Map<String, List<String>> NEEDS = Map.of(
      "vkt_dcompare", List.of("vkt_isnan"),
      "vkt_floor", List.of("vkt_rint"),
      "vkt_ceil", List.of("vkt_rint"));
}
