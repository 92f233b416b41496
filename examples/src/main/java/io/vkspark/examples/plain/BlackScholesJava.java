package io.vkspark.examples.plain;

import org.apache.spark.sql.api.java.UDF5;

/**
 * Black-Scholes price of a European call as a plain Spark Java UDF: no vkspark API and no GLSL,
 * registered with {@code spark.udf().register("black_scholes_java", new BlackScholesJava(),
 * DataTypes.DoubleType)}. With the vkspark plugin and {@code spark.vkspark.translate=true} (the
 * default) vkspark translates this bytecode into a GPU kernel (issue 23); with {@code false} Spark
 * runs {@code call()} on the CPU.
 *
 * <p>The arithmetic is exactly that of {@code io.vkspark.examples.BlackScholes.call()} (the
 * hand-written GPU UDF's CPU half): {@link StrictMath} and a port of fdlibm's {@code erfc}, here in
 * self-contained static helpers with the coefficients as {@code static final} constants, no arrays
 * and no allocation, so the two give the same bits (checked by {@code PlainUdfsTest}).
 *
 * <p>Domain: {@code s, k > 0}, {@code t, v >= 0}, all finite; anything else gives NaN. With
 * {@code t = 0} or {@code v = 0} the price is the discounted intrinsic value. Null in, null out.
 */
public final class BlackScholesJava implements UDF5<Double, Double, Double, Double, Double, Double> {
  private static final long serialVersionUID = 1L;

  @Override
  public Double call(Double s, Double k, Double t, Double r, Double v) {
    if (s == null || k == null || t == null || r == null || v == null) {
      return null;
    }
    return price(s, k, t, r, v);
  }

  private static double price(double s, double k, double t, double r, double v) {
    if (!(s > 0 && k > 0 && t >= 0 && v >= 0) || Double.isInfinite(s) || Double.isInfinite(k)
        || Double.isInfinite(t) || !Double.isFinite(r) || Double.isInfinite(v)) {
      return Double.NaN;
    }
    double df = StrictMath.exp(-r * t);
    double sd = v * StrictMath.sqrt(t);
    if (sd == 0) {
      return Math.max(s - k * df, 0.0);
    }
    double d1 = (StrictMath.log(s / k) + (r + 0.5 * v * v) * t) / sd;
    double d2 = d1 - sd;
    return s * normCdf(d1) - k * df * normCdf(d2);
  }

  // ---- the standard normal CDF ----------------------------------------------------------------

  private static final double INV_SQRT2_H = 0.7071067811865476;    // 1/sqrt(2) = H + L
  private static final double INV_SQRT2_L = -4.833646656726457e-17;
  private static final double INV_SQRT_PI = 0.5641895835477563;

  /**
   * The standard normal CDF, {@code erfc(-x/sqrt(2))/2}, with a first-order correction for the
   * rounding of {@code x/sqrt(2)} so the left tail keeps its relative accuracy (about 1e-15).
   */
  private static double normCdf(double x) {
    if (Double.isNaN(x)) {
      return x;
    }
    double z = x * INV_SQRT2_H;
    double r = 0.5 * erfc(-z);
    if (z < -0.25 && r > 0) {
      double dz = Math.fma(x, INV_SQRT2_H, -z) + x * INV_SQRT2_L;  // x/sqrt(2) - z
      r += dz * StrictMath.exp(-z * z) * INV_SQRT_PI;
    }
    return r;
  }

  // fdlibm s_erf.c (Sun Microsystems, freely redistributable), erfc part
  private static final double ERX = 8.45062911510467529297e-01;
  private static final double PP0 = 1.28379167095512558561e-01, PP1 = -3.25042107247001499370e-01,
      PP2 = -2.84817495755985104766e-02, PP3 = -5.77027029648944159157e-03, PP4 = -2.37630166566501626084e-05;
  private static final double QQ1 = 3.97917223959155352819e-01, QQ2 = 6.50222499887672944485e-02,
      QQ3 = 5.08130628187576562776e-03, QQ4 = 1.32494738004321644526e-04, QQ5 = -3.96022827877536812320e-06;
  private static final double PA0 = -2.36211856075265944077e-03, PA1 = 4.14856118683748331666e-01,
      PA2 = -3.72207876035701323847e-01, PA3 = 3.18346619901161753674e-01, PA4 = -1.10894694282396677476e-01,
      PA5 = 3.54783043256182359371e-02, PA6 = -2.16637559486879084300e-03;
  private static final double QA1 = 1.06420880400844228286e-01, QA2 = 5.40397917702171048937e-01,
      QA3 = 7.18286544141962662868e-02, QA4 = 1.26171219808761642112e-01, QA5 = 1.36370839120290507362e-02,
      QA6 = 1.19844998467991074170e-02;
  private static final double RA0 = -9.86494403484714822705e-03, RA1 = -6.93858572707181764372e-01,
      RA2 = -1.05586262253232909814e+01, RA3 = -6.23753324503260060396e+01, RA4 = -1.62396669462573470355e+02,
      RA5 = -1.84605092906711035994e+02, RA6 = -8.12874355063065934246e+01, RA7 = -9.81432934416914548592e+00;
  private static final double SA1 = 1.96512716674392571292e+01, SA2 = 1.37657754143519042600e+02,
      SA3 = 4.34565877475229228821e+02, SA4 = 6.45387271733267880336e+02, SA5 = 4.29008140027567833386e+02,
      SA6 = 1.08635005541779435134e+02, SA7 = 6.57024977031928170135e+00, SA8 = -6.04244152148580987438e-02;
  private static final double RB0 = -9.86494292470009928597e-03, RB1 = -7.99283237680523006574e-01,
      RB2 = -1.77579549177547519889e+01, RB3 = -1.60636384855821916062e+02, RB4 = -6.37566443368389627722e+02,
      RB5 = -1.02509513161107724954e+03, RB6 = -4.83519191608651397019e+02;
  private static final double SB1 = 3.03380607434824582924e+01, SB2 = 3.25792512996573918826e+02,
      SB3 = 1.53672958608443695994e+03, SB4 = 3.19985821950859553908e+03, SB5 = 2.55305040643316442583e+03,
      SB6 = 4.74528541206955367215e+02, SB7 = -2.24409524465858183362e+01;

  /** The complementary error function (fdlibm's algorithm, error below 1 ulp). */
  private static double erfc(double x) {
    int hx = (int) (Double.doubleToRawLongBits(x) >>> 32);
    int ix = hx & 0x7fffffff;
    if (ix >= 0x7ff00000) {
      return Double.isNaN(x) ? x : x > 0 ? 0.0 : 2.0;
    }
    if (ix < 0x3feb0000) {                           // |x| < 0.84375
      if (ix < 0x3c700000) {
        return 1.0 - x;
      }
      double z = x * x;
      double r = PP0 + z * (PP1 + z * (PP2 + z * (PP3 + z * PP4)));
      double s = 1.0 + z * (QQ1 + z * (QQ2 + z * (QQ3 + z * (QQ4 + z * QQ5))));
      double y = r / s;
      if (hx < 0x3fd00000) {                         // x < 1/4
        return 1.0 - (x + x * y);
      }
      r = x * y;
      r += x - 0.5;
      return 0.5 - r;
    }
    if (ix < 0x3ff40000) {                           // 0.84375 <= |x| < 1.25
      double s = Math.abs(x) - 1.0;
      double p = PA0 + s * (PA1 + s * (PA2 + s * (PA3 + s * (PA4 + s * (PA5 + s * PA6)))));
      double q = 1.0 + s * (QA1 + s * (QA2 + s * (QA3 + s * (QA4 + s * (QA5 + s * QA6)))));
      return hx >= 0 ? (1.0 - ERX) - p / q : 1.0 + (ERX + p / q);
    }
    if (ix < 0x403c0000) {                           // |x| < 28
      double a = Math.abs(x);
      double s = 1.0 / (a * a);
      double r;
      double q;
      if (ix < 0x4006db6d) {                         // |x| < 1/0.35
        r = RA0 + s * (RA1 + s * (RA2 + s * (RA3 + s * (RA4 + s * (RA5 + s * (RA6 + s * RA7))))));
        q = 1.0 + s * (SA1 + s * (SA2 + s * (SA3 + s * (SA4 + s * (SA5 + s * (SA6 + s * (SA7 + s * SA8)))))));
      } else {
        if (hx < 0 && ix >= 0x40180000) {            // x <= -6
          return 2.0;
        }
        r = RB0 + s * (RB1 + s * (RB2 + s * (RB3 + s * (RB4 + s * (RB5 + s * RB6)))));
        q = 1.0 + s * (SB1 + s * (SB2 + s * (SB3 + s * (SB4 + s * (SB5 + s * (SB6 + s * SB7))))));
      }
      double z = Double.longBitsToDouble(Double.doubleToRawLongBits(a) & 0xffffffff00000000L);
      double e = StrictMath.exp(-z * z - 0.5625) * StrictMath.exp((z - a) * (z + a) + r / q);
      return hx > 0 ? e / a : 2.0 - e / a;
    }
    return hx > 0 ? 0.0 : 2.0;
  }
}
