package io.vkspark.gpu.translate;

import java.util.List;
import java.util.Map;

/**
 * GLSL helpers for the {@code Math} methods that need more than one operation, each written to give
 * Java's bits: {@code Math.round} (Java's own integer algorithm), {@code %} on doubles (an exact
 * remainder of the significands, a bit a step: no 64-bit division, which lavapipe compiles slowly),
 * and {@code StrictMath.cbrt}/{@code hypot}
 * (fdlibm, as the JDK's {@code FdLibm.Cbrt}/{@code Hypot} compute them: {@code precise} arithmetic,
 * divisions through {@code vkt_ddiv} and {@code sqrt}, which vkspark makes correctly rounded on
 * every device). On Java 17 {@code Math.cbrt} and {@code Math.hypot} are {@code StrictMath}'s;
 * {@link MathCalls} checks that on the running JVM.
 */
final class MathHelpers {
  private MathHelpers() {}

  private static String d(double v) {
    return GlslWriter.doubleLiteral(v);
  }

  /** {@code double} from its high and low words. */
  private static final String HI_LO = "double vkt_hilo(uint hi, uint lo) { return packDouble2x32(uvec2(lo, hi)); }";

  static final Map<String, String> TEXT = Map.ofEntries(
      Map.entry("vkt_hilo", HI_LO),
      Map.entry("vkt_ubits", "uint64_t vkt_ubits(double x) { uvec2 w = unpackDouble2x32(x);"
          + " return (uint64_t(w.y) << 32) | uint64_t(w.x); }"),
      Map.entry("vkt_ubitsd", "double vkt_ubitsd(uint64_t v) { return packDouble2x32(uvec2(uint(v & 0xfffffffful),"
          + " uint(v >> 32))); }"),
      // Math.round(double): Java 17's algorithm on the bits (ties toward positive infinity, NaN 0, saturating)
      Map.entry("vkt_round", "int64_t vkt_round(double a) { int64_t bits = vkt_dbits(a);"
          + " int shift = 1074 - int((bits >> 52) & 0x7ffl);"
          + " if ((shift & -64) == 0) { int64_t r = (bits & 0x000fffffffffffffl) | 0x0010000000000000l;"
          + " if ((unpackDouble2x32(a).y & 0x80000000u) != 0u) { r = -r; } return ((r >> shift) + 1l) >> 1; }"
          + " return jlong(a); }"),
      Map.entry("vkt_roundf", "int vkt_roundf(float a) { int bits = floatBitsToInt(a);"
          + " int shift = 149 - ((bits >> 23) & 0xff);"
          + " if ((shift & -32) == 0) { int r = (bits & 0x007fffff) | 0x00800000; if (bits < 0) { r = -r; }"
          + " return ((r >> shift) + 1) >> 1; } return jint(a); }"),
      // x % y on doubles: the remainder of the significands, a bit a step (musl's fmod): exact, with the sign of x
      Map.entry("vkt_msb64", "int vkt_msb64(uint64_t v) { uint hi = uint(v >> 32); return hi != 0u ? 32 + findMSB(hi)"
          + " : findMSB(uint(v)); }"),
      Map.entry("vkt_fmod", "double vkt_fmod(double x, double y) { uint64_t ux = vkt_ubits(x); uint64_t uy = vkt_ubits(y);"
          + " uint64_t ax = ux & 0x7ffffffffffffffful; uint64_t ay = uy & 0x7ffffffffffffffful;"
          + " if (ay == 0ul || ay > 0x7ff0000000000000ul || ax >= 0x7ff0000000000000ul) {"
          + " return vkt_ubitsd(0x7ff8000000000000ul); }"
          + " if (ax < ay) { return x; }"
          + " uint64_t sx = ux & 0x8000000000000000ul; if (ax == ay) { return vkt_ubitsd(sx); }"
          + " int ex = int(ax >> 52); int ey = int(ay >> 52);"
          + " uint64_t mx = (ax & 0x000ffffffffffffful) | (ex == 0 ? 0ul : 0x0010000000000000ul);"
          + " uint64_t my = (ay & 0x000ffffffffffffful) | (ey == 0 ? 0ul : 0x0010000000000000ul);"
          + " if (ex == 0) { int s = 52 - vkt_msb64(mx); mx <<= s; ex = 1 - s; }"
          + " if (ey == 0) { int s = 52 - vkt_msb64(my); my <<= s; ey = 1 - s; }"
          + " for (; ex > ey; ex--) { if (mx >= my) { mx -= my; } if (mx == 0ul) { break; } mx <<= 1; }"
          + " if (mx >= my) { mx -= my; }"
          + " if (mx == 0ul) { return vkt_ubitsd(sx); }"
          + " int s = 52 - vkt_msb64(mx); mx <<= s; ex -= s;"
          + " uint64_t bits = ex > 0 ? (mx & 0x000ffffffffffffful) | (uint64_t(ex) << 52) : mx >> (1 - ex);"
          + " return vkt_ubitsd(bits | sx); }"),
      // FdLibm.Cbrt.compute
      Map.entry("vkt_cbrt", "double vkt_cbrt(double x) {"
          + " if (x == 0.0LF || vkt_isnan(x) || vkt_isinf(x)) { return x; }"
          + " precise double sign = x < 0.0LF ? -1.0LF : 1.0LF; precise double ax = abs(x); precise double t;"
          + " if (ax < " + d(Double.MIN_NORMAL) + ") { t = " + d(0x1.0p54) + " * ax;"
          + " t = packDouble2x32(uvec2(unpackDouble2x32(t).x, uint(int(unpackDouble2x32(t).y) / 3 + 696219795))); }"
          + " else { t = vkt_hilo(uint(int(unpackDouble2x32(ax).y) / 3 + 715094163), 0u); }"
          + " precise double r = vkt_ddiv(t * t, ax); precise double s = " + d(0x1.15f15f15f15f1p-1) + " + r * t;"
          + " t *= " + d(0x1.6db6db6db6db7p-2) + " + vkt_ddiv(" + d(0x1.9b6db6db6db6ep0) + ", s + " + d(0x1.6a0ea0ea0ea0fp0)
          + " + vkt_ddiv(" + d(-0x1.691de2532c834p-1) + ", s));"
          + " t = vkt_hilo(unpackDouble2x32(t).y + 1u, 0u);"
          + " s = t * t; r = vkt_ddiv(ax, s); precise double w = t + t; r = vkt_ddiv(r - t, w + r); t = t + t * r;"
          + " return sign * t; }"),
      // FdLibm.Hypot.compute
      Map.entry("vkt_hypot", "double vkt_hypot(double x, double y) { precise double a = abs(x); precise double b = abs(y);"
          + " if (vkt_isinf(a) || vkt_isinf(b)) { return " + d(Double.POSITIVE_INFINITY) + "; }"
          + " if (vkt_isnan(a) || vkt_isnan(b)) { return a + b; }"
          + " if (b > a) { precise double tmp = a; a = b; b = tmp; }"
          + " int ha = int(unpackDouble2x32(a).y); int hb = int(unpackDouble2x32(b).y);"
          + " if ((ha - hb) > 0x3c00000) { return a + b; }"
          + " int k = 0;"
          + " if (a > " + d(0x1.00000ffffffffp500) + ") { ha -= 0x25800000; hb -= 0x25800000; a = a * " + d(0x1.0p-600)
          + "; b = b * " + d(0x1.0p-600) + "; k += 600; }"
          + " precise double t1; precise double t2;"
          + " if (b < " + d(0x1.0p-500) + ") {"
          + " if (b < " + d(Double.MIN_NORMAL) + ") { if (b == 0.0LF) { return a; } t1 = " + d(0x1.0p1022) + "; b *= t1;"
          + " a *= t1; k -= 1022; }"
          + " else { ha += 0x25800000; hb += 0x25800000; a = a * " + d(0x1.0p600) + "; b = b * " + d(0x1.0p600)
          + "; k -= 600; } }"
          + " precise double w = a - b;"
          + " if (w > b) { t1 = vkt_hilo(uint(ha), 0u); t2 = a - t1; w = sqrt(t1 * t1 - (b * (-b) - t2 * (a + t1))); }"
          + " else { a = a + a; precise double y1 = vkt_hilo(uint(hb), 0u); precise double y2 = b - y1;"
          + " t1 = vkt_hilo(uint(ha + 0x00100000), 0u); t2 = a - t1;"
          + " w = sqrt(t1 * y1 - (w * (-w) - (t1 * y2 + t2 * b))); }"
          + " return k != 0 ? vkt_hilo(uint(k + 1023) << 20, 0u) * w : w; }"));

  /** Helpers that another helper needs first. */
  static final Map<String, List<String>> NEEDS = Map.of(
      "vkt_round", List.of("vkt_dbits"),
      "vkt_fmod", List.of("vkt_ubits", "vkt_ubitsd", "vkt_msb64"),
      "vkt_cbrt", List.of("vkt_isnan", "vkt_isinf", "vkt_ddiv", "vkt_hilo"),
      "vkt_hypot", List.of("vkt_isnan", "vkt_isinf", "vkt_hilo"));
}
