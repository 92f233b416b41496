package io.vkspark.spark;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.FormattedMode$;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec;
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The VkGpuEval node as Spark's planner sees it: EXPLAIN FORMATTED, canonical form, partitioning. */
final class PlanNodeTest {
  private static Dataset<Row> table() {
    return spark().read().parquet(parquet());
  }

  @AfterAll
  static void validation() {
    assertNoValidationErrors();
  }

  @Test
  void explainFormatted_showsEachCallReadably() {
    Dataset<Row> df = table().selectExpr("id", "hypot_gpu(a, b) AS h",
        "CASE WHEN a > 0 THEN int_poly(i, j) END AS p");
    String plan = df.queryExecution().explainString(FormattedMode$.MODULE$);
    assertFalse(plan.contains("[I@"), plan);
    assertFalse(plan.contains("GpuUdfCall["), plan);
    assertTrue(Pattern.compile("Arguments: .*hypot_gpu\\(a#\\d+, b#\\d+\\) AS hypot_gpu#\\d+ on GPU").matcher(plan).find(), plan);
    assertTrue(Pattern.compile("int_poly\\(i#\\d+, j#\\d+\\) AS int_poly#\\d+ when .*\\(a#\\d+ > 0\\.0\\).* on GPU").matcher(plan).find(), plan);
    assertFalse(plan.contains("because"), plan);
  }

  @ParameterizedTest(name = "AQE {0}")
  @ValueSource(booleans = {false, true})
  void sameGpuSubqueryTwice_isComputedOnce_exchangeReused(boolean aqe) {
    String query = "WITH s AS (SELECT j, sum(hypot_gpu(a, b)) AS h, count(*) AS n FROM parquet.`" + parquet()
        + "` GROUP BY j) SELECT x.j, x.h, y.h AS h2, x.n + y.n AS n FROM s x JOIN s y ON x.j = y.j";
    SparkSession s = spark();
    String was = s.conf().get("spark.sql.adaptive.enabled");
    s.conf().set("spark.sql.adaptive.enabled", String.valueOf(aqe));
    try {
      Dataset<Row> df = s.sql(query);
      assertGpuEqualsCpu(() -> s.sql(query));
      df.collectAsList();
      assertAllRowsOnGpu(df);
      SparkPlan plan = plan(df);
      List<SparkPlan> reused = new ArrayList<>();
      VkExplain.visit(plan, p -> {
        if (p instanceof ReusedExchangeExec) {
          reused.add(p);
        }
      });
      assertFalse(reused.isEmpty(), () -> "no reused exchange: " + plan.treeString());
      assertEquals(1, gpuNodes(df).size(), () -> "the GPU subquery runs once: " + plan.treeString());
    } finally {
      s.conf().set("spark.sql.adaptive.enabled", was);
    }
  }

  @Test
  void twoCopiesOfOneCall_sameResult() {
    String sql = "SELECT j, hypot_gpu(a, b) AS h FROM parquet.`" + parquet() + "`";
    SparkPlan one = gpuNodes(spark().sql(sql)).get(0);
    SparkPlan two = gpuNodes(spark().sql(sql)).get(0);
    assertNotEquals(one.output(), two.output(), "distinct expression ids, as two copies of a CTE have");
    assertTrue(one.sameResult(two));
    assertEquals(one.canonicalized().hashCode(), two.canonicalized().hashCode());
    SparkPlan other = gpuNodes(spark().sql("SELECT j, hypot_gpu(b, a) AS h FROM parquet.`" + parquet() + "`")).get(0);
    assertFalse(one.sameResult(other), "arguments swapped are another call");
  }

  @Test
  void keepsTheChildsPartitioningAndOrdering_noExchangeAbove() {
    SparkSession s = spark();
    String was = s.conf().get("spark.sql.adaptive.enabled");
    s.conf().set("spark.sql.adaptive.enabled", "false");
    Dataset<Row> cached = table().repartition(functions.col("j")).sortWithinPartitions("j")
        .selectExpr("j", "hypot_gpu(a, b) AS h");
    try {
      GpuEvalExec node = gpuNodes(cached).get(0);
      cached.cache().count();
      Dataset<Row> agg = cached.groupBy("j").agg(functions.sum("h"));
      List<SparkPlan> exchanges = new ArrayList<>();
      VkExplain.visit(plan(agg), p -> {
        if (p instanceof ShuffleExchangeLike) {
          exchanges.add(p);
        }
      });
      assertTrue(exchanges.isEmpty(), () -> "an exchange above the cached GPU result: " + plan(agg).treeString());
      assertEquals(table().select("j").distinct().count(), agg.count());
      List<GpuEvalExec> ran = new ArrayList<>();
      VkExplain.visit(plan(agg), p -> {
        if (p instanceof InMemoryTableScanExec scan) {
          VkExplain.visit(scan.relation().cachedPlan(), q -> {
            if (q instanceof GpuEvalExec g) {
              ran.add(g);
            }
          });
        }
      });
      assertEquals(1, ran.size(), () -> plan(agg).treeString());
      assertEquals(20_000L, metrics(ran.get(0)).get("gpuRows"), "every row of the cached result on the GPU");
      assertEquals(0L, metrics(ran.get(0)).get("cpuRows"));
      assertEquals(node.child().outputPartitioning(), node.outputPartitioning());
      assertTrue(node.outputPartitioning() instanceof org.apache.spark.sql.catalyst.plans.physical.HashPartitioning,
          node.outputPartitioning()::toString);
      assertEquals(node.child().outputOrdering(), node.outputOrdering());
      assertFalse(node.outputOrdering().isEmpty());
    } finally {
      cached.unpersist(true);
      s.conf().set("spark.sql.adaptive.enabled", was);
    }
  }
}
