package io.vkspark.spark.agg;

import io.vkspark.spark.exec.DeviceReduction;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.shim.Partitions;
import io.vkspark.spark.shim.PlanNode;
import io.vkspark.spark.shim.Scala;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;
import scala.collection.immutable.Seq;

/**
 * A partial aggregation fused onto a {@link VkGpuEvalExec}: in place of Spark's
 * {@code ColumnarToRow} and partial {@code HashAggregate} over the GPU node, it folds the GPU
 * node's columnar batches straight into Spark's aggregation buffers ({@link PartialAggregator}) and
 * emits only the partial rows, one per group and partition, which Spark's unchanged final
 * aggregation merges. Its output is exactly the replaced partial aggregate's (grouping key, then
 * each function's buffer in Spark's layout). Planned by {@link FuseGpuAggregates}; shown in plans as
 * {@code VkGpuAggregate}.
 *
 * <p>Where it can ({@link GpuReduction}: ungrouped or grouped by an int, bigint or date column of
 * the GPU node's child or a key the device computes from one column or UDF result, every function {@code COUNT(*)} or over GPU UDF result columns, as they are
 * or through an expression the GPU computes exactly ({@link DeviceExprs}), no ANSI integral sum;
 * {@code spark.vkspark.fuseAggregates.onGpu}, default true; decided once, when the node is planned,
 * as its {@link ReducePlacement}), the aggregates are computed on the GPU in the same submission as
 * the UDFs and only per-workgroup partials come back: the per-row results never leave the device. Results then match
 * Spark's exactly for integer sums, counts, MIN and MAX, and within floating-point summation order
 * for double sums and averages (a pairwise sum per workgroup, then workgroups and batches in
 * order: at most {@code n * 2^-53 * sum(|x|)} apart for {@code n} rows). Otherwise, and for any
 * batch the GPU cannot reduce (verify on, a UDF on the CPU), it folds the rows on the host.
 * Metrics ({@link AggregateMetric}) say which: {@code gpuReducedRows} against {@code aggregatedRows}.
 *
 * <p>It consumes its child's batches itself: a {@code ColumnarToRow} that Spark's transitions put
 * under it (when it was planned before them, in an adaptive plan) is removed by the rule after them,
 * and skipped here should one remain.
 */
public final class VkGpuAggregateExec extends PlanNode {
  private static final long serialVersionUID = 1L;

  /**
   * What the node computes over its child's columns.
   *
   * @param keyOrdinal the grouping key's column, -1 for none
   * @param keyType the key's type (int, bigint or date), null for none
   * @param keyText the key as Spark prints it ("" for none)
   * @param aggregates the functions, in the partial aggregate's order
   * @param computed expressions bound to the child's columns, computed per row after them (their
   *     columns follow the child's: a key or argument that is not a plain column)
   */
  public record Spec(int keyOrdinal, DataType keyType, String keyText, List<FusedAggregate> aggregates,
              List<Expression> computed) implements Serializable {
    public Spec {
      aggregates = List.copyOf(aggregates);
      computed = List.copyOf(computed);
    }

    /** Without the printed texts (they carry expression ids): two copies of one subquery compare equal. */
    Spec canonical() {
      return new Spec(keyOrdinal, keyType, "", aggregates.stream().map(a -> new FusedAggregate(a.kind(), a.ordinals(),
          a.input(), a.ansi(), a.kind().name())).toList(), computed.stream().map(e -> e.canonicalized()).toList());
    }
  }

  private final Spec spec;
  private final ReducePlacement placement;
  private final Seq<Attribute> output;
  private final Partitioning partitioning;
  private transient Map<AggregateMetric, SQLMetric> metrics;

  /** @param placement where the aggregates are reduced, decided once when the node is planned */
  public VkGpuAggregateExec(Spec spec, ReducePlacement placement, Seq<Attribute> output,
                            Partitioning partitioning, SparkPlan child) {
    super(spec, placement, output, partitioning, child);
    this.spec = spec;
    this.placement = placement;
    this.output = output;
    this.partitioning = partitioning;
  }

  Spec spec() {
    return spec;
  }

  ReducePlacement placement() {
    return placement;
  }

  /** The same node, placed as {@code p}. */
  VkGpuAggregateExec withPlacement(ReducePlacement p) {
    return new VkGpuAggregateExec(spec, p, output, partitioning, child());
  }

  @Override
  protected boolean keepsChildOrdering() {
    return false; // one row per group (or per partition), in no particular order
  }

  @Override
  public Seq<Attribute> output() {
    return output;
  }

  @Override
  public Partitioning outputPartitioning() {
    return partitioning;
  }

  /**
   * The GPU node's batches, reduced on the GPU as {@link #placement} decided (each executor checks
   * it once per task), folded into partial rows. A {@code ColumnarToRow} left under the node is
   * skipped: the node reads the batches itself.
   */
  @Override
  public RDD<InternalRow> doExecute() {
    Spec s = spec;
    Map<AggregateMetric, SQLMetric> m = aggregateMetrics();
    SparkPlan source = child() instanceof ColumnarToRowExec c2r ? c2r.child() : child();
    RDD<DeviceReduction.Step> steps = placement.onGpu() && source instanceof VkGpuEvalExec eval
        ? eval.executeReducing(placement)
        : Partitions.map(source.executeColumnar(), PartialAggregator::rows);
    return Partitions.map(steps, in -> (Iterator<InternalRow>) new PartialAggregator(in, s, m));
  }

  /** The node's metrics, every one of {@link AggregateMetric}, created once per node. */
  private synchronized Map<AggregateMetric, SQLMetric> aggregateMetrics() {
    if (metrics == null) {
      metrics = AggregateMetric.create(sparkContext());
    }
    return metrics;
  }

  /** The node's metrics by key, in {@link AggregateMetric} order (see docs/METRICS.md). */
  public Map<String, SQLMetric> metricsMap() {
    return AggregateMetric.byKey(aggregateMetrics());
  }

  @Override
  public scala.collection.immutable.Map<String, SQLMetric> metrics() {
    return Scala.orderedMap(metricsMap());
  }

  @Override
  public String nodeName() {
    return "VkGpuAggregate";
  }

  @Override
  public String simpleString(int maxFields) {
    return nodeName() + " (partial) [keys=[" + spec.keyText() + "], functions=["
        + spec.aggregates().stream().map(FusedAggregate::text).collect(Collectors.joining(", ")) + "]] " + where();
  }

  /**
   * Where the node computes the aggregates, as EXPLAIN shows it: reduced on the GPU (per key, the key
   * computed on the device where it is an expression), or folded on the host and why.
   */
  String where() {
    String filter = placement.filterNote() == null ? "" : "; " + placement.filterNote();
    if (!placement.onGpu()) {
      return "folded on the host: " + placement.doubt() + filter;
    }
    GpuReduction r = placement.reduction();
    String how = !r.grouped() ? "reduced on the GPU" : r.keyExpr() == null ? "reduced per key on the GPU"
        : "reduced per key on the GPU, the key computed on the device";
    return how + (placement.doubt() == null ? "" : " where it can (" + placement.doubt() + ")") + filter;
  }

  @Override
  public String verboseString(int maxFields) {
    return simpleString(maxFields);
  }

  @Override
  public String argString(int maxFields) {
    return "keys=[" + spec.keyText() + "], functions=["
        + spec.aggregates().stream().map(FusedAggregate::text).collect(Collectors.joining(", ")) + "], computed="
        + spec.computed() + ", output=" + Scala.list(output);
  }

  /**
   * Output columns numbered by position (names and ids dropped) and the spec without its texts, as
   * Spark normalizes its own nodes: two copies of one subquery compare equal, so Spark reuses the
   * exchange above them.
   */
  @Override
  public SparkPlan doCanonicalize() {
    List<Attribute> canonical = new ArrayList<>();
    List<Attribute> out = Scala.list(output);
    for (int i = 0; i < out.size(); i++) {
      canonical.add((Attribute) ((AttributeReference) out.get(i)).withExprId(ExprId.apply(i)).canonicalized());
    }
    return new VkGpuAggregateExec(spec.canonical(), placement.canonical(), Scala.seq(canonical),
        new UnknownPartitioning(0), child().canonicalized());
  }
}
