package io.vkspark.examples.bench;

import io.vkspark.examples.CollatzSteps;
import io.vkspark.examples.FloatPolynomial;
import io.vkspark.examples.Haversine;
import io.vkspark.examples.Saxpy;
import io.vkspark.examples.SparkJobs;
import io.vkspark.spark.cache.VkCacheSerializer;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.executor.ExecutorDevice;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.api.java.UDF3;
import org.apache.spark.sql.api.java.UDF4;
import org.apache.spark.sql.types.DataTypes;

/**
 * Issue 24's benchmark matrix: is a GPU UDF ever slower than Spark? Six UDFs from cheap to heavy
 * ({@code poly} the float polynomial, {@code saxpy}, {@code haversine}, {@code bs} Black-Scholes,
 * {@code collatz} Collatz steps, {@code iv} implied volatility), each over Parquet files at Spark's
 * reader batch and over vkspark's cache ({@link VkCacheSerializer}), each as
 * <ul>
 *   <li>{@code gpu_adaptive}: the GPU UDF with {@code spark.vkspark.placement=adaptive};</li>
 *   <li>{@code gpu_forced}: the GPU UDF with {@code spark.vkspark.placement=gpu};</li>
 *   <li>{@code spark_sql}: the same formula in built-in Spark SQL;</li>
 *   <li>{@code java_udf}: the UDF's {@code call()} as a plain Spark UDF on the CPU
 *       ({@code spark.vkspark.translate=false}); the reference the others must agree with.</li>
 * </ul>
 * Every query sums the UDF's result ({@code SELECT sum(udf(...)) FROM t}); implied volatility sums
 * NaN (no solution) as 0 and counts it apart. The placement is a session setting, set before each
 * GPU variant and unset after; everything else runs with the plugin's defaults (aggregate fusion
 * included), so a cell is what a user gets.
 *
 * <p>The data is written once (Spark range and expressions, {@value SparkBench#PARQUET_FILES}
 * Parquet files under {@code --parquet-dir}, reused by later runs of the same size), read as
 * Parquet, then cached once from those files. Output: one {@code "bench": "matrix"} JSON line per
 * cell with the median of {@code --runs} timed runs after a warm-up and the GPU node's metrics of
 * each run (whatever metrics the build has, by name), one {@code "bench": "matrix_ratio"} line per
 * case and source (adaptive and forced GPU against the faster of built-in SQL and the Java UDF),
 * and the table on standard error.
 *
 * <p>Collatz in built-in SQL is a higher-order function that Spark interprets, 1,000 lambda calls
 * a row (about 2.5 ms a row on one core of the CI box): it runs over the first
 * {@code --collatz-sql-rows} rows only (default 20,000), its cell says so ({@code rows},
 * {@code full_rows}) and gives the time scaled to all rows ({@code scaled_s}, what the ratio line
 * uses); its result is checked against the Java UDF over the same rows.
 *
 * <pre>
 * MatrixBench [--rows N] [--runs K] [--cases poly,saxpy,haversine,bs,collatz,iv] [--sources parquet,cache]
 *             [--iv-rows N] [--iv-runs K] [--iv-sql true|false] [--collatz-sql true|false] [--collatz-sql-rows N] [--reader-batch R]
 *             [--cache-batch R] [--parquet-dir DIR] [--partitions P] [--concurrent C] [--master M] [--out FILE]
 * </pre>
 */
public final class MatrixBench {
  private MatrixBench() {}

  /** {@code spark.vkspark.placement} (issue 24): {@code adaptive} or {@code gpu}; a session setting. */
  static final String PLACEMENT = Settings.PREFIX + "placement";
  static final List<String> ALL_CASES = List.of("poly", "saxpy", "haversine", "bs", "collatz", "iv");
  static final List<String> VARIANTS = List.of("gpu_adaptive", "gpu_forced", "spark_sql", "java_udf");

  private static final Set<String> FLAGS = Set.of("rows", "runs", "cases", "sources", "iv-rows", "iv-runs", "iv-sql",
      "collatz-sql", "collatz-sql-rows", "reader-batch", "cache-batch", "parquet-dir", "partitions", "concurrent", "master", "out");
  private static final String USAGE = "MatrixBench [--rows N] [--runs K] [--cases " + String.join(",", ALL_CASES)
      + "] [--sources parquet,cache] [--iv-rows N] [--iv-runs K] [--iv-sql true|false] [--collatz-sql true|false] "
      + "[--collatz-sql-rows N] "
      + "[--reader-batch R] [--cache-batch R] [--parquet-dir DIR] [--partitions P] [--concurrent C] [--master M] [--out FILE]";

  private static final String NAN_TO_ZERO = "sum(CASE WHEN isnan(%1$s) THEN 0D ELSE %1$s END), count_if(isnan(%1$s))";
  private static final String SAXPY_A = "CAST(2.5 AS FLOAT)";

  /**
   * One UDF of the matrix: its three queries over a table (GPU UDF, built-in SQL, Java UDF on
   * the CPU), the session settings of the SQL form, how far sums may differ, whether it reads the
   * implied-volatility table, and whether it is heavy (its CPU variants get {@code --iv-runs} timed
   * runs, and when that is 1 a warm-up on the first 10,000 rows only: a minute a run at 50 M rows).
   */
  record Case(String name, Function<String, String> gpu, Function<SparkSession, Function<String, Dataset<Row>>> sql,
              Map<String, String> sqlConf, Function<String, String> java, double tolerance, boolean ivTable,
              boolean heavy) {}

  static List<Case> cases() {
    return List.of(
        new Case("poly", t -> "SELECT sum(float_polynomial(x, y)) FROM " + t,
            spark -> t -> spark.sql("SELECT sum(CAST(0.5 AS FLOAT) * x * x * x - CAST(2 AS FLOAT) * x + y) FROM " + t),
            Map.of(), t -> "SELECT sum(float_polynomial_cpu(x, y)) FROM " + t, 1e-5, false, false),
        new Case("saxpy", t -> "SELECT sum(saxpy(" + SAXPY_A + ", x, y)) FROM " + t,
            spark -> t -> spark.sql("SELECT sum(" + SAXPY_A + " * x + y) FROM " + t),
            Map.of(), t -> "SELECT sum(saxpy_cpu(" + SAXPY_A + ", x, y)) FROM " + t, 1e-5, false, false),
        new Case("haversine", t -> "SELECT sum(haversine(lat1, lon1, lat2, lon2)) FROM " + t,
            spark -> t -> spark.sql(haversineSql(t)),
            Map.of(), t -> "SELECT sum(haversine_cpu(lat1, lon1, lat2, lon2)) FROM " + t, 1e-9, false, false),
        new Case("bs", t -> "SELECT sum(black_scholes(s, k, t, r, v)) FROM " + t,
            spark -> t -> BlackScholesSql.with(spark.table(t)).selectExpr("sum(bs)"),
            Map.of(), t -> "SELECT sum(black_scholes_cpu(s, k, t, r, v)) FROM " + t, 1e-9, false, false),
        new Case("collatz", t -> "SELECT sum(collatz_steps(n)) FROM " + t,
            spark -> t -> spark.sql("SELECT sum(" + collatzSql("n") + ") FROM " + t),
            Map.of(), t -> "SELECT sum(collatz_steps_cpu(n)) FROM " + t, 0, false, false),
        new Case("iv", t -> "SELECT " + String.format(NAN_TO_ZERO, "implied_volatility(price, s, k, t, r)") + " FROM " + t,
            spark -> t -> ImpliedVolatilitySql.with(spark.table(t), "iv")
                .selectExpr(String.format(NAN_TO_ZERO, "iv").split(", (?=count_if)")),
            // 24 fused Newton steps exceed the JVM's 64 KB method limit under whole-stage code generation
            Map.of("spark.sql.codegen.wholeStage", "false"),
            t -> "SELECT " + String.format(NAN_TO_ZERO, "implied_volatility_cpu(price, s, k, t, r)") + " FROM " + t,
            1e-7, true, true));
  }

  /** {@link Haversine}'s formula in built-in SQL: the shared terms in an inner projection, each computed once. */
  static String haversineSql(String table) {
    String deg = "0.017453292519943295D";
    return "SELECT sum(2D * " + Haversine.EARTH_RADIUS_KM + "D * atan2(sqrt(sd * sd + cc * (sl * sl)), "
        + "sqrt(ss * ss + cc * (cl * cl)))) FROM (SELECT cos(lat1 * " + deg + ") * cos(lat2 * " + deg + ") AS cc, "
        + "sin(0.5D * (lat2 - lat1) * " + deg + ") AS sd, sin(0.5D * (lat2 + lat1) * " + deg + ") AS ss, "
        + "sin(0.5D * (lon2 - lon1) * " + deg + ") AS sl, cos(0.5D * (lon2 - lon1) * " + deg + ") AS cl FROM "
        + table + ")";
  }

  /**
   * {@link CollatzSteps} in built-in SQL: the same loop as a higher-order function, {@code aggregate}
   * over {@link CollatzSteps#MAX_STEPS} elements with the value and the step count as its state
   * (-1: n < 1 or an overflowing {@code 3 n + 1}); once the value is 1 the state stays. Spark
   * evaluates lambdas without code generation, and SQL has no loop that stops early.
   */
  static String collatzSql(String n) {
    return "CASE WHEN " + n + " IS NULL THEN NULL ELSE aggregate(sequence(1, " + CollatzSteps.MAX_STEPS + "), "
        + "named_struct('m', " + n + ", 's', CASE WHEN " + n + " < 1L THEN -1 ELSE 0 END), "
        + "(acc, i) -> CASE WHEN acc.s < 0 OR acc.m = 1L THEN acc "
        + "WHEN acc.m % 2L = 0L THEN named_struct('m', acc.m div 2L, 's', acc.s + 1) "
        + "WHEN acc.m > " + (Long.MAX_VALUE - 1) / 3 + "L THEN named_struct('m', acc.m, 's', -1) "
        + "ELSE named_struct('m', 3L * acc.m + 1L, 's', acc.s + 1) END, "
        + "acc -> CASE WHEN acc.s >= 0 AND acc.m = 1L THEN acc.s ELSE -1 END) END";
  }

  public static void main(String[] args) {
    Map<String, String> a = Cells.parse(args, FLAGS, USAGE);
    long rows = Cells.longArg(a, "rows", 2_000_000L);
    long ivRows = Math.min(rows, Cells.longArg(a, "iv-rows", rows));
    int runs = Integer.parseInt(a.getOrDefault("runs", "3"));
    int ivRuns = Integer.parseInt(a.getOrDefault("iv-runs", String.valueOf(runs)));
    long collatzSqlRows = Cells.longArg(a, "collatz-sql-rows", 20_000L);
    List<String> caseNames = Cells.list(a.getOrDefault("cases", String.join(",", ALL_CASES)));
    List<String> sources = Cells.list(a.getOrDefault("sources", "parquet,cache"));
    for (String c : caseNames) {
      if (!ALL_CASES.contains(c)) {
        throw new IllegalArgumentException("--cases are among " + ALL_CASES + ", not " + c);
      }
    }
    for (String s : sources) {
      if (!List.of("parquet", "cache").contains(s)) {
        throw new IllegalArgumentException("--sources are parquet and/or cache, not " + s);
      }
    }
    int cores = Runtime.getRuntime().availableProcessors();
    String cacheBatch = a.getOrDefault("cache-batch", "1000000");
    PrintStream json = a.containsKey("out") ? SparkBench.open(a.get("out")) : null;
    SparkSession spark = session(a, cores, cacheBatch);
    try {
      if (a.containsKey("reader-batch")) {
        spark.conf().set("spark.sql.parquet.columnarReaderBatchSize", a.get("reader-batch"));
      }
      String readerBatch = spark.conf().get("spark.sql.parquet.columnarReaderBatchSize", "4096");
      long t0 = System.nanoTime();
      Path dir = write(spark, a, rows);
      Path ivDir = ivRows == rows ? dir : write(spark, a, ivRows);
      double writeS = (System.nanoTime() - t0) / 1e9;
      List<Case> selected = cases().stream().filter(c -> caseNames.contains(c.name())).toList();
      List<Cell> cells = new ArrayList<>();
      // Parquet first: the cache below is built from the same files, under a plan of its own (a
      // filter keeping every row), so no Parquet query is answered from it.
      for (String source : List.of("parquet", "cache")) {
        if (!sources.contains(source)) {
          continue;
        }
        Map<String, Object> common = new LinkedHashMap<>();
        common.put("source", source);
        Dataset<Row> main = spark.read().parquet(dir.toString());
        Dataset<Row> iv = spark.read().parquet(ivDir.toString());
        if (source.equals("cache")) {
          long c0 = System.nanoTime();
          main = main.where("id >= 0").cache();
          main.count();
          iv = ivDir.equals(dir) ? main : iv.where("id >= 0").cache();
          iv.count();
          common.put("cache_serializer", VkCacheSerializer.class.getName());
          common.put("cache_batch", Long.parseLong(cacheBatch));
          common.put("cache_build_s", (System.nanoTime() - c0) / 1e9);
        } else {
          common.put("files", SparkBench.PARQUET_FILES);
          common.put("reader_batch", Long.parseLong(readerBatch));
          common.put("write_s", writeS);
        }
        main.createOrReplaceTempView("matrix_" + source);
        iv.createOrReplaceTempView("matrix_iv_" + source);
        common.put("partitions", main.rdd().getNumPartitions());
        common.put("cores", cores);
        common.put("device", SparkBench.deviceName());
        for (Case c : selected) {
          String table = (c.ivTable() ? "matrix_iv_" : "matrix_") + source;
          boolean sqlOn = !(c.name().equals("iv") && !Boolean.parseBoolean(a.getOrDefault("iv-sql", "true")))
              && !(c.name().equals("collatz") && !Boolean.parseBoolean(a.getOrDefault("collatz-sql", "true")));
          long caseRows = c.ivTable() ? ivRows : rows;
          long sqlRows = c.name().equals("collatz") ? Math.min(caseRows, collatzSqlRows) : caseRows;
          List<Cell> caseCells = run(spark, c, table, source, caseRows, runs,
              c.name().equals("iv") ? ivRuns : runs, sqlOn, sqlRows, common);
          caseCells.forEach(cell -> SparkBench.emit(json, List.of(Json.write(cell.json()))));
          SparkBench.emit(json, List.of(Json.write(ratio(caseCells))));
          cells.addAll(caseCells);
        }
        if (source.equals("cache")) {
          main.unpersist(true);
          iv.unpersist(true);
        }
      }
      table(cells);
    } finally {
      spark.stop();
      if (json != null) {
        json.close();
      }
    }
  }

  /** A session as {@link DataPathBench}'s, with vkspark's cache serializer and the matrix's CPU UDFs registered. */
  static SparkSession session(Map<String, String> a, int cores, String cacheBatch) {
    DataPathBench.clearCacheSerializer();
    SparkSession spark = SparkSession.builder()
        .appName("vkspark MatrixBench")
        .master(a.getOrDefault("master", "local[" + cores + "]"))
        .config("spark.plugins", "io.vkspark.spark.VkSparkPlugin")
        .config(Settings.CONCURRENT_GPU_TASKS.key(), a.getOrDefault("concurrent", String.valueOf(cores)))
        .config(Settings.METRICS_LEVEL.key(), "debug")
        .config("spark.sql.cache.serializer", VkCacheSerializer.class.getName())
        .config("spark.sql.inMemoryColumnarStorage.batchSize", cacheBatch)
        .config("spark.sql.shuffle.partitions", a.getOrDefault("partitions", String.valueOf(cores)))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate();
    registerCpuUdfs(spark);
    ExecutorDevice.get(VkConf.from(spark.sparkContext().getConf()), "driver"); // local mode: the device, for its name
    System.err.println("[bench] MatrixBench session: " + SparkJobs.deviceLine(spark));
    return spark;
  }

  /**
   * The example GPU UDFs, and each one's {@code call()} as a plain Spark UDF named {@code <name>_cpu}
   * (run with {@code spark.vkspark.translate=false}, so Spark calls it on the CPU).
   */
  static void registerCpuUdfs(SparkSession spark) {
    SparkJobs.registerAll(spark);
    spark.udf().register("float_polynomial_cpu",
        (UDF2<Float, Float, Float>) (x, y) -> x == null || y == null ? null : FloatPolynomial.eval(x, y),
        DataTypes.FloatType);
    spark.udf().register("saxpy_cpu",
        (UDF3<Float, Float, Float, Float>) (p, x, y) -> p == null || x == null || y == null ? null : Saxpy.eval(p, x, y),
        DataTypes.FloatType);
    spark.udf().register("haversine_cpu", (UDF4<Double, Double, Double, Double, Double>) (p, q, u, w) ->
        p == null || q == null || u == null || w == null ? null : Haversine.km(p, q, u, w), DataTypes.DoubleType);
    spark.udf().register("collatz_steps_cpu", (UDF1<Long, Integer>) n -> n == null ? null : CollatzSteps.steps(n),
        DataTypes.IntegerType);
  }

  /**
   * The matrix's table of {@code rows} rows in {@value SparkBench#PARQUET_FILES} Parquet files
   * ({@code matrix-<rows>.parquet} under {@code --parquet-dir}), written unless a complete earlier
   * run left them: the options of {@link SparkBench#options} ({@code id, s, k, t, r, v, price} and the
   * floats {@code x, y}), two points {@code lat1, lon1, lat2, lon2} in degrees, and {@code n = 1 + id % 100000}.
   */
  static Path write(SparkSession spark, Map<String, String> a, long rows) {
    Path dir = Path.of(a.getOrDefault("parquet-dir", "target/bench-parquet")).toAbsolutePath()
        .resolve("matrix-" + rows + ".parquet");
    if (!Files.exists(dir.resolve("_SUCCESS"))) {
      long t0 = System.nanoTime();
      SparkBench.options(spark, rows, SparkBench.PARQUET_FILES)
          .selectExpr("*", "rand(9) * 180D - 90D AS lat1", "rand(10) * 360D - 180D AS lon1",
              "rand(11) * 180D - 90D AS lat2", "rand(12) * 360D - 180D AS lon2", "1L + id % 100000L AS n")
          .write().mode("overwrite").parquet(dir.toString());
      System.err.printf(Locale.ROOT, "[bench] wrote %,d rows to %d Parquet files in %s in %.1f s%n", rows,
          SparkBench.PARQUET_FILES, dir, (System.nanoTime() - t0) / 1e9);
    }
    return dir;
  }

  /** One cell's figures. */
  record Cell(String caseName, String source, String variant, long rows, long fullRows, double medianS, double[] runsS,
              List<Row> result, boolean agrees, double relDiff, double tolerance, Map<String, String> conf,
              List<Map<String, Long>> gpuRuns, Map<String, Double> breakdown, Map<String, Object> common) {
    /** The median, scaled to the case's full rows when the cell ran over fewer (the Collatz SQL form). */
    double scaledS() {
      return medianS * fullRows / rows;
    }

    Map<String, Object> json() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("bench", "matrix");
      m.put("case", caseName);
      m.put("source", source);
      m.put("variant", variant);
      m.put("median_s", medianS);
      m.put("runs_s", Cells.rounded(runsS));
      m.put("rows", rows);
      if (fullRows != rows) {
        m.put("full_rows", fullRows);
        m.put("scaled_s", scaledS());
      }
      m.put("rows_per_s", rows / medianS);
      m.put("result", Cells.text(result));
      m.put("reference", fullRows != rows ? "java_udf over the same " + rows + " rows" : "java_udf");
      m.put("agrees", agrees);
      m.put("rel_diff", relDiff);
      m.put("tolerance", tolerance);
      m.put("conf", new LinkedHashMap<>(conf));
      m.putAll(common);
      m.put("breakdown", breakdown); // where a query's time goes: each part's median over the timed runs (QueryParts)
      if (!gpuRuns.isEmpty() && !gpuRuns.get(gpuRuns.size() - 1).isEmpty()) {
        // the GPU node's metrics, all of them by name, of the last timed run; rows per path of every run
        m.put("gpu", new LinkedHashMap<>(gpuRuns.get(gpuRuns.size() - 1)));
        Map<String, Object> perRun = new LinkedHashMap<>();
        for (String key : gpuRuns.get(gpuRuns.size() - 1).keySet()) {
          String k = key.toLowerCase(Locale.ROOT);
          if (k.contains("rows") || k.contains("placement") || k.contains("switch") || k.contains("adaptive")) {
            perRun.put(key, gpuRuns.stream().map(g -> g.get(key)).toList());
          }
        }
        m.put("gpu_per_run", perRun);
      }
      return m;
    }
  }

  /** Every variant of one case over one table: a warm-up (not for a heavy case's CPU variants), then timed runs. */
  static List<Cell> run(SparkSession spark, Case c, String table, String source, long rows, int runs, int heavyRuns,
                        boolean sqlOn, long sqlRows, Map<String, Object> common) {
    // the SQL form over the first sqlRows rows when that is fewer (Collatz), checked against the Java UDF over them
    String sqlTable = table;
    List<Row> sqlReference = null;
    if (sqlOn && sqlRows < rows) {
      sqlTable = table + "_first_" + sqlRows;
      spark.table(table).where("id < " + sqlRows).createOrReplaceTempView(sqlTable);
      Cells.set(spark, SparkBench.CPU_ONLY);
      try {
        String subset = sqlTable;
        sqlReference = Cells.time(() -> spark.sql(c.java().apply(subset))).rows();
      } finally {
        Cells.unset(spark, SparkBench.CPU_ONLY);
      }
    }
    Map<String, Function<String, Dataset<Row>>> queries = new LinkedHashMap<>();
    Map<String, Map<String, String>> confs = new LinkedHashMap<>();
    queries.put("gpu_adaptive", t -> spark.sql(c.gpu().apply(t)));
    confs.put("gpu_adaptive", Map.of(PLACEMENT, "adaptive"));
    queries.put("gpu_forced", t -> spark.sql(c.gpu().apply(t)));
    confs.put("gpu_forced", Map.of(PLACEMENT, "gpu"));
    if (sqlOn) {
      queries.put("spark_sql", c.sql().apply(spark));
      confs.put("spark_sql", c.sqlConf());
    }
    queries.put("java_udf", t -> spark.sql(c.java().apply(t)));
    confs.put("java_udf", SparkBench.CPU_ONLY);
    // Warm-ups first, then the timed runs round-robin (run 1 of every variant, then run 2, ...): the JVM's
    // warming up through a case (the JIT, the file cache) then weighs on every variant alike, not on the first.
    Map<String, Cells.Run[]> timed = new LinkedHashMap<>();
    for (Map.Entry<String, Function<String, Dataset<Row>>> e : queries.entrySet()) {
      String variant = e.getKey();
      String from = variant.equals("spark_sql") ? sqlTable : table;
      boolean gpu = variant.startsWith("gpu_");
      int n = c.heavy() && !gpu ? heavyRuns : runs;
      Map<String, String> conf = confs.get(variant);
      Cells.set(spark, conf);
      try {
        if (gpu || !c.heavy() || n > 1) {
          Cells.time(() -> e.getValue().apply(from)); // warm-up: compiles kernels and Spark's code
        } else {
          // one timed run of a slow form: warm up on the first SweepBench.WARMUP_ROWS rows (the same code, compiled and JIT-ed)
          String warm = from + "_warmup";
          spark.table(from).where("id < " + SweepBench.WARMUP_ROWS).createOrReplaceTempView(warm);
          Cells.time(() -> e.getValue().apply(warm));
        }
      } finally {
        Cells.unset(spark, conf);
      }
      timed.put(variant, new Cells.Run[Math.max(1, n)]);
    }
    QueryParts listener = QueryParts.of(spark);
    Map<String, List<Map<String, Double>>> parts = new LinkedHashMap<>();
    for (int i = 0; i < Math.max(1, Math.max(runs, heavyRuns)); i++) {
      for (Map.Entry<String, Function<String, Dataset<Row>>> e : queries.entrySet()) {
        String variant = e.getKey();
        Cells.Run[] r = timed.get(variant);
        if (i >= r.length) {
          continue;
        }
        String from = variant.equals("spark_sql") ? sqlTable : table;
        Map<String, String> conf = confs.get(variant);
        Cells.set(spark, conf);
        try {
          QueryParts.Measured m = listener.measure(spark, () -> e.getValue().apply(from));
          r[i] = m.run();
          parts.computeIfAbsent(variant, v -> new ArrayList<>()).add(m.parts());
        } finally {
          Cells.unset(spark, conf);
        }
      }
    }
    for (String variant : queries.keySet()) {
      System.err.printf(Locale.ROOT, "[bench] %s over %s, %s: %s%n", c.name(), source, variant,
          Cells.secs(Cells.median(times(timed.get(variant)))));
    }
    List<Row> reference = last(timed.get("java_udf")).rows();
    List<Cell> cells = new ArrayList<>();
    for (Map.Entry<String, Cells.Run[]> e : timed.entrySet()) {
      Cells.Run[] r = e.getValue();
      List<Row> result = last(r).rows();
      boolean subset = e.getKey().equals("spark_sql") && sqlReference != null;
      List<Row> ref = subset ? sqlReference : reference;
      boolean agrees = Cells.agree(ref, result, c.tolerance());
      if (!agrees) {
        System.err.println("[bench] " + c.name() + " over " + source + ", " + e.getKey() + " DISAGREES with java_udf: "
            + result + " vs " + ref);
      }
      List<Map<String, Long>> gpuRuns = new ArrayList<>();
      for (Cells.Run run : r) {
        gpuRuns.add(run.gpu());
      }
      double[] t = times(r);
      cells.add(new Cell(c.name(), source, e.getKey(), subset ? sqlRows : rows, rows,
          Cells.median(t), t, result, agrees, Cells.relDiff(ref, result), c.tolerance(), confs.get(e.getKey()), gpuRuns,
          QueryParts.medians(parts.get(e.getKey())), common));
    }
    return cells;
  }

  private static Cells.Run last(Cells.Run[] r) {
    return r[r.length - 1];
  }

  private static double[] times(Cells.Run[] r) {
    double[] t = new double[r.length];
    for (int i = 0; i < r.length; i++) {
      t[i] = r[i].seconds();
    }
    return t;
  }

  /**
   * The GPU node's {@code cpuRows*} causes that are not 0, and their sum beside {@code cpuRows}
   * (issue 33: every CPU row has a cause; the sum equals {@code cpuRows}).
   */
  static Map<String, Object> causes(Map<String, Long> gpu) {
    Map<String, Object> out = new LinkedHashMap<>();
    long sum = 0;
    for (Map.Entry<String, Long> e : gpu.entrySet()) {
      if (e.getKey().startsWith("cpuRows") && e.getValue() != null && e.getValue() != 0) {
        out.put(e.getKey(), e.getValue());
        sum += e.getKey().equals("cpuRows") ? 0 : e.getValue();
      }
    }
    out.put("causes_sum", sum);
    out.put("causes_add_up", sum == gpu.getOrDefault("cpuRows", 0L));
    return out;
  }

  /** The ratio line of one case and source: adaptive and forced GPU against the faster of SQL and the Java UDF. */
  static Map<String, Object> ratio(List<Cell> cells) {
    Map<String, Cell> by = new LinkedHashMap<>();
    cells.forEach(c -> by.put(c.variant(), c));
    Cell java = by.get("java_udf");
    Cell sql = by.get("spark_sql");
    Cell best = sql != null && sql.scaledS() < java.medianS() ? sql : java;
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("bench", "matrix_ratio");
    m.put("case", java.caseName());
    m.put("source", java.source());
    m.put("rows", java.rows());
    m.put("best_cpu_variant", best.variant());
    m.put("best_cpu_s", best.scaledS());
    m.put("spark_sql_s", sql == null ? null : sql.scaledS());
    m.put("spark_sql_scaled_from_rows", sql == null || sql.fullRows() == sql.rows() ? null : sql.rows());
    m.put("java_udf_s", java.medianS());
    m.put("gpu_adaptive_s", by.get("gpu_adaptive").medianS());
    m.put("gpu_forced_s", by.get("gpu_forced").medianS());
    double adaptiveX = best.scaledS() / by.get("gpu_adaptive").medianS();
    m.put("adaptive_x", adaptiveX);
    m.put("gpu_x", best.scaledS() / by.get("gpu_forced").medianS());
    m.put("adaptive_at_least_1x", adaptiveX >= 1.0);
    // issue 33: adaptive keeps the speed where the GPU wins (target >= 0.95x forced there)
    double adaptiveVsForced = by.get("gpu_forced").medianS() / by.get("gpu_adaptive").medianS();
    m.put("adaptive_vs_forced", adaptiveVsForced);
    m.put("gpu_wins", best.scaledS() > by.get("gpu_forced").medianS());
    m.put("all_agree", cells.stream().allMatch(Cell::agrees));
    m.put("max_rel_diff", cells.stream().mapToDouble(Cell::relDiff).max().orElse(0));
    for (String v : List.of("gpu_adaptive", "gpu_forced")) {
      List<Map<String, Long>> g = by.get(v).gpuRuns();
      Map<String, Long> lastRun = g.isEmpty() ? Map.of() : g.get(g.size() - 1);
      m.put(v + "_gpu_rows", lastRun.get("gpuRows"));
      m.put(v + "_cpu_rows", lastRun.get("cpuRows"));
      m.put(v + "_cpu_row_causes", causes(lastRun));
    }
    return m;
  }

  /** The matrix for people, on standard error. */
  private static void table(List<Cell> cells) {
    StringBuilder t = new StringBuilder(String.format(Locale.ROOT, "%n[bench] issue 24's matrix (medians)%n"
        + "  %-10s %-8s %11s %11s %11s %11s %10s %10s %10s  %s%n", "case", "source", "adaptive", "gpu", "SQL", "Java UDF",
        "adaptive x", "gpu x", "adpt/gpu", "agree"));
    Map<String, Map<String, Cell>> byCase = new LinkedHashMap<>();
    cells.forEach(c -> byCase.computeIfAbsent(c.caseName() + "/" + c.source(), k -> new LinkedHashMap<>()).put(c.variant(), c));
    byCase.forEach((key, v) -> {
      double sql = v.containsKey("spark_sql") ? v.get("spark_sql").scaledS() : Double.NaN;
      double java = v.get("java_udf").medianS();
      double best = Double.isNaN(sql) ? java : Math.min(sql, java);
      Cell any = v.get("java_udf");
      t.append(String.format(Locale.ROOT, "  %-10s %-8s %11s %11s %11s %11s %10s %10s %10s  %s%n", any.caseName(), any.source(),
          Cells.secs(v.get("gpu_adaptive").medianS()), Cells.secs(v.get("gpu_forced").medianS()), Cells.secs(sql),
          Cells.secs(java), Cells.ratio(best / v.get("gpu_adaptive").medianS()),
          Cells.ratio(best / v.get("gpu_forced").medianS()),
          Cells.ratio(v.get("gpu_forced").medianS() / v.get("gpu_adaptive").medianS()),
          v.values().stream().allMatch(Cell::agrees) ? "yes" : "NO"));
    });
    System.err.print(t);
  }
}
