package io.vkspark.examples.bench;

import io.vkspark.examples.SparkJobs;
import io.vkspark.spark.cache.VkCacheSerializer;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.executor.ExecutorDevice;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.internal.SQLConf;

/**
 * Issue 25's scenario sweep: one cached portfolio of options priced again and again under other
 * market parameters, given as literals, as a risk desk does. Black-Scholes query {@code i} of
 * {@code --queries} is
 * {@code SELECT id % B AS bucket, sum(black_scholes(s, k, t, r + 0.01 i, v * (1 + 0.05 i))) FROM t
 * GROUP BY id % B} ({@code B = --buckets}; the key computed per row, on the device when the query runs
 * there; {@code --key column} groups by the cached column {@code bucket = CAST(id % B AS INT)} instead);
 * {@code --filter on} adds {@code WHERE t > 0.5D AND v < 0.4D} to every Black-Scholes query (about 43% of
 * the options kept; issue 35: over vkspark's cache the fused aggregate evaluates it on the device, the
 * host reads no filtered column; {@code --filter} with any other value uses it as the condition);
 * the implied-volatility sweep ({@code --iv-queries}, ungrouped) solves {@code implied_volatility(price * (1 + 0.01 j), s, k, t, r + 0.005 j)} and sums it (NaN as
 * 0, counted apart). Each sweep runs as
 * <ul>
 *   <li>{@code vk_device}: the GPU UDF over vkspark's cache ({@link VkCacheSerializer}) with
 *       {@code spark.vkspark.cache.device=true}: cached columns kept in device memory;</li>
 *   <li>{@code vk_host}: the GPU UDF over vkspark's cache with {@code spark.vkspark.cache.device=false};</li>
 *   <li>{@code spark_cache}: the GPU UDF over Spark's default cache ({@code DefaultCachedBatchSerializer});</li>
 *   <li>{@code spark_sql}: the same formula in built-in SQL over {@code vk_device}'s cache (CPU queries
 *       read its host copy); the reference the others must agree with;</li>
 *   <li>{@code spark_sql_spark_cache} (not by default): built-in SQL over Spark's cache.</li>
 * </ul>
 * Each store is its own cached relation (a filter keeping every row tells them apart), built with
 * its settings in place. {@code spark.vkspark.cache.device} is set on the session at start
 * ({@code --device-conf}, for the case that it is read once per JVM) and again before each
 * variant builds and reads its cache; {@code --device-memory} sets {@code spark.vkspark.cache.deviceMemory}
 * the same way. {@code spark.sql.cache.serializer} is static: the session starts with vkspark's, and
 * Spark's cache is built with the session's SQL conf switched to Spark's serializer and the
 * serializer Spark keeps per JVM cleared around it, as {@link CacheBench} does.
 *
 * <p>Per variant: one warm-up query (its time reported as {@code first_query_s}: compiling kernels,
 * and for {@code vk_device} the first upload; a built-in SQL form run once warms up on its first
 * 10,000 rows instead and has none), then
 * {@code --runs} sweeps ({@code --iv-runs} for implied volatility); the JSON line gives the
 * median sweep wall time, each query's median, their median, the ratios against {@code spark_sql}
 * and {@code vk_host}, the floor (an empty query over the same cache: {@code SELECT bucket, count(*)
 * ... GROUP BY bucket}; for the GPU variants also the device path's floor, the same grouping over the cheapest
 * GPU UDF, {@code sum(sweep_floor(s))}, with where its time went as {@code floor_device_path_breakdown}), the GPU node's metrics of the last sweep summed over its queries, and
 * where each query's time went ({@link QueryParts}: the median of each part over the last sweep's queries).
 * {@code --cache-batch R} sets {@code spark.sql.inMemoryColumnarStorage.batchSize}; unset, each cache
 * builds its default batches (vkspark's: {@code spark.vkspark.batchRows} rows; Spark's: 10,000).
 *
 * <pre>
 * SweepBench [--rows N] [--runs K] [--queries Q] [--buckets B] [--sweeps bs,iv] [--iv-rows N] [--iv-queries Q]
 *            [--iv-runs K] [--iv-sql true|false] [--iv-sql-queries Q] [--variants vk_device,vk_host,spark_cache,spark_sql]
 *            [--device-conf true|false] [--device-memory SIZE] [--fuse unset|true|false] [--key computed|column]
 *            [--placement adaptive|gpu] [--cache-batch R] [--partitions P] [--concurrent C] [--master M] [--out FILE]
 *            [--filter none|on|CONDITION]
 * </pre>
 */
public final class SweepBench {
  private SweepBench() {}

  /** {@code spark.vkspark.cache.device} (issue 25): keep the cache's columns in device memory. */
  static final String CACHE_DEVICE = Settings.PREFIX + "cache.device";
  /** {@code spark.vkspark.cache.deviceMemory} (issue 25): the device copy's budget, a size or a fraction. */
  static final String CACHE_DEVICE_MEMORY = Settings.PREFIX + "cache.deviceMemory";
  static final String SPARK_SERIALIZER = DataPathBench.DEFAULT_SERIALIZER;
  static final List<String> ALL_VARIANTS = List.of("vk_device", "vk_host", "spark_cache", "spark_sql",
      "spark_sql_spark_cache");

  private static final Set<String> FLAGS = Set.of("rows", "runs", "queries", "buckets", "sweeps", "iv-rows", "iv-queries",
      "iv-runs", "iv-sql", "iv-sql-queries", "variants", "device-conf", "device-memory", "fuse", "cache-batch",
      "partitions", "concurrent", "master", "out", "key", "placement", "filter");
  private static final String USAGE = "SweepBench [--rows N] [--runs K] [--queries Q] [--buckets B] [--sweeps bs,iv] "
      + "[--iv-rows N] [--iv-queries Q] [--iv-runs K] [--iv-sql true|false] [--iv-sql-queries Q] "
      + "[--variants " + String.join(",", ALL_VARIANTS) + "] [--device-conf true|false] [--device-memory SIZE] "
      + "[--fuse unset|true|false] [--key computed|column] [--placement adaptive|gpu] [--cache-batch R] [--partitions P]"
      + " [--concurrent C] [--master M] [--out FILE] [--filter none|on|CONDITION]";

  /** Rows a slow form run once warms up on. */
  static final int WARMUP_ROWS = 10_000;

  private static final String NAN_TO_ZERO = "sum(CASE WHEN isnan(%1$s) THEN 0D ELSE %1$s END), count_if(isnan(%1$s))";

  /** Where a variant's rows are cached: the serializer and the device setting it is built and read with. */
  record Store(String name, String serializer, String device) {}

  /** A variant: the store it reads, whether it is built-in SQL, and the session settings while it runs. */
  record Variant(String name, Store store, boolean sql, Map<String, String> conf) {}

  /** One sweep's queries: the GPU form and the built-in SQL form of query {@code i} over a table. */
  interface Sweep {
    String name();

    int queries();

    double tolerance();

    /** Session settings of the built-in SQL form. */
    default Map<String, String> sqlConf() {
      return Map.of();
    }

    Dataset<Row> gpu(SparkSession spark, String table, int i);

    Dataset<Row> sql(SparkSession spark, String table, int i);
  }

  static String lit(double x) {
    return String.format(Locale.ROOT, "%.6fD", x);
  }

  /** {@code --filter on}'s condition: keeps about 43% of the options ({@code t} in [0, 2], {@code v} in [0.08, 0.63]). */
  static final String DEFAULT_FILTER = "t > 0.5D AND v < 0.4D";

  /**
   * @param key the grouping key: {@code id % B}, computed per row (issue 35: on the device), or the
   *     cached column {@code bucket} (issue 25's form)
   * @param where the options each query prices ({@code --filter}), null for all
   */
  record BlackScholesSweep(int queries, String key, String where) implements Sweep {
    public String name() {
      return "black_scholes";
    }

    public double tolerance() {
      return 1e-9;
    }

    public Dataset<Row> gpu(SparkSession spark, String table, int i) {
      return spark.sql("SELECT " + key + " AS bucket, sum(black_scholes(s, k, t, r + " + lit(0.01 * i) + ", v * "
          + lit(1 + 0.05 * i) + ")) AS bs FROM " + table + (where == null ? "" : " WHERE " + where) + " GROUP BY " + key);
    }

    public Dataset<Row> sql(SparkSession spark, String table, int i) {
      Dataset<Row> rows = where == null ? spark.table(table) : spark.table(table).where(where);
      Dataset<Row> in = rows.selectExpr(key + " AS bucket", "s", "k", "t", "r + " + lit(0.01 * i) + " AS r",
          "v * " + lit(1 + 0.05 * i) + " AS v");
      return BlackScholesSql.with(in, "bucket").groupBy("bucket").agg(org.apache.spark.sql.functions.sum("bs").as("bs"));
    }
  }

  record ImpliedVolatilitySweep(int queries) implements Sweep {
    public String name() {
      return "implied_volatility";
    }

    public double tolerance() {
      return 1e-7;
    }

    /** 24 fused Newton steps exceed the JVM's 64 KB method limit under whole-stage code generation. */
    @Override
    public Map<String, String> sqlConf() {
      return Map.of("spark.sql.codegen.wholeStage", "false");
    }

    public Dataset<Row> gpu(SparkSession spark, String table, int j) {
      return spark.sql("SELECT " + String.format(NAN_TO_ZERO, "implied_volatility(price * " + lit(1 + 0.01 * j)
          + ", s, k, t, r + " + lit(0.005 * j) + ")") + " FROM " + table);
    }

    public Dataset<Row> sql(SparkSession spark, String table, int j) {
      Dataset<Row> in = spark.table(table).selectExpr("price * " + lit(1 + 0.01 * j) + " AS price", "s", "k", "t",
          "r + " + lit(0.005 * j) + " AS r");
      return ImpliedVolatilitySql.with(in, "iv").selectExpr(String.format(NAN_TO_ZERO, "iv").split(", (?=count_if)"));
    }
  }

  public static void main(String[] args) {
    Map<String, String> a = Cells.parse(args, FLAGS, USAGE);
    long rows = Cells.longArg(a, "rows", 2_000_000L);
    long ivRows = Math.min(rows, Cells.longArg(a, "iv-rows", rows));
    int runs = Integer.parseInt(a.getOrDefault("runs", "3"));
    int ivRuns = Integer.parseInt(a.getOrDefault("iv-runs", String.valueOf(runs)));
    int queries = Integer.parseInt(a.getOrDefault("queries", "20"));
    int ivQueries = Integer.parseInt(a.getOrDefault("iv-queries", "4"));
    int ivSqlQueries = Boolean.parseBoolean(a.getOrDefault("iv-sql", "true"))
        ? Math.min(ivQueries, Integer.parseInt(a.getOrDefault("iv-sql-queries", String.valueOf(ivQueries)))) : 0;
    int buckets = Integer.parseInt(a.getOrDefault("buckets", "16"));
    List<String> sweeps = Cells.list(a.getOrDefault("sweeps", "bs,iv"));
    List<String> variantNames = Cells.list(a.getOrDefault("variants", "vk_device,vk_host,spark_cache,spark_sql"));
    for (String v : variantNames) {
      if (!ALL_VARIANTS.contains(v)) {
        throw new IllegalArgumentException("--variants are among " + ALL_VARIANTS + ", not " + v);
      }
    }
    String keyForm = a.getOrDefault("key", "computed");
    if (!List.of("computed", "column").contains(keyForm)) {
      throw new IllegalArgumentException("--key is computed or column, not " + keyForm);
    }
    String fuse = a.getOrDefault("fuse", "unset");
    if (!List.of("unset", "true", "false").contains(fuse)) {
      throw new IllegalArgumentException("--fuse is unset, true or false, not " + fuse);
    }
    int cores = Runtime.getRuntime().availableProcessors();
    int partitions = Integer.parseInt(a.getOrDefault("partitions", String.valueOf(cores)));
    PrintStream json = a.containsKey("out") ? SparkBench.open(a.get("out")) : null;

    Store vkDevice = new Store("vk_device", VkCacheSerializer.class.getName(), "true");
    Store vkHost = new Store("vk_host", VkCacheSerializer.class.getName(), "false");
    Store sparkStore = new Store("spark_cache", SPARK_SERIALIZER, null);
    Map<String, String> gpuConf = fuse.equals("unset") ? Map.of() : Map.of(SparkBench.FUSE_AGGREGATES, fuse);
    List<Variant> variants = new ArrayList<>();
    for (String v : variantNames) {
      Store store = switch (v) {
        case "vk_device", "spark_sql" -> vkDevice;
        case "vk_host" -> vkHost;
        default -> sparkStore;
      };
      boolean sql = v.startsWith("spark_sql");
      Map<String, String> conf = new LinkedHashMap<>(sql ? Map.of() : gpuConf);
      conf.putAll(storeConf(store, a));
      variants.add(new Variant(v, store, sql, conf));
    }

    SparkSession spark = session(a, cores, partitions);
    listener = QueryParts.of(spark);
    try {
      Map<String, Object> common = new LinkedHashMap<>();
      common.put("partitions", partitions);
      common.put("cores", cores);
      common.put("cache_batch", a.containsKey("cache-batch") ? Long.parseLong(a.get("cache-batch")) : "default");
      common.put("buckets", buckets);
      common.put("fuse_aggregates", fuse);
      common.put("placement", a.getOrDefault("placement", "default"));
      String key = keyForm.equals("computed") ? "id % " + buckets : "bucket";
      common.put("key", key);
      String filter = a.getOrDefault("filter", "none");
      String where = filter.equals("none") ? null : filter.equals("on") ? DEFAULT_FILTER : filter;
      common.put("filter", where == null ? "none" : where);
      common.put("device", SparkBench.deviceName());
      // each store's tables, built once: the main table, and the implied-volatility one when it has fewer rows
      Map<String, String> mainTables = new LinkedHashMap<>();
      Map<String, String> ivTables = new LinkedHashMap<>();
      Map<String, Double> buildS = new LinkedHashMap<>();
      List<Dataset<Row>> cached = new ArrayList<>();
      for (Variant v : variants) {
        Store s = v.store();
        if (mainTables.containsKey(s.name())) {
          continue;
        }
        long t0 = System.nanoTime();
        mainTables.put(s.name(), cache(spark, s, rows, buckets, partitions, a, cached));
        ivTables.put(s.name(), ivRows == rows || !sweeps.contains("iv") ? mainTables.get(s.name())
            : cache(spark, s, ivRows, buckets, partitions, a, cached));
        buildS.put(s.name(), (System.nanoTime() - t0) / 1e9);
      }
      common.put("cache_build_s", buildS);
      Map<String, Double> floors = new LinkedHashMap<>();
      Map<String, Double> deviceFloors = new LinkedHashMap<>();
      Map<String, Map<String, Double>> deviceFloorParts = new LinkedHashMap<>();
      for (Map.Entry<String, String> e : mainTables.entrySet()) {
        floors.put(e.getKey(), floor(spark, "count(*)", key, e.getValue(), runs, variants, e.getKey()).seconds());
        boolean gpuStore = variants.stream().anyMatch(v -> !v.sql() && v.store().name().equals(e.getKey()));
        if (gpuStore) {
          Floor f = floor(spark, "sum(sweep_floor(s))", key, e.getValue(), runs, variants, e.getKey());
          deviceFloors.put(e.getKey(), f.seconds());
          deviceFloorParts.put(e.getKey(), f.parts());
        }
      }
      common.put("floor_s", floors);
      common.put("floor_device_path_s", deviceFloors);
      common.put("floor_device_path_breakdown", deviceFloorParts);
      if (sweeps.contains("bs")) {
        sweep(spark, json, new BlackScholesSweep(queries, key, where), variants, mainTables, rows, runs, queries, common);
      }
      if (sweeps.contains("iv")) {
        sweep(spark, json, new ImpliedVolatilitySweep(ivQueries), variants, ivTables, ivRows, ivRuns, ivSqlQueries,
            common);
      }
      cached.forEach(d -> d.unpersist(true));
    } finally {
      spark.stop();
      if (json != null) {
        json.close();
      }
    }
  }

  /** The device settings a store is built and read with (none for Spark's cache). */
  static Map<String, String> storeConf(Store s, Map<String, String> a) {
    Map<String, String> conf = new LinkedHashMap<>();
    if (s.device() != null) {
      conf.put(CACHE_DEVICE, s.device());
      if (a.containsKey("device-memory")) {
        conf.put(CACHE_DEVICE_MEMORY, a.get("device-memory"));
      }
    }
    return conf;
  }

  static SparkSession session(Map<String, String> a, int cores, int partitions) {
    DataPathBench.clearCacheSerializer();
    SparkSession.Builder b = SparkSession.builder()
        .appName("vkspark SweepBench")
        .master(a.getOrDefault("master", "local[" + cores + "]"))
        .config("spark.plugins", "io.vkspark.spark.VkSparkPlugin")
        .config(Settings.CONCURRENT_GPU_TASKS.key(), a.getOrDefault("concurrent", String.valueOf(cores)))
        .config(Settings.METRICS_LEVEL.key(), "debug")
        .config("spark.sql.cache.serializer", VkCacheSerializer.class.getName())
        .config(CACHE_DEVICE, a.getOrDefault("device-conf", "true"))
        .config("spark.sql.shuffle.partitions", String.valueOf(partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1");
    if (a.containsKey("device-memory")) {
      b.config(CACHE_DEVICE_MEMORY, a.get("device-memory"));
    }
    if (a.containsKey("cache-batch")) { // unset: each cache's default (vkspark's: spark.vkspark.batchRows; Spark's: 10,000)
      b.config("spark.sql.inMemoryColumnarStorage.batchSize", a.get("cache-batch"));
    }
    if (a.containsKey("placement")) { // unset: the plugin's default (adaptive)
      b.config(Settings.PLACEMENT.key(), a.get("placement"));
    }
    SparkSession spark = b.getOrCreate();
    SparkJobs.registerAll(spark);
    // the device path's floor: the cheapest GPU UDF, so a query of the sweep's shape costs only what is around the kernel
    io.vkspark.spark.api.GpuFunction.define("sweep_floor").returns("double").arg("x", "double").body("x")
        .cpu((org.apache.spark.sql.api.java.UDF1<Double, Double>) x -> x).register(spark);
    ExecutorDevice.get(VkConf.from(spark.sparkContext().getConf()), "driver"); // local mode: the device, for its name
    System.err.println("[bench] SweepBench session: " + SparkJobs.deviceLine(spark));
    return spark;
  }

  private static int tables;
  /** The listener of the session's queries, for the last sweep's breakdown. */
  private static QueryParts listener;

  /**
   * Caches {@code rows} options with a bucket column in store {@code s} (its serializer and device
   * setting in place while it is built) and returns the view's name.
   */
  static String cache(SparkSession spark, Store s, long rows, int buckets, int partitions, Map<String, String> a,
                      List<Dataset<Row>> cached) {
    int id = tables++;
    String view = "sweep_" + s.name() + "_" + rows;
    Map<String, String> conf = storeConf(s, a);
    Cells.set(spark, conf);
    boolean spark0 = s.serializer().equals(SPARK_SERIALIZER);
    if (spark0) {
      SQLConf.get().setConfString("spark.sql.cache.serializer", s.serializer());
      DataPathBench.clearCacheSerializer();
    }
    try {
      long t0 = System.nanoTime();
      // a filter that keeps every row and differs per cache, or Spark would answer one cache from another
      Dataset<Row> d = SparkBench.options(spark, rows, partitions).drop("x", "y")
          .selectExpr("*", "CAST(id % " + buckets + " AS INT) AS bucket").where("id < " + (rows + id)).cache();
      d.count();
      d.createOrReplaceTempView(view);
      cached.add(d);
      System.err.printf(Locale.ROOT, "[bench] cached %,d rows in %s (%s, %s) in %.1f s%n", rows, view, s.serializer(),
          conf, (System.nanoTime() - t0) / 1e9);
    } finally {
      if (spark0) {
        SQLConf.get().setConfString("spark.sql.cache.serializer", VkCacheSerializer.class.getName());
        DataPathBench.clearCacheSerializer();
      }
      Cells.unset(spark, conf);
    }
    return view;
  }

  /** A floor's median time and where it went ({@link QueryParts}: each part's median over the runs). */
  record Floor(double seconds, Map<String, Double> parts) {}

  /**
   * The floor of a store: {@code SELECT key AS bucket, aggregate FROM t GROUP BY key} over its cache,
   * the median of {@code runs}: {@code count(*)} is Spark's empty query, {@code sum(sweep_floor(s))}
   * the device path's (the same shape through the cheapest GPU UDF).
   */
  static Floor floor(SparkSession spark, String aggregate, String key, String table, int runs, List<Variant> variants,
                     String store) {
    Map<String, String> conf = variants.stream().filter(v -> v.store().name().equals(store) && !v.sql()).findFirst()
        .or(() -> variants.stream().filter(v -> v.store().name().equals(store)).findFirst())
        .map(Variant::conf).orElse(Map.of());
    Cells.set(spark, conf);
    try {
      Supplier<Dataset<Row>> q = () -> spark.sql("SELECT " + key + " AS bucket, " + aggregate + " FROM " + table
          + " GROUP BY " + key);
      Cells.time(q);
      double[] t = new double[Math.max(1, runs)];
      List<Map<String, Double>> parts = new ArrayList<>();
      for (int i = 0; i < t.length; i++) {
        QueryParts.Measured m = listener.measure(spark, q);
        t[i] = m.run().seconds();
        parts.add(m.parts());
      }
      return new Floor(Cells.median(t), QueryParts.medians(parts));
    } finally {
      Cells.unset(spark, conf);
    }
  }

  /** One variant's sweeps: per query, the times of each run, and the last run's rows and GPU metrics. */
  record Swept(Variant variant, int queries, double firstQueryS, double[][] times, List<List<Row>> rows,
               Map<String, Long> gpu, Map<String, Double> breakdown) {
    double[] perQueryMedians() {
      double[] m = new double[queries];
      for (int q = 0; q < queries; q++) {
        m[q] = Cells.median(times[q]);
      }
      return m;
    }

    /** Each sweep's wall time (the sum of its queries' times). */
    double[] sweeps() {
      int runs = times[0].length;
      double[] total = new double[runs];
      for (int r = 0; r < runs; r++) {
        for (int q = 0; q < queries; q++) {
          total[r] += times[q][r];
        }
      }
      return total;
    }

    double sweepMedian() {
      return Cells.median(sweeps());
    }
  }

  static void sweep(SparkSession spark, PrintStream json, Sweep sweep, List<Variant> variants, Map<String, String> tables,
                    long rows, int runs, int sqlQueries, Map<String, Object> common) {
    Map<String, Swept> done = new LinkedHashMap<>();
    for (Variant v : variants) {
      int n = v.sql() ? Math.min(sweep.queries(), sqlQueries) : sweep.queries();
      if (n == 0) {
        continue;
      }
      String table = tables.get(v.store().name());
      Map<String, String> conf = new LinkedHashMap<>(v.conf());
      if (v.sql()) {
        conf.putAll(sweep.sqlConf());
      }
      Cells.set(spark, conf);
      try {
        // warm-up: query 0 once; a built-in SQL form run once (implied volatility's: a minute a query at 50 M
        // rows) warms up on the first WARMUP_ROWS rows instead: the same operators' code, compiled and JIT-ed
        double first;
        if (v.sql() && runs <= 1) {
          String warm = table + "_warmup";
          spark.table(table).where("id < " + WARMUP_ROWS).createOrReplaceTempView(warm);
          Cells.time(() -> query(spark, sweep, v, warm, 0));
          first = Double.NaN;
        } else {
          first = Cells.time(() -> query(spark, sweep, v, table, 0)).seconds();
        }
        double[][] t = new double[n][Math.max(1, runs)];
        List<List<Row>> last = new ArrayList<>();
        Map<String, Long> gpu = new LinkedHashMap<>();
        List<Map<String, Double>> parts = new ArrayList<>();
        for (int r = 0; r < t[0].length; r++) {
          for (int q = 0; q < n; q++) {
            int i = q;
            boolean lastRun = r == t[0].length - 1;
            // the last sweep's queries are measured part by part (a listener and counters, read after the timed collect)
            Cells.Run run;
            if (lastRun) {
              QueryParts.Measured m = listener.measure(spark, () -> query(spark, sweep, v, table, i));
              run = m.run();
              parts.add(m.parts());
            } else {
              run = Cells.time(() -> query(spark, sweep, v, table, i));
            }
            t[q][r] = run.seconds();
            if (lastRun) {
              last.add(byKey(run.rows()));
              run.gpu().forEach((k, x) -> gpu.merge(k, x, k.equals("peakDeviceMemory") ? Math::max : Long::sum));
            }
          }
        }
        done.put(v.name(), new Swept(v, n, first, t, last, gpu, QueryParts.medians(parts)));
        System.err.printf(Locale.ROOT, "[bench] %s sweep, %s: %d queries, median sweep %.3f s%n", sweep.name(), v.name(),
            n, done.get(v.name()).sweepMedian());
      } finally {
        Cells.unset(spark, conf);
      }
    }
    emitSweep(json, sweep, done, rows, runs, common);
  }

  /** Grouped rows in key order (the first column), so two variants' results compare row by row; no ORDER BY in the timed query. */
  static List<Row> byKey(List<Row> rows) {
    List<Row> sorted = new ArrayList<>(rows);
    if (!sorted.isEmpty() && sorted.get(0).size() > 1 && sorted.get(0).get(0) instanceof Number) {
      sorted.sort(java.util.Comparator.comparing(r -> r.isNullAt(0) ? Long.MIN_VALUE : ((Number) r.get(0)).longValue()));
    }
    return sorted;
  }

  private static Dataset<Row> query(SparkSession spark, Sweep sweep, Variant v, String table, int i) {
    return v.sql() ? sweep.sql(spark, table, i) : sweep.gpu(spark, table, i);
  }

  /** One JSON line per variant, and the table on standard error. */
  private static void emitSweep(PrintStream json, Sweep sweep, Map<String, Swept> done, long rows, int runs,
                                Map<String, Object> common) {
    Swept sql = done.get("spark_sql");
    Swept host = done.get("vk_host");
    StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%n[bench] issue 25's %s sweep, %,d rows (medians)%n"
        + "  %-22s %8s %12s %12s %12s %10s %10s  %s%n", sweep.name(), rows, "variant", "queries", "sweep", "per query",
        "first query", "x vs SQL", "x vs host", "agree"));
    for (Swept s : done.values()) {
      double[] perQuery = s.perQueryMedians();
      double perQueryMedian = Cells.median(perQuery);
      // agreement, query by query, with the SQL form where it ran the query, else with the first variant that did
      boolean agree = true;
      double worst = 0;
      List<String> references = new ArrayList<>();
      for (int q = 0; q < s.queries(); q++) {
        int qq = q;
        Swept ref = sql != null && q < sql.queries() ? sql
            : done.values().stream().filter(d -> d.queries() > qq).findFirst().orElseThrow();
        references.add(ref.variant().name());
        boolean ok = Cells.agree(ref.rows().get(q), s.rows().get(q), sweep.tolerance());
        if (!ok) {
          System.err.println("[bench] " + sweep.name() + " query " + q + ", " + s.variant().name() + " DISAGREES with "
              + ref.variant().name() + ": " + s.rows().get(q) + " vs " + ref.rows().get(q));
        }
        agree &= ok;
        worst = Math.max(worst, Cells.relDiff(ref.rows().get(q), s.rows().get(q)));
      }
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("bench", "sweep");
      m.put("sweep", sweep.name());
      m.put("variant", s.variant().name());
      m.put("store", s.variant().store().name());
      m.put("serializer", s.variant().store().serializer());
      m.put("rows", rows);
      m.put("queries", s.queries());
      m.put("runs", runs);
      m.put("sweep_wall_s", s.sweepMedian());
      // the first sweep meets every query's literals for the first time (query 0 aside, the warm-up):
      // new kernels and new Spark code, as a desk's new scenarios would; later sweeps repeat them
      m.put("first_sweep_wall_s", s.sweeps()[0]);
      m.put("sweeps_wall_s", Cells.rounded(s.sweeps()));
      m.put("per_query_median_s", perQueryMedian);
      m.put("per_query_s", Cells.rounded(perQuery));
      // issue 33: a steady sweep has no slow query (target: the slowest at most 1.3x the median)
      m.put("slowest_query_s", java.util.Arrays.stream(perQuery).max().orElse(Double.NaN));
      m.put("slowest_over_median", java.util.Arrays.stream(perQuery).max().orElse(Double.NaN) / perQueryMedian);
      m.put("first_query_s", s.firstQueryS());
      // per query, over the queries both ran
      m.put("x_vs_spark_sql", sql == null ? null : ratio(sql, s));
      m.put("x_vs_vk_host", host == null ? null : ratio(host, s));
      m.put("agrees", agree);
      m.put("max_rel_diff", worst);
      m.put("tolerance", sweep.tolerance());
      m.put("references", references.stream().distinct().toList());
      m.put("result_first_query", Cells.text(s.rows().get(0)));
      m.put("conf", new LinkedHashMap<>(s.variant().conf()));
      m.putAll(common);
      if (!s.gpu().isEmpty()) {
        m.put("gpu_last_sweep", new LinkedHashMap<>(s.gpu())); // every GPU node metric by name, summed over the sweep
        m.put("cpu_row_causes", MatrixBench.causes(s.gpu())); // issue 33: why rows ran with call(), adding up to cpuRows
      }
      m.put("breakdown", s.breakdown()); // where a query's time goes: each part's median over the last sweep's queries
      System.err.println("[bench] " + sweep.name() + ", " + s.variant().name() + ": per query " + s.breakdown());
      SparkBench.emit(json, List.of(Json.write(m)));
      table.append(String.format(Locale.ROOT, "  %-22s %8d %12s %12s %12s %10s %10s  %s%n", s.variant().name(), s.queries(),
          Cells.secs(s.sweepMedian()), Cells.secs(perQueryMedian), Cells.secs(s.firstQueryS()),
          sql == null ? "" : Cells.ratio(ratio(sql, s)), host == null ? "" : Cells.ratio(ratio(host, s)),
          agree ? "yes" : "NO"));
    }
    System.err.print(table);
  }

  /** How many times faster {@code s} is than {@code base}: the median over the queries both ran of base / s per query. */
  private static double ratio(Swept base, Swept s) {
    int n = Math.min(base.queries(), s.queries());
    double[] b = base.perQueryMedians();
    double[] x = s.perQueryMedians();
    double[] r = new double[n];
    for (int q = 0; q < n; q++) {
      r[q] = b[q] / x[q];
    }
    return Cells.median(r);
  }
}
