package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.spark.cache.CacheMemory;
import io.vkspark.spark.cache.VkCacheSerializer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.storage.RDDInfo;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.storage.StorageLevel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

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
    TestSpark.stop();
    // spark.sql.cache.serializer is read once per JVM: forget what an earlier session chose (all
    // test classes share one JVM when run from jars, as on the H200)
    org.apache.spark.sql.execution.columnar.InMemoryRelation$.MODULE$.clearSerializer();
    s = builder()
        .config("spark.sql.cache.serializer", VkCacheSerializer.class.getName())
        .config("spark.testing.memory", String.valueOf(1L << 30))
        .config("spark.memory.fraction", "0.06")
        .getOrCreate();
    GpuUdfs.register(s, "long_mix", new TestUdfs.LongMix());
    GpuUdfs.register(s, "float_saxpy", new TestUdfs.FloatSaxpy());
    GpuUdfs.register(s, "xor_gpu", new TestUdfs.Xor());
    GpuUdfs.register(s, "add_days", new TestUdfs.AddDays());
  }

  @AfterAll
  static void stop() {
    if (s != null) {
      s.stop();
      s = null;
    }
    org.apache.spark.sql.execution.columnar.InMemoryRelation$.MODULE$.clearSerializer();
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
   * Spark plans a cache scan under a row-based parent as rows (InMemoryTableScanExec supports both),
   * so CPU queries read through convertCachedBatchToInternalRow; column batches go to columnar
   * parents such as the GPU node.
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
   * memory, no RowToColumnar), and with {@link VkCacheSerializer#COLUMNAR_OUTPUT} off it reads the
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

      s.conf().set(VkCacheSerializer.COLUMNAR_OUTPUT, "false");
      try {
        Dataset<Row> rows = q.get();
        rows.collectAsList();
        assertTrue(plan(rows).contains("RowToColumnar"), "the cache hands out rows: " + plan(rows));
        assertGpuEqualsCpu(q);
      } finally {
        s.conf().unset(VkCacheSerializer.COLUMNAR_OUTPUT);
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
}
