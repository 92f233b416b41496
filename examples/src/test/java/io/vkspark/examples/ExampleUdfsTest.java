package io.vkspark.examples;

import static io.vkspark.examples.ExampleSpark.assertAllOnGpu;
import static io.vkspark.examples.ExampleSpark.spark;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.api.GpuUdf;
import java.sql.Date;
import java.sql.Timestamp;
import java.util.List;
import java.util.Objects;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every example UDF in Spark SQL on 20,000 random rows with about 5% nulls per column (and edge
 * cases: t = 0, v = 0, invalid inputs, prices outside the arbitrage bounds, equal and antipodal
 * points, dates before 1970): the GPU result of each row equals the UDF's own {@code call()}
 * within the tolerance its Javadoc states, and every row ran on the GPU (no CPU fallback).
 */
@Tag("defaultLineOnly")
final class ExampleUdfsTest {
  static final int ROWS = 20_000;
  private static String path;

  @BeforeAll
  static void data() {
    path = ExampleSpark.tempDir("vkspark-examples").resolve("udfs.parquet").toString();
    spark().range(0, ROWS, 1, 4).selectExpr("id",
            "20D + rand(1) * 180D AS s0", "0.5D + rand(2) AS m", "0.01D + rand(3) * 3D AS t0",
            "rand(4) * 0.09D - 0.01D AS r0", "0.05D + rand(5) * 0.9D AS v0", "(rand(6) - 0.5D) * 0.01D AS noise",
            "rand(7) * 180D - 90D AS lat1_0", "rand(8) * 360D - 180D AS lon1_0",
            "rand(9) * 180D - 90D AS lat2_0", "rand(10) * 360D - 180D AS lon2_0",
            "CAST(rand(11) * 200D - 100D AS FLOAT) AS x0", "CAST(rand(12) * 2e5D - 1e5D AS FLOAT) AS y0",
            "date_add(DATE'1950-01-01', CAST(rand(13) * 36500 AS INT)) AS trade0",
            "date_add(DATE'1950-01-01', CAST(rand(14) * 36500 AS INT)) AS expiry0",
            "timestamp_micros(CAST(-631152000000000D + rand(15) * 3.2e15D AS BIGINT)) AS ts0",
            // Collatz: n <= 0, odd n whose 3n + 1 overflows, huge even n, and ordinary n up to 10^6
            "CASE WHEN id % 97 = 0 THEN -id WHEN id % 89 = 0 THEN 0L WHEN id % 83 = 0 THEN 3074457345618258603L + 2L * id "
                + "WHEN id % 79 = 0 THEN 4611686018427387904L + id ELSE 1L + (id * 7919L) % 1000000L END AS n0")
        .selectExpr("id",
            "CASE WHEN id % 211 = 0 THEN -s0 ELSE s0 END AS s1", "s0 * m AS k1",
            "CASE WHEN id % 97 = 0 THEN 0D ELSE t0 END AS t1", "r0 AS r1",
            "CASE WHEN id % 89 = 0 THEN 0D ELSE v0 END AS v1", "noise",
            "lat1_0", "lon1_0",
            "CASE WHEN id % 53 = 0 THEN lat1_0 WHEN id % 59 = 0 THEN -lat1_0 ELSE lat2_0 END AS lat2_1",
            "CASE WHEN id % 53 = 0 THEN lon1_0 WHEN id % 59 = 0 THEN lon1_0 + 180D ELSE lon2_0 END AS lon2_1",
            "x0", "y0", "trade0", "expiry0", "ts0", "n0")
        .selectExpr("id", nullable("s1", 1) + " AS s", nullable("k1", 2) + " AS k", nullable("t1", 3) + " AS t",
            nullable("r1", 4) + " AS r", nullable("v1", 5) + " AS v",
            nullable("CASE WHEN id % 101 = 0 THEN s1 * 1.01D WHEN id % 103 = 0 THEN 0D "
                + "ELSE black_scholes_cpu(s1, k1, t1, r1, v1) * (1D + noise) END", 6) + " AS price",
            nullable("lat1_0", 7) + " AS lat1", nullable("lon1_0", 8) + " AS lon1",
            nullable("lat2_1", 9) + " AS lat2", nullable("lon2_1", 10) + " AS lon2",
            nullable("x0", 11) + " AS x", nullable("y0", 12) + " AS y",
            nullable("trade0", 13) + " AS trade", nullable("expiry0", 14) + " AS expiry", nullable("ts0", 15) + " AS ts",
            nullable("n0", 16) + " AS n")
        .write().parquet(path);
  }

  private static String nullable(String expr, int seed) {
    return "CASE WHEN rand(" + (100 + seed) + ") < 0.05D THEN NULL ELSE " + expr + " END";
  }

  private static Dataset<Row> table() {
    return spark().read().parquet(path);
  }

  @AfterAll
  static void noValidationErrors() {
    ExecutorDevice.current().ifPresent(g -> assertEquals(0, g.device().validationErrors(),
        () -> "validation errors: " + g.device().validationMessages()));
  }

  /** Runs the query (each row holds its inputs and the GPU result), checks every row ran on the GPU. */
  private static List<Row> gpuRows(Dataset<Row> df) {
    List<Row> rows = df.collectAsList();
    assertAllOnGpu(df, ROWS);
    assertEquals(ROWS, rows.size());
    return rows;
  }

  private static Double d(Row r, int i) {
    return r.isNullAt(i) ? null : r.getDouble(i);
  }

  /** Tallies of one comparison, so a test also proves it saw nulls, NaN and ordinary values. */
  private static final class Seen {
    int nulls;
    int nans;
    int values;

    void add(Object expected, Object actual, boolean agree, String where) {
      assertTrue(agree, () -> where + ": CPU " + expected + " vs GPU " + actual);
      if (expected == null) {
        nulls++;
      } else if (expected instanceof Double x && x.isNaN()) {
        nans++;
      } else {
        values++;
      }
    }
  }

  /** Both null, both NaN, or within tol. */
  private static boolean close(Double cpu, Double gpu, double tol) {
    if (cpu == null || gpu == null) {
      return cpu == null && gpu == null;
    }
    if (cpu.isNaN() || gpu.isNaN()) {
      return cpu.isNaN() && gpu.isNaN();
    }
    return Math.abs(cpu - gpu) <= tol;
  }

  static double bsTolerance(double price, double s, double k) {
    return OptionsJob.BS_REL * Math.abs(price) + OptionsJob.BS_ABS * Math.max(Math.abs(s), Math.abs(k));
  }

  @Test
  void blackScholes() {
    BlackScholes udf = new BlackScholes();
    Seen seen = new Seen();
    for (Row r : gpuRows(table().selectExpr("id", "s", "k", "t", "r", "v", "black_scholes(s, k, t, r, v)"))) {
      Double cpu = udf.call(d(r, 1), d(r, 2), d(r, 3), d(r, 4), d(r, 5));
      Double gpu = d(r, 6);
      double tol = cpu == null || cpu.isNaN() ? 0 : bsTolerance(cpu, d(r, 1), d(r, 2));
      seen.add(cpu, gpu, close(cpu, gpu, tol), "row " + r);
    }
    assertTrue(seen.nulls > 1000 && seen.nans > 50 && seen.values > 12_000, () -> seen.nulls + "/" + seen.nans);
  }

  @Test
  void impliedVolatility() {
    ImpliedVolatility udf = new ImpliedVolatility();
    Seen seen = new Seen();
    int illConditioned = 0;
    for (Row r : gpuRows(table().selectExpr("id", "price", "s", "k", "t", "r", "implied_volatility(price, s, k, t, r)"))) {
      Double cpu = udf.call(d(r, 1), d(r, 2), d(r, 3), d(r, 4), d(r, 5));
      Double gpu = d(r, 6);
      boolean agree = close(cpu, gpu, OptionsJob.IV_ABS);
      if (!agree && cpu != null && gpu != null && !cpu.isNaN() && !gpu.isNaN()) {
        // ill-conditioned (tiny vega): the two volatilities must reprice to the same price
        double s = d(r, 2);
        double k = d(r, 3);
        double pc = BlackScholes.price(s, k, d(r, 4), d(r, 5), cpu);
        double pg = BlackScholes.price(s, k, d(r, 4), d(r, 5), gpu);
        agree = Math.abs(pc - pg) <= bsTolerance(pc, s, k);
        illConditioned++;
      }
      seen.add(cpu, gpu, agree, "row " + r);
    }
    int ill = illConditioned;
    assertTrue(seen.nulls > 1000 && seen.nans > 200 && seen.values > 12_000 && ill < 100,
        () -> seen.nulls + " nulls, " + seen.nans + " NaN, " + seen.values + " values, " + ill + " ill-conditioned");
  }

  @Test
  void impliedVolatility_recoversTheVolatilityOfTheBlackScholesPrice() {
    Dataset<Row> df = table().where("id % 4 = 0 AND v > 0D AND t > 0.05D")
        .selectExpr("s", "k", "t", "r", "v", "implied_volatility(black_scholes(s, k, t, r, v), s, k, t, r)")
        .na().drop();
    List<Row> rows = df.collectAsList();
    assertAllOnGpu(df);
    // black_scholes feeds implied_volatility: two stacked nodes (twice here: na().drop() filters on the result too).
    assertTrue(SparkJobs.gpuNodes(df).size() >= 2, () -> SparkJobs.explain(df));
    int checked = 0;
    for (Row r : rows) {
      double s = r.getDouble(0);
      double k = r.getDouble(1);
      double t = r.getDouble(2);
      double v = r.getDouble(4);
      double d1 = (StrictMath.log(s / k) + (r.getDouble(3) + 0.5 * v * v) * t) / (v * Math.sqrt(t));
      if (s > 0 && BlackScholes.normPdf(d1) * Math.sqrt(t) > 0.01) {   // vega > 1% of the spot
        assertEquals(v, r.getDouble(5), 1e-9, r::toString);
        checked++;
      }
    }
    assertTrue(checked > 2000, "checked " + checked);
  }

  @Test
  void haversine() {
    Haversine udf = new Haversine();
    Seen seen = new Seen();
    int zero = 0;
    int antipodal = 0;
    double halfCircumference = Math.PI * Haversine.EARTH_RADIUS_KM;
    for (Row r : gpuRows(table().selectExpr("id", "lat1", "lon1", "lat2", "lon2", "haversine(lat1, lon1, lat2, lon2)"))) {
      Double cpu = udf.call(d(r, 1), d(r, 2), d(r, 3), d(r, 4));
      Double gpu = d(r, 5);
      seen.add(cpu, gpu, close(cpu, gpu, cpu == null ? 0 : 1e-12 * cpu + 1e-9), "row " + r);
      zero += cpu != null && cpu == 0 ? 1 : 0;
      if (gpu != null && r.getLong(0) % 59 == 0 && r.getLong(0) % 53 != 0) {
        assertEquals(halfCircumference, gpu, 1e-9, () -> "antipodal points: " + r);
        antipodal++;
      }
    }
    assertTrue(seen.nulls > 1000 && seen.values > 12_000 && zero > 100 && antipodal > 100,
        "nulls " + seen.nulls + ", zero " + zero + ", antipodal " + antipodal);
  }

  @Test
  void floatPolynomial() {
    FloatPolynomial udf = new FloatPolynomial();
    Seen seen = new Seen();
    for (Row r : gpuRows(table().selectExpr("id", "x", "y", "float_polynomial(x, y)"))) {
      Float x = r.isNullAt(1) ? null : r.getFloat(1);
      Float y = r.isNullAt(2) ? null : r.getFloat(2);
      Float cpu = udf.call(x, y);
      Float gpu = r.isNullAt(3) ? null : r.getFloat(3);
      boolean agree = cpu == null ? gpu == null
          : gpu != null && Math.abs(cpu - gpu) <= 4 * Math.ulp(Math.abs(0.5f * x * x * x) + Math.abs(2f * x) + Math.abs(y));
      seen.add(cpu, gpu, agree, "row " + r);
    }
    assertTrue(seen.nulls > 1000 && seen.values > 12_000);
  }

  @Test
  void saxpy_literalAndColumnA() {
    Saxpy udf = new Saxpy();
    Seen seen = new Seen();
    for (Row r : gpuRows(table().selectExpr("id", "x", "y", "saxpy(CAST(2.5 AS FLOAT), x, y)", "saxpy(x, x, y)"))) {
      Float x = r.isNullAt(1) ? null : r.getFloat(1);
      Float y = r.isNullAt(2) ? null : r.getFloat(2);
      for (int c = 3; c <= 4; c++) {
        Float a = c == 3 ? Float.valueOf(2.5f) : x;
        Float cpu = udf.call(a, x, y);
        Float gpu = r.isNullAt(c) ? null : r.getFloat(c);
        // one rounding (fused multiply-add) where Java rounds twice: an ulp or two of the terms
        boolean agree = cpu == null ? gpu == null
            : gpu != null && Math.abs(cpu - gpu) <= 2 * Math.ulp(Math.abs(a * x) + Math.abs(y));
        seen.add(cpu, gpu, agree, "row " + r + ", column " + c);
      }
    }
    assertTrue(seen.nulls > 2000 && seen.values > 24_000, () -> seen.nulls + " nulls, " + seen.values + " values");
  }

  @Test
  void collatzSteps_equalsCall() {
    CollatzSteps udf = new CollatzSteps();
    Seen seen = new Seen();
    int invalid = 0;
    int overflow = 0;
    int longest = 0;
    for (Row r : gpuRows(table().selectExpr("id", "n", "collatz_steps(n)"))) {
      Long n = r.isNullAt(1) ? null : r.getLong(1);
      Integer cpu = udf.call(n);
      Integer gpu = r.isNullAt(2) ? null : r.getInt(2);
      seen.add(cpu, gpu, Objects.equals(cpu, gpu), "row " + r);
      invalid += n != null && n < 1 ? 1 : 0;
      overflow += n != null && n > 3074457345618258602L && (n & 1) == 1 ? 1 : 0;
      longest = Math.max(longest, gpu == null ? 0 : gpu);
    }
    int inv = invalid;
    int ovf = overflow;
    int max = longest;
    assertTrue(seen.nulls > 800 && seen.values > 12_000 && inv > 200 && ovf > 100 && max > 300,
        () -> seen.nulls + " nulls, " + inv + " n < 1, " + ovf + " overflowing, longest " + max);
    assertEquals(350, udf.call(77031L));
    assertEquals(-1, udf.call(CollatzSteps.MAX_ODD + 1));
  }

  @Test
  void inTheMoney_inSelectAndWhere() {
    InTheMoney udf = new InTheMoney();
    Seen seen = new Seen();
    for (Row r : gpuRows(table().selectExpr("id", "s", "k", "in_the_money(s, k)"))) {
      Boolean cpu = udf.call(d(r, 1), d(r, 2));
      Boolean gpu = r.isNullAt(3) ? null : r.getBoolean(3);
      seen.add(cpu, gpu, Objects.equals(cpu, gpu), "row " + r);
    }
    assertTrue(seen.nulls > 1000 && seen.values > 12_000);

    Dataset<Row> where = table().where("in_the_money(s, k)").select("id");
    long gpuCount = where.collectAsList().size();
    assertTrue(SparkJobs.explain(where).contains("VkGpuEval [in_the_money("), SparkJobs.explain(where));
    assertAllOnGpu(where, ROWS);
    assertEquals(table().where("s > k").count(), gpuCount);
  }

  @Test
  void daysToExpiry_equalsCallAndDatediff() {
    DaysToExpiry udf = new DaysToExpiry();
    Seen seen = new Seen();
    int negative = 0;
    for (Row r : gpuRows(table().selectExpr("id", "trade", "expiry", "days_to_expiry(trade, expiry)",
        "datediff(expiry, trade)"))) {
      Integer cpu = udf.call((Date) r.get(1), (Date) r.get(2));
      Integer gpu = r.isNullAt(3) ? null : r.getInt(3);
      seen.add(cpu, gpu, Objects.equals(cpu, gpu) && Objects.equals(gpu, r.isNullAt(4) ? null : r.getInt(4)),
          "row " + r);
      negative += gpu != null && gpu < 0 ? 1 : 0;
    }
    assertTrue(seen.nulls > 1000 && seen.values > 12_000 && negative > 5000);
  }

  /** Before year 1 (1 BC is year 0 to Spark, and 0000-02-29 exists): call(), the GPU and datediff agree. */
  @Test
  void daysToExpiry_beforeYearOne_equalsCallAndDatediff() {
    int rows = 3000;
    Dataset<Row> df = spark().range(0, rows, 1, 2)
        .selectExpr("id", "date_add(DATE'0001-03-01', CAST(-id * 11 AS INT)) AS trade",
            "date_add(DATE'0001-01-01', CAST(id * 7 - 4000 AS INT)) AS expiry")
        .selectExpr("id", "trade", "expiry", "days_to_expiry(trade, expiry)", "datediff(expiry, trade)",
            "year(trade) < 1 AS bc");
    List<Row> result = df.collectAsList();
    assertAllOnGpu(df, rows);
    DaysToExpiry udf = new DaysToExpiry();
    int bc = 0;
    for (Row r : result) {
      Integer cpu = udf.call((Date) r.get(1), (Date) r.get(2));
      assertEquals(r.getInt(4), r.getInt(3), () -> "GPU vs datediff, row " + r);
      assertEquals(r.getInt(4), cpu, () -> "call() vs datediff, row " + r);
      bc += r.getBoolean(5) ? 1 : 0;
    }
    assertTrue(bc > 2500, "rows before year 1: " + bc);
    assertEquals(59, udf.call(Date.valueOf("0001-01-01"), Date.valueOf("0001-03-01")));
  }

  @Test
  void secondsSinceMidnight_equalsCallAndUtcTimeOfDay() {
    assertEquals("UTC", spark().conf().get("spark.sql.session.timeZone"));
    SecondsSinceMidnight udf = new SecondsSinceMidnight();
    Seen seen = new Seen();
    int before1970 = 0;
    for (Row r : gpuRows(table().selectExpr("id", "ts", "seconds_since_midnight(ts)",
        "CAST(hour(ts) * 3600 + minute(ts) * 60 + second(ts) AS BIGINT)"))) {
      Long cpu = udf.call((Timestamp) r.get(1));
      Long gpu = r.isNullAt(2) ? null : r.getLong(2);
      seen.add(cpu, gpu, Objects.equals(cpu, gpu) && Objects.equals(gpu, r.isNullAt(3) ? null : r.getLong(3)),
          "row " + r);
      before1970 += !r.isNullAt(1) && ((Timestamp) r.get(1)).getTime() < 0 ? 1 : 0;
    }
    assertTrue(seen.nulls > 500 && seen.values > 12_000 && before1970 > 2000);
  }

  @Test
  void explain_showsEveryUdfOnTheGpu_inOneNode() {
    Dataset<Row> df = table().selectExpr("black_scholes(s, k, t, r, v)", "implied_volatility(price, s, k, t, r)",
        "haversine(lat1, lon1, lat2, lon2)", "float_polynomial(x, y)", "in_the_money(s, k)",
        "days_to_expiry(trade, expiry)", "seconds_since_midnight(ts)", "saxpy(x, x, y)", "collatz_steps(n)");
    df.collectAsList();
    String plan = SparkJobs.explain(df);
    assertEquals(1, SparkJobs.gpuNodes(df).size(), plan);
    for (String name : List.of("black_scholes", "implied_volatility", "haversine", "float_polynomial", "in_the_money",
        "days_to_expiry", "seconds_since_midnight", "saxpy", "collatz_steps")) {
      assertTrue(plan.matches("(?s).*VkGpuEval \\[.*" + name + "\\(.*? on GPU.*"), name + ": " + plan);
    }
    assertAllOnGpu(df, ROWS);
  }

  @Test
  void sqlNames_areTheSnakeCaseClassNames() {
    List<GpuUdf> udfs = List.of(new BlackScholes(), new ImpliedVolatility(), new Haversine(), new FloatPolynomial(),
        new InTheMoney(), new DaysToExpiry(), new SecondsSinceMidnight(), new Saxpy(), new CollatzSteps());
    assertEquals(List.of("black_scholes", "implied_volatility", "haversine", "float_polynomial", "in_the_money",
        "days_to_expiry", "seconds_since_midnight", "saxpy", "collatz_steps"), udfs.stream().map(GpuUdf::name).toList());
  }
}
