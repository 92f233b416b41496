package io.vkspark.examples;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.Tolerance;
import org.apache.spark.sql.api.java.UDF5;

/**
 * Implied volatility of a European call: {@code implied_volatility(price, s, k, t, r)} is the
 * {@code v} for which {@link BlackScholes} gives {@code price}.
 *
 * <p>Why the GPU: a root search runs a fixed {@value #ITERATIONS} safeguarded Newton steps per row,
 * each two normal CDFs and a density: about 25 Black-Scholes evaluations for 40 bytes in and 8 out.
 * A fixed count (no early exit) keeps the GPU's lanes in step and makes both halves
 * deterministic.
 *
 * <p>The iteration, the same on CPU and GPU: start at the Manaster-Koehler point
 * {@code sqrt(2 |ln(s/k) + rt| / t)} clamped to [0.05, 5]; keep a bracket [lo, hi], initially
 * [0, {@value #MAX_VOL}], that holds the root (the price grows with {@code v}); take the Newton step
 * {@code v - (price(v) - price) / vega(v)} when it stays inside the bracket, else bisect. Newton
 * converges quadratically, so the result is the root to rounding for ordinary options; where vega
 * is tiny (deep in or out of the money, very short expiry) the volatility is ill-conditioned and
 * the two halves may differ in more digits, while their Black-Scholes prices still agree.
 *
 * <p>NaN (on both sides) when the inputs are outside {@code price, s, k, t > 0} and finite
 * {@code r}, when the price is outside the no-arbitrage bounds
 * {@code max(s - k e^(-rt), 0) < price < s}, or when the volatility would exceed
 * {@value #MAX_VOL} (1000%). Null in, null out. Copy it together with {@link BlackScholes} (its
 * normal CDF).
 */
public final class ImpliedVolatility implements UDF5<Double, Double, Double, Double, Double, Double>, GpuUdf {
  private static final long serialVersionUID = 1L;
  /** Newton/bisection steps per row. */
  public static final int ITERATIONS = 24;
  /** The largest volatility searched. */
  public static final double MAX_VOL = 10.0;

  @Override
  public Double call(Double price, Double s, Double k, Double t, Double r) {
    return price == null || s == null || k == null || t == null || r == null ? null : solve(price, s, k, t, r);
  }

  /** The CPU reference, the same arithmetic as the kernel. */
  public static double solve(double price, double s, double k, double t, double r) {
    if (!(price > 0 && s > 0 && k > 0 && t > 0) || Double.isInfinite(price) || Double.isInfinite(s)
        || Double.isInfinite(k) || Double.isInfinite(t) || !Double.isFinite(r)) {
      return Double.NaN;
    }
    double kd = k * StrictMath.exp(-r * t);
    if (!(price > Math.max(s - kd, 0.0) && price < s)) {
      return Double.NaN;
    }
    double sqrtT = StrictMath.sqrt(t);
    double lsk = StrictMath.log(s / k);
    double sd = MAX_VOL * sqrtT;
    double d1 = (lsk + (r + 0.5 * MAX_VOL * MAX_VOL) * t) / sd;
    if (s * BlackScholes.normCdf(d1) - kd * BlackScholes.normCdf(d1 - sd) < price) {
      return Double.NaN;
    }
    double lo = 0.0;
    double hi = MAX_VOL;
    double sigma = Math.min(Math.max(StrictMath.sqrt(2.0 * Math.abs(lsk + r * t) / t), 0.05), 5.0);
    for (int i = 0; i < ITERATIONS; i++) {
      sd = sigma * sqrtT;
      d1 = (lsk + (r + 0.5 * sigma * sigma) * t) / sd;
      double diff = s * BlackScholes.normCdf(d1) - kd * BlackScholes.normCdf(d1 - sd) - price;
      if (diff > 0) {
        hi = sigma;
      } else {
        lo = sigma;
      }
      double vega = s * BlackScholes.normPdf(d1) * sqrtT;
      double next = vega > 0 ? sigma - diff / vega : -1.0;
      sigma = next >= lo && next <= hi ? next : 0.5 * (lo + hi);
    }
    return sigma;
  }

  /** For spark.vkspark.verify: Newton's iteration stops within 1e-9; ill-conditioned rows (vega near 0) differ more. */
  @Override
  public Tolerance tolerance() {
    return new Tolerance(4, 1e-7, OptionsJob.IV_ABS);
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("double")
        .arg("price", "double").arg("s", "double").arg("k", "double").arg("t", "double").arg("r", "double")
        .body("""
            const double MAX_VOL = %s;
            double nan = packDouble2x32(uvec2(0u, 0x7ff80000u));
            if (!(price > 0.0lf && s > 0.0lf && k > 0.0lf && t > 0.0lf) || isinf(price) || isinf(s)
                || isinf(k) || isinf(t) || isnan(r) || isinf(r)) {
              return nan;
            }
            double kd = k * exp(-r * t);
            if (!(price > max(s - kd, 0.0lf) && price < s)) {
              return nan;
            }
            double sqrtT = sqrt(t);
            double lsk = log(s / k);
            double sd = MAX_VOL * sqrtT;
            double d1 = (lsk + (r + 0.5lf * MAX_VOL * MAX_VOL) * t) / sd;
            if (s * vk_norm_cdf(d1) - kd * vk_norm_cdf(d1 - sd) < price) {
              return nan;
            }
            double lo = 0.0lf;
            double hi = MAX_VOL;
            double sigma = min(max(sqrt(2.0lf * abs(lsk + r * t) / t), 0.05lf), 5.0lf);
            for (int i = 0; i < %d; i++) {
              sd = sigma * sqrtT;
              d1 = (lsk + (r + 0.5lf * sigma * sigma) * t) / sd;
              double diff = s * vk_norm_cdf(d1) - kd * vk_norm_cdf(d1 - sd) - price;
              if (diff > 0.0lf) {
                hi = sigma;
              } else {
                lo = sigma;
              }
              double vega = s * vk_norm_pdf(d1) * sqrtT;
              double next = vega > 0.0lf ? sigma - diff / vega : -1.0lf;
              sigma = next >= lo && next <= hi ? next : 0.5lf * (lo + hi);
            }
            return sigma;
            """.formatted(MAX_VOL + "lf", ITERATIONS));
  }
}
