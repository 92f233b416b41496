package io.vkspark.examples.bench;

import io.vkspark.examples.ImpliedVolatility;
import io.vkspark.examples.SparkJobs;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

import static org.apache.spark.sql.functions.expr;

/**
 * {@link ImpliedVolatility}'s algorithm in built-in Spark SQL: the same bracket, start and 24
 * safeguarded Newton steps, with Hart's normal CDF ({@link SparkJobs#normCdfSql}); one projection
 * per step, so Spark evaluates it with its own code generation and no UDF.
 */
final class ImpliedVolatilitySql {
  private ImpliedVolatilitySql() {}

  private static final String INV_SQRT_2PI = "0.3989422804014327D";

  /** {@code in} (columns price, s, k, t, r) with the implied volatility in column {@code out}. */
  static Dataset<Row> with(Dataset<Row> in, String out) {
    double maxVol = ImpliedVolatility.MAX_VOL;
    Dataset<Row> d = in.selectExpr("price", "s", "k", "t", "r",
        "k * exp(-r * t) AS kd", "sqrt(t) AS sqt", "ln(s / k) AS lsk",
        "(price > 0D AND s > 0D AND k > 0D AND t > 0D AND NOT isnan(r)) AS valid");
    String d1max = "(lsk + (r + 0.5D * " + maxVol + "D * " + maxVol + "D) * t) / (" + maxVol + "D * sqt)";
    d = d.selectExpr("*", "valid AND price > greatest(s - kd, 0D) AND price < s AND (s * "
            + SparkJobs.normCdfSql(d1max) + " - kd * " + SparkJobs.normCdfSql("(" + d1max + " - " + maxVol + "D * sqt)")
            + ") >= price AS ok",
        "0D AS lo", maxVol + "D AS hi", "least(greatest(sqrt(2D * abs(lsk + r * t) / t), 0.05D), 5.0D) AS sigma");
    for (int i = 0; i < ImpliedVolatility.ITERATIONS; i++) {
      d = d.selectExpr(cols("(lsk + (r + 0.5D * sigma * sigma) * t) / (sigma * sqt) AS d1", "sigma * sqt AS sd"));
      d = d.selectExpr(cols("d1", "d1 - sd AS d2", "abs(d1) AS a1", "abs(d1 - sd) AS a2"));
      d = d.selectExpr(cols("d1", "d2", "a1", "a2", "exp(-a1 * a1 / 2D) AS e1", "exp(-a2 * a2 / 2D) AS e2"));
      d = d.selectExpr(cols("s * " + BlackScholesSql.cdf("d1", "a1", "e1") + " - kd * " + BlackScholesSql.cdf("d2", "a2", "e2")
          + " - price AS diff", "s * " + INV_SQRT_2PI + " * e1 * sqt AS vega"));
      d = d.selectExpr("price", "s", "k", "t", "r", "kd", "sqt", "lsk", "ok",
          "CASE WHEN diff > 0D THEN lo ELSE sigma END AS lo2", "CASE WHEN diff > 0D THEN sigma ELSE hi END AS hi2",
          "sigma", "CASE WHEN vega > 0D THEN sigma - diff / vega ELSE -1D END AS next")
          .selectExpr("price", "s", "k", "t", "r", "kd", "sqt", "lsk", "ok", "lo2 AS lo", "hi2 AS hi",
              "CASE WHEN next >= lo2 AND next <= hi2 THEN next ELSE 0.5D * (lo2 + hi2) END AS sigma");
    }
    return d.withColumn(out, expr("CASE WHEN ok THEN sigma ELSE double('NaN') END"));
  }


  /** The columns every step carries, then {@code more}. */
  private static String[] cols(String... more) {
    String[] keep = {"price", "s", "k", "t", "r", "kd", "sqt", "lsk", "ok", "lo", "hi", "sigma"};
    String[] out = java.util.Arrays.copyOf(keep, keep.length + more.length);
    System.arraycopy(more, 0, out, keep.length, more.length);
    return out;
  }
}
