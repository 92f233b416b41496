package io.vkspark.spark.cache;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.columnar.CachedBatch;
import org.apache.spark.sql.execution.columnar.DefaultCachedBatchSerializer;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.storage.StorageLevel;
import scala.Function2;
import scala.Option;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.collection.mutable.ArrayBuffer;

/**
 * The routing half of {@link VkCacheSerializer}: each CachedBatchSerializer call for a schema the
 * vkspark cache does not store goes to Spark's default serializer, everything else to the
 * version-free methods of the subclass. Written once on {@code immutable.Seq}, which both Scala
 * versions' Spark accepts; {@link ScalaSeqSerializer} (one per Scala version) holds the overrides
 * whose signatures name Scala's default {@code Seq}.
 */
public abstract class CacheSerializerShim extends ScalaSeqSerializer {
  private static final long serialVersionUID = 1L;
  final DefaultCachedBatchSerializer fallback = new DefaultCachedBatchSerializer();

  abstract boolean stores(scala.collection.Seq<Attribute> attributes);

  abstract RDD<CachedBatch> fromRows(RDD<InternalRow> input, scala.collection.Seq<Attribute> schema, SQLConf conf);

  abstract RDD<CachedBatch> fromBatches(RDD<ColumnarBatch> input, scala.collection.Seq<Attribute> schema, SQLConf conf);

  abstract Function2<Object, Iterator<CachedBatch>, Iterator<CachedBatch>> everyBatch();

  abstract RDD<ColumnarBatch> toBatches(RDD<CachedBatch> input, scala.collection.Seq<Attribute> cached,
      scala.collection.Seq<Attribute> selected);

  abstract RDD<InternalRow> toRows(RDD<CachedBatch> input, scala.collection.Seq<Attribute> cached,
      scala.collection.Seq<Attribute> selected);

  @Override
  final boolean columnarInput(Seq<Attribute> schema) {
    return stores(schema);
  }

  @Override
  final RDD<CachedBatch> rowsToCache(RDD<InternalRow> input, Seq<Attribute> schema, StorageLevel storageLevel,
      SQLConf conf) {
    return stores(schema) ? fromRows(input, schema, conf)
        : fallback.convertInternalRowToCachedBatch(input, schema, storageLevel, conf);
  }

  @Override
  final RDD<CachedBatch> batchesToCache(RDD<ColumnarBatch> input, Seq<Attribute> schema, StorageLevel storageLevel,
      SQLConf conf) {
    return stores(schema) ? fromBatches(input, schema, conf)
        : fallback.convertColumnarBatchToCachedBatch(input, schema, storageLevel, conf);
  }

  @Override
  final Function2<Object, Iterator<CachedBatch>, Iterator<CachedBatch>> filter(Seq<Expression> predicates,
      Seq<Attribute> cachedAttributes) {
    return stores(cachedAttributes) ? everyBatch() : fallback.buildFilter(predicates, cachedAttributes);
  }

  /**
   * The vector class of each selected column, for ColumnarToRow's generated code: {@link CachedColumn}
   * (final) for columns this cache stores, so the code calls its accessors directly. From the selected
   * attributes alone a relation cached by the fallback cannot be told apart from one of ours, but
   * such relations never hand out column batches ({@link VkCacheSerializer#supportsColumnarOutput}),
   * so the classes named here are only ever read for our batches.
   */
  @Override
  final Option<? extends scala.collection.Seq<String>> vectorClasses(Seq<Attribute> attributes, SQLConf conf) {
    if (!stores(attributes)) {
      return fallback.vectorTypes(attributes, conf);
    }
    ArrayBuffer<String> classes = new ArrayBuffer<>();
    attributes.foreach(a -> classes.$plus$eq(CachedColumn.class.getName()));
    return Option.apply(classes.toList());
  }

  @Override
  final RDD<ColumnarBatch> cacheToBatches(RDD<CachedBatch> input, Seq<Attribute> cacheAttributes,
      Seq<Attribute> selectedAttributes, SQLConf conf) {
    return stores(cacheAttributes) ? toBatches(input, cacheAttributes, selectedAttributes)
        : fallback.convertCachedBatchToColumnarBatch(input, cacheAttributes, selectedAttributes, conf);
  }

  @Override
  final RDD<InternalRow> cacheToRows(RDD<CachedBatch> input, Seq<Attribute> cacheAttributes,
      Seq<Attribute> selectedAttributes, SQLConf conf) {
    return stores(cacheAttributes) ? toRows(input, cacheAttributes, selectedAttributes)
        : fallback.convertCachedBatchToInternalRow(input, cacheAttributes, selectedAttributes, conf);
  }
}
