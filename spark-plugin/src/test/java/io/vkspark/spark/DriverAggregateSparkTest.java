package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.spark.agg.VkDriverAggregateExec;
import io.vkspark.spark.agg.VkGpuAggregateExec;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.plan.VkExplain;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A GPU-reduced aggregate finished on the driver ({@code VkDriverAggregate}) in place of Spark's
 * shuffle and final aggregate: planned with and without adaptive execution, no exchange left in the
 * plan and one job per collected query, one partial row per partition (ungrouped) or per key and
 * partition, results equal to Spark's own plan and to vkspark's with the shuffle (every function,
 * nulls, an empty partition, empty input, under a join); left out where a partition's rows are not
 * bounded (a plain column key), where the plan holds the aggregate twice, or when the setting is off.
 */
@ExtendWith({TestSpark.Validated.class, TestSpark.RestoresConf.class})
final class DriverAggregateSparkTest {
  private static Dataset<Row> cached;

  /** 20,000 ids over 4 partitions, the second left empty, cached (its columns read as columns); a and b with nulls. */
  @BeforeAll
  static void data() {
    GpuUdfs.register(spark(), "d_add", new FusedAggregateSparkTest.DAdd());
    cached = spark().range(0, 20_000, 1, 4).where("id < 5000 OR id >= 10000").selectExpr("id",
            "CASE WHEN id % 13 = 0 THEN NULL ELSE (id % 1000) * 0.37 - 100 END AS a",
            "CASE WHEN id % 11 = 0 THEN NULL ELSE id * 0.001 END AS b",
            "cast(id % 10 AS int) AS k")
        .cache();
    cached.createOrReplaceTempView("gather_t");
    spark().range(0, 12_000, 1, 3).selectExpr("id", "id * 0.5D AS a", "id * 0.25D AS b").createOrReplaceTempView("gather_v");
  }

  @AfterAll
  static void uncache() {
    cached.unpersist(true);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void ungroupedAndBoundedKey_onTheDriver_oneJob_noExchange_equalSparkAndTheShuffledPlan(boolean aqe) throws Exception {
    spark().conf().set("spark.sql.adaptive.enabled", Boolean.toString(aqe));
    String udfs = "sum(d_add(a, b)) AS s, count(*) AS n, count(d_add(a, b)) AS c, min(d_add(a, b)) AS lo,"
        + " max(d_add(a, b)) AS hi, avg(d_add(a, b)) AS m, min(int_poly(k, k)) AS mi, max(int_poly(k, k)) AS xi";
    for (String sql : List.of(
        "SELECT " + udfs + " FROM gather_t",
        "SELECT id % 7 AS g, " + udfs + " FROM gather_t GROUP BY id % 7",
        "SELECT pmod(k, 3) AS g, " + udfs + " FROM gather_t WHERE id % 5 <> 0 GROUP BY pmod(k, 3)")) {
      List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
      Dataset<Row> ran = spark().sql(sql);
      List<Row> gathered = ran.collectAsList();
      String plan = explain(ran);
      List<VkDriverAggregateExec> gathers = nodes(ran, VkDriverAggregateExec.class);
      Dataset<Row> again = spark().sql(sql);
      int n = jobs(() -> again.collectAsList());
      assertEquals(1, n, () -> "one job: the GPU tasks' " + explain(again));
      assertEquals(1, gathers.size(), plan);
      assertInstanceOf(VkGpuAggregateExec.class, gathers.get(0).child(), plan);
      assertFalse(exchanges(ran), () -> "no shuffle left: " + plan);
      long rows = gathers.get(0).metrics().get("gatheredRows").get().value();
      boolean grouped = sql.contains("GROUP BY");
      // one row per non-empty partition and key; Spark's partitions: 4 (one empty)
      assertTrue(grouped ? rows >= 3 && rows <= 4 * 7 : rows >= 3 && rows <= 4, () -> rows + " rows gathered: " + plan);
      assertAggregatesEqual(both.get(1), both.get(0));

      spark().conf().set(Settings.FUSE_AGGREGATES_GATHER.key(), "false");
      Dataset<Row> shuffled = spark().sql(sql);
      List<Row> viaShuffle = shuffled.collectAsList();
      spark().conf().unset(Settings.FUSE_AGGREGATES_GATHER.key());
      assertTrue(nodes(shuffled, VkDriverAggregateExec.class).isEmpty(), () -> explain(shuffled));
      assertTrue(exchanges(shuffled), () -> "the setting keeps Spark's shuffle: " + explain(shuffled));
      assertEquals(1, nodes(shuffled, VkGpuAggregateExec.class).size(), () -> explain(shuffled));
      assertAggregatesEqual(sortedRows(viaShuffle), sortedRows(gathered));
    }
  }

  @Test
  void emptyInput_ungroupedGivesSparksOneRow_groupedNone() {
    String sql = "SELECT sum(d_add(a, b)), count(*), max(d_add(a, b)) FROM gather_t WHERE id < 0";
    List<List<Row>> both = onAndOff(() -> spark().sql(sql), // no row to run anywhere
        ran -> assertEquals(1, nodes(ran, VkDriverAggregateExec.class).size(), () -> explain(ran)));
    assertEquals(both.get(1), both.get(0));
    assertEquals(1, both.get(0).size());
    assertEquals(0L, both.get(0).get(0).getLong(1));
    assertTrue(both.get(0).get(0).isNullAt(0));
    Dataset<Row> grouped = spark().sql("SELECT id % 4, sum(d_add(a, b)) FROM gather_t WHERE id < 0 GROUP BY id % 4");
    assertEquals(List.of(), grouped.collectAsList());
    assertEquals(1, nodes(grouped, VkDriverAggregateExec.class).size(), () -> explain(grouped));
  }

  /** Under a join: the driver's rows served as one partition to the plan above. */
  @Test
  void underAJoin_servesItsRowsAsOnePartition() {
    String sql = "SELECT s.g, s.h, s.n, v.c FROM (SELECT id % 7 AS g, sum(d_add(a, b)) AS h, count(*) AS n FROM gather_t"
        + " GROUP BY id % 7) s JOIN (SELECT id % 7 AS g, count(*) AS c FROM gather_v GROUP BY id % 7) v ON s.g = v.g";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    assertAggregatesEqual(both.get(1), both.get(0));
    assertEquals(7, both.get(0).size());
    Dataset<Row> ran = spark().sql(sql);
    ran.collectAsList();
    assertEquals(1, nodes(ran, VkDriverAggregateExec.class).size(), () -> explain(ran));
  }

  /** A plain column key: a partition may hold any number of keys, so Spark's shuffle stays. */
  @Test
  void columnKey_unboundedRowsPerPartition_keepsSparksShuffle() {
    spark().conf().set(Settings.FUSE_AGGREGATES.key(), "true"); // fuses a plain column key too
    List<List<Row>> both = gpuAndCpu(() -> spark().sql("SELECT k, sum(d_add(a, b)) FROM gather_t GROUP BY k"));
    assertAggregatesEqual(both.get(1), both.get(0));
    Dataset<Row> ran = spark().sql("SELECT k, sum(d_add(a, b)) FROM gather_t GROUP BY k");
    ran.collectAsList();
    assertEquals(1, nodes(ran, VkGpuAggregateExec.class).size(), () -> explain(ran));
    assertTrue(nodes(ran, VkDriverAggregateExec.class).isEmpty(), () -> explain(ran));
    assertTrue(exchanges(ran), () -> explain(ran));
  }

  /**
   * The same bounded aggregate twice in one plan: Spark's exchange stays, computed once and reused.
   * Over a view that is not cached: Spark 4.2 cannot canonicalize a cached relation with an ordering
   * joined with itself (its new instance keeps the old ordering's attributes).
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void sameAggregateTwice_keepsTheExchange_reusedOnce(boolean aqe) {
    spark().conf().set("spark.sql.adaptive.enabled", Boolean.toString(aqe));
    String sql = "WITH s AS (SELECT id % 5 AS g, sum(d_add(a, b)) AS h FROM gather_v GROUP BY id % 5)"
        + " SELECT x.g, x.h, y.h AS h2 FROM s x JOIN s y ON x.g = y.g";
    List<List<Row>> both = gpuAndCpu(() -> spark().sql(sql));
    assertAggregatesEqual(both.get(1), both.get(0));
    Dataset<Row> ran = spark().sql(sql);
    ran.collectAsList();
    assertTrue(nodes(ran, VkDriverAggregateExec.class).isEmpty(), () -> explain(ran));
    assertFalse(nodes(ran, org.apache.spark.sql.execution.exchange.ReusedExchangeExec.class).isEmpty(), () -> explain(ran));
    assertEquals(1, gpuNodes(ran).size(), () -> "the GPU aggregate runs once: " + explain(ran));
  }

  private static <T extends SparkPlan> List<T> nodes(Dataset<Row> df, Class<T> type) {
    List<T> out = new ArrayList<>();
    VkExplain.visit(df.queryExecution().executedPlan(), p -> {
      if (type.isInstance(p)) {
        out.add(type.cast(p));
      }
    });
    return out;
  }

  /** Whether the executed plan shuffles: an exchange, or an adaptive shuffle stage. */
  private static boolean exchanges(Dataset<Row> df) {
    boolean[] found = {false};
    VkExplain.visit(df.queryExecution().executedPlan(), p -> {
      String n = p.getClass().getSimpleName();
      found[0] |= n.contains("ShuffleExchange") || n.contains("ShuffleQueryStage");
    });
    return found[0];
  }

  /** The jobs {@code body} ran. */
  private static int jobs(Runnable body) throws java.util.concurrent.TimeoutException {
    int[] n = {0};
    org.apache.spark.scheduler.SparkListener l = new org.apache.spark.scheduler.SparkListener() {
      @Override
      public void onJobStart(org.apache.spark.scheduler.SparkListenerJobStart start) {
        synchronized (n) {
          n[0]++;
        }
      }
    };
    spark().sparkContext().listenerBus().waitUntilEmpty();
    spark().sparkContext().addSparkListener(l);
    try {
      body.run();
      spark().sparkContext().listenerBus().waitUntilEmpty();
    } finally {
      spark().sparkContext().removeSparkListener(l);
    }
    synchronized (n) {
      return n[0];
    }
  }

  private static List<Row> sortedRows(List<Row> rows) {
    List<Row> s = new ArrayList<>(rows);
    s.sort((x, y) -> String.valueOf(x.get(0)).compareTo(String.valueOf(y.get(0))));
    return s;
  }
}
