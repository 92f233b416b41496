package io.vkspark.spark.shim;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.expressions.Expression;
import scala.Function1;
import scala.collection.JavaConverters;
import scala.collection.Seq;
import scala.collection.immutable.ListMap;
import scala.collection.immutable.ListMap$;

/**
 * Java to Scala collection bridges, the Scala 2.12 shim (2.12 has no {@code scala.jdk.javaapi};
 * its Spark takes and returns {@code scala.collection.Seq}, which {@code immutable.Seq} extends).
 * The same static methods as src/shim/scala213/.../Scala.java: change both together.
 */
public final class Scala {
  private Scala() {}

  public static <T> scala.collection.immutable.Seq<T> seq(List<T> list) {
    return JavaConverters.asScalaBufferConverter(list).asScala().toList();
  }

  public static <T> List<T> list(Seq<T> seq) {
    return JavaConverters.seqAsJavaListConverter(seq).asJava();
  }

  public static <K, V> scala.collection.immutable.Map<K, V> map(Map<K, V> map) {
    scala.collection.immutable.Map<K, V> out = scala.collection.immutable.Map$.MODULE$.empty();
    for (Map.Entry<K, V> e : map.entrySet()) {
      out = out.updated(e.getKey(), e.getValue());
    }
    return out;
  }

  /** An immutable Scala map that keeps {@code map}'s iteration order (a plain Scala Map of more than 4 entries does not). */
  public static <K, V> scala.collection.immutable.Map<K, V> orderedMap(Map<K, V> map) {
    ListMap<K, V> out = ListMap$.MODULE$.empty();
    for (Map.Entry<K, V> e : map.entrySet()) {
      out = out.updated(e.getKey(), e.getValue());
    }
    return out;
  }

  /** A Java view of a Scala map, in its iteration order. */
  public static <K, V> Map<K, V> javaMap(scala.collection.Map<K, V> map) {
    return JavaConverters.mapAsJavaMapConverter(map).asJava();
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
    return JavaConverters.asScalaIteratorConverter(it).asScala();
  }

  public static <T> java.util.Iterator<T> iterator(scala.collection.Iterator<T> it) {
    return JavaConverters.asJavaIteratorConverter(it).asJava();
  }
}
