package io.vkspark.gpu;

/**
 * High-accuracy CPU references for the functions java.lang.StrictMath lacks (erf, erfc, the
 * normal CDF and density, log2), computed in double-double arithmetic (about 32 significant
 * digits), independent of the algorithms in vkmath.glsl:
 *
 * <ul>
 *   <li>erf: Maclaurin series for |x| <= 3.5;
 *   <li>erfc: 1 - erf from the series for |x| <= 3.5, else exp(-x^2)/sqrt(pi) times Laplace's
 *       continued fraction, with x^2 exact;
 *   <li>normal CDF: its Maclaurin series for |x| <= 5, else the Mills-ratio continued fraction
 *       times the density, with x^2/2 exact;
 *   <li>exp: argument reduction by ln2 in double-double and a Taylor series.
 * </ul>
 *
 * <p>The results are accurate to a few units in the 30th digit before the final rounding, except
 * where they are subnormal.
 */
final class VkMathReference {
  private VkMathReference() {}

  /** A double-double hi + lo with |lo| <= ulp(hi)/2. */
  record DD(double hi, double lo) {
    static final DD ZERO = new DD(0, 0);
    static final DD ONE = new DD(1, 0);

    static DD of(double a) {
      return new DD(a, 0);
    }

    static DD twoSum(double a, double b) {
      double s = a + b;
      double bb = s - a;
      return new DD(s, (a - (s - bb)) + (b - bb));
    }

    static DD fast(double a, double b) {
      double s = a + b;
      return new DD(s, b - (s - a));
    }

    static DD prod(double a, double b) {
      double p = a * b;
      return new DD(p, Math.fma(a, b, -p));
    }

    DD add(DD b) {
      DD s = twoSum(hi, b.hi);
      DD t = twoSum(lo, b.lo);
      DD u = fast(s.hi, s.lo + t.hi);
      return fast(u.hi, u.lo + t.lo);
    }

    DD add(double b) {
      DD s = twoSum(hi, b);
      return fast(s.hi, s.lo + lo);
    }

    DD neg() {
      return new DD(-hi, -lo);
    }

    DD sub(DD b) {
      return add(b.neg());
    }

    DD mul(DD b) {
      double p = hi * b.hi;
      double e = Math.fma(hi, b.hi, -p) + (hi * b.lo + lo * b.hi);
      return fast(p, e);
    }

    DD mul(double b) {
      double p = hi * b;
      double e = Math.fma(hi, b, -p) + lo * b;
      return fast(p, e);
    }

    DD div(DD b) {
      double q1 = hi / b.hi;
      DD r = sub(b.mul(q1));
      double q2 = r.hi / b.hi;
      r = r.sub(b.mul(q2));
      double q3 = r.hi / b.hi;
      return fast(q1, q2).add(q3);
    }

    DD div(double b) {
      double q1 = hi / b;
      DD p = prod(q1, b);
      double q2 = (((hi - p.hi) - p.lo) + lo) / b;
      return fast(q1, q2);
    }

    DD scalb(int k) {
      return new DD(Math.scalb(hi, k), Math.scalb(lo, k));
    }

    double value() {
      return hi + lo;
    }
  }

  static double bits(long b) {
    return Double.longBitsToDouble(b);
  }

  static final DD LN2 = new DD(bits(0x3fe62e42fefa39efL), bits(0x3c7abc9e3b39803fL));
  static final DD INV_LN2 = new DD(bits(0x3ff71547652b82feL), bits(0x3c7777d0ffda0d24L));
  static final DD TWO_OVER_SQRT_PI = new DD(bits(0x3ff20dd750429b6dL), bits(0x3c71ae3a914fed80L));
  static final DD INV_SQRT_PI = new DD(bits(0x3fe20dd750429b6dL), bits(0x3c61ae3a914fed80L));
  static final DD INV_SQRT_2PI = new DD(bits(0x3fd9884533d43651L), bits(0xbc7cbc0d30ebfd15L));

  /** exp(a) * m for a double-double a in about [-800, 709], rounded once at the end. */
  static DD exp(DD a, DD m) {
    double k = Math.rint(a.hi * INV_LN2.hi);
    DD r = a.sub(LN2.mul(k));
    DD term = DD.ONE;
    DD sum = DD.ONE;
    for (int n = 1; n <= 30; n++) {
      term = term.mul(r).div(n);
      sum = sum.add(term);
      if (Math.abs(term.hi) < 1e-34) {
        break;
      }
    }
    sum = sum.mul(m);
    int ki = (int) k;
    if (ki < -960) {
      // the result may be subnormal: round hi + lo once, after the scaling
      double v = Math.scalb(sum.hi, ki + 200) + Math.scalb(sum.lo, ki + 200);
      return new DD(Math.scalb(v, -200), 0);
    }
    return sum.scalb(ki);
  }

  static DD exp(DD a) {
    return exp(a, DD.ONE);
  }

  /** sum_{n>=0} (-1)^n x^(2n+1) / (n! (2n+1) c^n), for c = 1 (erf) or 2 (normal CDF). */
  private static DD oddSeries(double x, double c) {
    DD x2 = DD.prod(x, x).div(c).neg();
    DD a = DD.of(x);
    DD sum = DD.of(x);
    for (int n = 1; n < 2000; n++) {
      a = a.mul(x2).div(n);
      DD t = a.div(2 * n + 1);
      sum = sum.add(t);
      if (Math.abs(t.hi) < 1e-34 * Math.abs(sum.hi) && n > Math.abs(x2.hi)) {
        break;
      }
    }
    return sum;
  }

  /** 1/(x + c/(x + 2c/(x + 3c/(x + ...)))), evaluated backwards from depth n. */
  private static DD continuedFraction(double x, double c, int n) {
    DD f = DD.of(x);
    for (int k = n; k >= 1; k--) {
      f = DD.of(x).add(DD.of(k * c).div(f));
    }
    return DD.ONE.div(f);
  }

  static int depth(double x) {
    return 40 + (int) (2000.0 / (x * x));
  }

  static DD erfDD(double x) {
    if (Math.abs(x) <= 3.5) {
      return oddSeries(x, 1).mul(TWO_OVER_SQRT_PI);
    }
    DD c = erfcPositive(Math.abs(x));
    DD r = DD.ONE.sub(c);
    return x < 0 ? r.neg() : r;
  }

  /** erfc(x) for x > 3.5 */
  private static DD erfcPositive(double x) {
    DD x2 = DD.prod(x, x);
    return exp(x2.neg(), INV_SQRT_PI.mul(continuedFraction(x, 0.5, depth(x))));
  }

  static double erf(double x) {
    if (Double.isNaN(x)) {
      return x;
    }
    if (x == 0 || Math.abs(x) >= 6) {
      // erf(0) keeps the sign of zero; for |x| >= 6, 1 - erf(|x|) < 2^-55 rounds away
      return x == 0 ? x : Math.signum(x);
    }
    return erfDD(x).value();
  }

  static double erfc(double x) {
    if (Double.isNaN(x)) {
      return x;
    }
    if (x == Double.POSITIVE_INFINITY) {
      return 0;
    }
    if (x <= -6) {
      return 2;
    }
    if (x > 3.5) {
      return x > 27.5 ? 0 : erfcPositive(x).value();
    }
    return DD.ONE.sub(erfDD(x)).value();
  }

  /** The standard normal CDF. */
  static double normCdf(double x) {
    if (Double.isNaN(x)) {
      return x;
    }
    if (Math.abs(x) <= 5) {
      return oddSeries(x, 2).mul(INV_SQRT_2PI).add(0.5).value();
    }
    double t = Math.abs(x);
    DD tail = t > 39 ? DD.ZERO : normTail(t);
    return x < 0 ? tail.value() : DD.ONE.sub(tail).value();
  }

  /** Phi(-t) = phi(t) * Mills ratio(t), t > 5 */
  private static DD normTail(double t) {
    DD half = DD.prod(t, t).mul(0.5);
    return exp(half.neg(), INV_SQRT_2PI.mul(continuedFraction(t, 1, depth(t / Math.sqrt(2)))));
  }

  /** The standard normal density. */
  static double normPdf(double x) {
    if (Double.isNaN(x)) {
      return x;
    }
    if (Math.abs(x) > 40) {
      return 0;
    }
    DD half = DD.prod(x, x).mul(0.5);
    return exp(half.neg(), INV_SQRT_2PI).value();
  }

  /**
   * log2(x): the exponent plus log2 of the significand m in [1, 2) from StrictMath.log, refined by
   * one Newton step on exp in double-double.
   */
  static double log2(double x) {
    if (Double.isNaN(x) || x < 0) {
      return Double.NaN;
    }
    if (x == 0) {
      return Double.NEGATIVE_INFINITY;
    }
    if (Double.isInfinite(x)) {
      return x;
    }
    int e = Math.getExponent(x);
    if (e == Double.MIN_EXPONENT - 1) {
      x *= 0x1p54;
      e = Math.getExponent(x) - 54;
    }
    double m = x / Math.scalb(1.0, Math.getExponent(x));
    DD l = DD.of(StrictMath.log(m));
    // Newton: l += m * exp(-l) - 1
    DD corr = DD.of(m).mul(exp(l.neg())).sub(DD.ONE);
    l = l.add(corr);
    return l.mul(INV_LN2).add(e).value();
  }
}
