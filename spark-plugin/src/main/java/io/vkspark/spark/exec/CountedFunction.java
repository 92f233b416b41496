package io.vkspark.spark.exec;

import java.io.Serializable;
import java.util.concurrent.atomic.LongAdder;
import org.apache.spark.util.LongAccumulator;

/**
 * A GPU UDF's Scala function (of 1 to 10 arguments, as Spark calls a Java UDF) that counts each
 * call. Equal when it wraps the same function for the same accumulator, so plans still compare
 * equal (exchange reuse).
 */
@SuppressWarnings({"rawtypes", "unchecked"})
public record CountedFunction(Object inner, LongAccumulator rows) implements scala.Function1, scala.Function2, scala.Function3,
    scala.Function4, scala.Function5, scala.Function6, scala.Function7, scala.Function8, scala.Function9,
    scala.Function10, Serializable {
  /** Rows counted in this JVM, for the executor's metric {@code cpuRowsOutsideNode}. */
  public static final LongAdder ROWS = new LongAdder();

  private void count() {
    rows.add(1L);
    ROWS.increment();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CountedFunction c && c.inner == inner && c.rows == rows;
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
