package io.vkspark.examples;

import java.io.PrintStream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.SparkSession;

/**
 * Writes random European call options to Parquet, the input of {@link OptionsJob}:
 *
 * <pre>
 * GenerateOptions &lt;output path&gt; [rows, default 1000000] [partitions, default: Spark's parallelism]
 * </pre>
 *
 * <p>Columns: {@code id} bigint; {@code trade_date}, {@code expiry} date (expiry 1 to 730 days
 * after the trade); {@code s} spot 20..200; {@code k} strike 0.7..1.3 of spot on a 0.5 grid;
 * {@code t} years to expiry ({@code datediff / 365}); {@code r} rate 0..6%; {@code v} volatility
 * 8..63%; {@code price} the market quote: the Black-Scholes price at {@code v} (computed by the
 * GPU UDF) with +-0.2% noise, rounded to cents, null for about 1% of rows (no quote). Cents
 * rounding puts some far out-of-the-money quotes at 0.00, outside the no-arbitrage bounds, so
 * their implied volatility is NaN: realistic data, and it exercises that path. The same rows,
 * rows and partitions given, every run.
 */
public final class GenerateOptions {
  private GenerateOptions() {}

  public static void main(String[] args) {
    if (args.length < 1 || args.length > 3) {
      throw new IllegalArgumentException("usage: GenerateOptions <output path> [rows] [partitions]");
    }
    SparkJobs.Session session = SparkJobs.session("vkspark GenerateOptions");
    try {
      SparkSession spark = session.spark();
      long rows = args.length > 1 ? Long.parseLong(args[1].replace("_", "")) : 1_000_000L;
      int partitions = args.length > 2 ? Integer.parseInt(args[2]) : spark.sparkContext().defaultParallelism();
      write(spark, args[0], rows, partitions, System.out);
    } finally {
      session.close();
    }
  }

  /** Writes {@code rows} options in {@code partitions} files to {@code path} (replacing it). */
  public static void write(SparkSession spark, String path, long rows, int partitions, PrintStream out) {
    long start = System.nanoTime();
    out.printf("[generate] writing %,d options in %d partitions to %s ...%n", rows, partitions, path);
    options(spark, rows, partitions).write().mode(SaveMode.Overwrite).parquet(path);
    out.printf("[generate] done in %s%n", SparkJobs.secondsSince(start));
  }

  /** The options as a DataFrame (registers the example UDFs: the price uses black_scholes). */
  public static Dataset<Row> options(SparkSession spark, long rows, int partitions) {
    SparkJobs.registerAll(spark);
    return spark.range(0, rows, 1, partitions)
        .selectExpr("id",
            "date_add(DATE'2024-01-02', CAST(rand(11) * 730 AS INT)) AS trade_date",
            "CAST(1 + rand(12) * 730 AS INT) AS days",
            "round(20D + rand(13) * 180D, 2) AS s",
            "0.7D + rand(14) * 0.6D AS m",
            "round(rand(15) * 0.06D, 4) AS r",
            "round(0.08D + rand(16) * 0.55D, 4) AS v",
            "(rand(17) - 0.5D) * 0.004D AS noise",
            "rand(18) < 0.01D AS missing")
        .selectExpr("id", "trade_date", "date_add(trade_date, days) AS expiry", "s",
            "round(s * m * 2D) / 2D AS k", "days / 365D AS t", "r", "v", "noise", "missing")
        .selectExpr("id", "trade_date", "expiry", "s", "k", "t", "r", "v",
            "CASE WHEN missing THEN NULL ELSE round(black_scholes(s, k, t, r, v) * (1D + noise), 2) END AS price");
  }
}
