package io.vkspark.spark.plan;

import io.vkspark.spark.api.GpuUdfs;

import java.io.Serializable;
import java.util.concurrent.atomic.LongAdder;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.util.LongAccumulator;
import scala.runtime.AbstractPartialFunction;

/**
 * Counts the rows that GPU UDF calls left in Spark's own operators (a join key, a lambda, a branch
 * vkspark cannot guard, ...) compute with {@code call()}: no {@code VkGpuEval} node sees them, so
 * its {@code rows on CPU} cannot. The physical rule swaps each such call's Scala function for a
 * {@link Counted} one that adds every row to a named accumulator of the application (the Spark UI
 * shows it on each stage) and to this executor's total (the plugin's metric
 * {@code cpuRowsOutsideNode}).
 */
public final class OutsideNodeCalls {
  /** The accumulator's name, as the Spark UI and EXPLAIN show it. */
  public static final String NAME = "vkspark: GPU UDF rows computed by call() outside VkGpuEval";
  /** Rows counted in this JVM, for the executor's metric. */
  public static final LongAdder ROWS = new LongAdder();

  private static SparkContext owner;
  private static LongAccumulator accumulator;

  private OutsideNodeCalls() {}

  /** The application's accumulator, registered with {@code sc} on first use (one per SparkContext). */
  public static synchronized LongAccumulator accumulator(SparkContext sc) {
    if (owner != sc) {
      accumulator = sc.longAccumulator(NAME);
      owner = sc;
    }
    return accumulator;
  }

  /** Replaces the function of each GPU UDF call with a counted one (once: counted calls are kept). */
  static Expression counted(Expression e, LongAccumulator rows) {
    return e.transformUp(new AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof ScalaUDF u && !(u.function() instanceof Counted) && GpuUdfs.of(u).isPresent();
      }

      @Override
      public Expression apply(Expression x) {
        return withFunction((ScalaUDF) x, new Counted(((ScalaUDF) x).function(), rows));
      }
    });
  }

  /** {@code u} with its original function: a GPU node computes it, and counts its rows itself. */
  static ScalaUDF uncounted(ScalaUDF u) {
    return u.function() instanceof Counted c ? withFunction(u, c.inner()) : u;
  }

  private static ScalaUDF withFunction(ScalaUDF u, Object function) {
    return new ScalaUDF(function, u.dataType(), u.children(), u.inputEncoders(), u.outputEncoder(), u.udfName(),
        u.nullable(), u.udfDeterministic());
  }

  /**
   * A GPU UDF's Scala function (of 1 to 10 arguments, as Spark calls a Java UDF) that counts each
   * call. Equal when it wraps the same function for the same accumulator, so plans still compare
   * equal (exchange reuse).
   */
  @SuppressWarnings({"rawtypes", "unchecked"})
  public record Counted(Object inner, LongAccumulator rows) implements scala.Function1, scala.Function2, scala.Function3,
      scala.Function4, scala.Function5, scala.Function6, scala.Function7, scala.Function8, scala.Function9,
      scala.Function10, Serializable {

    private void count() {
      rows.add(1L);
      ROWS.increment();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Counted c && c.inner == inner && c.rows == rows;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(inner);
    }

    @Override
    public String toString() {
      return inner.toString();
    }

    @Override
    public Object apply(Object a) {
      count();
      return ((scala.Function1) inner).apply(a);
    }

    @Override
    public Object apply(Object a, Object b) {
      count();
      return ((scala.Function2) inner).apply(a, b);
    }

    @Override
    public Object apply(Object a, Object b, Object c) {
      count();
      return ((scala.Function3) inner).apply(a, b, c);
    }

    @Override
    public Object apply(Object a, Object b, Object c, Object d) {
      count();
      return ((scala.Function4) inner).apply(a, b, c, d);
    }

    @Override
    public Object apply(Object a, Object b, Object c, Object d, Object e) {
      count();
      return ((scala.Function5) inner).apply(a, b, c, d, e);
    }

    @Override
    public Object apply(Object a, Object b, Object c, Object d, Object e, Object f) {
      count();
      return ((scala.Function6) inner).apply(a, b, c, d, e, f);
    }

    @Override
    public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g) {
      count();
      return ((scala.Function7) inner).apply(a, b, c, d, e, f, g);
    }

    @Override
    public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h) {
      count();
      return ((scala.Function8) inner).apply(a, b, c, d, e, f, g, h);
    }

    @Override
    public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h, Object i) {
      count();
      return ((scala.Function9) inner).apply(a, b, c, d, e, f, g, h, i);
    }

    @Override
    public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h, Object i,
                        Object j) {
      count();
      return ((scala.Function10) inner).apply(a, b, c, d, e, f, g, h, i, j);
    }

    /** Spark never curries or tuples a UDF's function; the traits of several arities both declare these. */
    @Override
    public scala.Function1 curried() {
      throw new UnsupportedOperationException("curried");
    }

    @Override
    public scala.Function1 tupled() {
      throw new UnsupportedOperationException("tupled");
    }
  }
}
