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
import scala.collection.immutable.Seq;

/**
 * Scala 2.13 part of {@link CacheSerializerShim}: the CachedBatchSerializer overrides, whose
 * signatures name Scala's default {@code Seq} ({@code immutable.Seq} here, {@code collection.Seq}
 * on 2.12), each handing its call to the shared class unchanged. The same methods as
 * src/shim/scala212/.../ScalaSeqSerializer.java: change both together.
 */
public abstract class ScalaSeqSerializer implements CachedBatchSerializer {
  private static final long serialVersionUID = 1L;

  abstract boolean columnarInput(Seq<Attribute> schema);

  abstract RDD<CachedBatch> rowsToCache(RDD<InternalRow> input, Seq<Attribute> schema, StorageLevel level,
      SQLConf conf);

  abstract RDD<CachedBatch> batchesToCache(RDD<ColumnarBatch> input, Seq<Attribute> schema, StorageLevel level,
      SQLConf conf);

  abstract Function2<Object, Iterator<CachedBatch>, Iterator<CachedBatch>> filter(Seq<Expression> predicates,
      Seq<Attribute> cached);

  abstract Option<? extends scala.collection.Seq<String>> vectorClasses(Seq<Attribute> attributes, SQLConf conf);

  abstract RDD<ColumnarBatch> cacheToBatches(RDD<CachedBatch> input, Seq<Attribute> cached, Seq<Attribute> selected,
      SQLConf conf);

  abstract RDD<InternalRow> cacheToRows(RDD<CachedBatch> input, Seq<Attribute> cached, Seq<Attribute> selected,
      SQLConf conf);

  @Override
  public final boolean supportsColumnarInput(Seq<Attribute> schema) {
    return columnarInput(schema);
  }

  @Override
  public final RDD<CachedBatch> convertInternalRowToCachedBatch(RDD<InternalRow> input, Seq<Attribute> schema,
      StorageLevel storageLevel, SQLConf conf) {
    return rowsToCache(input, schema, storageLevel, conf);
  }

  @Override
  public final RDD<CachedBatch> convertColumnarBatchToCachedBatch(RDD<ColumnarBatch> input, Seq<Attribute> schema,
      StorageLevel storageLevel, SQLConf conf) {
    return batchesToCache(input, schema, storageLevel, conf);
  }

  @Override
  public final Function2<Object, Iterator<CachedBatch>, Iterator<CachedBatch>> buildFilter(
      Seq<Expression> predicates, Seq<Attribute> cachedAttributes) {
    return filter(predicates, cachedAttributes);
  }

  @Override
  @SuppressWarnings("unchecked")
  public final Option<Seq<String>> vectorTypes(Seq<Attribute> attributes, SQLConf conf) {
    return (Option<Seq<String>>) vectorClasses(attributes, conf);
  }

  @Override
  public final RDD<ColumnarBatch> convertCachedBatchToColumnarBatch(RDD<CachedBatch> input,
      Seq<Attribute> cacheAttributes, Seq<Attribute> selectedAttributes, SQLConf conf) {
    return cacheToBatches(input, cacheAttributes, selectedAttributes, conf);
  }

  @Override
  public final RDD<InternalRow> convertCachedBatchToInternalRow(RDD<CachedBatch> input, Seq<Attribute> cacheAttributes,
      Seq<Attribute> selectedAttributes, SQLConf conf) {
    return cacheToRows(input, cacheAttributes, selectedAttributes, conf);
  }
}
