package io.vkspark.spark;

import io.vkspark.spark.cache.VkCacheColumnsExec;
import io.vkspark.spark.plan.VkExplain;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.spark.cache.CacheMemory;
import io.vkspark.spark.cache.CachedColumn;
import io.vkspark.spark.cache.VkCacheSerializer;
import io.vkspark.spark.conf.Settings;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.function.Supplier;
import org.apache.spark.sql.execution.columnar.InMemoryRelation$;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.storage.RDDInfo;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.WholeStageCodegenExec;
import org.apache.spark.sql.execution.columnar.DefaultCachedBatchSerializer;
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec;
import org.apache.spark.storage.StorageLevel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import scala.Option;
import scala.collection.Seq;

/**
 * vkspark's table cache in a session of its own ({@code spark.sql.cache.serializer} is static; the
 * shared session is stopped first and rebuilt by later tests). Storage memory is small
 * (spark.testing.memory 1 GiB, memory fraction 0.06: about 43 MiB) so that caching two tables of
 * about 32 MiB each forces eviction. Every claim is checked against {@link CacheMemory}'s counter of
 * native bytes and against the same query without the cache (what Spark's default cache returns).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class CacheSerializerSparkTest {
  private static final int BIG = 2_000_000;
  private static SparkSession s;

  @BeforeAll
  static void start() {
    parquet(); // written by the shared session before it stops
    s = TestSpark.cacheSessionBuilder()
        .config("spark.testing.memory", String.valueOf(1L << 30))
        .config("spark.memory.fraction", "0.06")
        .getOrCreate();
    TestSpark.registerTestUdfs(s);
  }

  @AfterAll
  static void stop() {
    TestSpark.stopCacheSession(s);
    s = null;
  }

  /** The Parquet test table plus a string column with nulls and empty strings. */
  private static Dataset<Row> table() {
    return s.read().parquet(parquet()).selectExpr("*",
        "CASE WHEN id % 7 = 0 THEN NULL ELSE concat('v', cast(id AS string), repeat('x', cast(id % 13 AS int))) END AS s",
        "CASE WHEN id % 5 = 0 THEN '' ELSE cast(id % 10 AS string) END AS e");
  }

  private static final String[] QUERIES = {
      "SELECT count(*), count(i), sum(i), sum(j), min(l), max(l), sum(m), min(f), max(g), min(a), max(b), count(a),"
          + " count_if(p), count_if(q), count(p), min(d), max(d), min(t), max(t), min(s), max(s), count(s), count(e) FROM %s",
      "SELECT p, count(*), sum(i), max(s), min(e) FROM %s GROUP BY p",
      "SELECT * FROM %s WHERE id %% 997 = 0",
      "SELECT id, s, a, length(s) FROM %s WHERE s LIKE 'v1%%' AND a > 0",
      "SELECT e, count(*), sum(m), max(l) FROM %s WHERE q GROUP BY e",
  };

  /** Each query over the cached view equals the same query over the Parquet files. */
  private static void assertQueriesMatch(String cachedView, String plainView) {
    for (String q : QUERIES) {
      List<Row> cached = sortedRows(s.sql(String.format(q, cachedView)));
      List<Row> plain = sortedRows(s.sql(String.format(q, plainView)));
      assertFalse(plain.isEmpty(), q);
      assertRowsEqual(plain, cached);
    }
  }

  private static List<Row> sortedRows(Dataset<Row> df) {
    List<Row> rows = new ArrayList<>(df.collectAsList());
    rows.sort((x, y) -> x.toString().compareTo(y.toString()));
    return rows;
  }

  private static String plan(Dataset<Row> df) {
    return df.queryExecution().executedPlan().toString();
  }

  /** Runs GC until the cache holds at most {@code bytes} (the Cleaner frees batches Spark dropped unclosed). */
  private static long awaitLiveAtMost(long bytes) throws InterruptedException {
    for (int i = 0; i < 100 && CacheMemory.liveBytes() > bytes; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return CacheMemory.liveBytes();
  }

  private static RDDInfo info(String table) {
    return Arrays.stream(s.sparkContext().getRDDStorageInfo())
        .filter(r -> r.name().equals("In-memory table " + table)).findFirst().orElse(null);
  }

  @Test
  @Order(1)
  void persistThenUnpersist_cachesNativelyAndFreesOnUnpersist() {
    long before = CacheMemory.liveBytes();
    Dataset<Row> cached = table().persist(StorageLevel.MEMORY_ONLY());
    assertEquals(20_000L, cached.count());
    long held = CacheMemory.liveBytes() - before;
    // 20,000 rows: 13 fixed-width columns (about 5 bytes a row on average... at least 4), two string columns.
    assertTrue(held > 20_000L * (11 * 4 + 2 * 4), "the cache holds the table natively: " + held + " bytes");
    RDDInfo[] infos = s.sparkContext().getRDDStorageInfo();
    long accounted = Arrays.stream(infos).mapToLong(RDDInfo::memSize).sum();
    assertTrue(accounted >= held && accounted < held + held / 10,
        "Spark's storage memory counts the native bytes: " + accounted + " for " + held);
    assertTrue(plan(cached.selectExpr("sum(i)")).contains("InMemoryTableScan"));

    cached.unpersist(true);
    // Spark 4.2's MemoryStore closes AutoCloseable values when it removes a block: freed at once, no GC.
    assertEquals(before, CacheMemory.liveBytes(), "unpersist freed every cached byte");
  }

  /**
   * Spark plans a cache scan under a row-based parent as rows (InMemoryTableScanExec supports both);
   * vkspark's ReadCacheColumns rule has such parents read the column batches through ColumnarToRow
   * instead (see cpuQueries_readCachedColumnsThroughGeneratedCode), and a scan at a plan's root still
   * reads rows (convertCachedBatchToInternalRow).
   */
  @Test
  @Order(2)
  void cpuQueries_overTheCache_equalTheUncachedQueries() {
    table().createOrReplaceTempView("plain_t");
    table().createOrReplaceTempView("cached_t");
    s.catalog().cacheTable("cached_t");
    try {
      long before = CacheMemory.liveBytes();
      assertEquals(20_000L, s.table("cached_t").count());
      assertTrue(CacheMemory.liveBytes() > before, "stored by vkspark's cache");
      Dataset<Row> scan = s.sql("SELECT sum(i) FROM cached_t");
      scan.collectAsList();
      assertTrue(plan(scan).contains("In-memory table cached_t"), plan(scan));
      assertQueriesMatch("cached_t", "plain_t");
    } finally {
      s.catalog().uncacheTable("cached_t");
    }
  }

  @Test
  @Order(3)
  void unsupportedTypes_fallBackToSparksCache() {
    Supplier<Dataset<Row>> t = () -> table().selectExpr("id", "cast(a AS decimal(12, 2)) AS dec", "array(i, j) AS arr",
        "cast(s AS binary) AS bin", "s");
    t.get().createOrReplaceTempView("plain_u");
    t.get().createOrReplaceTempView("cached_u");
    long before = CacheMemory.liveBytes();
    s.catalog().cacheTable("cached_u");
    try {
      assertEquals(20_000L, s.table("cached_u").count());
      assertEquals(before, CacheMemory.liveBytes(), "Spark's default cache stored it");
      String q = "SELECT id, dec, arr, hex(bin), s FROM %s WHERE id %% 101 = 0";
      assertRowsEqual(sortedRows(s.sql(String.format(q, "plain_u"))), sortedRows(s.sql(String.format(q, "cached_u"))));
      String agg = "SELECT sum(dec), count(arr), max(s) FROM %s";
      assertRowsEqual(sortedRows(s.sql(String.format(agg, "plain_u"))), sortedRows(s.sql(String.format(agg, "cached_u"))));
    } finally {
      s.catalog().uncacheTable("cached_u");
    }
  }

  /**
   * The GPU node reads the cache's column batches in place (one bulk copy per buffer into GPU
   * memory, no RowToColumnar), and with {@link Settings#CACHE_COLUMNAR_OUTPUT} off it reads the
   * cache's rows; both run every row on the GPU and agree with the UDFs' call().
   */
  @Test
  @Order(4)
  void gpuUdf_overTheCache_runsEveryRowOnTheGpu() {
    Dataset<Row> cached = table().cache();
    try {
      assertEquals(20_000L, cached.count());
      Supplier<Dataset<Row>> q = () -> cached.selectExpr("id", "int_poly(i, j) AS ip", "long_mix(l, m) AS lm",
          "float_saxpy(f, g) AS fs", "xor_gpu(p, q) AS x", "add_days(d, j) AS dd", "s", "e");
      Dataset<Row> ran = q.get();
      ran.collectAsList();
      assertAllRowsOnGpu(ran);
      long gpuRows = gpuNodes(ran).stream().mapToLong(n -> metrics(n).get("gpuRows")).sum();
      assertEquals(20_000L, gpuRows);
      assertTrue(plan(ran).contains("InMemoryTableScan") && !plan(ran).contains("RowToColumnar"),
          "the GPU node reads the cache's column batches: " + plan(ran));
      assertGpuEqualsCpu(q);

      s.conf().set(Settings.CACHE_COLUMNAR_OUTPUT.key(), "false");
      try {
        Dataset<Row> rows = q.get();
        rows.collectAsList();
        assertTrue(plan(rows).contains("RowToColumnar"), "the cache hands out rows: " + plan(rows));
        assertGpuEqualsCpu(q);
      } finally {
        s.conf().unset(Settings.CACHE_COLUMNAR_OUTPUT.key());
      }
      assertNoValidationErrors();
    } finally {
      cached.unpersist(true);
    }
  }

  @Test
  @Order(5)
  void eviction_spillsOrDropsBlocks_freesTheirMemory_andQueriesStillAgree() throws InterruptedException {
    long before = awaitLiveAtMost(0);
    s.range(0, BIG, 1, 4).selectExpr("id", "cast(id AS double) * 0.5 AS x").createOrReplaceTempView("big_a");
    s.range(0, BIG, 1, 4).selectExpr("id", "cast(id AS double) * 0.25 AS x").createOrReplaceTempView("big_b");
    s.catalog().cacheTable("big_a", StorageLevel.MEMORY_AND_DISK());
    s.catalog().cacheTable("big_b", StorageLevel.MEMORY_ONLY());
    try {
      assertEquals(BIG, s.table("big_a").count());
      assertTrue(CacheMemory.liveBytes() - before >= 16L * BIG, "vkspark's cache holds big_a");
      RDDInfo a = info("big_a");
      assertNotNull(a, "big_a cached");
      assertTrue(a.memSize() > 0 && a.diskSize() == 0, "big_a in memory first: " + a);

      assertEquals(BIG, s.table("big_b").count());
      a = info("big_a");
      RDDInfo b = info("big_b");
      assertNotNull(b, "some of big_b is cached");
      assertNotNull(a, "big_a still counts as cached (on disk)");
      assertTrue(a.diskSize() > 0, "caching big_b evicted blocks of big_a to disk: " + a);
      long accounted = a.memSize() + b.memSize();
      long live = awaitLiveAtMost(before + accounted) - before;
      assertTrue(live <= accounted && live > accounted * 9 / 10,
          "the cache holds natively what Spark's storage memory counts (" + live + " vs " + accounted + ")");

      // Evicted blocks come back from disk (deserialized into native memory) or are recomputed.
      long n = BIG;
      Row ra = s.sql("SELECT count(*), sum(id), sum(x), min(x), max(x) FROM big_a").first();
      assertEquals(List.of(n, n * (n - 1) / 2, n * (n - 1) / 4.0, 0.0, (n - 1) * 0.5),
          List.of(ra.getLong(0), ra.getLong(1), ra.getDouble(2), ra.getDouble(3), ra.getDouble(4)));
      Row rb = s.sql("SELECT count(*), sum(id), sum(x) FROM big_b").first();
      assertEquals(List.of(n, n * (n - 1) / 2, n * (n - 1) / 8.0), List.of(rb.getLong(0), rb.getLong(1), rb.getDouble(2)));
    } finally {
      s.catalog().uncacheTable("big_a");
      s.catalog().uncacheTable("big_b");
    }
    assertEquals(before, awaitLiveAtMost(before), "uncaching both (and GC of batches read from disk) freed everything");
  }
  /**
   * The same table cached by Spark's default serializer in this session: {@code spark.sql.cache.serializer}
   * is switched on the session's conf around the {@code cache()} call (the relation keeps the
   * serializer it was built with), then switched back.
   */
  private static Dataset<Row> cacheWithSparksSerializer(Dataset<Row> df) {
    SQLConf conf = s.sessionState().conf();
    conf.setConfString("spark.sql.cache.serializer", DefaultCachedBatchSerializer.class.getName());
    InMemoryRelation$.MODULE$.clearSerializer();
    try {
      Dataset<Row> cached = df.cache();
      cached.count();
      return cached;
    } finally {
      conf.setConfString("spark.sql.cache.serializer", VkCacheSerializer.class.getName());
      InMemoryRelation$.MODULE$.clearSerializer();
    }
  }

  /** The class of the serializer whose cache each scan in the (executed) plan reads. */
  private static List<Class<?>> scannedSerializers(Dataset<Row> df) {
    List<Class<?>> out = new ArrayList<>();
    VkExplain.visit(df.queryExecution().executedPlan(), p -> {
      if (p instanceof InMemoryTableScanExec scan) {
        out.add(scan.relation().cacheBuilder().serializer().getClass());
      }
    });
    return out;
  }

  /** The Java source Spark generated for each whole-stage-codegen subtree of the (executed) plan. */
  private static String generatedCode(Dataset<Row> df) {
    StringBuilder out = new StringBuilder();
    VkExplain.visit(df.queryExecution().executedPlan(), p -> {
      if (p instanceof WholeStageCodegenExec w) {
        out.append(w.doCodeGen()._2().body()).append('\n');
      }
    });
    return out.toString();
  }

  private static final String CACHED_COLUMN_CAST = "(" + CachedColumn.class.getName() + ") ";

  /**
   * A CPU query over vkspark's cache reads its column batches through ColumnarToRow (over
   * VkCacheColumns), whose generated code casts each column to the final CachedColumn class and
   * calls it directly; the scan's vectorTypes name CachedColumn too. With
   * {@code spark.vkspark.cache.columnarOutput=false} the same query reads the cache's rows.
   */
  @Test
  @Order(6)
  void cpuQueries_readCachedColumnsThroughGeneratedCode() {
    Dataset<Row> cached = table().cache();
    try {
      assertEquals(20_000L, cached.count());
      Dataset<Row> q = cached.where("j > 100").selectExpr("sum(a + b)", "sum(i)", "max(s)", "count_if(p)");
      q.collectAsList();
      List<String> nodes = new ArrayList<>();
      List<Option<?>> vectorTypes = new ArrayList<>();
      VkExplain.visit(q.queryExecution().executedPlan(), p -> {
        nodes.add(p.nodeName());
        if (p instanceof InMemoryTableScanExec || p instanceof VkCacheColumnsExec) {
          vectorTypes.add(p.vectorTypes());
        }
      });
      assertTrue(nodes.contains("ColumnarToRow") && nodes.contains("VkCacheColumns"), "read as columns: " + nodes);
      assertEquals(2, vectorTypes.size(), "one scan, one VkCacheColumns: " + vectorTypes);
      for (Option<?> types : vectorTypes) {
        assertTrue(types.isDefined(), "vector classes named");
        List<Object> names = new ArrayList<>();
        ((Seq<?>) types.get()).foreach(names::add);
        assertEquals(Collections.nCopies(6, CachedColumn.class.getName()), names, "vector classes of a, b, i, j, p, s");
      }
      String code = generatedCode(q);
      assertTrue(code.contains(CACHED_COLUMN_CAST), "the generated code calls CachedColumn directly:\n" + code);
      assertFalse(code.contains("(org.apache.spark.sql.vectorized.ColumnVector) "), "no abstract vector calls:\n" + code);

      s.conf().set("spark.sql.adaptive.enabled", "false"); // the scan is not inside a TableCacheQueryStage
      try {
        Dataset<Row> plain = cached.where("j > 100").selectExpr("sum(a + b)", "sum(i)", "max(s)", "count_if(p)");
        assertRowsEqual(q.collectAsList(), plain.collectAsList());
        assertTrue(generatedCode(plain).contains(CACHED_COLUMN_CAST), "without AQE too: " + explain(plain));
      } finally {
        s.conf().unset("spark.sql.adaptive.enabled");
      }

      s.conf().set(Settings.CACHE_COLUMNAR_OUTPUT.key(), "false");
      try {
        Dataset<Row> rows = cached.where("j > 100").selectExpr("sum(a + b)", "sum(i)", "max(s)", "count_if(p)");
        rows.collectAsList();
        assertFalse(explain(rows).contains("VkCacheColumns"), explain(rows));
        assertFalse(generatedCode(rows).contains(CACHED_COLUMN_CAST), "rows, not columns");
        assertRowsEqual(q.collectAsList(), rows.collectAsList());
      } finally {
        s.conf().unset(Settings.CACHE_COLUMNAR_OUTPUT.key());
      }
    } finally {
      cached.unpersist(true);
    }
  }

  /**
   * Every type vkspark's cache stores, with nulls (and empty strings), read by CPU queries through
   * its column batches, through its rows, and at the root of a plan, equals the same query over
   * Spark's own cache of the same table.
   */
  @Test
  @Order(7)
  void everyCachedType_withNulls_agreesWithSparksCache() {
    Supplier<Dataset<Row>> t = () -> table().selectExpr("*", "cast(t AS timestamp_ntz) AS tn",
        "CASE WHEN id % 3 = 0 THEN NULL ELSE cast(id AS double) / 7 END AS nd");
    long before = CacheMemory.liveBytes();
    Dataset<Row> spark = cacheWithSparksSerializer(t.get().where("id >= -1"));
    assertEquals(before, CacheMemory.liveBytes(), "Spark's default cache stored the reference");
    Dataset<Row> vk = t.get().where("id >= -2").cache();
    try {
      assertEquals(20_000L, vk.count());
      assertTrue(CacheMemory.liveBytes() > before, "vkspark's cache stored the other");
      spark.createOrReplaceTempView("spark_cached");
      vk.createOrReplaceTempView("vk_cached");
      assertEquals(List.of(DefaultCachedBatchSerializer.class), scannedSerializers(s.table("spark_cached")));
      assertEquals(List.of(VkCacheSerializer.class), scannedSerializers(s.table("vk_cached")));
      String all = "id, i, j, l, m, f, g, a, b, p, q, d, t, s, e, tn, nd";
      List<String> queries = new ArrayList<>(Arrays.asList(QUERIES));
      queries.add("SELECT " + all + " FROM %s WHERE id %% 3 < 2");
      queries.add("SELECT " + all + " FROM %s");
      queries.add("SELECT count(tn), min(tn), max(tn), count(nd), sum(nd), min(nd) FROM %s");
      for (String columnar : List.of("true", "false")) {
        s.conf().set(Settings.CACHE_COLUMNAR_OUTPUT.key(), columnar);
        try {
          for (String q : queries) {
            Dataset<Row> got = s.sql(String.format(q, "vk_cached"));
            List<Row> expected = sortedRows(s.sql(String.format(q, "spark_cached")));
            assertFalse(expected.isEmpty(), q);
            assertRowsEqual(expected, sortedRows(got));
            if (columnar.equals("true") && q.contains("WHERE")) {
              assertTrue(generatedCode(got).contains(CACHED_COLUMN_CAST), "read as columns: " + q + "\n" + explain(got));
            }
          }
        } finally {
          s.conf().unset(Settings.CACHE_COLUMNAR_OUTPUT.key());
        }
      }
    } finally {
      vk.unpersist(true);
      spark.unpersist(true);
    }
  }

  /**
   * Where neither the session nor the application sets {@code spark.sql.inMemoryColumnarStorage.batchSize},
   * a cached batch holds one GPU dispatch's worth: {@code spark.vkspark.batchRows} rows, fewer where
   * {@code spark.vkspark.batchBytes} is reached first; set, it holds that many rows, as in Spark's cache.
   */
  @Test
  @Order(8)
  void cachedBatches_holdBatchRowsWithinBatchBytes_unlessSparksBatchSizeIsSet() {
    assertFalse(s.conf().contains("spark.sql.inMemoryColumnarStorage.batchSize"), "unset in this session");
    assertEquals(List.of(7000, 7000, 6000), cachedBatchRows(Settings.BATCH_ROWS.key(), "7000"));
    assertEquals(Collections.nCopies(8, 2500), cachedBatchRows(Settings.BATCH_ROWS.key(), "7000",
        "spark.sql.inMemoryColumnarStorage.batchSize", "2500"));
    // a bigint and a double, each with its validity bit: 130 bits a row, so 16,384 bytes are full at 1,009 rows
    List<Integer> expected = new ArrayList<>(Collections.nCopies(19, 1009));
    expected.add(20_000 - 19 * 1009);
    assertEquals(expected, cachedBatchRows(Settings.BATCH_ROWS.key(), "7000", Settings.BATCH_BYTES.key(), "16k"));
  }

  /** The rows of each batch of a one-partition table of 20,000 rows cached with {@code conf} set in the session. */
  private static List<Integer> cachedBatchRows(String... conf) {
    for (int i = 0; i < conf.length; i += 2) {
      s.conf().set(conf[i], conf[i + 1]);
    }
    Dataset<Row> cached = s.range(0, 20_000, 1, 1).selectExpr("id", "id * 0.5D AS x").cache();
    try {
      assertEquals(20_000L, cached.count());
      var relation = (org.apache.spark.sql.execution.columnar.InMemoryRelation) cached.queryExecution().withCachedData();
      assertEquals(VkCacheSerializer.class, relation.cacheBuilder().serializer().getClass());
      return relation.cacheBuilder().cachedColumnBuffers().toJavaRDD()
          .map(org.apache.spark.sql.columnar.CachedBatch::numRows).collect();
    } finally {
      cached.unpersist(true);
      for (int i = 0; i < conf.length; i += 2) {
        s.conf().unset(conf[i]);
      }
    }
  }
}
