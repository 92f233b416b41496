package io.vkspark.examples.bench;

import io.vkspark.examples.EmailDomain;
import io.vkspark.examples.NormalizedName;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.cache.VkCacheSerializer;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;

/**
 * Issue 32's benchmark: two real-shaped string UDFs returning strings, each over Parquet files and
 * over vkspark's cache, as the matrix runs its cases ({@link MatrixBench#run}: the GPU UDF with
 * adaptive and forced placement, the built-in SQL form, the Java UDF on the CPU):
 * <ul>
 *   <li>{@code name}: {@link NormalizedName}, {@code name.trim().toLowerCase()}; SQL {@code lower(trim(name))};</li>
 *   <li>{@code domain}: {@link EmailDomain}, {@code email.substring(email.indexOf('@') + 1).toLowerCase()};
 *       SQL {@code lower(substring_index(email, '@', -1))}.</li>
 * </ul>
 * Every query reads every byte of the result: {@code SELECT sum(length(x)), sum(hash(x)), count(x)}
 * (Spark's Murmur3 hash of the result's bytes), so the results agree exactly or not at all. Names
 * are ASCII except one row in {@code --non-ascii} (default 1,000), which the GPU hands back to
 * {@code call()} (the {@code handedBackRows} metric in each cell). {@code name_translated} and
 * {@code domain_translated} are the same two UDFs as plain Java lambdas (no vkspark code), which the
 * translator runs on the GPU ({@code spark.vkspark.translate}, on by default).
 *
 * <pre>
 * StringBench [--rows N] [--runs K] [--cases name,domain,name_translated,domain_translated] [--sources parquet,cache] [--non-ascii N]
 *             [--reader-batch R] [--cache-batch R] [--parquet-dir DIR] [--partitions P] [--concurrent C]
 *             [--master M] [--out FILE]
 * </pre>
 */
public final class StringBench {
  private StringBench() {}

  static final List<String> ALL_CASES = List.of("name", "domain", "name_translated", "domain_translated");
  private static final Set<String> FLAGS = Set.of("rows", "runs", "cases", "sources", "non-ascii", "reader-batch",
      "cache-batch", "parquet-dir", "partitions", "concurrent", "master", "out");
  private static final String USAGE = "StringBench [--rows N] [--runs K] [--cases name,domain,name_translated,domain_translated] [--sources parquet,cache] "
      + "[--non-ascii N] [--reader-batch R] [--cache-batch R] [--parquet-dir DIR] [--partitions P] [--concurrent C] "
      + "[--master M] [--out FILE]";

  /** What each query computes of a string result {@code %s}: every byte is read. */
  static String summary(String x) {
    return String.format(Locale.ROOT, "sum(length(%1$s)), sum(CAST(hash(%1$s) AS BIGINT)), count(%1$s)", x);
  }

  static List<MatrixBench.Case> cases() {
    return List.of(
        new MatrixBench.Case("name", t -> "SELECT " + summary("normalized_name(name)") + " FROM " + t,
            spark -> t -> spark.sql("SELECT " + summary("lower(trim(name))") + " FROM " + t), Map.of(),
            t -> "SELECT " + summary("normalized_name_cpu(name)") + " FROM " + t, 0, false, false),
        new MatrixBench.Case("domain", t -> "SELECT " + summary("email_domain(email)") + " FROM " + t,
            spark -> t -> spark.sql("SELECT " + summary("lower(substring_index(email, '@', -1))") + " FROM " + t), Map.of(),
            t -> "SELECT " + summary("email_domain_cpu(email)") + " FROM " + t, 0, false, false),
        // the same UDFs as plain Java lambdas (no GLSL): translated from their bytecode to the GPU by default
        new MatrixBench.Case("name_translated", t -> "SELECT " + summary("normalized_name_java(name)") + " FROM " + t,
            spark -> t -> spark.sql("SELECT " + summary("lower(trim(name))") + " FROM " + t), Map.of(),
            t -> "SELECT " + summary("normalized_name_java(name)") + " FROM " + t, 0, false, false),
        new MatrixBench.Case("domain_translated", t -> "SELECT " + summary("email_domain_java(email)") + " FROM " + t,
            spark -> t -> spark.sql("SELECT " + summary("lower(substring_index(email, '@', -1))") + " FROM " + t), Map.of(),
            t -> "SELECT " + summary("email_domain_java(email)") + " FROM " + t, 0, false, false));
  }

  public static void main(String[] args) {
    Map<String, String> a = Cells.parse(args, FLAGS, USAGE);
    long rows = Cells.longArg(a, "rows", 2_000_000L);
    int runs = Integer.parseInt(a.getOrDefault("runs", "3"));
    long nonAscii = Cells.longArg(a, "non-ascii", 1000L);
    List<String> caseNames = Cells.list(a.getOrDefault("cases", String.join(",", ALL_CASES)));
    List<String> sources = Cells.list(a.getOrDefault("sources", "parquet,cache"));
    for (String c : caseNames) {
      if (!ALL_CASES.contains(c)) {
        throw new IllegalArgumentException("--cases are among " + ALL_CASES + ", not " + c);
      }
    }
    int cores = Runtime.getRuntime().availableProcessors();
    String cacheBatch = a.getOrDefault("cache-batch", "1000000");
    PrintStream json = a.containsKey("out") ? SparkBench.open(a.get("out")) : null;
    SparkSession spark = MatrixBench.session(a, cores, cacheBatch);
    try {
      register(spark);
      if (a.containsKey("reader-batch")) {
        spark.conf().set("spark.sql.parquet.columnarReaderBatchSize", a.get("reader-batch"));
      }
      String readerBatch = spark.conf().get("spark.sql.parquet.columnarReaderBatchSize", "4096");
      long t0 = System.nanoTime();
      Path dir = write(spark, a, rows, nonAscii);
      double writeS = (System.nanoTime() - t0) / 1e9;
      List<MatrixBench.Case> selected = cases().stream().filter(c -> caseNames.contains(c.name())).toList();
      List<MatrixBench.Cell> cells = new ArrayList<>();
      for (String source : List.of("parquet", "cache")) {
        if (!sources.contains(source)) {
          continue;
        }
        Map<String, Object> common = new LinkedHashMap<>();
        common.put("bench_of", "strings");
        common.put("source", source);
        common.put("non_ascii_every", nonAscii);
        Dataset<Row> main = spark.read().parquet(dir.toString());
        if (source.equals("cache")) {
          long c0 = System.nanoTime();
          main = main.where("id >= 0").cache();
          main.count();
          common.put("cache_serializer", VkCacheSerializer.class.getName());
          common.put("cache_batch", Long.parseLong(cacheBatch));
          common.put("cache_build_s", (System.nanoTime() - c0) / 1e9);
        } else {
          common.put("files", SparkBench.PARQUET_FILES);
          common.put("reader_batch", Long.parseLong(readerBatch));
          common.put("write_s", writeS);
        }
        String table = "strings_" + source;
        main.createOrReplaceTempView(table);
        common.put("partitions", main.rdd().getNumPartitions());
        common.put("cores", cores);
        common.put("device", SparkBench.deviceName());
        for (MatrixBench.Case c : selected) {
          List<MatrixBench.Cell> caseCells = MatrixBench.run(spark, c, table, source, rows, runs, runs, true, rows, common);
          caseCells.forEach(cell -> SparkBench.emit(json, List.of(Json.write(cell.json()))));
          Map<String, Object> ratio = MatrixBench.ratio(caseCells);
          ratio.put("bench", "strings_ratio");
          caseCells.stream().filter(x -> x.variant().equals("java_udf")).findFirst().ifPresent(java ->
              ratio.put("gpu_vs_java_udf_x", java.medianS() / caseCells.stream()
                  .filter(x -> x.variant().equals("gpu_forced")).findFirst().orElseThrow().medianS()));
          SparkBench.emit(json, List.of(Json.write(ratio)));
          cells.addAll(caseCells);
        }
        if (source.equals("cache")) {
          main.unpersist(true);
        }
      }
      System.err.printf(Locale.ROOT, "[bench] strings: %d cells, all agree: %s%n", cells.size(),
          cells.stream().allMatch(MatrixBench.Cell::agrees));
    } finally {
      spark.stop();
      if (json != null) {
        json.close();
      }
    }
  }

  /** The two GPU UDFs, and their {@code call()}s as plain Spark UDFs named {@code <name>_cpu}. */
  static void register(SparkSession spark) {
    GpuUdfs.register(spark, "normalized_name", new NormalizedName());
    GpuUdfs.register(spark, "email_domain", new EmailDomain());
    spark.udf().register("normalized_name_cpu", (UDF1<String, String>) s -> s == null ? null : NormalizedName.normalize(s),
        DataTypes.StringType);
    spark.udf().register("email_domain_cpu", (UDF1<String, String>) s -> s == null ? null : EmailDomain.domain(s),
        DataTypes.StringType);
    // issue 32's Done-when lambda and its name twin, written inline as users write them: spark.vkspark.translate
    // (on by default) runs them on the GPU; the java_udf cell runs the same lambdas with translate off
    spark.udf().register("normalized_name_java", (UDF1<String, String>) s -> s == null ? null : s.trim().toLowerCase(),
        DataTypes.StringType);
    spark.udf().register("email_domain_java", (UDF1<String, String>) email -> email == null ? null
        : email.substring(email.indexOf('@') + 1).toLowerCase(), DataTypes.StringType);
  }

  /**
   * The table of {@code rows} rows in {@value SparkBench#PARQUET_FILES} Parquet files
   * ({@code strings-<rows>.parquet} under {@code --parquet-dir}), written unless a complete earlier
   * run left them: {@code id}, a {@code name} (a first name in mixed case, a code, spaces around some;
   * one in {@code nonAscii} starts with a non-ASCII name) and an {@code email} (some without {@code @}),
   * about 1 % null each.
   */
  static Path write(SparkSession spark, Map<String, String> a, long rows, long nonAscii) {
    Path dir = Path.of(a.getOrDefault("parquet-dir", "target/bench-parquet")).toAbsolutePath()
        .resolve("strings-" + rows + "-" + nonAscii + ".parquet");
    if (!Files.exists(dir.resolve("_SUCCESS"))) {
      long t0 = System.nanoTime();
      String first = "element_at(array('Ada', 'GRACE', 'Alan', 'linus', 'Barbara', 'Edsger', 'DONALD', 'Frances', 'Ken',"
          + " 'Margaret', 'Tim', 'Radia'), CAST(id % 12 + 1 AS int))";
      spark.range(0, rows, 1, SparkBench.PARQUET_FILES).selectExpr("id",
          "CASE WHEN id % 97 = 3 THEN NULL ELSE concat(CASE WHEN id % 7 = 0 THEN '  ' ELSE '' END,"
              + " CASE WHEN id % " + nonAscii + " = 1 THEN 'Émile' ELSE " + first + " END, ' ',"
              + " upper(substr(sha2(CAST(id AS string), 256), 1, 2 + CAST(id % 9 AS int))),"
              + " CASE WHEN id % 5 = 0 THEN ' ' ELSE '' END) END AS name",
          "CASE WHEN id % 89 = 5 THEN NULL ELSE concat(lower(" + first + "), '.', id,"
              + " CASE WHEN id % 50 = 0 THEN '' ELSE '@' END, element_at(array('Example.COM', 'mail.org',"
              + " 'Corp.Example.NET', 'gmail.com', 'uni-hamburg.DE'), CAST(id % 5 + 1 AS int))) END AS email")
          .write().mode("overwrite").parquet(dir.toString());
      System.err.printf(Locale.ROOT, "[bench] wrote %,d rows to %d Parquet files in %s in %.1f s%n", rows,
          SparkBench.PARQUET_FILES, dir, (System.nanoTime() - t0) / 1e9);
    }
    return dir;
  }
}
