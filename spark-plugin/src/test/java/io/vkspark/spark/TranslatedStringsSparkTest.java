package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.spark.conf.Settings;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Plain Java string UDFs (no vkspark code) translated to the GPU by default (issue 32): issue 32's
 * Done-when lambda {@code (String email) -> email.substring(email.indexOf('@') + 1).toLowerCase()}
 * returns Java's string for every row (ASCII rows on the GPU, non-ASCII and ill-formed rows handed
 * back to call() and counted, a null row failing the query as it does in Spark), and real-shaped
 * ones (labels, a year-month key, a field of a split, a parsed number) equal Spark's rows. One
 * that uses a regular expression stays Spark's, and EXPLAIN says why.
 */
@ExtendWith({TestSpark.Validated.class, TestSpark.RestoresConf.class})
final class TranslatedStringsSparkTest {
  private static String table;
  private static String withNulls;

  private static final String[] USERS = {"ann", "Bob.Smith", "x", "o'hara", "MIXED_Case", "42", ""};
  private static final String[] DOMAINS = {"Example.COM", "mail.example.org", "X.io", "", "localhost"};
  private static final String[] OTHER = {"jörg@Bücher.de", "名前@例え.jp", "🎉@party.COM", "user@DOMAIN.İT", "no-at-sign",
      "@", "trailing@"};

  /** 3,000 rows: id, email (non-ASCII 1 in 6, never null), csv "a,b,c", amount, year, month; a copy with null emails. */
  @BeforeAll
  static void write() throws Exception {
    Random r = new Random(32);
    List<Row> rows = new ArrayList<>();
    for (int id = 0; id < 3000; id++) {
      String email = r.nextInt(6) == 0 ? OTHER[r.nextInt(OTHER.length)]
          : USERS[r.nextInt(USERS.length)] + id + "@" + DOMAINS[r.nextInt(DOMAINS.length)];
      String csv = id % 11 == 0 ? "single" : "f" + id + "," + (id % 5 == 0 ? "" : "Mid" + id % 7) + ",z";
      rows.add(RowFactory.create((long) id, email, csv, (id * 7919) % 5000 - 100, 1990 + id % 35, 1 + id % 12));
    }
    StructType schema = new StructType().add("id", DataTypes.LongType).add("email", DataTypes.StringType)
        .add("csv", DataTypes.StringType).add("amount", DataTypes.IntegerType).add("year", DataTypes.IntegerType)
        .add("month", DataTypes.IntegerType);
    table = Files.createTempDirectory("vkspark-translated-strings").resolve("t.parquet").toString();
    spark().createDataFrame(rows, schema).repartition(3).write().parquet(table);
    withNulls = Files.createTempDirectory("vkspark-translated-strings").resolve("n.parquet").toString();
    spark().read().parquet(table).selectExpr("id", "CASE WHEN id % 10 = 3 THEN NULL ELSE email END AS email")
        .write().parquet(withNulls);
  }

  private static Dataset<Row> data() {
    return spark().read().parquet(table);
  }

  @Test
  void emailDomain_plainJavaLambda_runsOnTheGpuByDefault_javasStringForEveryRow() {
    UDF1<String, String> domain = email -> email.substring(email.indexOf('@') + 1).toLowerCase();
    spark().udf().register("email_domain_java", domain, DataTypes.StringType);
    spark().conf().set(Settings.METRICS_LEVEL.key(), "debug");
    Supplier<Dataset<Row>> q = () -> data().selectExpr("id", "email", "email_domain_java(email) AS d");
    List<List<Row>> both = onAndOff(q, TestSpark::assertOnGpuExceptHandedBackRows);
    assertRowsEqual(both.get(1), both.get(0));
    Dataset<Row> df = q.get();
    List<Row> rows = df.collectAsList();
    assertTrue(explain(df).contains("email_domain_java(") && explain(df).contains("on GPU (translated from Java)"),
        () -> explain(df));
    long nonAscii = rows.stream().filter(x -> !x.getString(1).chars().allMatch(c -> c < 128)).count();
    for (Row x : rows) {
      String e = x.getString(1);
      assertEquals(e.substring(e.indexOf('@') + 1).toLowerCase(), x.getString(2), x::toString);
    }
    Map<String, Long> m = metrics(gpuNodes(df).get(0));
    assertEquals(3000L, m.get("gpuRows"), m::toString);
    assertEquals(nonAscii, m.get("handedBackRows"), m::toString);
    assertEquals(nonAscii, m.get("handedBackNonAscii"), m::toString);
    assertTrue(nonAscii > 300, "non-ASCII rows " + nonAscii);
  }

  @Test
  void emailDomain_aNullEmail_failsTheQueryAsInSpark_theNullSafeFormGivesNull() {
    UDF1<String, String> domain = email -> email.substring(email.indexOf('@') + 1).toLowerCase();
    spark().udf().register("email_domain_java", domain, DataTypes.StringType);
    Supplier<Dataset<Row>> q = () -> spark().read().parquet(withNulls).selectExpr("id", "email_domain_java(email) AS d");
    assertThrows(Exception.class, () -> q.get().collectAsList()); // NullPointerException in call(), as in Spark
    spark().conf().set(Settings.ENABLED.key(), "false");
    try {
      assertThrows(Exception.class, () -> q.get().collectAsList());
    } finally {
      spark().conf().set(Settings.ENABLED.key(), "true");
    }
    UDF1<String, String> safe = email -> email == null ? null : email.substring(email.indexOf('@') + 1).toLowerCase();
    spark().udf().register("email_domain_safe", safe, DataTypes.StringType);
    Supplier<Dataset<Row>> s = () -> spark().read().parquet(withNulls).selectExpr("id", "email_domain_safe(email) AS d");
    List<List<Row>> both = onAndOff(s, TestSpark::assertOnGpuExceptHandedBackRows);
    assertRowsEqual(both.get(1), both.get(0));
    Dataset<Row> df = s.get();
    df.collectAsList();
    assertEquals(3000L, metrics(gpuNodes(df).get(0)).get("gpuRows"));
  }

  @Test
  void realShapedStringUdfs_equalSparksRows_onTheGpu() {
    UDF1<Integer, String> category = a -> a > 1000 ? "HIGH" : a > 100 ? "MEDIUM" : a < 0 ? "REFUND" : "LOW";
    UDF2<Integer, Integer, String> yearMonth = (y, m) -> y + "-" + (m < 10 ? "0" + m : "" + m);
    UDF1<String, String> middle = csv -> {
      String[] parts = csv.split(",");
      return parts.length > 1 ? parts[1].trim().toUpperCase() : "";
    };
    UDF1<String, Integer> idNumber = csv -> csv.startsWith("f") ? Integer.parseInt(csv.substring(1, csv.indexOf(','))) : -1;
    UserDefinedFunction c = functions.udf(category, DataTypes.StringType);
    UserDefinedFunction ym = functions.udf(yearMonth, DataTypes.StringType);
    UserDefinedFunction mid = functions.udf(middle, DataTypes.StringType);
    UserDefinedFunction num = functions.udf(idNumber, DataTypes.IntegerType);
    Supplier<Dataset<Row>> q = () -> data().select(col("id"), c.apply(col("amount")).as("c"),
        ym.apply(col("year"), col("month")).as("ym"), mid.apply(col("csv")).as("m"), num.apply(col("csv")).as("n"));
    List<List<Row>> both = gpuAndCpu(q);
    assertRowsEqual(both.get(1), both.get(0));
    Dataset<Row> df = q.get();
    df.collectAsList();
    assertAllRowsOnGpu(df);
    assertTrue(explain(df).contains("translated from Java") && !explain(df).contains("runs on CPU"), () -> explain(df));
  }

  @Test
  void aRegularExpression_staysSparks_andExplainSaysWhy() {
    UDF1<String, Boolean> valid = e -> e.matches("[a-z]+@[a-z]+\\.com");
    spark().udf().register("email_valid_regex", valid, DataTypes.BooleanType);
    Dataset<Row> df = data().selectExpr("id", "email_valid_regex(email) AS v");
    df.collectAsList();
    assertTrue(gpuNodes(df).isEmpty(), () -> explain(df));
    assertTrue(explain(df).contains("email_valid_regex runs on CPU because it does not translate to the GPU")
        && explain(df).contains("regular expressions stay on the CPU"), () -> explain(df));
  }
}
