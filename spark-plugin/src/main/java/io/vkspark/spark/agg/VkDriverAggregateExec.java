package io.vkspark.spark.agg;

import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.plan.InsertGpuEval;
import io.vkspark.spark.shim.PlanNode;
import io.vkspark.spark.shim.Scala;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.InterpretedMutableProjection;
import org.apache.spark.sql.catalyst.expressions.InterpretedUnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.MutableProjection;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate;
import org.apache.spark.sql.catalyst.expressions.aggregate.Final$;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.SinglePartition$;
import org.apache.spark.sql.execution.SQLExecution;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.aggregate.HashAggregateExec;
import org.apache.spark.sql.execution.exchange.ENSURE_REQUIREMENTS$;
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.metric.SQLMetrics;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * The final aggregate of a GPU-reduced aggregate, computed on the driver:
 * {@code HashAggregate(final) <- Exchange <- VkGpuAggregate} becomes
 * {@code VkDriverAggregate <- VkGpuAggregate}.
 *
 * <p>Why: once the GPU has reduced each partition to a handful of rows (one, ungrouped; at most the
 * key slots, grouped by a key whose expression bounds it, {@code id % 16}), what is left of the query
 * is Spark's: a shuffle write and read of those rows, adaptive execution's re-planning between the
 * stages, and a second job for the final aggregate. On the H200 that was a third of a 50 M-row
 * Black-Scholes sweep query and most of the gap between a cheap GPU UDF and built-in SQL. Here the
 * partitions' rows come back as the tasks' results ({@code executeCollect}, as a broadcast exchange
 * collects its side) and the final aggregate merges them on the driver with the aggregate functions'
 * own merge and evaluate expressions (interpreted; a few rows per task), so a collected query runs
 * one job and no exchange is left for adaptive execution to split the plan at. Results are Spark's:
 * the same expressions in the same mode; double sums within summation order, as before.
 *
 * <p>Planned by {@link #plan} where the rows per partition are bounded when the plan is made, only for
 * the exchange Spark added for the final aggregate (not a user's repartition), only over Spark's hash
 * aggregate of declarative functions (every function vkspark fuses), and not where the plan holds
 * the same aggregate twice (Spark computes it once and reuses the exchange);
 * {@code spark.vkspark.fuseAggregates.gather=false} keeps Spark's exchange and final aggregate.
 */
public final class VkDriverAggregateExec extends PlanNode {
  private static final long serialVersionUID = 1L;

  private final List<NamedExpression> grouping;
  private final List<AggregateExpression> aggregates;
  private final List<Attribute> aggregateAttributes;
  private final List<NamedExpression> results;
  private transient Map<String, SQLMetric> metrics;

  /** The final aggregate's grouping, functions (mode Final), their result attributes and its result expressions. */
  public VkDriverAggregateExec(Seq<NamedExpression> grouping, Seq<AggregateExpression> aggregates,
                               Seq<Attribute> aggregateAttributes, Seq<NamedExpression> results, SparkPlan child) {
    super(grouping, aggregates, aggregateAttributes, results, child);
    this.grouping = Scala.list(grouping);
    this.aggregates = Scala.list(aggregates);
    this.aggregateAttributes = Scala.list(aggregateAttributes);
    this.results = Scala.list(results);
  }

  /**
   * {@code plan} with each final aggregate over an exchange over a fused aggregate whose rows per
   * partition are bounded computed on the driver (unless the session's {@code fuseAggregates.gather}
   * is false). Called by {@link FuseGpuAggregates}, once it has checked that vkspark is on.
   */
  static SparkPlan plan(SparkSession session, SparkPlan plan) {
    if (!Settings.FUSE_AGGREGATES_GATHER.get(Settings.lookup(session))) {
      return plan;
    }
    // an aggregate the plan computes twice (a CTE joined with itself) keeps its exchange, which Spark reuses
    List<VkGpuAggregateExec> fused = new ArrayList<>();
    plan.foreach(p -> {
      if (p instanceof ShuffleExchangeExec e && e.child() instanceof VkGpuAggregateExec g) {
        fused.add(g);
      }
      return BoxedUnit.UNIT;
    });
    // canonical forms only where there are two to compare (canonicalizing and hashing a plan is a
    // fair part of the planning that adaptive execution repeats for every query)
    Map<SparkPlan, Integer> copies = new HashMap<>();
    if (fused.size() > 1) {
      fused.forEach(g -> copies.merge(g.canonicalized(), 1, Integer::sum));
    }
    return plan.transformUp(new AbstractPartialFunction<SparkPlan, SparkPlan>() {
      @Override
      public boolean isDefinedAt(SparkPlan p) {
        VkGpuAggregateExec g = below(p);
        return g != null && (fused.size() == 1 || copies.getOrDefault(g.canonicalized(), 0) == 1);
      }

      @Override
      public SparkPlan apply(SparkPlan p) {
        HashAggregateExec a = (HashAggregateExec) p;
        return new VkDriverAggregateExec(Scala.seq(Scala.list(a.groupingExpressions())),
            Scala.seq(Scala.list(a.aggregateExpressions())), Scala.seq(Scala.list(a.aggregateAttributes())),
            Scala.seq(Scala.list(a.resultExpressions())), below(p));
      }
    });
  }

  /** The fused aggregate under {@code p}'s exchange, when {@code p} is a final aggregate the driver can compute; else null. */
  private static VkGpuAggregateExec below(SparkPlan p) {
    if (!(p instanceof HashAggregateExec a) || !(a.child() instanceof ShuffleExchangeExec e)
        || !e.shuffleOrigin().equals(ENSURE_REQUIREMENTS$.MODULE$) || !(e.child() instanceof VkGpuAggregateExec g)
        || !bounded(g)) {
      return null;
    }
    for (AggregateExpression ae : Scala.list(a.aggregateExpressions())) {
      if (!ae.mode().equals(Final$.MODULE$) || ae.isDistinct() || ae.filter().isDefined()
          || !(ae.aggregateFunction() instanceof DeclarativeAggregate)) {
        return null;
      }
    }
    return g;
  }

  /**
   * Whether {@code g} emits a bounded number of rows per partition whatever its data: one when
   * ungrouped; at most the key slots when the GPU reduces per key and the key's expression bounds
   * its values within them (a batch folded on the host has no more keys than that either).
   */
  private static boolean bounded(VkGpuAggregateExec g) {
    if (g.spec().keyOrdinal() < 0) {
      return true;
    }
    GpuReduction r = g.placement().reduction();
    return r != null && r.grouped() && r.keyBounded();
  }

  @Override
  public Seq<Attribute> output() {
    return Scala.seq(results.stream().map(NamedExpression::toAttribute).toList());
  }

  @Override
  public Partitioning outputPartitioning() {
    return SinglePartition$.MODULE$;
  }

  @Override
  protected boolean keepsChildOrdering() {
    return false;
  }

  /** The partial rows of the child's one job, merged here: the query's only job when it is collected. */
  @Override
  public InternalRow[] executeCollect() {
    InternalRow[] partials = collectPartials();
    driverMetrics().get("gatheredRows").add(partials.length);
    InternalRow[] out = merge(partials);
    driverMetrics().get("numOutputRows").add(out.length);
    // updated on the driver, not by tasks: posted to the query's execution, as Spark's driver-side nodes do
    SQLMetrics.postDriverMetricUpdates(sparkContext(), sparkContext().getLocalProperty(SQLExecution.EXECUTION_ID_KEY()),
        Scala.seq(List.copyOf(driverMetrics().values())));
    return out;
  }

  /**
   * The child's rows, each task's returned as its result. Not {@code child().executeCollect()}:
   * its {@code RDD.collect} hands Spark a Scala lambda, whose declaring class (RDD) Spark's closure
   * cleaner reads and scans with ASM twice a job, a sixth of the driver's time in a sweep query
   * (JFR, local); {@link PartitionRows} is a named class, which the cleaner leaves alone.
   */
  private InternalRow[] collectPartials() {
    Object perTask = sparkContext().runJob(child().execute(), new PartitionRows(),
        scala.reflect.ClassTag$.MODULE$.apply(InternalRow[].class));
    return Arrays.stream((InternalRow[][]) perTask).flatMap(Arrays::stream).toArray(InternalRow[]::new);
  }

  /** A partition's rows, copied (a plan may reuse one row object): one task's partial rows. */
  private static final class PartitionRows
      extends scala.runtime.AbstractFunction2<org.apache.spark.TaskContext, scala.collection.Iterator<InternalRow>, InternalRow[]>
      implements java.io.Serializable {
    @Override
    public InternalRow[] apply(org.apache.spark.TaskContext task, scala.collection.Iterator<InternalRow> rows) {
      List<InternalRow> out = new ArrayList<>();
      while (rows.hasNext()) {
        out.add(rows.next().copy());
      }
      return out.toArray(InternalRow[]::new);
    }
  }

  /** As {@link #executeCollect}, served as one partition to a plan above (a join, a sort). */
  @Override
  public RDD<InternalRow> doExecute() {
    return JavaSparkContext.fromSparkContext(sparkContext()).parallelize(Arrays.asList(executeCollect()), 1).rdd();
  }

  /** Spark's final aggregation over {@code partials}: per group, the functions' merge, then evaluate and result expressions. */
  InternalRow[] merge(InternalRow[] partials) {
    List<Attribute> input = Scala.list(child().output());
    List<DeclarativeAggregate> functions = aggregates.stream()
        .map(ae -> (DeclarativeAggregate) ae.aggregateFunction()).toList();
    List<Attribute> buffer = new ArrayList<>();
    List<Expression> initial = new ArrayList<>();
    List<Expression> merges = new ArrayList<>();
    List<Expression> evaluates = new ArrayList<>();
    for (DeclarativeAggregate f : functions) {
      buffer.addAll(Scala.list(f.aggBufferAttributes()));
      initial.addAll(Scala.list(f.initialValues()));
      merges.addAll(Scala.list(f.mergeExpressions()));
      evaluates.add(f.evaluateExpression());
    }
    List<Attribute> bufferAndInput = new ArrayList<>(buffer);
    bufferAndInput.addAll(input);
    List<Attribute> keys = grouping.stream().map(NamedExpression::toAttribute).toList();
    List<Attribute> keysAndResults = new ArrayList<>(keys);
    keysAndResults.addAll(aggregateAttributes);

    UnsafeProjection key = InterpretedUnsafeProjection.createProjection(Scala.seq(bind(keys, input)));
    MutableProjection init = InterpretedMutableProjection.createProjection(Scala.seq(initial));
    MutableProjection merge = InterpretedMutableProjection.createProjection(Scala.seq(bind(merges, bufferAndInput)));
    MutableProjection evaluate = InterpretedMutableProjection.createProjection(Scala.seq(bind(evaluates, buffer)));
    UnsafeProjection result = InterpretedUnsafeProjection.createProjection(Scala.seq(bind(results, keysAndResults)));

    Supplier<InternalRow> newBuffer = () -> init.target(new GenericInternalRow(buffer.size())).apply(InternalRow.empty());
    Map<UnsafeRow, InternalRow> groups = new LinkedHashMap<>();
    JoinedRow joined = new JoinedRow();
    for (InternalRow p : partials) {
      InternalRow b = groups.computeIfAbsent(key.apply(p).copy(), k -> newBuffer.get());
      merge.target(b).apply(joined.apply(b, p));
    }
    if (groups.isEmpty() && grouping.isEmpty()) { // a global aggregate has one row, even over no rows
      groups.put(key.apply(InternalRow.empty()).copy(), newBuffer.get());
    }
    List<InternalRow> out = new ArrayList<>();
    for (Map.Entry<UnsafeRow, InternalRow> g : groups.entrySet()) {
      InternalRow values = evaluate.target(new GenericInternalRow(evaluates.size())).apply(g.getValue());
      out.add(result.apply(joined.apply(g.getKey(), values)).copy());
    }
    return out.toArray(new InternalRow[0]);
  }

  /** {@code exprs} with their attributes bound to their positions in {@code input}. */
  private static List<Expression> bind(List<?> exprs, List<Attribute> input) {
    return exprs.stream().map(e -> InsertGpuEval.bind((Expression) e, input)).toList();
  }

  private synchronized Map<String, SQLMetric> driverMetrics() {
    if (metrics == null) {
      metrics = new LinkedHashMap<>();
      metrics.put("gatheredRows", SQLMetrics.createMetric(sparkContext(), "partial rows merged on the driver"));
      metrics.put("numOutputRows", SQLMetrics.createMetric(sparkContext(), "number of output rows"));
    }
    return metrics;
  }

  @Override
  public scala.collection.immutable.Map<String, SQLMetric> metrics() {
    return Scala.orderedMap(driverMetrics());
  }

  @Override
  public String nodeName() {
    return "VkDriverAggregate";
  }

  @Override
  public String simpleString(int maxFields) {
    return nodeName() + " (final, on the driver) [keys=" + grouping + ", functions=" + aggregates + "]";
  }
}
