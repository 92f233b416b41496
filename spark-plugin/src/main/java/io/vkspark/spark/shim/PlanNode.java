package io.vkspark.spark.shim;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.execution.SparkPlan;
import scala.collection.immutable.Seq;

/**
 * The base of vkspark's one-child physical nodes: what a Scala case class generates, written once.
 * A node passes its fields to this constructor in the order of its public constructor's parameters,
 * the child last; from them come {@code productArity}/{@code productElement} (which Spark's
 * {@code TreeNode.makeCopy} passes back to that constructor, found by reflection), {@code canEqual},
 * {@code equals}, {@code hashCode}, {@code child()} and {@code withNewChildInternal} (the public
 * constructor again, with the new child). A node keeps its fields in typed fields of its own too.
 *
 * <p>By default a node keeps its child's columns, partitioning and ordering (it adds columns, or
 * passes batches on); a node that changes them overrides {@link #output()},
 * {@link #outputPartitioning()} and {@link #keepsChildOrdering()}.
 */
public abstract class PlanNode extends UnaryExecShim {
  private static final long serialVersionUID = 1L;

  /** Each node class's public constructor with the most parameters: the one its fields are in the order of. */
  private static final ClassValue<Constructor<?>> CONSTRUCTOR = new ClassValue<>() {
    @Override
    protected Constructor<?> computeValue(Class<?> type) {
      return Arrays.stream(type.getConstructors()).max(Comparator.comparingInt(Constructor::getParameterCount))
          .orElseThrow(() -> new IllegalStateException(type.getName() + " has no public constructor: TreeNode.makeCopy "
              + "and withNewChildInternal call it with the node's fields"));
    }
  };

  private final List<Object> fields;

  /** @param fields the node's fields, in its public constructor's order, the child ({@link SparkPlan}) last */
  protected PlanNode(Object... fields) {
    if (fields.length == 0 || !(fields[fields.length - 1] instanceof SparkPlan)) {
      throw new IllegalArgumentException(getClass().getName() + ": the last field must be the child plan");
    }
    this.fields = Collections.unmodifiableList(Arrays.asList(fields.clone()));
  }

  @Override
  public final SparkPlan child() {
    return (SparkPlan) fields.get(fields.size() - 1);
  }

  /** This node with {@code newChild}: its public constructor, called with its fields and the new child. */
  @Override
  public SparkPlan withNewChildInternal(SparkPlan newChild) {
    List<Object> args = new ArrayList<>(fields);
    args.set(args.size() - 1, newChild);
    Constructor<?> c = CONSTRUCTOR.get(getClass());
    if (c.getParameterCount() != args.size()) {
      throw new IllegalStateException(getClass().getName() + "'s public constructor takes " + c.getParameterCount()
          + " parameters but the node has " + args.size() + " fields: it must take exactly its fields, in order");
    }
    try {
      return (SparkPlan) c.newInstance(args.toArray());
    } catch (InvocationTargetException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot copy " + getClass().getName() + " with a new child", e);
    }
  }

  @Override
  public Seq<Attribute> output() {
    return Scala.seq(Scala.list(child().output()));
  }

  @Override
  public Partitioning outputPartitioning() {
    return child().outputPartitioning();
  }

  @Override
  protected boolean keepsChildOrdering() {
    return true;
  }

  // ---- what a case class would generate -------------------------------------------------------

  @Override
  public final int productArity() {
    return fields.size();
  }

  @Override
  public final Object productElement(int n) {
    return fields.get(n);
  }

  @Override
  public final boolean canEqual(Object that) {
    return that != null && that.getClass() == getClass();
  }

  @Override
  public final boolean equals(Object o) {
    return this == o || (o instanceof PlanNode p && canEqual(p) && p.fields.equals(fields));
  }

  @Override
  public final int hashCode() {
    return 31 * getClass().getName().hashCode() + fields.hashCode();
  }
}
