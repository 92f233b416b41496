package io.vkspark.spark;

import java.util.List;
import java.util.Map;
import scala.jdk.javaapi.CollectionConverters;

/** Java to Scala collection bridges used by the planner. */
final class Scala {
  private Scala() {}

  static <T> scala.collection.immutable.Seq<T> seq(List<T> list) {
    return CollectionConverters.asScala(list).toList();
  }

  static <T> List<T> list(scala.collection.Seq<T> seq) {
    return CollectionConverters.asJava(seq);
  }

  static <K, V> scala.collection.immutable.Map<K, V> map(Map<K, V> map) {
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(map));
  }

  /** An immutable Scala map that keeps {@code map}'s iteration order (a plain Scala Map of more than 4 entries does not). */
  static <K, V> scala.collection.immutable.Map<K, V> orderedMap(Map<K, V> map) {
    return scala.collection.immutable.ListMap$.MODULE$.from(CollectionConverters.asScala(map));
  }
}
