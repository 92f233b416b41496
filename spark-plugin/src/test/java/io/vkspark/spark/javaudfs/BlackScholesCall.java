package io.vkspark.spark.javaudfs;

import org.apache.spark.sql.api.java.UDF5;

/**
 * A European call's Black-Scholes price as a plain Spark Java UDF, written as a user would without
 * vkspark (no vkspark imports): StrictMath, a static normal-CDF helper (Abramowitz and Stegun
 * 26.2.17, a polynomial in 1 / (1 + p x)), static final constants, null arguments give null.
 */
public final class BlackScholesCall implements UDF5<Double, Double, Double, Double, Double, Double> {
  private static final double INV_SQRT_2PI = 0.3989422804014327;
  private static final double P = 0.2316419;
  private static final double B1 = 0.319381530;
  private static final double B2 = -0.356563782;
  private static final double B3 = 1.781477937;
  private static final double B4 = -1.821255978;
  private static final double B5 = 1.330274429;

  @Override
  public Double call(Double s, Double k, Double t, Double r, Double v) {
    if (s == null || k == null || t == null || r == null || v == null) {
      return null;
    }
    double sqrtT = StrictMath.sqrt(t);
    double d1 = (StrictMath.log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrtT);
    double d2 = d1 - v * sqrtT;
    return s * normCdf(d1) - k * StrictMath.exp(-r * t) * normCdf(d2);
  }

  /** The standard normal distribution function, to about 7.5e-8. */
  static double normCdf(double x) {
    double a = x < 0 ? -x : x;
    double q = 1.0 / (1.0 + P * a);
    double poly = q * (B1 + q * (B2 + q * (B3 + q * (B4 + q * B5))));
    double tail = INV_SQRT_2PI * StrictMath.exp(-0.5 * a * a) * poly;
    return x < 0 ? tail : 1.0 - tail;
  }
}
