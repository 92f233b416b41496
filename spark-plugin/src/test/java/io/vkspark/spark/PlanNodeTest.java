package io.vkspark.spark;

import io.vkspark.spark.agg.ReducePlacement;
import io.vkspark.spark.agg.VkGpuAggregateExec;
import io.vkspark.spark.cache.VkCacheColumnsExec;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.conf.VerifySettings;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.exec.VkRowToColumnarExec;
import io.vkspark.spark.plan.VkExplain;
import io.vkspark.spark.shim.Scala;

import static io.vkspark.spark.TestSpark.*;
import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.execution.FormattedMode$;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.ReusedSubqueryExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec;
import org.apache.spark.sql.execution.exchange.ReusedExchangeExec;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeLike;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.ExtendWith;
import scala.collection.Seq;

/**
 * The VkGpuEval node as Spark's planner sees it: EXPLAIN FORMATTED, canonical form (exchange and
 * subquery reuse), partitioning, and the columns that pass through it; every vkspark node as Spark
 * copies it.
 */
@ExtendWith(TestSpark.Validated.class)
final class PlanNodeTest {
  private static String wide;


  /**
   * Each vkspark node copied as Spark copies nodes: {@code TreeNode.makeCopy} passes the product's
   * elements to the public constructor it finds by reflection, {@code withNewChildren} swaps the
   * child; a copy equals the node, a node over another child does not.
   */
  @Test
  void everyNode_copiesAsSparkCopiesIt() {
    SparkPlan child = plan(spark().range(10).toDF());
    SparkPlan other = plan(spark().range(20).toDF());
    VkGpuAggregateExec.Spec spec = new VkGpuAggregateExec.Spec(-1, null, "", List.of(), List.of());
    VkConf conf = VkConf.of(spark());
    List<SparkPlan> nodes = List.of(new VkGpuEvalExec(Scala.seq(List.of()), conf, child), new VkRowToColumnarExec(conf, child),
        new VkCacheColumnsExec(child), new VkGpuAggregateExec(spec, new ReducePlacement(null, "a test"),
            Scala.seq(Scala.list(child.output())), child.outputPartitioning(), child));
    for (SparkPlan node : nodes) {
      Object[] fields = new Object[node.productArity()];
      for (int i = 0; i < fields.length; i++) {
        fields[i] = node.productElement(i);
      }
      assertSame(child, fields[fields.length - 1], node.nodeName() + ": the child is the last field");
      SparkPlan copy = node.makeCopy(fields);
      assertNotSame(node, copy);
      assertEquals(node, copy, node.nodeName());
      assertEquals(node.hashCode(), copy.hashCode(), node.nodeName());
      SparkPlan moved = node.withNewChildren(Scala.seq(List.of(other)));
      assertSame(node.getClass(), moved.getClass());
      assertSame(other, moved.children().head(), node.nodeName());
      assertNotEquals(node, moved, node.nodeName());
      assertEquals(node, moved.withNewChildren(Scala.seq(List.of(child))), node.nodeName());
      assertEquals(child.outputPartitioning(), node.outputPartitioning(), node.nodeName());
      assertFalse(node.simpleString(25).contains("VkConf["), () -> node.simpleString(25));
      assertFalse(node.argString(25).contains("VkConf["), () -> node.simpleString(25));
    }
  }

  /**
   * A query's nodes carry the session's settings as they were when it was planned, and its tasks use
   * them: a setting changed between two queries takes effect in the second.
   */
  @Test
  void settingChangedBetweenQueries_takesEffectInTheSecond() {
    String sql = "SELECT j, hypot_gpu(a, b) AS h FROM parquet.`" + parquet() + "`";
    SparkSession s = spark();
    s.conf().set(Settings.VERIFY.key(), "strict");
    s.conf().set(Settings.VERIFY_SAMPLE_RATE.key(), "1");
    try {
      Dataset<Row> strict = s.sql(sql);
      strict.collectAsList();
      s.conf().set(Settings.VERIFY.key(), "off");
      Dataset<Row> off = s.sql(sql);
      off.collectAsList();
      VkGpuEvalExec checked = gpuNodes(strict).get(0);
      VkGpuEvalExec unchecked = gpuNodes(off).get(0);
      assertEquals(VerifySettings.Mode.STRICT, checked.vkConf().verify().mode());
      assertEquals(VerifySettings.Mode.OFF, unchecked.vkConf().verify().mode());
      assertTrue(metrics(checked).get("verifyRows") > 10_000, () -> metrics(checked).toString());
      assertEquals(0L, metrics(unchecked).get("verifyRows"));
      assertEquals(20_000L, metrics(unchecked).get("gpuRows"));
    } finally {
      s.conf().unset(Settings.VERIFY.key());
      s.conf().unset(Settings.VERIFY_SAMPLE_RATE.key());
    }
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
      VkGpuEvalExec node = gpuNodes(cached).get(0);
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
      List<VkGpuEvalExec> ran = new ArrayList<>();
      VkExplain.visit(plan(agg), p -> {
        if (p instanceof InMemoryTableScanExec scan) {
          VkExplain.visit(scan.relation().cachedPlan(), q -> {
            if (q instanceof VkGpuEvalExec g) {
              ran.add(g);
            }
          });
        }
      });
      assertEquals(1, ran.size(), () -> plan(agg).treeString());
      assertEquals(20_000L, metrics(ran.get(0)).get("gpuRows"), "every row of the cached result on the GPU");
      assertEquals(0L, metrics(ran.get(0)).get("cpuRows"));
      assertEquals(node.child().outputPartitioning(), node.outputPartitioning());
      assertTrue(node.outputPartitioning() instanceof HashPartitioning,
          node.outputPartitioning()::toString);
      assertEquals(node.child().outputOrdering(), node.outputOrdering());
      assertFalse(node.outputOrdering().isEmpty());
    } finally {
      cached.unpersist(true);
      s.conf().set("spark.sql.adaptive.enabled", was);
    }
  }

  /** A Parquet table of 4,000 rows and 20 double columns c0..c19 (c1 about 10% null). */
  private static synchronized String wideParquet() {
    if (wide == null) {
      try {
        wide = Files.createTempDirectory("vkspark-wide").resolve("wide.parquet").toString();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      List<String> columns = new ArrayList<>();
      for (int c = 0; c < 20; c++) {
        columns.add(c == 1 ? "CASE WHEN rand(31) < 0.1 THEN NULL ELSE rand(1) * 1e3 - 500 END AS c1"
            : "rand(" + (c + 1) + ") * 1e3 - 500 AS c" + c);
      }
      spark().range(0, 4_000, 1, 4).selectExpr(columns.toArray(String[]::new)).write().parquet(wide);
    }
    return wide;
  }

  private static List<String> names(Seq<Attribute> output) {
    return Scala.list(output).stream().map(a -> a.name()).toList();
  }

  @Test
  void wideTable_onlyTheColumnsUsedAboveAndTheArgumentsPassThroughTheNode() {
    String from = " FROM parquet.`" + wideParquet() + "`";
    // Column arguments: Spark's own column pruning reads c0, c1, c2 of the 20; the node adds its result.
    assertVksparkEqualsCpu(() -> spark().sql("SELECT c0, hypot_gpu(c1, c2) AS h" + from), df -> {
      assertAllRowsOnGpu(df);
      assertEquals(List.of("c0", "c1", "c2", "hypot_gpu"), names(gpuNodes(df).get(0).output()));
    });
    // c1 + c3 is computed by the projection under the node; c1 and c3 are used by nothing above it.
    assertVksparkEqualsCpu(() -> spark().sql("SELECT c0, hypot_gpu(c1 + c3, c2) AS h" + from), df -> {
      assertAllRowsOnGpu(df);
      VkGpuEvalExec node = gpuNodes(df).get(0);
      assertEquals(List.of("c0", "c2", "vk_arg0", "hypot_gpu"), names(node.output()), () -> plan(df).treeString());
      SparkPlan pre = node.child().find(p -> p instanceof ProjectExec).get();
      assertEquals(List.of("c0", "c2", "vk_arg0"), names(pre.output()), "the projection under the node");
    });
    // Stacked calls: the outer call's argument (inner result) * 2 is computed by its kernel from the inner
    // node's result column (DeviceArg), with no projection between the nodes.
    assertVksparkEqualsCpu(() -> spark().sql("SELECT c0, hypot_gpu(hypot_gpu(c1, c2) * 2, c3) AS h" + from), df -> {
      assertAllRowsOnGpu(df);
      List<VkGpuEvalExec> nodes = gpuNodes(df);
      assertEquals(2, nodes.size(), () -> plan(df).treeString());
      VkGpuEvalExec outer = nodes.stream().filter(n -> n.child().find(p -> p instanceof VkGpuEvalExec).isDefined()).findFirst()
          .orElseThrow(() -> new AssertionError(plan(df).treeString()));
      GpuUdfCall call = outer.calls().get(0);
      assertEquals("hypot_gpu", names(outer.child().output()).get(call.argOrdinals().get(0)), () -> plan(df).treeString());
      assertEquals("c3", names(outer.child().output()).get(call.argOrdinals().get(1)));
      assertFalse(call.kernel().spec().argOps().isEmpty(), "the kernel computes (inner result) * 2");
      assertFalse(plan(df).treeString().contains("vk_arg"), () -> plan(df).treeString());
    });
    // A filter keeps its child's columns (the operator above reads them); results still agree.
    assertVksparkEqualsCpu(() -> spark().sql("SELECT c0, c5 FROM parquet.`" + wideParquet()
        + "` WHERE hypot_gpu(c1 + c3, c2) > 400"), TestSpark::assertAllRowsOnGpu);
  }

  /**
   * A scalar subquery with a GPU UDF used twice in one query: Spark's ReuseSubquery
   * ({@code spark.sql.execution.reuseSubquery}, with or without AQE) runs it once, which needs the
   * node's canonical form; the one GPU node computed the table's 20,000 rows once, not twice.
   */
  @ParameterizedTest(name = "AQE {0}")
  @ValueSource(booleans = {false, true})
  void sameGpuScalarSubqueryTwice_isComputedOnce_subqueryReused(boolean aqe) {
    String t = "parquet.`" + parquet() + "`";
    String query = "SELECT j, (SELECT max(hypot_gpu(a, b)) FROM " + t + ") AS m FROM " + t
        + " WHERE j < (SELECT max(hypot_gpu(a, b)) FROM " + t + ") / 1000";
    SparkSession s = spark();
    String was = s.conf().get("spark.sql.adaptive.enabled");
    s.conf().set("spark.sql.adaptive.enabled", String.valueOf(aqe));
    try {
      assertVksparkEqualsCpu(() -> s.sql(query), df -> {
        assertAllRowsOnGpu(df);
        SparkPlan plan = plan(df);
        List<SparkPlan> reused = new ArrayList<>();
        VkExplain.visit(plan, p -> {
          if (p instanceof ReusedSubqueryExec) {
            reused.add(p);
          }
        });
        assertFalse(reused.isEmpty(), () -> "no reused subquery: " + plan.treeString());
        List<VkGpuEvalExec> nodes = gpuNodes(df).stream().distinct().toList();
        assertEquals(1, nodes.size(), () -> "one GPU subquery: " + plan.treeString());
        assertEquals(20_000L, metrics(nodes.get(0)).get("gpuRows"), "the subquery's rows ran on the GPU once");
      });
    } finally {
      s.conf().set("spark.sql.adaptive.enabled", was);
    }
  }
}
