package io.vkspark.spark.udf;

import java.io.Serializable;
import java.util.List;
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
 * A Scala closure's function that returns null, without calling it, when an argument Spark checks
 * for null is null ({@code skips}, per argument): what Spark's analyzer wraps around a closure with
 * primitive parameters ({@code if (isnull(a)) null else f(knownnotnull(a))}), moved into the
 * function by {@code plan.NullCheckedClosures} so that the call reads its columns as they are, as a
 * Java UDF's does. Spark's CPU evaluation of the call gives the same rows. Of 1 to 10 arguments, as
 * {@link CountedFunction}. Equal when it wraps the same function with the same checks, so plans
 * still compare equal ({@code GROUP BY f(a)}, exchange reuse).
 */
@SuppressWarnings({"rawtypes", "unchecked"})
public record NullSkipping(Object inner, List<Boolean> skips) implements Function1, Function2,
    Function3, Function4, Function5, Function6, Function7, Function8,
    Function9, Function10, Serializable {
  /** The most arguments a wrapped function may take. */
  public static final int MAX_ARITY = 10;

  public NullSkipping {
    skips = List.copyOf(skips);
  }

  private boolean skip(Object... args) {
    for (int i = 0; i < args.length; i++) {
      if (args[i] == null && skips.get(i)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof NullSkipping n && n.inner == inner && n.skips.equals(skips);
  }

  @Override
  public int hashCode() {
    return System.identityHashCode(inner) * 31 + skips.hashCode();
  }

  @Override
  public String toString() {
    return inner.toString();
  }

  @Override
  public Object apply(Object a) {
    return skip(a) ? null : ((Function1) inner).apply(a);
  }

  @Override
  public Object apply(Object a, Object b) {
    return skip(a, b) ? null : ((Function2) inner).apply(a, b);
  }

  @Override
  public Object apply(Object a, Object b, Object c) {
    return skip(a, b, c) ? null : ((Function3) inner).apply(a, b, c);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d) {
    return skip(a, b, c, d) ? null : ((Function4) inner).apply(a, b, c, d);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e) {
    return skip(a, b, c, d, e) ? null : ((Function5) inner).apply(a, b, c, d, e);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e, Object f) {
    return skip(a, b, c, d, e, f) ? null : ((Function6) inner).apply(a, b, c, d, e, f);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g) {
    return skip(a, b, c, d, e, f, g) ? null : ((Function7) inner).apply(a, b, c, d, e, f, g);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h) {
    return skip(a, b, c, d, e, f, g, h) ? null : ((Function8) inner).apply(a, b, c, d, e, f, g, h);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h, Object i) {
    return skip(a, b, c, d, e, f, g, h, i) ? null : ((Function9) inner).apply(a, b, c, d, e, f, g, h, i);
  }

  @Override
  public Object apply(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h, Object i,
                      Object j) {
    return skip(a, b, c, d, e, f, g, h, i, j) ? null : ((Function10) inner).apply(a, b, c, d, e, f, g, h, i, j);
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
