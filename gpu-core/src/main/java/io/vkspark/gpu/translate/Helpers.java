package io.vkspark.gpu.translate;

import java.util.Map;

/**
 * The translator's own GLSL helpers, pasted before the translated functions when used. Division
 * goes through {@code vkt_ddiv}, outside the {@code precise} code: vkspark refines a kernel's plain
 * double divisions to Java's correctly rounded ones where the device's are not
 * ({@code DoubleRounding}), and its divisor is multiplied by a 1.0 the compiler cannot see, so no
 * constant divisor is folded into a multiplication by its (rounded) reciprocal. A float division is
 * a double division rounded to float, which is correctly rounded (53 >= 2 * 24 + 2 bits).
 */
final class Helpers {
  private Helpers() {}

  static final String ONE = "double(min(vk_rows, 1u))";

  static final Map<String, String> TEXT = Map.of(
      "vkt_ddiv", "double vkt_ddiv(double a, double b) { return a / (b * " + ONE + "); }",
      "vkt_fdiv", "float vkt_fdiv(float a, float b) { return float(double(a) / (double(b) * " + ONE + ")); }",
      "vkt_isnan", "bool vkt_isnan(double x) { uvec2 w = unpackDouble2x32(x); uint h = w.y & 0x7fffffffu;"
          + " return h > 0x7ff00000u || (h == 0x7ff00000u && w.x != 0u); }",
      "vkt_isinf", "bool vkt_isinf(double x) { uvec2 w = unpackDouble2x32(x); return (w.y & 0x7fffffffu) == 0x7ff00000u"
          + " && w.x == 0u; }",
      "vkt_isnanf", "bool vkt_isnanf(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }",
      "vkt_isinff", "bool vkt_isinff(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }",
      "vkt_dbits", "int64_t vkt_dbits(double x) { uvec2 w = unpackDouble2x32(x); return (int64_t(w.y) << 32) | int64_t(w.x); }",
      "vkt_bitsd", "double vkt_bitsd(int64_t v) { return packDouble2x32(uvec2(uint(v & 0xffffffffl), uint(v >> 32))); }",
      "vkt_dcompare", "int vkt_dcompare(double a, double b) { if (a < b) { return -1; } if (a > b) { return 1; }"
          + " int64_t x = vkt_dbits(a); int64_t y = vkt_dbits(b);"
          + " if (vkt_isnan(a)) { x = 9221120237041090560l; } if (vkt_isnan(b)) { y = 9221120237041090560l; }"
          + " return x == y ? 0 : x < y ? -1 : 1; }");

  /** Helpers that another helper needs first. */
  static final Map<String, java.util.List<String>> NEEDS = Map.of(
      "vkt_dcompare", java.util.List.of("vkt_isnan", "vkt_dbits"));
}
