package io.vkspark.spark.cache;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.columnar.CachedBatch;
import org.apache.spark.sql.columnar.CachedBatchSerializer;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.storage.StorageLevel;
import scala.Function2;
import scala.Option;
import scala.collection.Iterator;
import scala.collection.Seq;

/**
 * Scala 2.12 part of {@link CacheSerializerShim}: the CachedBatchSerializer overrides, whose
 * signatures name Scala's default {@code Seq} ({@code collection.Seq} here, {@code immutable.Seq}
 * on 2.13), each handing its call to the shared class with its Seqs made immutable (a cast when
 * they already are, as Spark's usually are). The same methods as
 * src/shim/scala213/.../ScalaSeqSerializer.java: change both together.
 */
public abstract class ScalaSeqSerializer implements CachedBatchSerializer {
  private static final long serialVersionUID = 1L;

  abstract boolean columnarInput(scala.collection.immutable.Seq<Attribute> schema);

  abstract RDD<CachedBatch> rowsToCache(RDD<InternalRow> input, scala.collection.immutable.Seq<Attribute> schema,
      StorageLevel level, SQLConf conf);

  abstract RDD<CachedBatch> batchesToCache(RDD<ColumnarBatch> input, scala.collection.immutable.Seq<Attribute> schema,
      StorageLevel level, SQLConf conf);

  abstract Function2<Object, Iterator<CachedBatch>, Iterator<CachedBatch>> filter(
      scala.collection.immutable.Seq<Expression> predicates, scala.collection.immutable.Seq<Attribute> cached);

  abstract Option<? extends Seq<String>> vectorClasses(scala.collection.immutable.Seq<Attribute> attributes, SQLConf conf);

  abstract RDD<ColumnarBatch> cacheToBatches(RDD<CachedBatch> input, scala.collection.immutable.Seq<Attribute> cached,
      scala.collection.immutable.Seq<Attribute> selected, SQLConf conf);

  abstract RDD<InternalRow> cacheToRows(RDD<CachedBatch> input, scala.collection.immutable.Seq<Attribute> cached,
      scala.collection.immutable.Seq<Attribute> selected, SQLConf conf);

  @Override
  public final boolean supportsColumnarInput(Seq<Attribute> schema) {
    return columnarInput(immutable(schema));
  }

  @Override
  public final RDD<CachedBatch> convertInternalRowToCachedBatch(RDD<InternalRow> input, Seq<Attribute> schema,
      StorageLevel storageLevel, SQLConf conf) {
    return rowsToCache(input, immutable(schema), storageLevel, conf);
  }

  @Override
  public final RDD<CachedBatch> convertColumnarBatchToCachedBatch(RDD<ColumnarBatch> input, Seq<Attribute> schema,
      StorageLevel storageLevel, SQLConf conf) {
    return batchesToCache(input, immutable(schema), storageLevel, conf);
  }

  @Override
  public final Function2<Object, Iterator<CachedBatch>, Iterator<CachedBatch>> buildFilter(
      Seq<Expression> predicates, Seq<Attribute> cachedAttributes) {
    return filter(immutable(predicates), immutable(cachedAttributes));
  }

  @Override
  @SuppressWarnings("unchecked")
  public final Option<Seq<String>> vectorTypes(Seq<Attribute> attributes, SQLConf conf) {
    return (Option<Seq<String>>) vectorClasses(immutable(attributes), conf);
  }

  @Override
  public final RDD<ColumnarBatch> convertCachedBatchToColumnarBatch(RDD<CachedBatch> input,
      Seq<Attribute> cacheAttributes, Seq<Attribute> selectedAttributes, SQLConf conf) {
    return cacheToBatches(input, immutable(cacheAttributes), immutable(selectedAttributes), conf);
  }

  @Override
  public final RDD<InternalRow> convertCachedBatchToInternalRow(RDD<CachedBatch> input, Seq<Attribute> cacheAttributes,
      Seq<Attribute> selectedAttributes, SQLConf conf) {
    return cacheToRows(input, immutable(cacheAttributes), immutable(selectedAttributes), conf);
  }

  private static <T> scala.collection.immutable.Seq<T> immutable(Seq<T> seq) {
    return seq instanceof scala.collection.immutable.Seq<T> s ? s : seq.toList();
  }
}
