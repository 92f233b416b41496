package io.vkspark.spark.agg;

import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.shim.PlanNode;
import io.vkspark.spark.shim.Scala;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.SinglePartition$;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec;
import org.apache.spark.sql.execution.exchange.ENSURE_REQUIREMENTS$;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * The partial rows of a GPU-reduced aggregate, gathered on the driver in place of Spark's shuffle:
 * {@code Aggregate(final) <- Exchange <- VkGpuAggregate} becomes
 * {@code Aggregate(final) <- VkGatherPartials <- VkGpuAggregate}.
 *
 * <p>Why: once the GPU has reduced a partition to a handful of rows (one, ungrouped; at most the key
 * slots, grouped by a key whose expression bounds it, {@code id % 16}), what is left of the query is
 * Spark's second stage: a shuffle write and read of those rows, adaptive execution's re-planning
 * between the stages, and a second job. On the H200 that was a third of a 50 M-row Black-Scholes sweep
 * query and most of the gap between a cheap GPU UDF and built-in SQL. Here the first job's tasks
 * return their rows as task results ({@code executeCollect}, as a broadcast exchange collects its
 * side) and the final aggregation runs over them as one partition, with no exchange left for
 * adaptive execution to split the plan at. Spark's final aggregate is unchanged, so results are
 * Spark's (double sums within summation order, as before).
 *
 * <p>Planned by {@link #gather} only where the rows per partition are bounded when the plan is made,
 * only for the exchange that Spark added for the final aggregate (not a user's repartition), and not
 * where the plan holds the same aggregate twice (Spark then computes it once and reuses the exchange);
 * {@code spark.vkspark.fuseAggregates.gather=false} keeps Spark's exchange.
 */
public final class VkGatherPartialsExec extends PlanNode {
  private static final long serialVersionUID = 1L;

  private transient SQLMetric gatheredRows;

  public VkGatherPartialsExec(SparkPlan child) {
    super(child);
  }

  /**
   * {@code plan} with the exchange between each final aggregate and a fused aggregate whose rows
   * per partition are bounded replaced by a gather (unless the session's
   * {@code fuseAggregates.gather} is false).
   */
  static SparkPlan gather(SparkSession session, SparkPlan plan) {
    if (!Settings.FUSE_AGGREGATES_GATHER.get(Settings.lookup(session)) || !VkConf.of(session).enabled()) {
      return plan;
    }
    // an aggregate the plan computes twice (a CTE joined with itself) keeps its exchange, which Spark reuses
    Map<SparkPlan, Integer> copies = new HashMap<>();
    plan.foreach(p -> {
      if (p instanceof ShuffleExchangeExec e && e.child() instanceof VkGpuAggregateExec g) {
        copies.merge(g.canonicalized(), 1, Integer::sum);
      }
      return BoxedUnit.UNIT;
    });
    return plan.transformUp(new AbstractPartialFunction<SparkPlan, SparkPlan>() {
      @Override
      public boolean isDefinedAt(SparkPlan p) {
        VkGpuAggregateExec g = p instanceof BaseAggregateExec ? below(p) : null;
        return g != null && copies.getOrDefault(g.canonicalized(), 0) == 1;
      }

      @Override
      public SparkPlan apply(SparkPlan p) {
        return p.withNewChildren(Scala.seq(java.util.List.of(new VkGatherPartialsExec(below(p)))));
      }
    });
  }

  /** The fused aggregate under {@code agg}'s exchange, when its partials may be gathered; else null. */
  private static VkGpuAggregateExec below(SparkPlan agg) {
    if (agg.children().size() != 1 || !(agg.children().head() instanceof ShuffleExchangeExec e)
        || !e.shuffleOrigin().equals(ENSURE_REQUIREMENTS$.MODULE$) || !(e.child() instanceof VkGpuAggregateExec g)) {
      return null;
    }
    return bounded(g) ? g : null;
  }

  /**
   * Whether {@code g} emits a bounded number of rows per partition whatever its data: one when
   * ungrouped; at most the key slots when the GPU reduces per key and the key's expression bounds
   * its values within them (a batch folded on the host has no more keys than that either).
   */
  static boolean bounded(VkGpuAggregateExec g) {
    if (g.spec().keyOrdinal() < 0) {
      return true;
    }
    GpuReduction r = g.placement().reduction();
    return r != null && r.grouped() && r.keyBounded();
  }

  @Override
  public Partitioning outputPartitioning() {
    return SinglePartition$.MODULE$;
  }

  @Override
  protected boolean keepsChildOrdering() {
    return false;
  }

  /** Runs the child as a job of its own, its partitions' rows returned to the driver, then serves them as one partition. */
  @Override
  public RDD<InternalRow> doExecute() {
    InternalRow[] rows = child().executeCollect();
    gatheredRows().add(rows.length);
    return JavaSparkContext.fromSparkContext(sparkContext()).parallelize(Arrays.asList(rows), 1).rdd();
  }

  private synchronized SQLMetric gatheredRows() {
    if (gatheredRows == null) {
      gatheredRows = SQLMetrics.createMetric(sparkContext(), "partial rows gathered on the driver");
    }
    return gatheredRows;
  }

  @Override
  public scala.collection.immutable.Map<String, SQLMetric> metrics() {
    return Scala.orderedMap(Map.of("gatheredRows", gatheredRows()));
  }

  @Override
  public String nodeName() {
    return "VkGatherPartials";
  }
}
