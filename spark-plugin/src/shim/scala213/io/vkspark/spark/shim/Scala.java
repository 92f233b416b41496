package io.vkspark.spark.shim;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.expressions.Expression;
import scala.Function1;
import scala.collection.immutable.ListMap$;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Java to Scala collection bridges, the Scala 2.13 shim. Every conversion between Java and Scala
 * collections in spark-plugin goes through here (Scala 2.12 has no {@code scala.jdk.javaapi}, and
 * its Spark uses {@code scala.collection.Seq} where 2.13's uses {@code immutable.Seq}). The same
 * static methods as src/shim/scala212/.../Scala.java: change both together.
 */
public final class Scala {
  private Scala() {}

  public static <T> Seq<T> seq(List<T> list) {
    return CollectionConverters.asScala(list).toList();
  }

  public static <T> List<T> list(scala.collection.Seq<T> seq) {
    return CollectionConverters.asJava(seq);
  }

  public static <K, V> scala.collection.immutable.Map<K, V> map(Map<K, V> map) {
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(map));
  }

  /** An immutable Scala map that keeps {@code map}'s iteration order (a plain Scala Map of more than 4 entries does not). */
  public static <K, V> scala.collection.immutable.Map<K, V> orderedMap(Map<K, V> map) {
    return ListMap$.MODULE$.from(CollectionConverters.asScala(map));
  }

  /** A Java view of a Scala map, in its iteration order. */
  public static <K, V> Map<K, V> javaMap(scala.collection.Map<K, V> map) {
    return CollectionConverters.asJava(map);
  }

  /**
   * A SQL function builder (Spark's FunctionRegistry.FunctionBuilder, {@code Seq[Expression] => Expression}:
   * its Seq is Scala's default one), for {@code SparkSessionExtensions.injectFunction} or
   * {@code FunctionRegistry.registerFunction}. Write it inline, e.g. in a {@code new Tuple3<>(...)}.
   */
  public static Function1<Seq<Expression>, Expression> functionBuilder(Function<List<Expression>, Expression> build) {
    return children -> build.apply(list(children));
  }

  public static <T> scala.collection.Iterator<T> iterator(java.util.Iterator<T> it) {
    return CollectionConverters.asScala(it);
  }

  public static <T> java.util.Iterator<T> iterator(scala.collection.Iterator<T> it) {
    return CollectionConverters.asJava(it);
  }
}
