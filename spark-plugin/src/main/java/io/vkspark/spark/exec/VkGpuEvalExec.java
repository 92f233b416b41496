package io.vkspark.spark.exec;

import io.vkspark.spark.conf.VerifySettings;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.shim.Partitions;
import io.vkspark.spark.shim.PlanNode;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.call.NodeMetrics;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.AttributeSet$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import scala.collection.immutable.Seq;

/**
 * The physical node that evaluates GPU UDF calls for each partition: columnar batches from its
 * child go through the executor's {@link io.vkspark.gpu.column.run.BatchRunner}; its output is the
 * child's columns followed by one column per call. Everything else in the query stays on Spark's
 * own code path around it (the pattern of Spark's {@code ArrowEvalPythonExec}). Shown in plans as
 * {@code VkGpuEval}, as Spark shows {@code ProjectExec} as {@code Project}. It only adds columns and
 * keeps each partition's rows in order, so it keeps its child's partitioning and ordering: Spark adds
 * no exchange or sort above it (a cached GPU result, say).
 *
 * <p>Written in Java: what a Scala case class gets for free comes from {@link PlanNode}.
 */
public final class VkGpuEvalExec extends PlanNode {
  private static final long serialVersionUID = 1L;

  private final Seq<GpuUdfCall> calls;
  private final VkConf vkConf;
  private transient NodeMetrics metrics;

  /** @param vkConf the settings of the session that planned the node, which its tasks use */
  public VkGpuEvalExec(Seq<GpuUdfCall> calls, VkConf vkConf, SparkPlan child) {
    super(calls, vkConf, child);
    this.calls = calls;
    this.vkConf = vkConf;
  }

  public List<GpuUdfCall> calls() {
    return Scala.list(calls);
  }

  /** The settings the node was planned with, carried to its tasks. */
  public VkConf vkConf() {
    return vkConf;
  }

  @Override
  public Seq<Attribute> output() {
    List<Attribute> out = new ArrayList<>(Scala.list(child().output()));
    for (GpuUdfCall c : calls()) {
      out.add(c.result());
    }
    return Scala.seq(out);
  }

  @Override
  public AttributeSet producedAttributes() {
    List<Expression> produced = calls().stream().map(c -> (Expression) c.result()).toList();
    return AttributeSet$.MODULE$.apply(Scala.seq(produced));
  }

  @Override
  public boolean supportsColumnar() {
    return true;
  }

  @Override
  public RDD<InternalRow> doExecute() {
    throw new IllegalStateException("VkGpuEval produces columnar batches only; Spark inserts ColumnarToRow above it");
  }

  @Override
  public RDD<ColumnarBatch> doExecuteColumnar() {
    Tasks tasks = tasks(null);
    return Partitions.map(child().executeColumnar(), batches -> (Iterator<ColumnarBatch>) tasks.iterator(batches));
  }

  /**
   * The node's batches as a fused aggregate above it reads them: one {@link DeviceReduction.Step}
   * per batch, reduced on the GPU with {@code reduction} where the executor can.
   */
  public RDD<DeviceReduction.Step> executeReducing(DeviceReduction reduction) {
    Tasks tasks = tasks(reduction);
    return Partitions.map(child().executeColumnar(), batches -> tasks.iterator(batches).steps());
  }

  private Tasks tasks(DeviceReduction reduction) {
    List<DataType> childTypes = Scala.list(child().output()).stream().map(a -> a.dataType()).toList();
    return new Tasks(calls(), childTypes, vkConf, nodeMetrics(), verifySettings(), reduction);
  }

  /**
   * {@code spark.vkspark.verify} for this node: as set; unset, {@code sample} when the node runs a
   * translated Java UDF on the GPU (its kernel is the translator's, not the user's: a sample of its
   * rows is checked against {@code call()}), else {@code off}.
   */
  public VerifySettings verifySettings() {
    if (vkConf.verifySet() || vkConf.verify().on() || calls().stream().noneMatch(c -> c.onGpu() && c.translated())) {
      return vkConf.verify();
    }
    return vkConf.verify().withMode(VerifySettings.Mode.SAMPLE);
  }

  /** What each task's iterator is made of, sent to the executors with the closure. */
  private record Tasks(List<GpuUdfCall> planned, List<DataType> childTypes, VkConf conf,
                       NodeMetrics metrics, VerifySettings verify, DeviceReduction reduction)
      implements Serializable {
    GpuEvalIterator iterator(Iterator<ColumnarBatch> batches) {
      return new GpuEvalIterator(batches, planned, childTypes, conf, metrics, verify, reduction);
    }
  }

  /**
   * The node's metrics (Spark UI SQL tab), created once per node: those of
   * {@code spark.vkspark.metrics.level}, in {@link VkMetric} order.
   */
  public synchronized NodeMetrics nodeMetrics() {
    if (metrics == null) {
      metrics = NodeMetrics.create(sparkContext(), vkConf.metricsLevel());
    }
    return metrics;
  }

  /** The node's metrics by key, in {@link VkMetric} order. */
  public Map<String, SQLMetric> metricsMap() {
    return nodeMetrics().byKey();
  }

  /** An ordered map: Spark's UI lists a node's metrics in this map's iteration order. */
  @Override
  public scala.collection.immutable.Map<String, SQLMetric> metrics() {
    return Scala.orderedMap(metricsMap());
  }

  @Override
  public String nodeName() {
    return "VkGpuEval";
  }

  @Override
  public String simpleString(int maxFields) {
    return nodeName() + " [" + calls().stream().map(GpuUdfCall::describe).collect(Collectors.joining(", ")) + "]";
  }

  @Override
  public String verboseString(int maxFields) {
    return simpleString(maxFields);
  }

  /** EXPLAIN FORMATTED's "Arguments:" line: each call, its guard over the child's columns, and where it runs. */
  @Override
  public String argString(int maxFields) {
    List<Attribute> input = Scala.list(child().output());
    return calls().stream().map(c -> c.describe(input)).collect(Collectors.joining(", "));
  }

  /**
   * The calls normalized over the child's columns (as Spark's own nodes do with
   * {@code QueryPlan.normalizeExpressions}): two copies of one subquery differ only in expression
   * ids, and must compare equal for Spark to reuse an exchange or subquery.
   */
  @Override
  public SparkPlan doCanonicalize() {
    List<Attribute> input = Scala.list(child().output());
    List<GpuUdfCall> planned = calls();
    List<GpuUdfCall> canonical = new ArrayList<>();
    for (int i = 0; i < planned.size(); i++) {
      canonical.add(planned.get(i).canonical(input, input.size() + i));
    }
    return new VkGpuEvalExec(Scala.seq(canonical), vkConf, child().canonicalized());
  }
}
