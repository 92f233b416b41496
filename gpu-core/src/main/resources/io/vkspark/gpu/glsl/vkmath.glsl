// ---------------------------------------------------------------------------------------------
// vkmath.glsl: double-precision elementary functions for GLSL 4.50 compute shaders on Vulkan.
//
// GLSL has exp/log/pow/sin/cos/tan/asin/acos/atan/sinh/cosh/tanh for float only. This file
// overloads those built-in names for double (a shader may declare user overloads of built-in
// names; calls with float arguments still resolve to the float built-ins), and adds erf, erfc,
// expm1, log1p, atan2, vk_norm_cdf and vk_norm_pdf. It is pasted after the #version/#extension
// lines of a shader; it needs no extension beyond GLSL 4.50 (double is core). Unused functions
// are removed by the SPIR-V optimizer.
//
//   double exp(double)    double exp2(double)   double expm1(double)
//   double log(double)    double log2(double)   double log10(double)   double log1p(double)
//   double pow(double, double)
//   double sin(double)    double cos(double)    double tan(double)
//   double asin(double)   double acos(double)   double atan(double)
//   double atan(double y, double x)             double atan2(double y, double x)
//   double sinh(double)   double cosh(double)   double tanh(double)
//   double erf(double)    double erfc(double)
//   double vk_norm_cdf(double)   // standard normal CDF, relative accuracy in both tails
//   double vk_norm_pdf(double)   // standard normal density
//
// Notes for callers: exp(1.0) with a float literal calls the float built-in (write 1.0LF or
// double(...)); mixed calls such as pow(x, 2) or atan(x, 1.0) with double x resolve to these
// functions. Shader code pasted after this file must not define functions with these signatures
// again; internal helpers and constants are prefixed vkm_/VKM_.
//
// Accuracy (measured on lavapipe against StrictMath, or double-double references for erf, erfc,
// the normal CDF/PDF and log2): within 1 ulp of the reference for exp, exp2, expm1, log, log2,
// log1p, pow, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh and tanh; log10 within 2 ulp of
// StrictMath.log10 (itself up to ~1.6 ulp off; this log10 is nearly correctly rounded); relative
// error below 5e-16 for erf, erfc, vk_norm_cdf and vk_norm_pdf. sin/cos/tan take any finite x.
//
// Special values follow java.lang.StrictMath (NaN in -> NaN, log(0) = -Infinity, log(<0) = NaN,
// exp overflow -> +Infinity, underflow -> 0, Java's pow special cases, atan2 quadrants).
//
// Algorithms: exp, expm1, sin/cos/tan kernels, atan, atan2, asin, acos, sinh, cosh, tanh, erf and
// erfc follow the methods of Sun's fdlibm (the basis of StrictMath), with its published minimax
// coefficients. fdlibm's notice, preserved as it asks (see also NOTICE):
//   Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//   Developed at SunSoft, a Sun Microsystems, Inc. business.
//   Permission to use, copy, modify, and distribute this software is freely granted, provided
//   that this notice is preserved.
// log is computed in double-double (atanh series), which gives nearly correctly
// rounded log/log2/log10/log1p and the extra precision pow needs (pow = exp(y*log|x|) with the
// product carried in double-double). Trigonometric argument reduction is accurate for every finite
// argument: a 4-part Cody-Waite reduction with exact (Dekker) products for |x| < 2^30 and an
// integer Payne-Hanek reduction with 224 bits of 2/pi for larger |x| (slower, rarely taken). The erfc/normal-CDF tails evaluate exp(-x*x) with x*x carried
// exactly, so the tails keep relative accuracy down to the underflow threshold.
//
// Portability: Vulkan does not promise a fused fma (lavapipe, for one, splits it) and drivers may
// reassociate floating-point expressions, so every compensated computation is written with
// 'precise' locals (SPIR-V NoContraction: no fusing, no reassociation) and exact products use
// Dekker's splitting, or one fma on a device whose probe found it fused (specialization constant
// 1, VKM_FUSED_FMA; the same bits either way). Exponent manipulation uses packDouble2x32/unpackDouble2x32
// and integer tests, so special-value handling and subnormal inputs of log do not depend on the
// device's denormal mode. Devices that flush denormals return 0 where the true result is
// subnormal (|result| < 2.2e-308).
// ---------------------------------------------------------------------------------------------

// ---- bit helpers -----------------------------------------------------------------------------

double vkm_words(uint hi, uint lo) { return packDouble2x32(uvec2(lo, hi)); }
uint vkm_hi(double x) { return unpackDouble2x32(x).y; }
double vkm_inf() { return vkm_words(0x7ff00000u, 0u); }
double vkm_nan() { return vkm_words(0x7ff80000u, 0u); }
bool vkm_isnan(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint ah = w.y & 0x7fffffffu;
  return ah > 0x7ff00000u || (ah == 0x7ff00000u && w.x != 0u);
}
// Rounding without the driver's roundEven()/floor() of doubles, which lavapipe (Mesa 22.3, on some
// x86-64 CPUs) gets wrong for large arguments. Nearest, ties to even, for |x| < 2^51: the sum with
// 1.5 * 2^52 leaves no fraction bits, and precise keeps the compiler from folding it away.
double vkm_rint(double x) {
  precise double m = 6755399441055744.0LF;
  precise double r = (x + m) - m;
  return r;
}
// 0 when the finite a >= 0 is not an integer, 1 when it is odd, 2 when even, read off its bits.
int vkm_int_kind(double a) {
  if (a == 0.0LF) return 2;
  uvec2 w = unpackDouble2x32(a);
  int e = int((w.y >> 20) & 0x7ffu) - 1023;
  if (e < 0) return 0;
  if (e > 52) return 2;
  int sh = 52 - e;                                // fraction bits below the units bit
  uint hi = (w.y & 0xfffffu) | 0x100000u;
  uint frac;
  uint unit;
  if (sh == 0) {
    frac = 0u;
    unit = w.x & 1u;
  } else if (sh < 32) {
    frac = w.x & ((1u << uint(sh)) - 1u);
    unit = (w.x >> uint(sh)) & 1u;
  } else if (sh == 32) {
    frac = w.x;
    unit = hi & 1u;
  } else {
    frac = w.x | (hi & ((1u << uint(sh - 32)) - 1u));
    unit = (hi >> uint(sh - 32)) & 1u;
  }
  return frac != 0u ? 0 : (unit == 1u ? 1 : 2);
}
// 2^k for -1022 <= k <= 1023, exactly
double vkm_pow2i(int k) { return vkm_words(uint(k + 1023) << 20, 0u); }
// x with the low 32 bits of its significand cleared
double vkm_clear_low(double x) { return vkm_words(vkm_hi(x), 0u); }

// ---- error-free transformations (exact, need round-to-nearest and no reassociation) -----------

// a + b = s + e exactly
dvec2 vkm_two_sum(double a, double b) {
  precise double s = a + b;
  precise double bb = s - a;
  precise double e = (a - (s - bb)) + (b - bb);
  return dvec2(s, e);
}
// a + b = s + e exactly, when |a| >= |b| or a == 0
dvec2 vkm_fast_two_sum(double a, double b) {
  precise double s = a + b;
  precise double e = b - (s - a);
  return dvec2(s, e);
}
// Whether the device's double fma rounds once: specialization constant 1, set when a kernel loads
// from the device's probe (DoubleRounding.fusedFma; vkspark.fma=off clears it). Where it is false
// the driver drops the fma branches below when it builds the pipeline.
layout(constant_id = 1) const bool VKM_FUSED_FMA = false;

// a * b = p + e exactly (Dekker), for |a|, |b| < 2^995 and no underflow of the parts
dvec2 vkm_two_prod_dekker(double a, double b) {
  precise double p = a * b;
  precise double ca = 134217729.0LF * a;
  precise double ah = ca - (ca - a);
  precise double al = a - ah;
  precise double cb = 134217729.0LF * b;
  precise double bh = cb - (cb - b);
  precise double bl = b - bh;
  precise double e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
  return dvec2(p, e);
}
// a * b = p + e exactly, under the same conditions: one fma (2 operations in place of 17) where
// the device fuses it. Where both are exact they give the same (p, e), so the bits of every
// function here do not depend on which one a device runs (VkMathFmaTest).
dvec2 vkm_two_prod(double a, double b) {
  if (VKM_FUSED_FMA) {
    precise double p = a * b;
    precise double e = fma(a, b, -p);
    return dvec2(p, e);
  }
  return vkm_two_prod_dekker(a, b);
}

// ---- constants ---------------------------------------------------------------------------------

const double VKM_PIO2_1 = 1.57079632679489655800LF;        // pi/2 in four parts
const double VKM_PIO2_2 = 6.12323399573676603587e-17LF;
const double VKM_PIO2_3 = -1.49738490485916983294e-33LF;
const double VKM_PIO2_4 = 5.56227110431682640773e-50LF;
const double VKM_PI_H = 3.14159265358979311600LF;
const double VKM_PI_L = 1.22464679914735320717e-16LF;
const double VKM_PIO4_H = 0.785398163397448278999LF;
const double VKM_PIO4_L = 3.06161699786838301793e-17LF;
const double VKM_2OPI_H = 0.636619772367581382433LF;       // 2/pi
const double VKM_2OPI_L = -3.93573533503649717638e-17LF;
const double VKM_LN2_HI = 0.693147180369123816490LF;       // 32 significant bits
const double VKM_LN2_LO = 1.90821492927058770002e-10LF;
const double VKM_LN2_H = 0.693147180559945286227LF;
const double VKM_LN2_L = 2.31904681384629955842e-17LF;
const double VKM_INV_LN2_H = 1.44269504088896338700LF;
const double VKM_INV_LN2_L = 2.03552737409310331110e-17LF;
const double VKM_INV_LN10_H = 0.434294481903251816668LF;
const double VKM_INV_LN10_L = 1.09831965021676507274e-17LF;
const double VKM_TWO_THIRDS_H = 0.666666666666666629659LF;
const double VKM_TWO_THIRDS_L = 3.70074341541718826265e-17LF;
const double VKM_INV_SQRT2_H = 0.707106781186547572737LF;
const double VKM_INV_SQRT2_L = -4.83364665672645672553e-17LF;
const double VKM_INV_SQRTPI_H = 0.564189583547756279280LF;
const double VKM_INV_SQRT2PI_H = 0.398942280401432702863LF;

// 2/pi in 32-bit words, most significant first (Payne-Hanek reduction)
const uint VKM_2OPI_BITS[40] = uint[40](
  0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u,
  0xB7246E3Au, 0x424DD2E0u, 0x06492EEAu, 0x09D1921Cu, 0xFE1DEB1Cu, 0xB129A73Eu, 0xE88235F5u, 0x2EBB4484u,
  0xE99C7026u, 0xB45F7E41u, 0x3991D639u, 0x835339F4u, 0x9C845F8Bu, 0xBDF9283Bu, 0x1FF897FFu, 0xDE05980Fu,
  0xEF2F118Bu, 0x5A0A6D1Fu, 0x6D367ECFu, 0x27CB09B7u, 0x4F463F66u, 0x9E5FEA2Du, 0x7527BAC7u, 0xEBE5F17Bu,
  0x3D0739F7u, 0x8A5292EAu, 0x6BFB5FB1u, 0x1F8D5D08u, 0x56033046u, 0xFC7B6BABu, 0xF0CFBC20u, 0x9AF4361Du);

// ---- exp ---------------------------------------------------------------------------------------

// fdlibm e_exp: R(r^2) = r*(exp(r)+1)/(exp(r)-1) ~ 2 + P1 r^2 + ... + P5 r^10 on [0, ln2/2]
const double VKM_EXP_P1 = 1.66666666666666019037e-01LF;
const double VKM_EXP_P2 = -2.77777777770155933842e-03LF;
const double VKM_EXP_P3 = 6.61375632143793436117e-05LF;
const double VKM_EXP_P4 = -1.65339022054652515390e-06LF;
const double VKM_EXP_P5 = 4.13813679705723846039e-08LF;
const double VKM_EXP_OVER = 709.782712893383973096LF;
const double VKM_EXP_UNDER = -745.133219101941108420LF;

// exp(hi + lo) * m, for finite hi in about [-790, 710], |lo| small against ulp(hi)*2^10, m > 0
// in about [2^-60, 2^60]; overflows to +Infinity and underflows gracefully (one rounding into the
// subnormal range when m == 1).
double vkm_exp_core(double hi, double lo, double m) {
  precise double kf = vkm_rint(hi * VKM_INV_LN2_H);
  precise double rh = hi - kf * VKM_LN2_HI;                 // exact
  precise double rl = kf * VKM_LN2_LO - lo;
  precise double r = rh - rl;
  precise double t = r * r;
  precise double c = r - t * (VKM_EXP_P1 + t * (VKM_EXP_P2 + t * (VKM_EXP_P3 + t * (VKM_EXP_P4 + t * VKM_EXP_P5))));
  precise double y = (1.0LF - ((rl - (r * c) / (2.0LF - c)) - rh)) * m;
  int k = int(kf);
  precise double res;
  if (k >= -1021) {
    if (k <= 1023) {
      res = y * vkm_pow2i(k);
    } else {
      res = (y * 2.0LF) * vkm_pow2i(k - 1);
    }
  } else {
    res = (y * vkm_pow2i(k + 1000)) * vkm_pow2i(-1000);
  }
  return res;
}

double exp(double x) {
  if (vkm_isnan(x)) return x;
  if (x > VKM_EXP_OVER) return vkm_inf();
  if (x < VKM_EXP_UNDER) return 0.0LF;
  return vkm_exp_core(x, 0.0LF, 1.0LF);
}

double exp2(double x) {
  if (vkm_isnan(x)) return x;
  if (x >= 1024.0LF) return vkm_inf();
  if (x < -1080.0LF) return 0.0LF;
  dvec2 p = vkm_two_prod(x, VKM_LN2_H);
  precise double pl = p.y + x * VKM_LN2_L;
  dvec2 q = vkm_fast_two_sum(p.x, pl);
  return vkm_exp_core(q.x, q.y, 1.0LF);
}

// fdlibm s_expm1
const double VKM_EXPM1_Q1 = -3.33333333333331316428e-02LF;
const double VKM_EXPM1_Q2 = 1.58730158725481460165e-03LF;
const double VKM_EXPM1_Q3 = -7.93650757867487942473e-05LF;
const double VKM_EXPM1_Q4 = 4.00821782732936239552e-06LF;
const double VKM_EXPM1_Q5 = -2.01099218183624371326e-07LF;

double expm1(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint hx = w.y & 0x7fffffffu;
  bool neg = (w.y & 0x80000000u) != 0u;
  if (hx >= 0x4043687au) {                       // |x| >= 56 ln2
    if (hx >= 0x7ff00000u) {
      if (vkm_isnan(x)) return x;
      return neg ? -1.0LF : x;
    }
    if (x > VKM_EXP_OVER) return vkm_inf();
    if (neg) return -1.0LF;
  }
  precise double xr = x;
  precise double c = 0.0LF;
  int k = 0;
  if (hx > 0x3fd62e42u) {                        // |x| > ln2/2
    precise double hi;
    precise double lo;
    if (hx < 0x3ff0a2b2u) {                      // |x| < 1.5 ln2
      if (!neg) {
        hi = x - VKM_LN2_HI; lo = VKM_LN2_LO; k = 1;
      } else {
        hi = x + VKM_LN2_HI; lo = -VKM_LN2_LO; k = -1;
      }
    } else {
      precise double t = vkm_rint(VKM_INV_LN2_H * x);
      k = int(t);
      hi = x - t * VKM_LN2_HI;
      lo = t * VKM_LN2_LO;
    }
    xr = hi - lo;
    c = (hi - xr) - lo;
  } else if (hx < 0x3c900000u) {                 // |x| < 2^-54
    return x;
  }
  precise double hfx = 0.5LF * xr;
  precise double hxs = xr * hfx;
  precise double r1 = 1.0LF + hxs * (VKM_EXPM1_Q1 + hxs * (VKM_EXPM1_Q2 + hxs * (VKM_EXPM1_Q3
      + hxs * (VKM_EXPM1_Q4 + hxs * VKM_EXPM1_Q5))));
  precise double t = 3.0LF - r1 * hfx;
  precise double e = hxs * ((r1 - t) / (6.0LF - xr * t));
  precise double res;
  if (k == 0) {
    res = xr - (xr * e - hxs);
    return res;
  }
  e = (xr * (e - c) - c);
  e -= hxs;
  if (k == -1) {
    res = 0.5LF * (xr - e) - 0.5LF;
  } else if (k == 1) {
    if (xr < -0.25LF) {
      res = -2.0LF * (e - (xr + 0.5LF));
    } else {
      res = 1.0LF + 2.0LF * (xr - e);
    }
  } else if (k <= -2 || k > 56) {
    precise double y = 1.0LF - (e - xr);
    if (k > 1023) {
      y = (y * 2.0LF) * vkm_pow2i(k - 1);
    } else {
      y = y * vkm_pow2i(k);
    }
    res = y - 1.0LF;
  } else if (k < 20) {
    precise double t1 = 1.0LF - vkm_pow2i(-k);
    precise double y = t1 - (e - xr);
    res = y * vkm_pow2i(k);
  } else {
    precise double t1 = vkm_pow2i(-k);
    precise double y = xr - (e + t1);
    y += 1.0LF;
    res = y * vkm_pow2i(k);
  }
  return res;
}

// ---- log ---------------------------------------------------------------------------------------

const double VKM_LOGC_5 = 0.400000000000000022204LF;       // 2/(2n+1)
const double VKM_LOGC_7 = 0.285714285714285698425LF;
const double VKM_LOGC_9 = 0.222222222222222209886LF;
const double VKM_LOGC_11 = 0.181818181818181823228LF;
const double VKM_LOGC_13 = 0.153846153846153854694LF;
const double VKM_LOGC_15 = 0.133333333333333331483LF;
const double VKM_LOGC_17 = 0.117647058823529410132LF;
const double VKM_LOGC_19 = 0.105263157894736836262LF;
const double VKM_LOGC_21 = 0.0952380952380952328085LF;
const double VKM_LOGC_23 = 0.0869565217391304323691LF;
const double VKM_LOGC_25 = 0.0800000000000000016653LF;
const double VKM_LOGC_27 = 0.0740740740740740699621LF;

// log(x) as a normalized double-double (hi, lo), for finite x > 0 including subnormals;
// relative error about 2^-64 or less. x = 2^k * m, m in [sqrt(2)/2, sqrt(2)), f = m - 1, s = f/(2+f),
// log(m) = 2 atanh(s) = 2s + (2/3)s^3 + s^5 (2/5 + 2/7 s^2 + ...), leading terms in double-double.
dvec2 vkm_log_dd(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint hx = w.y;
  uint lx = w.x;
  int k;
  if (hx < 0x00100000u) {                        // subnormal: normalize with integer shifts
    int p = (hx != 0u) ? 32 + findMSB(hx) : findMSB(lx);
    int sh = 52 - p;
    if (sh >= 32) {
      hx = lx << uint(sh - 32);
      lx = 0u;
    } else {
      hx = (hx << uint(sh)) | (lx >> uint(32 - sh));
      lx = lx << uint(sh);
    }
    k = -1022 - sh;
  } else {
    k = int(hx >> 20) - 1023;
  }
  hx &= 0x000fffffu;
  if (hx > 0x6a09eu) {                           // m >= ~sqrt(2): use m/2
    hx |= 0x3fe00000u;
    k += 1;
  } else {
    hx |= 0x3ff00000u;
  }
  double m = packDouble2x32(uvec2(lx, hx));
  precise double f = m - 1.0LF;                  // exact
  precise double d = 2.0LF + f;
  precise double dl = f - (d - 2.0LF);           // 2 + f = d + dl exactly
  precise double s = f / d;
  dvec2 sd = vkm_two_prod(s, d);
  precise double rem = ((f - sd.x) - sd.y) - s * dl;
  precise double sl = rem / d;                   // s + sl = f/(2+f) to ~2^-106
  dvec2 z = vkm_two_prod(s, s);
  precise double zl = z.y + 2.0LF * s * sl;      // s^2 = z.x + zl
  dvec2 c3 = vkm_two_prod(s, z.x);
  precise double c3l = c3.y + (s * zl + sl * z.x);   // s^3
  dvec2 t3 = vkm_two_prod(VKM_TWO_THIRDS_H, c3.x);
  precise double t3l = t3.y + (VKM_TWO_THIRDS_H * c3l + VKM_TWO_THIRDS_L * c3.x);
  precise double zz = z.x;
  precise double q = VKM_LOGC_5 + zz * (VKM_LOGC_7 + zz * (VKM_LOGC_9 + zz * (VKM_LOGC_11 + zz * (VKM_LOGC_13
      + zz * (VKM_LOGC_15 + zz * (VKM_LOGC_17 + zz * (VKM_LOGC_19 + zz * (VKM_LOGC_21 + zz * (VKM_LOGC_23
      + zz * (VKM_LOGC_25 + zz * VKM_LOGC_27))))))))));
  precise double w5 = zz * q;                    // s^5 Q = (s^3)(s^2 Q), s^3 and s^2 in double-double
  precise double t5 = c3.x * w5 + (c3l * w5 + c3.x * (zl * q));
  dvec2 a = vkm_fast_two_sum(2.0LF * s, t3.x);
  precise double lo = a.y + ((t3l + t5) + 2.0LF * sl);
  precise double dk = double(k);
  precise double kh = dk * VKM_LN2_HI;           // exact
  precise double kl = dk * VKM_LN2_LO;
  dvec2 b = vkm_two_sum(kh, a.x);
  precise double lo2 = b.y + (lo + kl);
  return vkm_fast_two_sum(b.x, lo2);
}

// true (and r set) when x is not a finite positive number
bool vkm_log_special(double x, out double r) {
  uvec2 w = unpackDouble2x32(x);
  uint ah = w.y & 0x7fffffffu;
  r = 0.0LF;
  if (ah >= 0x7ff00000u) {
    r = (w.y == 0x7ff00000u && w.x == 0u) ? x : vkm_nan();   // +Inf -> +Inf, NaN/-Inf -> NaN
    return true;
  }
  if ((ah | w.x) == 0u) {
    r = -vkm_inf();
    return true;
  }
  if ((w.y & 0x80000000u) != 0u) {
    r = vkm_nan();
    return true;
  }
  return false;
}

// (h + l) * (ch + cl) rounded to double
double vkm_dd_mul(dvec2 v, double ch, double cl) {
  dvec2 p = vkm_two_prod(v.x, ch);
  precise double e = p.y + (v.x * cl + v.y * ch);
  precise double r = p.x + e;
  return r;
}

double log(double x) {
  double r;
  if (vkm_log_special(x, r)) return r;
  return vkm_log_dd(x).x;
}

double log2(double x) {
  double r;
  if (vkm_log_special(x, r)) return r;
  return vkm_dd_mul(vkm_log_dd(x), VKM_INV_LN2_H, VKM_INV_LN2_L);
}

double log10(double x) {
  double r;
  if (vkm_log_special(x, r)) return r;
  return vkm_dd_mul(vkm_log_dd(x), VKM_INV_LN10_H, VKM_INV_LN10_L);
}

double log1p(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint ah = w.y & 0x7fffffffu;
  if (vkm_isnan(x)) return x;
  if (ah < 0x3c900000u) return x;                // |x| < 2^-54, keeps -0
  if (x <= -1.0LF) return (x == -1.0LF) ? -vkm_inf() : vkm_nan();
  if (ah >= 0x7ff00000u) return x;               // +Inf
  dvec2 u = vkm_two_sum(1.0LF, x);               // 1 + x = u.x + u.y exactly
  dvec2 l = vkm_log_dd(u.x);
  precise double r = l.x + (l.y + u.y / u.x);
  return r;
}

// ---- pow ---------------------------------------------------------------------------------------

double pow(double x, double y) {
  uvec2 wx = unpackDouble2x32(x);
  uvec2 wy = unpackDouble2x32(y);
  uint ahx = wx.y & 0x7fffffffu;
  uint ahy = wy.y & 0x7fffffffu;
  if ((ahy | wy.x) == 0u) return 1.0LF;          // y == +-0, even for NaN x
  if (vkm_isnan(x) || vkm_isnan(y)) return vkm_nan();
  if (y == 1.0LF) return x;
  bool xneg = (wx.y & 0x80000000u) != 0u;
  double ax = packDouble2x32(uvec2(wx.x, ahx));
  if (ahy == 0x7ff00000u) {                      // y == +-Infinity
    if (ax == 1.0LF) return vkm_nan();
    bool ypos = (wy.y & 0x80000000u) == 0u;
    return ((ax > 1.0LF) == ypos) ? vkm_inf() : 0.0LF;
  }
  // 0: y not an integer, 1: odd integer, 2: even integer
  precise double ay = abs(y);
  int yint = vkm_int_kind(ay);
  bool xzero = (ahx | wx.x) == 0u;
  bool xinf = ahx == 0x7ff00000u && wx.x == 0u;
  if (xzero || xinf) {
    bool big = xzero ? (y < 0.0LF) : (y > 0.0LF);
    precise double r = big ? vkm_inf() : 0.0LF;
    if (xneg && yint == 1) r = -r;
    return r;
  }
  if (xneg && yint == 0) return vkm_nan();
  precise double sgn = (xneg && yint == 1) ? -1.0LF : 1.0LF;
  if (ax == 1.0LF) return sgn;
  if (y == 2.0LF) {
    precise double sq = x * x;
    return sq;
  }
  dvec2 l = vkm_log_dd(ax);
  precise double ph = y * l.x;
  // Selects, not sgn * Infinity: NVIDIA's 580 driver returned 0 for that product (seen on the H200).
  if (ph > 710.0LF) return (sgn < 0.0LF) ? -vkm_inf() : vkm_inf();
  if (ph < -760.0LF) return (sgn < 0.0LF) ? -0.0LF : 0.0LF;
  dvec2 p = vkm_two_prod(y, l.x);                // |y| < 2^63 here since |log x| >= 2^-53
  precise double pl = p.y + y * l.y;
  dvec2 q = vkm_fast_two_sum(p.x, pl);
  precise double r = sgn * vkm_exp_core(q.x, q.y, 1.0LF);
  return r;
}

// ---- trigonometric -----------------------------------------------------------------------------

// fdlibm kernels on [-pi/4, pi/4]; y is the low part of the reduced argument
const double VKM_S1 = -1.66666666666666324348e-01LF;
const double VKM_S2 = 8.33333333332248946124e-03LF;
const double VKM_S3 = -1.98412698298579493134e-04LF;
const double VKM_S4 = 2.75573137070700676789e-06LF;
const double VKM_S5 = -2.50507602534068634195e-08LF;
const double VKM_S6 = 1.58969099521155010221e-10LF;
const double VKM_C1 = 4.16666666666666019037e-02LF;
const double VKM_C2 = -1.38888888888741095749e-03LF;
const double VKM_C3 = 2.48015872894767294178e-05LF;
const double VKM_C4 = -2.75573143513906633035e-07LF;
const double VKM_C5 = 2.08757232129817482790e-09LF;
const double VKM_C6 = -1.13596475577881948265e-11LF;
const double VKM_T0 = 3.33333333333334091986e-01LF;
const double VKM_T1 = 1.33333333333201242699e-01LF;
const double VKM_T2 = 5.39682539762260521377e-02LF;
const double VKM_T3 = 2.18694882948595424599e-02LF;
const double VKM_T4 = 8.86323982359930005737e-03LF;
const double VKM_T5 = 3.59207910759131235356e-03LF;
const double VKM_T6 = 1.45620945432529025516e-03LF;
const double VKM_T7 = 5.88041240820264096874e-04LF;
const double VKM_T8 = 2.46463134818469906812e-04LF;
const double VKM_T9 = 7.81794442939557092300e-05LF;
const double VKM_T10 = 7.14072491382608190305e-05LF;
const double VKM_T11 = -1.85586374855275456654e-05LF;
const double VKM_T12 = 2.59073051863633712884e-05LF;

double vkm_ksin(double x, double y) {
  uint ix = vkm_hi(x) & 0x7fffffffu;
  if (ix < 0x3e400000u) return x;                // |x| < 2^-27
  precise double z = x * x;
  precise double v = z * x;
  precise double r = VKM_S2 + z * (VKM_S3 + z * (VKM_S4 + z * (VKM_S5 + z * VKM_S6)));
  precise double res = x - ((z * (0.5LF * y - v * r) - y) - v * VKM_S1);
  return res;
}

double vkm_kcos(double x, double y) {
  uint ix = vkm_hi(x) & 0x7fffffffu;
  if (ix < 0x3e400000u) return 1.0LF;            // |x| < 2^-27
  precise double z = x * x;
  precise double r = z * (VKM_C1 + z * (VKM_C2 + z * (VKM_C3 + z * (VKM_C4 + z * (VKM_C5 + z * VKM_C6)))));
  precise double res;
  if (ix < 0x3fd33333u) {                        // |x| < 0.3
    res = 1.0LF - (0.5LF * z - (z * r - x * y));
  } else {
    precise double qx = (ix > 0x3fe90000u) ? 0.28125LF : vkm_words(ix - 0x00200000u, 0u);
    precise double hz = 0.5LF * z - qx;
    precise double a = 1.0LF - qx;
    res = a - (hz - (z * r - x * y));
  }
  return res;
}

// tan(x + y) for iy = 1, -1/tan(x + y) for iy = -1
double vkm_ktan(double x, double y, int iy) {
  uint hx = vkm_hi(x);
  uint ix = hx & 0x7fffffffu;
  if (ix < 0x3e300000u) {                        // |x| < 2^-28
    if (iy == 1) return x;
    precise double w0 = x + y;
    precise double z0 = vkm_clear_low(w0);
    precise double v0 = y - (z0 - x);
    precise double a0 = -1.0LF / w0;
    precise double t0 = vkm_clear_low(a0);
    precise double s0 = 1.0LF + t0 * z0;
    precise double r0 = t0 + a0 * (s0 + t0 * v0);
    return r0;
  }
  precise double xx = x;
  precise double yy = y;
  bool big = ix >= 0x3fe59428u;                  // |x| >= 0.6744
  if (big) {
    if ((hx & 0x80000000u) != 0u) {
      xx = -xx;
      yy = -yy;
    }
    precise double zb = VKM_PIO4_H - xx;
    precise double wb = VKM_PIO4_L - yy;
    xx = zb + wb;
    yy = 0.0LF;
  }
  precise double z = xx * xx;
  precise double w = z * z;
  precise double r = VKM_T1 + w * (VKM_T3 + w * (VKM_T5 + w * (VKM_T7 + w * (VKM_T9 + w * VKM_T11))));
  precise double v = z * (VKM_T2 + w * (VKM_T4 + w * (VKM_T6 + w * (VKM_T8 + w * (VKM_T10 + w * VKM_T12)))));
  precise double s = z * xx;
  precise double rr = yy + z * (s * (r + v) + yy);
  rr += VKM_T0 * s;
  precise double wt = xx + rr;
  if (big) {
    precise double vv = double(iy);
    precise double sg = 1.0LF - double((hx >> 30) & 2u);
    precise double res = sg * (vv - 2.0LF * (xx - (wt * wt / (wt + vv) - rr)));
    return res;
  }
  if (iy == 1) return wt;
  precise double zc = vkm_clear_low(wt);
  precise double vc = rr - (zc - xx);
  precise double a = -1.0LF / wt;
  precise double t = vkm_clear_low(a);
  precise double sc = 1.0LF + t * zc;
  precise double res2 = t + a * (sc + t * vc);
  return res2;
}

uint vkm_bits32(uint p[9], int b) {
  int q = b >> 5;
  int r = b & 31;
  uint lo = p[q] >> uint(r);
  uint hi = (r == 0) ? 0u : (p[q + 1] << uint(32 - r));
  return lo | hi;
}

// Payne-Hanek for |x| >= 2^30: x = M 2^E, x*2/pi mod 4 from M times a 224-bit window of 2/pi
int vkm_rem_pio2_large(double x, out double y0, out double y1) {
  uvec2 w = unpackDouble2x32(x);
  int e = int((w.y >> 20) & 0x7ffu) - 1075;
  uint m1 = (w.y & 0x000fffffu) | 0x00100000u;
  uint m0 = w.x;
  int j0 = max(0, (e - 2) >> 5);                 // words before j0 only add multiples of 4
  uint p[9];
  uint carry = 0u;
  for (int i = 0; i < 7; i++) {
    uint hi;
    uint lo;
    uint c;
    umulExtended(VKM_2OPI_BITS[j0 + 6 - i], m0, hi, lo);
    p[i] = uaddCarry(lo, carry, c);
    carry = hi + c;
  }
  p[7] = carry;
  p[8] = 0u;
  carry = 0u;
  for (int i = 0; i < 7; i++) {
    uint hi;
    uint lo;
    uint c1;
    uint c2;
    umulExtended(VKM_2OPI_BITS[j0 + 6 - i], m1, hi, lo);
    uint s = uaddCarry(p[i + 1], lo, c1);
    p[i + 1] = uaddCarry(s, carry, c2);
    carry = hi + c1 + c2;
  }
  p[8] += carry;
  int z = 32 * (j0 + 7) - e;                     // bit of weight 2^0
  int n = int(vkm_bits32(p, z) & 3u);
  uint f3 = vkm_bits32(p, z - 32);
  uint f2 = vkm_bits32(p, z - 64);
  uint f1 = vkm_bits32(p, z - 96);
  uint f0 = vkm_bits32(p, z - 128);
  bool up = (f3 & 0x80000000u) != 0u;            // fraction >= 1/2: use fraction - 1
  if (up) {
    n += 1;
    uint c0;
    uint c1;
    uint c2;
    f0 = uaddCarry(~f0, 1u, c0);
    f1 = uaddCarry(~f1, c0, c1);
    f2 = uaddCarry(~f2, c1, c2);
    f3 = ~f3 + c2;
  }
  precise double a3 = double(f3) * vkm_pow2i(-32);
  precise double a2 = double(f2) * vkm_pow2i(-64);
  precise double a1 = double(f1) * vkm_pow2i(-96);
  precise double a0 = double(f0) * vkm_pow2i(-128);
  dvec2 h = vkm_fast_two_sum(a3, a2);
  precise double fl = h.y + (a1 + a0);
  dvec2 fh = vkm_fast_two_sum(h.x, fl);
  dvec2 pr = vkm_two_prod(fh.x, VKM_PIO2_1);
  precise double pl = pr.y + (fh.x * VKM_PIO2_2 + fh.y * VKM_PIO2_1);
  dvec2 r = vkm_fast_two_sum(pr.x, pl);
  bool xneg = (w.y & 0x80000000u) != 0u;
  precise double sg = (xneg != up) ? -1.0LF : 1.0LF;
  y0 = sg * r.x;
  y1 = sg * r.y;
  if (xneg) n = -n;
  return n & 3;
}

// x = n pi/2 + (y0 + y1), |y0 + y1| <= ~pi/4; returns n mod 4. x finite, |x| > pi/4.
int vkm_rem_pio2(double x, out double y0, out double y1) {
  uint ix = vkm_hi(x) & 0x7fffffffu;
  if (ix < 0x41d00000u) {                        // |x| < 2^30: Cody-Waite with exact products
    dvec2 p = vkm_two_prod(x, VKM_2OPI_H);
    precise double pl = p.y + x * VKM_2OPI_L;
    precise double fn = vkm_rint(p.x);
    precise double fr = (p.x - fn) + pl;
    if (fr > 0.5LF) {
      fn += 1.0LF;
    } else if (fr < -0.5LF) {
      fn -= 1.0LF;
    }
    dvec2 a = vkm_two_prod(fn, VKM_PIO2_1);
    precise double r1 = (x - a.x) - a.y;         // exact: x - fn*PIO2_1 is representable
    dvec2 b = vkm_two_prod(fn, VKM_PIO2_2);
    dvec2 s = vkm_two_sum(r1, -b.x);
    precise double e = s.y - ((b.y + fn * VKM_PIO2_3) + fn * VKM_PIO2_4);
    dvec2 r = vkm_two_sum(s.x, e);
    y0 = r.x;
    y1 = r.y;
    return int(fn) & 3;                          // |fn| < 2^30: exact as an int; & 3 is mod 4 for negatives too
  }
  return vkm_rem_pio2_large(x, y0, y1);
}

double sin(double x) {
  uint ix = vkm_hi(x) & 0x7fffffffu;
  if (ix <= 0x3fe921fbu) return vkm_ksin(x, 0.0LF);
  if (ix >= 0x7ff00000u) return vkm_nan();
  double y0;
  double y1;
  int n = vkm_rem_pio2(x, y0, y1);
  precise double r;
  if (n == 0) {
    r = vkm_ksin(y0, y1);
  } else if (n == 1) {
    r = vkm_kcos(y0, y1);
  } else if (n == 2) {
    r = -vkm_ksin(y0, y1);
  } else {
    r = -vkm_kcos(y0, y1);
  }
  return r;
}

double cos(double x) {
  uint ix = vkm_hi(x) & 0x7fffffffu;
  if (ix <= 0x3fe921fbu) return vkm_kcos(x, 0.0LF);
  if (ix >= 0x7ff00000u) return vkm_nan();
  double y0;
  double y1;
  int n = vkm_rem_pio2(x, y0, y1);
  precise double r;
  if (n == 0) {
    r = vkm_kcos(y0, y1);
  } else if (n == 1) {
    r = -vkm_ksin(y0, y1);
  } else if (n == 2) {
    r = -vkm_kcos(y0, y1);
  } else {
    r = vkm_ksin(y0, y1);
  }
  return r;
}

double tan(double x) {
  uint ix = vkm_hi(x) & 0x7fffffffu;
  if (ix <= 0x3fe921fbu) return vkm_ktan(x, 0.0LF, 1);
  if (ix >= 0x7ff00000u) return vkm_nan();
  double y0;
  double y1;
  int n = vkm_rem_pio2(x, y0, y1);
  return vkm_ktan(y0, y1, 1 - ((n & 1) << 1));
}

// ---- inverse trigonometric ---------------------------------------------------------------------

// fdlibm s_atan
const double VKM_AT0 = 3.33333333333329318027e-01LF;
const double VKM_AT1 = -1.99999999998764832476e-01LF;
const double VKM_AT2 = 1.42857142725034663711e-01LF;
const double VKM_AT3 = -1.11111104054623557880e-01LF;
const double VKM_AT4 = 9.09088713343650656196e-02LF;
const double VKM_AT5 = -7.69187620504482999495e-02LF;
const double VKM_AT6 = 6.66107313738753120669e-02LF;
const double VKM_AT7 = -5.83357013379057348645e-02LF;
const double VKM_AT8 = 4.97687799461593236017e-02LF;
const double VKM_AT9 = -3.65315727442169155270e-02LF;
const double VKM_AT10 = 1.62858201153657823623e-02LF;
const double VKM_ATAN_0_5_H = 0.463647609000806093515LF;
const double VKM_ATAN_0_5_L = 2.26987774529616870924e-17LF;
const double VKM_ATAN_1_5_H = 0.982793723247329054082LF;
const double VKM_ATAN_1_5_L = 1.39033110312309984516e-17LF;

double atan(double x) {
  uint hx = vkm_hi(x);
  uint ix = hx & 0x7fffffffu;
  bool neg = (hx & 0x80000000u) != 0u;
  if (ix >= 0x44100000u) {                       // |x| >= 2^66
    if (vkm_isnan(x)) return x;
    precise double ri = VKM_PIO2_1 + VKM_PIO2_2;
    return neg ? -ri : ri;
  }
  int id = -1;
  precise double xr = x;
  if (ix < 0x3fdc0000u) {                        // |x| < 0.4375
    if (ix < 0x3e400000u) return x;              // |x| < 2^-27
  } else {
    precise double ax = abs(x);
    if (ix < 0x3ff30000u) {                      // |x| < 1.1875
      if (ix < 0x3fe60000u) {                    // 7/16 <= |x| < 11/16
        id = 0;
        xr = (2.0LF * ax - 1.0LF) / (2.0LF + ax);
      } else {                                   // 11/16 <= |x| < 19/16
        id = 1;
        xr = (ax - 1.0LF) / (ax + 1.0LF);
      }
    } else {
      if (ix < 0x40038000u) {                    // |x| < 2.4375
        id = 2;
        xr = (ax - 1.5LF) / (1.0LF + 1.5LF * ax);
      } else {                                   // 2.4375 <= |x| < 2^66
        id = 3;
        xr = -1.0LF / ax;
      }
    }
  }
  precise double z = xr * xr;
  precise double w = z * z;
  precise double s1 = z * (VKM_AT0 + w * (VKM_AT2 + w * (VKM_AT4 + w * (VKM_AT6 + w * (VKM_AT8 + w * VKM_AT10)))));
  precise double s2 = w * (VKM_AT1 + w * (VKM_AT3 + w * (VKM_AT5 + w * (VKM_AT7 + w * VKM_AT9))));
  if (id < 0) {
    precise double r0 = xr - xr * (s1 + s2);
    return r0;
  }
  double hi;
  double lo;
  if (id == 0) {
    hi = VKM_ATAN_0_5_H; lo = VKM_ATAN_0_5_L;
  } else if (id == 1) {
    hi = VKM_PIO4_H; lo = VKM_PIO4_L;
  } else if (id == 2) {
    hi = VKM_ATAN_1_5_H; lo = VKM_ATAN_1_5_L;
  } else {
    hi = VKM_PIO2_1; lo = VKM_PIO2_2;
  }
  precise double r = hi - ((xr * (s1 + s2) - lo) - xr);
  return neg ? -r : r;
}

// atan2 with java.lang.StrictMath semantics (fdlibm e_atan2)
double atan(double y, double x) {
  if (vkm_isnan(x) || vkm_isnan(y)) return vkm_nan();
  uvec2 wx = unpackDouble2x32(x);
  uvec2 wy = unpackDouble2x32(y);
  uint hx = wx.y;
  uint hy = wy.y;
  uint ix = hx & 0x7fffffffu;
  uint iy = hy & 0x7fffffffu;
  if (x == 1.0LF) return atan(y);
  uint m = ((hy >> 31) & 1u) | ((hx >> 30) & 2u);
  precise double pi = VKM_PI_H + VKM_PI_L;       // rounds to VKM_PI_H
  precise double pio2 = VKM_PIO2_1 + VKM_PIO2_2;
  precise double pio4 = VKM_PIO4_H + VKM_PIO4_L;
  if ((iy | wy.x) == 0u) {                       // y = +-0
    if (m <= 1u) return y;
    return (m == 2u) ? pi : -pi;
  }
  if ((ix | wx.x) == 0u) return ((hy & 0x80000000u) != 0u) ? -pio2 : pio2;
  if (ix == 0x7ff00000u) {                       // x = +-Infinity
    if (iy == 0x7ff00000u) {
      if (m == 0u) return pio4;
      if (m == 1u) return -pio4;
      precise double p34 = 3.0LF * VKM_PIO4_H;
      return (m == 2u) ? p34 : -p34;
    }
    if (m == 0u) return 0.0LF;
    if (m == 1u) return vkm_words(0x80000000u, 0u);
    return (m == 2u) ? pi : -pi;
  }
  if (iy == 0x7ff00000u) return ((hy & 0x80000000u) != 0u) ? -pio2 : pio2;
  int k = (int(iy) - int(ix)) >> 20;
  precise double z;
  if (k > 60) {                                  // |y/x| > 2^60
    z = VKM_PIO2_1 + 0.5LF * VKM_PI_L;
    m &= 1u;
  } else if ((hx & 0x80000000u) != 0u && k < -60) {
    z = 0.0LF;                                   // |y|/x < -2^-60
  } else {
    precise double q = abs(y / x);
    z = atan(q);
  }
  precise double r;
  if (m == 0u) {
    r = z;
  } else if (m == 1u) {
    r = -z;
  } else if (m == 2u) {
    r = VKM_PI_H - (z - VKM_PI_L);
  } else {
    r = (z - VKM_PI_L) - VKM_PI_H;
  }
  return r;
}

double atan2(double y, double x) { return atan(y, x); }

// fdlibm e_asin / e_acos: asin(x) = x + x*R(x^2), R = pS(t)/qS(t)
const double VKM_PS0 = 1.66666666666666657415e-01LF;
const double VKM_PS1 = -3.25565818622400915405e-01LF;
const double VKM_PS2 = 2.01212532134862925881e-01LF;
const double VKM_PS3 = -4.00555345006794114027e-02LF;
const double VKM_PS4 = 7.91534994289814532176e-04LF;
const double VKM_PS5 = 3.47933107596021167570e-05LF;
const double VKM_QS1 = -2.40339491173441421878e+00LF;
const double VKM_QS2 = 2.02094576023350569471e+00LF;
const double VKM_QS3 = -6.88283971605453293030e-01LF;
const double VKM_QS4 = 7.70381505559019352791e-02LF;

double vkm_asin_r(double t) {
  precise double p = t * (VKM_PS0 + t * (VKM_PS1 + t * (VKM_PS2 + t * (VKM_PS3 + t * (VKM_PS4 + t * VKM_PS5)))));
  precise double q = 1.0LF + t * (VKM_QS1 + t * (VKM_QS2 + t * (VKM_QS3 + t * VKM_QS4)));
  precise double r = p / q;
  return r;
}

double asin(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint ix = w.y & 0x7fffffffu;
  if (ix >= 0x3ff00000u) {                       // |x| >= 1 or NaN
    if (((ix - 0x3ff00000u) | w.x) == 0u) {
      precise double r1 = x * VKM_PIO2_1 + x * VKM_PIO2_2;
      return r1;
    }
    return vkm_nan();
  }
  if (ix < 0x3fe00000u) {                        // |x| < 0.5
    if (ix < 0x3e400000u) return x;              // |x| < 2^-27
    precise double t0 = x * x;
    precise double r0 = x + x * vkm_asin_r(t0);
    return r0;
  }
  precise double wv = 1.0LF - abs(x);
  precise double t = wv * 0.5LF;
  precise double rr = vkm_asin_r(t);
  precise double s = sqrt(t);
  precise double res;
  if (ix >= 0x3fef3333u) {                       // |x| > 0.975
    res = VKM_PIO2_1 - (2.0LF * (s + s * rr) - VKM_PIO2_2);
  } else {
    precise double df = vkm_clear_low(s);
    precise double c = (t - df * df) / (s + df);
    precise double p = 2.0LF * s * rr - (VKM_PIO2_2 - 2.0LF * c);
    precise double q = VKM_PIO4_H - 2.0LF * df;
    res = VKM_PIO4_H - (p - q);
  }
  return ((w.y & 0x80000000u) != 0u) ? -res : res;
}

double acos(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint ix = w.y & 0x7fffffffu;
  bool neg = (w.y & 0x80000000u) != 0u;
  if (ix >= 0x3ff00000u) {                       // |x| >= 1 or NaN
    if (((ix - 0x3ff00000u) | w.x) == 0u) {
      if (!neg) return 0.0LF;
      precise double pr = VKM_PI_H + 2.0LF * VKM_PIO2_2;
      return pr;
    }
    return vkm_nan();
  }
  precise double res;
  if (ix < 0x3fe00000u) {                        // |x| < 0.5
    if (ix <= 0x3c600000u) {
      res = VKM_PIO2_1 + VKM_PIO2_2;
      return res;
    }
    precise double z0 = x * x;
    res = VKM_PIO2_1 - (x - (VKM_PIO2_2 - x * vkm_asin_r(z0)));
  } else if (neg) {                              // x <= -0.5
    precise double z = (1.0LF + x) * 0.5LF;
    precise double s = sqrt(z);
    precise double wn = vkm_asin_r(z) * s - VKM_PIO2_2;
    res = VKM_PI_H - 2.0LF * (s + wn);
  } else {                                       // x >= 0.5
    precise double z = (1.0LF - x) * 0.5LF;
    precise double s = sqrt(z);
    precise double df = vkm_clear_low(s);
    precise double c = (z - df * df) / (s + df);
    precise double wp = vkm_asin_r(z) * s + c;
    res = 2.0LF * (df + wp);
  }
  return res;
}

// ---- hyperbolic (fdlibm) -----------------------------------------------------------------------

double sinh(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint ix = w.y & 0x7fffffffu;
  if (ix >= 0x7ff00000u) return x;
  precise double h = ((w.y & 0x80000000u) != 0u) ? -0.5LF : 0.5LF;
  precise double ax = abs(x);
  precise double r;
  if (ix < 0x40360000u) {                        // |x| < 22
    if (ix < 0x3e300000u) return x;              // |x| < 2^-28
    precise double t = expm1(ax);
    if (ix < 0x3ff00000u) {
      r = h * (2.0LF * t - t * t / (t + 1.0LF));
    } else {
      r = h * (t + t / (t + 1.0LF));
    }
    return r;
  }
  if (ix < 0x40862e42u) {                        // |x| < log(DBL_MAX)
    r = h * exp(ax);
    return r;
  }
  if (ix < 0x408633ceu || (ix == 0x408633ceu && w.x <= 0x8fb9f87du)) {
    precise double ew = exp(0.5LF * ax);
    precise double t = h * ew;
    r = t * ew;
    return r;
  }
  return ((w.y & 0x80000000u) != 0u) ? -vkm_inf() : vkm_inf();
}

double cosh(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint ix = w.y & 0x7fffffffu;
  precise double r;
  if (ix >= 0x7ff00000u) {
    r = x * x;
    return r;
  }
  precise double ax = abs(x);
  if (ix < 0x3fd62e43u) {                        // |x| < ln2/2
    precise double t = expm1(ax);
    precise double wv = 1.0LF + t;
    if (ix < 0x3c800000u) return wv;
    r = 1.0LF + (t * t) / (wv + wv);
    return r;
  }
  if (ix < 0x40360000u) {                        // |x| < 22
    precise double t = exp(ax);
    r = 0.5LF * t + 0.5LF / t;
    return r;
  }
  if (ix < 0x40862e42u) {
    r = 0.5LF * exp(ax);
    return r;
  }
  if (ix < 0x408633ceu || (ix == 0x408633ceu && w.x <= 0x8fb9f87du)) {
    precise double ew = exp(0.5LF * ax);
    precise double t = 0.5LF * ew;
    r = t * ew;
    return r;
  }
  return vkm_inf();
}

double tanh(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint ix = w.y & 0x7fffffffu;
  bool neg = (w.y & 0x80000000u) != 0u;
  if (ix >= 0x7ff00000u) {
    if (vkm_isnan(x)) return x;
    return neg ? -1.0LF : 1.0LF;
  }
  precise double z;
  if (ix < 0x40360000u) {                        // |x| < 22
    if (ix < 0x3c800000u) {                      // |x| < 2^-55
      z = x * (1.0LF + x);
      return z;
    }
    precise double ax = abs(x);
    if (ix >= 0x3ff00000u) {                     // |x| >= 1
      precise double t = expm1(2.0LF * ax);
      z = 1.0LF - 2.0LF / (t + 2.0LF);
    } else {
      precise double t = expm1(-2.0LF * ax);
      z = -t / (t + 2.0LF);
    }
  } else {
    z = 1.0LF;
  }
  return neg ? -z : z;
}

// ---- error function and normal distribution (fdlibm s_erf) ------------------------------------

const double VKM_ERX = 8.45062911510467529297e-01LF;
const double VKM_EFX = 1.28379167095512586316e-01LF;
const double VKM_EFX8 = 1.02703333676410069053e+00LF;
const double VKM_PP0 = 1.28379167095512558561e-01LF;
const double VKM_PP1 = -3.25042107247001499370e-01LF;
const double VKM_PP2 = -2.84817495755985104766e-02LF;
const double VKM_PP3 = -5.77027029648944159157e-03LF;
const double VKM_PP4 = -2.37630166566501626084e-05LF;
const double VKM_QQ1 = 3.97917223959155352819e-01LF;
const double VKM_QQ2 = 6.50222499887672944485e-02LF;
const double VKM_QQ3 = 5.08130628187576562776e-03LF;
const double VKM_QQ4 = 1.32494738004321644526e-04LF;
const double VKM_QQ5 = -3.96022827877536812320e-06LF;
const double VKM_PA0 = -2.36211856075265944077e-03LF;
const double VKM_PA1 = 4.14856118683748331666e-01LF;
const double VKM_PA2 = -3.72207876035701323847e-01LF;
const double VKM_PA3 = 3.18346619901161753674e-01LF;
const double VKM_PA4 = -1.10894694282396677476e-01LF;
const double VKM_PA5 = 3.54783043256182359371e-02LF;
const double VKM_PA6 = -2.16637559486879084300e-03LF;
const double VKM_QA1 = 1.06420880400844228286e-01LF;
const double VKM_QA2 = 5.40397917702171048937e-01LF;
const double VKM_QA3 = 7.18286544141962662868e-02LF;
const double VKM_QA4 = 1.26171219808761642112e-01LF;
const double VKM_QA5 = 1.36370839120290507362e-02LF;
const double VKM_QA6 = 1.19844998467991074170e-02LF;
const double VKM_RA0 = -9.86494403484714822705e-03LF;
const double VKM_RA1 = -6.93858572707181764372e-01LF;
const double VKM_RA2 = -1.05586262253232909814e+01LF;
const double VKM_RA3 = -6.23753324503260060396e+01LF;
const double VKM_RA4 = -1.62396669462573470355e+02LF;
const double VKM_RA5 = -1.84605092906711035994e+02LF;
const double VKM_RA6 = -8.12874355063065934246e+01LF;
const double VKM_RA7 = -9.81432934416914548592e+00LF;
const double VKM_SA1 = 1.96512716674392571292e+01LF;
const double VKM_SA2 = 1.37657754143519042600e+02LF;
const double VKM_SA3 = 4.34565877475229228821e+02LF;
const double VKM_SA4 = 6.45387271733267880336e+02LF;
const double VKM_SA5 = 4.29008140027567833386e+02LF;
const double VKM_SA6 = 1.08635005541779435134e+02LF;
const double VKM_SA7 = 6.57024977031928170135e+00LF;
const double VKM_SA8 = -6.04244152148580987438e-02LF;
const double VKM_RB0 = -9.86494292470009928597e-03LF;
const double VKM_RB1 = -7.99283237680523006574e-01LF;
const double VKM_RB2 = -1.77579549177547519889e+01LF;
const double VKM_RB3 = -1.60636384855821916062e+02LF;
const double VKM_RB4 = -6.37566443368389627722e+02LF;
const double VKM_RB5 = -1.02509513161107724954e+03LF;
const double VKM_RB6 = -4.83519191608651397019e+02LF;
const double VKM_SB1 = 3.03380607434824582924e+01LF;
const double VKM_SB2 = 3.25792512996573918826e+02LF;
const double VKM_SB3 = 1.53672958608443695994e+03LF;
const double VKM_SB4 = 3.19985821950859553908e+03LF;
const double VKM_SB5 = 2.55305040643316442583e+03LF;
const double VKM_SB6 = 4.74528541206955367215e+02LF;
const double VKM_SB7 = -2.24409524465858183362e+01LF;

// erf(x) - x = x * R(x^2) for |x| < 0.84375
double vkm_erf_small(double x) {
  precise double z = x * x;
  precise double r = VKM_PP0 + z * (VKM_PP1 + z * (VKM_PP2 + z * (VKM_PP3 + z * VKM_PP4)));
  precise double s = 1.0LF + z * (VKM_QQ1 + z * (VKM_QQ2 + z * (VKM_QQ3 + z * (VKM_QQ4 + z * VKM_QQ5))));
  precise double y = x * (r / s);
  return y;
}

// erf(1 + s) - erx for 0.84375 <= |x| < 1.25, s = |x| - 1
double vkm_erf_mid(double s) {
  precise double p = VKM_PA0 + s * (VKM_PA1 + s * (VKM_PA2 + s * (VKM_PA3 + s * (VKM_PA4 + s * (VKM_PA5 + s * VKM_PA6)))));
  precise double q = 1.0LF + s * (VKM_QA1 + s * (VKM_QA2 + s * (VKM_QA3 + s * (VKM_QA4 + s * (VKM_QA5 + s * VKM_QA6)))));
  precise double r = p / q;
  return r;
}

// -(sh + sl) - 0.5625 + rs in double-double: the exponent of erfc's tails, a^2 = sh + sl exactly
dvec2 vkm_erfc_exponent(double sh, double sl, double rs) {
  dvec2 e1 = vkm_two_sum(-sh, -0.5625LF);
  dvec2 e2 = vkm_two_sum(e1.x, rs);
  precise double lo = (e1.y + e2.y) - sl;
  return vkm_fast_two_sum(e2.x, lo);
}

// exp(-a^2) * exp(-0.5625 + R/S) * m for 1.25 <= a < 28, where a^2 = sh + sl exactly: that is
// erfc(a) * a * m. The exponent is carried in double-double, so the result keeps relative accuracy.
double vkm_erfc_scaled(double a, double sh, double sl, double m) {
  precise double s = 1.0LF / sh;
  precise double rs;
  if (a < 2.85714285714285714286LF) {            // 1/0.35
    precise double r = VKM_RA0 + s * (VKM_RA1 + s * (VKM_RA2 + s * (VKM_RA3 + s * (VKM_RA4 + s * (VKM_RA5
        + s * (VKM_RA6 + s * VKM_RA7))))));
    precise double q = 1.0LF + s * (VKM_SA1 + s * (VKM_SA2 + s * (VKM_SA3 + s * (VKM_SA4 + s * (VKM_SA5
        + s * (VKM_SA6 + s * (VKM_SA7 + s * VKM_SA8)))))));
    rs = r / q;
  } else {
    precise double r = VKM_RB0 + s * (VKM_RB1 + s * (VKM_RB2 + s * (VKM_RB3 + s * (VKM_RB4 + s * (VKM_RB5
        + s * VKM_RB6)))));
    precise double q = 1.0LF + s * (VKM_SB1 + s * (VKM_SB2 + s * (VKM_SB3 + s * (VKM_SB4 + s * (VKM_SB5
        + s * (VKM_SB6 + s * VKM_SB7))))));
    rs = r / q;
  }
  dvec2 e = vkm_erfc_exponent(sh, sl, rs);
  return vkm_exp_core(e.x, e.y, m);
}

// erfc(a) for 1.25 <= a < 28
double vkm_erfc_tail(double a) {
  dvec2 sq = vkm_two_prod(a, a);
  precise double m = 1.0LF / a;
  return vkm_erfc_scaled(a, sq.x, sq.y, m);
}

double erf(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint ix = w.y & 0x7fffffffu;
  bool neg = (w.y & 0x80000000u) != 0u;
  if (ix >= 0x7ff00000u) {
    if (vkm_isnan(x)) return x;
    return neg ? -1.0LF : 1.0LF;
  }
  precise double r;
  if (ix < 0x3feb0000u) {                        // |x| < 0.84375
    if (ix < 0x3e300000u) {                      // |x| < 2^-28
      if (ix < 0x00800000u) {
        r = 0.125LF * (8.0LF * x + VKM_EFX8 * x);
      } else {
        r = x + VKM_EFX * x;
      }
      return r;
    }
    r = x + vkm_erf_small(x);
    return r;
  }
  if (ix < 0x3ff40000u) {                        // |x| < 1.25
    precise double pq = vkm_erf_mid(abs(x) - 1.0LF);
    r = neg ? -VKM_ERX - pq : VKM_ERX + pq;
    return r;
  }
  if (ix >= 0x40180000u) return neg ? -1.0LF : 1.0LF;   // |x| >= 6
  precise double t = vkm_erfc_tail(abs(x));
  r = neg ? t - 1.0LF : 1.0LF - t;
  return r;
}

double erfc(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint ix = w.y & 0x7fffffffu;
  bool neg = (w.y & 0x80000000u) != 0u;
  if (ix >= 0x7ff00000u) {
    if (vkm_isnan(x)) return x;
    return neg ? 2.0LF : 0.0LF;
  }
  precise double r;
  if (ix < 0x3feb0000u) {                        // |x| < 0.84375
    if (ix < 0x3c700000u) {                      // |x| < 2^-56
      r = 1.0LF - x;
      return r;
    }
    precise double y = vkm_erf_small(x);
    if (neg || ix < 0x3fd00000u) {               // x < 1/4
      r = 1.0LF - (x + y);
    } else {
      precise double u = y + (x - 0.5LF);
      r = 0.5LF - u;
    }
    return r;
  }
  if (ix < 0x3ff40000u) {                        // |x| < 1.25
    precise double pq = vkm_erf_mid(abs(x) - 1.0LF);
    if (!neg) {
      precise double c = 1.0LF - VKM_ERX;
      r = c - pq;
    } else {
      r = 1.0LF + (VKM_ERX + pq);
    }
    return r;
  }
  if (ix < 0x403c0000u) {                        // |x| < 28
    if (neg && ix >= 0x40180000u) return 2.0LF;  // x <= -6
    precise double t = vkm_erfc_tail(abs(x));
    r = neg ? 2.0LF - t : t;
    return r;
  }
  return neg ? 2.0LF : 0.0LF;
}

// Standard normal CDF, Phi(x) = erfc(-x/sqrt(2))/2. For x < -1.25 sqrt(2) it is evaluated as
// exp(-x^2/2) * g(x) with x^2 exact, so it is accurate relative to Phi(x) down to the underflow
// threshold (x ~ -38.5); 1 - Phi(x) is not returned separately (use vk_norm_cdf(-x)).
//
// The same arithmetic as erfc's regions (fdlibm's rational functions on four intervals, the tails
// through exp with the exponent in double-double), written so that a lane runs each costly step
// once whatever its region: one exact product, one rational function whose coefficients are picked
// per region (shorter ones padded with zeros at the top, which changes no bit: c + u * 0 == c), one
// division and one exp. The branchy form made a GPU subgroup whose lanes fall in different regions
// run every region's steps one after the other. The results are bit for bit those of the branchy
// form (NormCdfBitsTest).
double vkm_pick(int r, double c0, double c1, double c2, double c3) {
  return r == 0 ? c0 : (r == 1 ? c1 : (r == 2 ? c2 : c3));
}

double vk_norm_cdf(double x) {
  if (vkm_isnan(x)) return x;
  precise double z = x * VKM_INV_SQRT2_H;
  bool upper = z > -1.25LF;                      // Phi(x) = erfc(w) / 2, w = -z
  precise double w = -z;
  uvec2 ww = unpackDouble2x32(w);
  uint ix = ww.y & 0x7fffffffu;
  bool neg = (ww.y & 0x80000000u) != 0u;
  if (upper) {
    if (ix >= 0x7ff00000u) return 0.5LF * 2.0LF;  // w = -Infinity
    if (ix < 0x3c700000u) {                      // |w| < 2^-56
      precise double e = 1.0LF - w;
      precise double r = 0.5LF * e;
      return r;
    }
    if (ix >= 0x40180000u) return 0.5LF * 2.0LF; // w <= -6 (w >= 1.25 is not upper)
  } else if (-x > 39.5LF) {
    return 0.0LF;
  }
  double a = abs(z);
  bool tail = !upper || ix >= 0x3ff40000u;       // |w| >= 1.25
  bool fix = upper && z < -0.25LF;               // Phi'(x) times the rounding error of z, below
  // regions: 0 erf's |w| < 0.84375, 1 |w| < 1.25, 2 and 3 the tails below and above 1/0.35
  int reg = !tail ? (ix < 0x3feb0000u ? 0 : 1) : (a < 2.85714285714285714286LF ? 2 : 3);
  // the one exact product: a^2 (t^2, t = -x, halved, below) in the tails, x times 1/sqrt(2) to correct z
  double pu = tail ? (upper ? a : -x) : x;
  double pv = tail ? pu : VKM_INV_SQRT2_H;
  dvec2 pr = vkm_two_prod(pu, pv);
  precise double sh = upper ? pr.x : 0.5LF * pr.x;
  precise double sl = upper ? pr.y : 0.5LF * pr.y;
  precise double inv = 1.0LF / (tail ? sh : 1.0LF);
  precise double am = a - 1.0LF;
  precise double ww2 = w * w;
  precise double u = reg == 0 ? ww2 : (reg == 1 ? am : inv);
  double n0 = vkm_pick(reg, VKM_PP0, VKM_PA0, VKM_RA0, VKM_RB0);
  double n1 = vkm_pick(reg, VKM_PP1, VKM_PA1, VKM_RA1, VKM_RB1);
  double n2 = vkm_pick(reg, VKM_PP2, VKM_PA2, VKM_RA2, VKM_RB2);
  double n3 = vkm_pick(reg, VKM_PP3, VKM_PA3, VKM_RA3, VKM_RB3);
  double n4 = vkm_pick(reg, VKM_PP4, VKM_PA4, VKM_RA4, VKM_RB4);
  double n5 = vkm_pick(reg, 0.0LF, VKM_PA5, VKM_RA5, VKM_RB5);
  double n6 = vkm_pick(reg, 0.0LF, VKM_PA6, VKM_RA6, VKM_RB6);
  double n7 = vkm_pick(reg, 0.0LF, 0.0LF, VKM_RA7, 0.0LF);
  double d1 = vkm_pick(reg, VKM_QQ1, VKM_QA1, VKM_SA1, VKM_SB1);
  double d2 = vkm_pick(reg, VKM_QQ2, VKM_QA2, VKM_SA2, VKM_SB2);
  double d3 = vkm_pick(reg, VKM_QQ3, VKM_QA3, VKM_SA3, VKM_SB3);
  double d4 = vkm_pick(reg, VKM_QQ4, VKM_QA4, VKM_SA4, VKM_SB4);
  double d5 = vkm_pick(reg, VKM_QQ5, VKM_QA5, VKM_SA5, VKM_SB5);
  double d6 = vkm_pick(reg, 0.0LF, VKM_QA6, VKM_SA6, VKM_SB6);
  double d7 = vkm_pick(reg, 0.0LF, 0.0LF, VKM_SA7, VKM_SB7);
  double d8 = vkm_pick(reg, 0.0LF, 0.0LF, VKM_SA8, 0.0LF);
  precise double num = n0 + u * (n1 + u * (n2 + u * (n3 + u * (n4 + u * (n5 + u * (n6 + u * n7))))));
  precise double den = 1.0LF + u * (d1 + u * (d2 + u * (d3 + u * (d4 + u * (d5 + u * (d6 + u * (d7 + u * d8)))))));
  precise double q = num / den;
  // the one exp: erfc's tail exp(-a^2 - 0.5625 + q) * m, or exp(-z^2) for the correction
  precise double m = (upper ? 1.0LF : VKM_INV_SQRT2_H) / pu;
  dvec2 e3 = vkm_erfc_exponent(sh, sl, q);
  precise double zz = -z * z;
  double ex = vkm_exp_core(tail ? e3.x : zz, tail ? e3.y : 0.0LF, tail ? m : 1.0LF);
  if (!upper) return ex;
  precise double e;
  if (tail) {
    e = 2.0LF - ex;                              // w <= -1.25
  } else if (reg == 0) {
    precise double y = w * q;
    e = neg || ix < 0x3fd00000u ? 1.0LF - (w + y) : 0.5LF - (y + (w - 0.5LF));
  } else {
    precise double c = 1.0LF - VKM_ERX;
    e = neg ? 1.0LF + (VKM_ERX + q) : c - q;
  }
  precise double r = 0.5LF * e;
  if (fix) {
    precise double dz = (pr.x - z) + (pr.y + x * VKM_INV_SQRT2_L);
    precise double g = ex * VKM_INV_SQRTPI_H;
    r = r + dz * g;
  }
  return r;
}

// Standard normal density exp(-x^2/2)/sqrt(2 pi), with x^2 exact
double vk_norm_pdf(double x) {
  if (vkm_isnan(x)) return x;
  precise double ax = abs(x);
  if (ax > 40.0LF) return 0.0LF;
  dvec2 sq = vkm_two_prod(ax, ax);
  return vkm_exp_core(-0.5LF * sq.x, -0.5LF * sq.y, VKM_INV_SQRT2PI_H);
}
