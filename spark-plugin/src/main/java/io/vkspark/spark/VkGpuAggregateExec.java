package io.vkspark.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.execution.ColumnarToRowExec;
import org.apache.spark.sql.execution.UnaryExecNode;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

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
 * the GPU node's child, every function {@code COUNT(*)} or over GPU UDF result columns, as they are
 * or through an expression the GPU computes exactly ({@link DeviceExprs}), no ANSI integral sum;
 * {@code spark.vkspark.fuseAggregates.onGpu}, default true), the aggregates are computed on the GPU
 * in the same submission as the UDFs and only
 * per-workgroup partials come back: the per-row results never leave the device. Results then match
 * Spark's exactly for integer sums, counts, MIN and MAX, and within floating-point summation order
 * for double sums and averages (a pairwise sum per workgroup, then workgroups and batches in
 * order: at most {@code n * 2^-53 * sum(|x|)} apart for {@code n} rows). Otherwise, and for any
 * batch the GPU cannot reduce (verify on, a UDF on the CPU), it folds the rows on the host.
 * Metrics say which: {@code gpuReducedRows} against {@code aggregatedRows}.
 *
 * <p>It consumes its child's batches itself: a {@code ColumnarToRow} that Spark's transitions put
 * under it (when it was planned before them, in an adaptive plan) is removed by the rule after them,
 * and skipped here should one remain.
 */
public final class VkGpuAggregateExec extends UnaryExecShim {
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
  record Spec(int keyOrdinal, DataType keyType, String keyText, List<FusedAggregate> aggregates,
              List<org.apache.spark.sql.catalyst.expressions.Expression> computed) implements Serializable {
    Spec {
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
  private final scala.collection.immutable.Seq<Attribute> output;
  private final Partitioning partitioning;
  private final SparkPlan child;
  private transient Map<String, SQLMetric> metrics;

  public VkGpuAggregateExec(Spec spec, scala.collection.immutable.Seq<Attribute> output, Partitioning partitioning,
                            SparkPlan child) {
    this.spec = spec;
    this.output = output;
    this.partitioning = partitioning;
    this.child = child;
  }

  Spec spec() {
    return spec;
  }

  @Override
  protected boolean keepsChildOrdering() {
    return false; // one row per group (or per partition), in no particular order
  }

  @Override
  public SparkPlan child() {
    return child;
  }

  @Override
  public SparkPlan withNewChildInternal(SparkPlan newChild) {
    return new VkGpuAggregateExec(spec, output, partitioning, newChild);
  }

  @Override
  public scala.collection.immutable.Seq<Attribute> output() {
    return output;
  }

  @Override
  public Partitioning outputPartitioning() {
    return partitioning;
  }

  @Override
  public RDD<InternalRow> doExecute() {
    Spec s = spec;
    Map<String, SQLMetric> m = metricsMap();
    SQLMetric outputRows = m.get("numOutputRows");
    SQLMetric aggregatedRows = m.get("aggregatedRows");
    SparkPlan source = child instanceof ColumnarToRowExec c2r ? c2r.child() : child;
    if (source instanceof VkGpuEvalExec eval && onGpu(eval)) {
      java.util.Optional<GpuReduction> reduction = GpuReduction.plan(s, eval, keySlots(eval));
      if (reduction.isPresent()) {
        return reduced(eval, reduction.get(), s, m);
      }
    }
    return source.executeColumnar().toJavaRDD()
        .mapPartitions((java.util.Iterator<ColumnarBatch> batches) -> (java.util.Iterator<InternalRow>)
            new PartialAggregator(batches, s, outputRows, aggregatedRows))
        .rdd();
  }

  private boolean onGpu(VkGpuEvalExec eval) {
    org.apache.spark.sql.SparkSession session = eval.session();
    return session == null || Boolean.parseBoolean(session.conf().get(GpuReduction.CONF, "true").trim());
  }

  /** {@link GpuReduction#SLOTS_CONF}: key values one batch may span for a grouped aggregate to reduce on the GPU. */
  private static int keySlots(VkGpuEvalExec eval) {
    org.apache.spark.sql.SparkSession session = eval.session();
    String v = session == null || !session.conf().contains(GpuReduction.SLOTS_CONF) ? null
        : session.conf().get(GpuReduction.SLOTS_CONF);
    int slots;
    try {
      slots = v == null ? io.vkspark.gpu.column.reduce.ColumnReduction.DEFAULT_SLOTS : Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      slots = -1;
    }
    if (slots < 1 || slots > io.vkspark.gpu.column.reduce.ColumnReduction.MAX_SLOTS) {
      throw io.vkspark.gpu.GpuException.of(io.vkspark.gpu.GpuException.Code.INVALID_ARGUMENT, GpuReduction.SLOTS_CONF
          + " is '" + v + "', not a number of key slots from 1 to " + io.vkspark.gpu.column.reduce.ColumnReduction.MAX_SLOTS + ".",
          "set it to e.g. " + io.vkspark.gpu.column.reduce.ColumnReduction.DEFAULT_SLOTS + ", or leave it unset.");
    }
    return slots;
  }

  /** The GPU node's UDFs and this node's aggregates, computed together on the GPU ({@link GpuReduction}). */
  private static RDD<InternalRow> reduced(VkGpuEvalExec eval, GpuReduction reduction, Spec s, Map<String, SQLMetric> m) {
    List<GpuUdfCall> planned = eval.calls();
    VkConf conf = GpuPlanner.conf(eval.session());
    VerifySettings verify = conf.verify();
    NodeMetrics em = eval.nodeMetrics();
    List<DataType> childTypes = Scala.list(eval.child().output()).stream().map(a -> a.dataType()).toList();
    SQLMetric outputRows = m.get("numOutputRows");
    SQLMetric aggregatedRows = m.get("aggregatedRows");
    SQLMetric gpuRows = m.get("gpuReducedRows");
    SQLMetric readback = m.get("gpuReadbackBytes");
    return eval.child().executeColumnar().toJavaRDD()
        .mapPartitions((java.util.Iterator<ColumnarBatch> batches) -> (java.util.Iterator<InternalRow>)
            new PartialAggregator(new GpuEvalIterator(batches, planned, childTypes, conf, em, verify, reduction), s,
                outputRows, aggregatedRows, gpuRows, readback))
        .rdd();
  }

  /** The node's metrics: partial rows emitted and rows aggregated (see docs/METRICS.md). */
  synchronized Map<String, SQLMetric> metricsMap() {
    if (metrics == null) {
      Map<String, SQLMetric> m = new LinkedHashMap<>();
      m.put("numOutputRows", VkMetric.Kind.SUM.create(sparkContext(), "partial aggregate rows emitted"));
      m.put("aggregatedRows", VkMetric.Kind.SUM.create(sparkContext(), "rows aggregated without leaving columns"));
      m.put("gpuReducedRows", VkMetric.Kind.SUM.create(sparkContext(), "rows aggregated on the GPU (results not read back)"));
      m.put("gpuReadbackBytes", VkMetric.Kind.SIZE.create(sparkContext(), "GPU aggregate partials read back"));
      metrics = m;
    }
    return metrics;
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
        + spec.aggregates().stream().map(FusedAggregate::text).collect(Collectors.joining(", ")) + "]]";
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
    return new VkGpuAggregateExec(spec.canonical(), Scala.seq(canonical),
        new org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning(0), child.canonicalized());
  }

  // ---- what a case class would generate -------------------------------------------------------

  @Override
  public int productArity() {
    return 4;
  }

  @Override
  public Object productElement(int n) {
    return switch (n) {
      case 0 -> spec;
      case 1 -> output;
      case 2 -> partitioning;
      case 3 -> child;
      default -> throw new IndexOutOfBoundsException(n);
    };
  }

  @Override
  public boolean canEqual(Object that) {
    return that instanceof VkGpuAggregateExec;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof VkGpuAggregateExec g && g.spec.equals(spec) && g.output.equals(output)
        && g.partitioning.equals(partitioning) && g.child.equals(child);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(spec, output, partitioning, child);
  }
}
