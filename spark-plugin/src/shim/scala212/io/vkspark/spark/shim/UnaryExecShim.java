package io.vkspark.spark.shim;

import java.util.List;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.UnaryExecNode;
import scala.Function1;
import scala.Option;
import scala.collection.IndexedSeq;
import scala.collection.Seq;

/**
 * Scala 2.12 shim: the base of vkspark's one-child physical nodes written in Java. A Java class
 * inherits SparkPlan's (TreeNode's) methods before UnaryExecNode's defaults, so the trait's versions
 * are picked here by hand; their signatures name Scala collections, which differ between Scala 2.12
 * ({@code scala.collection.Seq}) and 2.13 ({@code immutable.Seq}), hence one copy per Scala version.
 * {@link PlanNode} implements {@code child()}, {@code withNewChildInternal} and the case-class members
 * from a node's fields.
 */
public abstract class UnaryExecShim extends SparkPlan implements UnaryExecNode {
  private static final long serialVersionUID = 1L;

  /** True when each partition's rows keep the child's order (the node only adds columns). */
  protected abstract boolean keepsChildOrdering();

  @Override
  public Seq<SparkPlan> children() {
    return UnaryExecNode.super.children();
  }

  @Override
  public SparkPlan withNewChildrenInternal(IndexedSeq<SparkPlan> newChildren) {
    return UnaryExecNode.super.withNewChildrenInternal(newChildren);
  }

  @Override
  public SparkPlan mapChildren(Function1<SparkPlan, SparkPlan> f) {
    return UnaryExecNode.super.mapChildren(f);
  }

  @Override
  public String verboseStringWithOperatorId() {
    return UnaryExecNode.super.verboseStringWithOperatorId();
  }

  @Override
  public Seq<SortOrder> outputOrdering() {
    return keepsChildOrdering() ? child().outputOrdering() : super.outputOrdering();
  }

  /**
   * The class of each output column's vectors in this node's column batches, which ColumnarToRow's
   * generated code casts to and calls directly; null (the default) when not known.
   */
  protected List<String> columnVectorClasses() {
    return null;
  }

  @Override
  public Option<Seq<String>> vectorTypes() {
    List<String> classes = columnVectorClasses();
    return classes == null ? super.vectorTypes() : Option.<Seq<String>>apply(Scala.seq(classes));
  }

  /**
   * Spark 3.5's UnaryExecNode calls {@code super.formattedNodeName} through this accessor, which
   * scalac writes into every Scala subclass (Spark 4's trait no longer needs it; harmless there).
   */
  public String org$apache$spark$sql$execution$UnaryExecNode$$super$formattedNodeName() {
    return super.formattedNodeName();
  }
}
