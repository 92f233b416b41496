package io.vkspark.examples.bench;

import io.vkspark.examples.SparkJobs;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Black-Scholes in built-in Spark SQL for the benchmark, written for speed: d1, d2, |d| and the
 * Gaussian factor are columns computed once, then Hart's normal CDF (the accuracy of the GPU
 * kernel's, about 1e-16) reads them. Spark evaluates it with whole-stage code generation.
 */
final class BlackScholesSql {
  private BlackScholesSql() {}

  /** {@code in} (columns s, k, t, r, v) with the call price in column {@code bs}. */
  static Dataset<Row> with(Dataset<Row> in) {
    return with(in, new String[0]);
  }

  /** As {@link #with(Dataset)}, carrying the columns {@code keep} (e.g. a grouping key) through. */
  static Dataset<Row> with(Dataset<Row> in, String... keep) {
    return in.selectExpr(cols(keep, "s", "k", "exp(-r * t) AS df", "v * sqrt(t) AS sd", "ln(s / k) + (r + 0.5D * v * v) * t AS num"))
        .selectExpr(cols(keep, "s", "k", "df", "num / sd AS d1", "num / sd - sd AS d2"))
        .selectExpr(cols(keep, "s", "k", "df", "d1", "d2", "abs(d1) AS a1", "abs(d2) AS a2"))
        .selectExpr(cols(keep, "s", "k", "df", "d1", "d2", "a1", "a2", "exp(-a1 * a1 / 2D) AS e1", "exp(-a2 * a2 / 2D) AS e2"))
        .selectExpr(cols(keep, "s * " + cdf("d1", "a1", "e1") + " - k * df * " + cdf("d2", "a2", "e2") + " AS bs"));
  }

  private static String[] cols(String[] keep, String... exprs) {
    String[] out = java.util.Arrays.copyOf(keep, keep.length + exprs.length);
    System.arraycopy(exprs, 0, out, keep.length, exprs.length);
    return out;
  }

  /** Hart's CDF of x with a = |x| and e = exp(-a^2/2) precomputed. */
  static String cdf(String x, String a, String e) {
    return SparkJobs.normCdfSql(x).replace("abs(" + x + ")", a).replace("exp(-" + a + " * " + a + " / 2D)", e);
  }
}
