package io.vkspark.spark.cache;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.columnar.CachedBatch;
import org.apache.spark.sql.columnar.CachedBatchSerializer;
import org.apache.spark.sql.execution.columnar.DefaultCachedBatchSerializer;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.storage.StorageLevel;
import scala.Option;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;

/**
 * Scala 2.13 shim of {@link VkCacheSerializer}: the CachedBatchSerializer overrides, whose
 * signatures name Scala's {@code Seq} ({@code immutable.Seq} here, {@code collection.Seq} on 2.12).
 * Each sends a schema the vkspark cache does not store to Spark's default serializer and everything
 * else to the version-free methods of the subclass.
 */
public abstract class CacheSerializerShim implements CachedBatchSerializer {
  private static final long serialVersionUID = 1L;
  final DefaultCachedBatchSerializer fallback = new DefaultCachedBatchSerializer();

  abstract boolean stores(scala.collection.Seq<Attribute> attributes);

  abstract RDD<CachedBatch> fromRows(RDD<InternalRow> input, scala.collection.Seq<Attribute> schema, SQLConf conf);

  abstract RDD<CachedBatch> fromBatches(RDD<ColumnarBatch> input, scala.collection.Seq<Attribute> schema, SQLConf conf);

  abstract scala.Function2<Object, Iterator<CachedBatch>, Iterator<CachedBatch>> everyBatch();

  abstract RDD<ColumnarBatch> toBatches(RDD<CachedBatch> input, scala.collection.Seq<Attribute> cached,
      scala.collection.Seq<Attribute> selected);

  abstract RDD<InternalRow> toRows(RDD<CachedBatch> input, scala.collection.Seq<Attribute> cached,
      scala.collection.Seq<Attribute> selected);

  @Override
  public boolean supportsColumnarInput(Seq<Attribute> schema) {
    return stores(schema);
  }

  @Override
  public RDD<CachedBatch> convertInternalRowToCachedBatch(RDD<InternalRow> input, Seq<Attribute> schema,
      StorageLevel storageLevel, SQLConf conf) {
    return stores(schema) ? fromRows(input, schema, conf)
        : fallback.convertInternalRowToCachedBatch(input, schema, storageLevel, conf);
  }

  @Override
  public RDD<CachedBatch> convertColumnarBatchToCachedBatch(RDD<ColumnarBatch> input, Seq<Attribute> schema,
      StorageLevel storageLevel, SQLConf conf) {
    return stores(schema) ? fromBatches(input, schema, conf)
        : fallback.convertColumnarBatchToCachedBatch(input, schema, storageLevel, conf);
  }

  @Override
  public scala.Function2<Object, Iterator<CachedBatch>, Iterator<CachedBatch>> buildFilter(Seq<Expression> predicates,
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
  public Option<Seq<String>> vectorTypes(Seq<Attribute> attributes, SQLConf conf) {
    if (!stores(attributes)) {
      return fallback.vectorTypes(attributes, conf);
    }
    scala.collection.mutable.ArrayBuffer<String> classes = new scala.collection.mutable.ArrayBuffer<>();
    attributes.foreach(a -> classes.$plus$eq(CachedColumn.class.getName()));
    return Option.<Seq<String>>apply(classes.toList());
  }

  @Override
  public RDD<ColumnarBatch> convertCachedBatchToColumnarBatch(RDD<CachedBatch> input, Seq<Attribute> cacheAttributes,
      Seq<Attribute> selectedAttributes, SQLConf conf) {
    return stores(cacheAttributes) ? toBatches(input, cacheAttributes, selectedAttributes)
        : fallback.convertCachedBatchToColumnarBatch(input, cacheAttributes, selectedAttributes, conf);
  }

  @Override
  public RDD<InternalRow> convertCachedBatchToInternalRow(RDD<CachedBatch> input, Seq<Attribute> cacheAttributes,
      Seq<Attribute> selectedAttributes, SQLConf conf) {
    return stores(cacheAttributes) ? toRows(input, cacheAttributes, selectedAttributes)
        : fallback.convertCachedBatchToInternalRow(input, cacheAttributes, selectedAttributes, conf);
  }
}
