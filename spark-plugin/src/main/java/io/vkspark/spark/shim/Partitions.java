package io.vkspark.spark.shim;

import java.io.Serializable;
import java.util.Iterator;
import org.apache.spark.rdd.RDD;
import scala.Function1;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * {@code rdd.mapPartitions(f)} for vkspark's exec nodes, without Spark's closure cleaning.
 * {@code JavaRDD.mapPartitions} cleans its closure and serializes it once more on the driver to
 * check it, for every query; an exec node's closure captures plain values, so that is only time (a
 * large share of the driver's job submission, measured with JFR). Spark's own exec nodes use
 * {@code mapPartitionsInternal} for the same reason; a closure that does not serialize still fails,
 * when the task is.
 */
public final class Partitions {
  private Partitions() {}

  /** A function of one partition's iterator, serializable (its captured values travel with each task). */
  @FunctionalInterface
  public interface Function<T, U> extends Serializable {
    Iterator<U> apply(Iterator<T> partition);
  }

  /** {@code f} over each partition of {@code rdd}. */
  @SuppressWarnings("unchecked")
  public static <T, U> RDD<U> map(RDD<T> rdd, Function<T, U> f) {
    Function1<scala.collection.Iterator<T>, scala.collection.Iterator<U>> each =
        (Function1<scala.collection.Iterator<T>, scala.collection.Iterator<U>> & Serializable)
            it -> Scala.iterator(f.apply(Scala.iterator(it)));
    return rdd.mapPartitionsInternal(each, false, (ClassTag<U>) (Object) ClassTag$.MODULE$.AnyRef());
  }
}
