package io.vkspark.gpu.internal;

import static io.vkspark.gpu.internal.SpirvEmitter.*;

/**
 * Correctly rounded (IEEE round-to-nearest-even, as Java's {@code /} and {@code Math.sqrt}) double
 * division and square root, as SPIR-V functions without branches, for devices whose own are not:
 * Vulkan requires only single-precision accuracy of 64-bit {@code OpFDiv} and {@code Sqrt}, and
 * NVIDIA's are off by an ulp now and then.
 *
 * <p>Division: both operands are split into a significand in [1, 2) and an exponent (subnormals
 * scaled up first). The device's own reciprocal of the divisor's significand, refined by two
 * Newton steps with {@code fma}, gives a quotient within an ulp; one more {@code fma} step makes
 * it faithful, and the exact remainder {@code fma(-b, q, a)} compared with half an ulp of the
 * divisor picks the correctly rounded neighbour (normal quotients have no ties). A quotient in
 * the subnormal range is rounded again from the significands at its own coarser grid: the
 * candidate integer multiple of 2^-1074 and the signs of {@code fma(-b, c +- 0.5, a)}, exact in
 * one rounding, settle it, ties to even. Zero, infinite and NaN operands take IEEE's results.
 *
 * <p>Square root: the significand in [1, 4) (even exponent), the device's square root refined by
 * two coupled Newton steps and one residual step, then the rounding is settled by the sign of
 * {@code fma(-s, s + ulp, m)} (and of the one below), which is exact because {@code m - s(s +
 * ulp)} is a multiple of ulp^2 and square roots have no ties.
 *
 * <p>Every exact step is a residual {@code x - u * v} with {@code u * v} within a factor of two of
 * {@code x}: one {@code fma} on a device that fuses it, else Dekker's exact product (lavapipe's
 * {@code fma} of doubles is not fused). The probe checks the functions themselves on each device
 * ({@link DoubleRoundingProbe}). A host reference of the same steps was checked on 9 million
 * operand pairs.
 */
final class CorrectlyRounded {
  private CorrectlyRounded() {}

  /** A normalized positive finite double: {@code m * 2^e}, m in [1, 2). */
  private record Split(int m, int e) {}

  private static Split split(SpirvEmitter w, int abs) {
    SpirvEmitter.Types t = w.types();
    int sub = w.cmp(OP_FORD_LESS_THAN, abs, w.dconst(0x1p-1022));
    int scaled = w.dsel(sub, w.mul(abs, w.dconst(0x1p54)), abs);
    int hi = w.hiWord(scaled);
    int lo = w.loWord(scaled);
    int biased = w.op(OP_BITCAST, t.i32(), w.op(OP_SHIFT_RIGHT_LOGICAL, t.u32(), hi, w.uconst(20)));
    int e = w.op(OP_ISUB, t.i32(), biased, w.isel(sub, w.iconst(1023 + 54), w.iconst(1023)));
    int mhi = w.op(OP_BITWISE_OR, t.u32(), w.op(OP_BITWISE_AND, t.u32(), hi, w.uconst(0xFFFFF)), w.uconst(0x3FF00000));
    return new Split(w.fromWords(lo, mhi), e);
  }

  /**
   * {@code x - u * v} in one rounding, given {@code u * v} close to {@code x} (within a factor of 2,
   * so {@code x - RN(u * v)} is exact): {@code fma(-u, v, x)} where the device fuses it, else the
   * exact product by Dekker's splitting, which needs only correctly rounded, uncontracted {@code *}
   * and {@code -} (lavapipe computes {@code fma} of doubles as a multiply and an add).
   */
  private static int residual(SpirvEmitter w, boolean fused, int x, int u, int v) {
    if (fused) {
      return w.fma(w.neg(u), v, x);
    }
    int p = w.mul(u, v);
    int[] us = halves(w, u);
    int[] vs = halves(w, v);
    int err = w.add(w.add(w.add(w.sub(w.mul(us[0], vs[0]), p), w.mul(us[0], vs[1])), w.mul(us[1], vs[0])),
        w.mul(us[1], vs[1]));
    return w.sub(w.sub(x, p), err);
  }

  /** Veltkamp's split of {@code x} into two halves of 26 bits each. */
  private static int[] halves(SpirvEmitter w, int x) {
    int t = w.mul(x, w.dconst(134217729.0)); // 2^27 + 1
    int hi = w.sub(t, w.sub(t, x));
    return new int[] {hi, w.sub(x, hi)};
  }

  /** {@code x + u * v}, where only accuracy matters (a Newton correction). */
  private static int correct(SpirvEmitter w, boolean fused, int x, int u, int v) {
    return fused ? w.fma(u, v, x) : w.add(x, w.mul(u, v));
  }

  private static int abs(SpirvEmitter w, int x) {
    return w.ext(w.types().f64(), GLSL_FABS, x);
  }

  /** Emits {@code double vk_ddiv(double a, double b)}; returns its id. */
  static int divide(SpirvEmitter w, int fnType, boolean fused) {
    SpirvEmitter.Types t = w.types();
    int fn = w.fresh();
    w.raw(OP_FUNCTION, t.f64(), fn, 0, fnType);
    int a = w.op(OP_FUNCTION_PARAMETER, t.f64());
    int b = w.op(OP_FUNCTION_PARAMETER, t.f64());
    w.raw(OP_LABEL, w.fresh());
    int one = w.dconst(1.0);
    int half = w.dconst(0.5);
    int zero = w.dconst(0.0);
    int aIsZero = w.cmp(OP_FORD_EQUAL, a, zero);
    int bIsZero = w.cmp(OP_FORD_EQUAL, b, zero);
    int aIsInf = w.op(OP_IS_INF, t.bool(), a);
    int bIsInf = w.op(OP_IS_INF, t.bool(), b);
    int nan = w.or(w.or(w.op(OP_IS_NAN, t.bool(), a), w.op(OP_IS_NAN, t.bool(), b)),
        w.or(w.and(aIsZero, bIsZero), w.and(aIsInf, bIsInf)));
    int inf = w.or(aIsInf, bIsZero);
    int zeroResult = w.or(aIsZero, bIsInf);
    int signs = w.op(OP_BITWISE_AND, t.u32(), w.op(OP_BITWISE_XOR, t.u32(), w.hiWord(a), w.hiWord(b)), w.uconst(0x80000000));
    int negative = w.op(OP_INOT_EQUAL, t.bool(), signs, w.uconst(0));

    Split sa = split(w, abs(w, a));
    Split sb = split(w, abs(w, b));
    int ma = sa.m();
    int mb = sb.m();
    int exp = w.op(OP_ISUB, t.i32(), sa.e(), sb.e());
    // reciprocal: the device's, then two Newton steps
    int y = w.arith(OP_FDIV, one, mb);
    for (int i = 0; i < 2; i++) {
      y = correct(w, fused, y, y, residual(w, fused, one, mb, y));
    }
    int q = w.mul(ma, y);
    q = correct(w, fused, q, residual(w, fused, ma, mb, q), y); // faithful
    // the correctly rounded neighbour: compare the exact remainder with half an ulp of b
    int ge1 = w.cmp(OP_FORD_GREATER_THAN_EQUAL, q, one);
    int ulp = w.dsel(ge1, w.dconst(0x1p-52), w.dconst(0x1p-53));
    int ulpDown = w.dsel(w.cmp(OP_FORD_EQUAL, q, one), w.dconst(0x1p-53),
        w.dsel(w.cmp(OP_FORD_EQUAL, q, half), w.dconst(0x1p-54), ulp));
    int r = residual(w, fused, ma, mb, q);
    int up = w.cmp(OP_FORD_GREATER_THAN, r, w.mul(mb, w.mul(half, ulp)));
    int down = w.cmp(OP_FORD_GREATER_THAN, w.neg(r), w.mul(mb, w.mul(half, ulpDown)));
    int qn = w.dsel(up, w.add(q, ulp), w.dsel(down, w.sub(q, ulpDown), q));
    int normal = w.op(OP_SGREATER_THAN_EQUAL, t.bool(),
        w.op(OP_ISUB, t.i32(), exp, w.isel(w.cmp(OP_FORD_GREATER_THAN_EQUAL, qn, one), w.iconst(0), w.iconst(1))),
        w.iconst(-1022));
    int normalResult = w.ldexp(qn, w.ext(t.i32(), GLSL_SCLAMP, exp, w.iconst(-1100), w.iconst(1100)));
    // subnormal quotient: k * 2^-1074 with k = RN(ma / mb * 2^s), ties to even
    int s = w.ext(t.i32(), GLSL_SCLAMP, w.op(OP_IADD, t.i32(), exp, w.iconst(1074)), w.iconst(-10), w.iconst(60));
    // c = RN(qn * 2^s) < 2^52 by adding 2^52, which also leaves c's parity in the low bit (lavapipe's
    // roundEven and floor of doubles are wrong above 2^31)
    int big = w.dconst(0x1p52);
    int shifted = w.add(w.ldexp(qn, s), big);
    int c = w.sub(shifted, big);
    int odd = w.op(OP_INOT_EQUAL, t.bool(), w.op(OP_BITWISE_AND, t.u32(), w.loWord(shifted), w.uconst(1)), w.uconst(0));
    int xs = w.ldexp(ma, s);
    int above = residual(w, fused, xs, mb, w.add(c, half)); // its sign is exact
    int below = residual(w, fused, xs, mb, w.sub(c, half));
    int inc = w.or(w.cmp(OP_FORD_GREATER_THAN, above, zero), w.and(w.cmp(OP_FORD_EQUAL, above, zero), odd));
    int dec = w.or(w.cmp(OP_FORD_LESS_THAN, below, zero), w.and(w.cmp(OP_FORD_EQUAL, below, zero), odd));
    int k = w.sub(w.add(c, w.dsel(inc, one, zero)), w.dsel(dec, one, zero));
    int subnormalResult = w.ldexp(k, w.iconst(-1074));

    int magnitude = w.dsel(inf, w.dconst(Double.POSITIVE_INFINITY),
        w.dsel(zeroResult, zero, w.dsel(normal, normalResult, subnormalResult)));
    int signed = w.dsel(negative, w.neg(magnitude), magnitude);
    int result = w.dsel(nan, w.dconst(Double.NaN), signed);
    w.raw(OP_RETURN_VALUE, result);
    w.raw(OP_FUNCTION_END);
    return fn;
  }

  /** Emits {@code double vk_dsqrt(double x)}; returns its id. */
  static int sqrt(SpirvEmitter w, int fnType, boolean fused) {
    SpirvEmitter.Types t = w.types();
    int fn = w.fresh();
    w.raw(OP_FUNCTION, t.f64(), fn, 0, fnType);
    int x = w.op(OP_FUNCTION_PARAMETER, t.f64());
    w.raw(OP_LABEL, w.fresh());
    int one = w.dconst(1.0);
    int half = w.dconst(0.5);
    int zero = w.dconst(0.0);
    int nan = w.or(w.op(OP_IS_NAN, t.bool(), x), w.cmp(OP_FORD_LESS_THAN, x, zero));
    int keep = w.or(w.cmp(OP_FORD_EQUAL, x, zero), w.op(OP_IS_INF, t.bool(), x)); // +-0, +inf (-inf is NaN above)

    Split sx = split(w, abs(w, x));
    int oddExp = w.op(OP_INOT_EQUAL, t.bool(), w.op(OP_BITWISE_AND, t.i32(), sx.e(), w.iconst(1)), w.iconst(0));
    int m = w.dsel(oddExp, w.mul(sx.m(), w.dconst(2.0)), sx.m()); // [1, 4)
    int k = w.op(OP_SHIFT_RIGHT_ARITHMETIC, t.i32(), sx.e(), w.iconst(1)); // floor(e / 2)
    // the device's 1/sqrt(m), then coupled Newton steps: g -> sqrt(m), h -> 1 / (2 sqrt(m))
    int y = w.arith(OP_FDIV, one, w.ext(t.f64(), GLSL_SQRT, m));
    int g = w.mul(m, y);
    int h = w.mul(half, y);
    for (int i = 0; i < 2; i++) {
      int r = residual(w, fused, half, g, h);
      g = correct(w, fused, g, g, r);
      h = correct(w, fused, h, h, r);
    }
    int s = correct(w, fused, g, residual(w, fused, m, g, g), h); // faithful
    int two = w.dconst(2.0);
    int ulp = w.dsel(w.cmp(OP_FORD_GREATER_THAN_EQUAL, s, two), w.dconst(0x1p-51), w.dconst(0x1p-52));
    int ulpDown = w.dsel(w.cmp(OP_FORD_EQUAL, s, one), w.dconst(0x1p-53),
        w.dsel(w.cmp(OP_FORD_EQUAL, s, two), w.dconst(0x1p-52), ulp));
    int up = w.cmp(OP_FORD_GREATER_THAN, residual(w, fused, m, s, w.add(s, ulp)), zero);
    int down = w.cmp(OP_FORD_LESS_THAN_EQUAL, residual(w, fused, m, s, w.sub(s, ulpDown)), zero);
    int sn = w.dsel(up, w.add(s, ulp), w.dsel(down, w.sub(s, ulpDown), s));
    int root = w.ldexp(sn, k);
    int result = w.dsel(nan, w.dconst(Double.NaN), w.dsel(keep, x, root));
    w.raw(OP_RETURN_VALUE, result);
    w.raw(OP_FUNCTION_END);
    return fn;
  }
}
