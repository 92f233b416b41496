package io.vkspark.spark.udf;

import java.io.Serializable;
import java.util.concurrent.atomic.LongAdder;
import org.apache.spark.util.LongAccumulator;
import scala.Function1;
import scala.Function10;
import scala.Function2;
import scala.Function3;
import scala.Function4;
import scala.Function5;
import scala.Function6;
import scala.Function7;
import scala.Function8;
import scala.Function9;

/**
 * A GPU UDF's Scala function (of 1 to 10 arguments, as Spark calls a Java UDF) that counts each
 * call. Equal when it wraps the same function for the same accumulator, so plans still compare
 * equal (exchange reuse).
 */
@SuppressWarnings({"rawtypes", "unchecked"})
public record CountedFunction(Object inner, LongAccumulator rows) implements Function1, Function2, Function3,
    Function4, Function5, Function6, Function7, Function8, Function9,
    Function10, Serializable {
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
    return ((Function1) inner).apply(a);
  }

  @Override
  public Object apply(Object a, Object b) {
    count();
    return ((Function2) inner).apply(a, b);
  }

  @Override
  public Object apply(Object a, Object b, Object c) {
    count();
    return ((Function3) inner).apply(a, b, c);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d) {
    count();
    return ((Function4) inner).apply(a, b, c, d);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e) {
    count();
    return ((Function5) inner).apply(a, b, c, d, e);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e, Object f) {
    count();
    return ((Function6) inner).apply(a, b, c, d, e, f);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g) {
    count();
    return ((Function7) inner).apply(a, b, c, d, e, f, g);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h) {
    count();
    return ((Function8) inner).apply(a, b, c, d, e, f, g, h);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h, Object i) {
    count();
    return ((Function9) inner).apply(a, b, c, d, e, f, g, h, i);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h, Object i,
                      Object j) {
    count();
    return ((Function10) inner).apply(a, b, c, d, e, f, g, h, i, j);
  }

  /** Spark never curries or tuples a UDF's function; the traits of several arities both declare these. */
  @Override
  public Function1 curried() {
    throw new UnsupportedOperationException("curried");
  }

  @Override
  public Function1 tupled() {
    throw new UnsupportedOperationException("tupled");
  }
}
