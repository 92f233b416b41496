package io.vkspark.spark.cache;

import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.shim.Partitions;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.columnar.CachedBatch;
import org.apache.spark.sql.execution.columnar.DefaultCachedBatchSerializer;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.TaskCompletionListener;
import scala.Function2;
import scala.collection.Seq;
import scala.runtime.AbstractFunction2;

/**
 * vkspark's table cache ({@code spark.sql.cache.serializer=io.vkspark.spark.cache.VkCacheSerializer}):
 * cached batches stay uncompressed in Arrow layout in native memory ({@link ArrowCachedBatch}), and
 * scans read them in place ({@link CachedColumn}) - no decompression, no copy - so a GPU UDF's
 * upload copies each column with one memcpy straight from the cache, and CPU queries skip Spark's
 * decompression.
 *
 * <p>Schemas of ints, bigints, floats, doubles, booleans, dates, timestamps and strings are cached
 * this way; any other schema is cached by Spark's {@link DefaultCachedBatchSerializer}, per relation,
 * so every query over any cached table keeps working ({@link CacheSerializerShim} routes them; it
 * holds the overrides whose signatures differ between Scala 2.12 and 2.13). Batch skipping by
 * statistics is not done: {@code buildFilter} passes every batch on (Spark's filter still drops the rows).
 */
public final class VkCacheSerializer extends CacheSerializerShim {
  private static final long serialVersionUID = 1L;

  /** The column layouts of {@code schema}, or empty when a column's type is not cached columnar here. */
  static Optional<CachedType[]> layout(List<DataType> schema) {
    CachedType[] out = new CachedType[schema.size()];
    for (int c = 0; c < out.length; c++) {
      Optional<CachedType> t = CachedType.of(schema.get(c));
      if (t.isEmpty()) {
        return Optional.empty();
      }
      out[c] = t.get();
    }
    return Optional.of(out);
  }

  private static Optional<CachedType[]> layout(Seq<Attribute> attributes) {
    return layout(types(attributes));
  }

  private static List<DataType> types(Seq<Attribute> attributes) {
    List<DataType> out = new ArrayList<>();
    attributes.foreach(a -> out.add(a.dataType()));
    return out;
  }

  private static List<Attribute> list(Seq<Attribute> attributes) {
    List<Attribute> out = new ArrayList<>();
    attributes.foreach(out::add);
    return out;
  }

  @Override
  boolean stores(Seq<Attribute> attributes) {
    return layout(attributes).isPresent();
  }

  @Override
  RDD<CachedBatch> fromRows(RDD<InternalRow> input, Seq<Attribute> schema, SQLConf conf) {
    CachedType[] types = layout(schema).orElseThrow();
    BatchSize size = BatchSize.of(conf);
    Partitions.Function<InternalRow, CachedBatch> build = rows -> new Batches<>(rows, types, size,
        (builder, it) -> {
          while (!builder.full() && it.hasNext()) {
            builder.add(it.next());
          }
        });
    return Partitions.map(input, build);
  }

  @Override
  RDD<CachedBatch> fromBatches(RDD<ColumnarBatch> input, Seq<Attribute> schema, SQLConf conf) {
    CachedType[] types = layout(schema).orElseThrow();
    BatchSize size = BatchSize.of(conf);
    Partitions.Function<ColumnarBatch, CachedBatch> build = batches -> new Batches<>(batches, types, size,
        new ColumnarFill());
    return Partitions.map(input, build);
  }

  @Override
  Function2<Object, scala.collection.Iterator<CachedBatch>, scala.collection.Iterator<CachedBatch>> everyBatch() {
    return new EveryBatch();
  }

  /**
   * Column batches for relations this cache stores (unless {@link Settings#CACHE_COLUMNAR_OUTPUT} is off); rows for
   * the relations of the fallback, so that every column batch a cache scan hands out is made of
   * {@link CachedColumn}s, the class {@code vectorTypes} names for ColumnarToRow's generated code
   * (which cannot tell the relations apart by their selected columns alone). Spark's scans read the
   * fallback's relations as rows under row-based parents anyway.
   */
  @Override
  public boolean supportsColumnarOutput(StructType schema) {
    List<DataType> types = new ArrayList<>();
    for (StructField f : schema.fields()) {
      types.add(f.dataType());
    }
    return layout(types).isPresent() && Settings.CACHE_COLUMNAR_OUTPUT.get(k -> CatalystCalls.sessionConf(k, null));
  }

  @Override
  RDD<ColumnarBatch> toBatches(RDD<CachedBatch> input, Seq<Attribute> cacheAttributes,
      Seq<Attribute> selectedAttributes) {
    int[] select = select(cacheAttributes, selectedAttributes);
    DataType[] sparkTypes = types(selectedAttributes).toArray(DataType[]::new);
    Partitions.Function<CachedBatch, ColumnarBatch> read =
        batches -> new Reading<>(batches, b -> List.of(b.view(select, sparkTypes)).iterator());
    return Partitions.map(input, read);
  }

  @Override
  RDD<InternalRow> toRows(RDD<CachedBatch> input, Seq<Attribute> cacheAttributes,
      Seq<Attribute> selectedAttributes) {
    int[] select = select(cacheAttributes, selectedAttributes);
    Partitions.Function<CachedBatch, InternalRow> read = batches -> {
      var writer = CatalystCalls.rowWriter(select.length);
      return new Reading<>(batches, b -> new CachedRows(b, select, writer));
    };
    return Partitions.map(input, read);
  }

  /** The index in the cached columns of each selected attribute. */
  private static int[] select(Seq<Attribute> cached, Seq<Attribute> selected) {
    List<Attribute> all = list(cached);
    List<Attribute> want = list(selected);
    int[] out = new int[want.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = -1;
      for (int c = 0; c < all.size(); c++) {
        if (all.get(c).exprId().equals(want.get(i).exprId())) {
          out[i] = c;
          break;
        }
      }
      if (out[i] < 0) {
        throw new IllegalStateException("attribute " + want.get(i) + " is not one of the cached columns " + all);
      }
    }
    return out;
  }

  /** Runs {@code close} when the running task ends (success, failure or kill), if there is a task. */
  private static void onTaskEnd(Runnable close) {
    TaskContext task = TaskContext.get();
    if (task != null) {
      task.addTaskCompletionListener((TaskCompletionListener) t -> close.run());
    }
  }

  /**
   * Rows and bytes per cached batch: where the session or the application sets
   * {@code spark.sql.inMemoryColumnarStorage.batchSize}, that many rows, as in Spark's own cache;
   * where neither does, one GPU dispatch's worth, {@code spark.vkspark.batchRows} rows within
   * {@code spark.vkspark.batchBytes}. Why: a fused aggregate grouped by a key reduces each cached
   * batch in a dispatch of its own, and Spark's default of 10,000 rows made 5,000 dispatches of 50 M
   * rows, each with its fixed cost on the GPU (about 0.1 ms on an H200).
   */
  record BatchSize(int rows, long bytes) implements Serializable {
    static BatchSize of(SQLConf conf) {
      OptionalInt set = CatalystCalls.batchSizeSet(conf);
      if (set.isPresent()) {
        return new BatchSize(set.getAsInt(), Long.MAX_VALUE);
      }
      Function<String, String> lookup = k -> conf.getConfString(k, null);
      return new BatchSize(Settings.BATCH_ROWS.get(lookup), Settings.BATCH_BYTES.get(lookup));
    }
  }

  /** Moves some input into a builder until it is full or the input ends. */
  private interface Fill<T> extends Serializable {
    void fill(BatchBuilder builder, Iterator<T> input);
  }

  /** Column batches in slices that fit the cached batch being built (Spark's readers reuse their batches). */
  private static final class ColumnarFill implements Fill<ColumnarBatch> {
    private transient ColumnarBatch current;
    private transient int done;

    @Override
    public void fill(BatchBuilder builder, Iterator<ColumnarBatch> input) {
      while (!builder.full()) {
        if (current == null || done >= current.numRows()) {
          if (!input.hasNext()) {
            return;
          }
          current = input.next();
          done = 0;
          continue;
        }
        int n = Math.min(builder.room(), current.numRows() - done);
        ColumnVector[] columns = new ColumnVector[current.numCols()];
        for (int c = 0; c < columns.length; c++) {
          columns[c] = current.column(c);
        }
        builder.add(columns, done, n);
        done += n;
      }
    }
  }

  /** A partition's cached batches, built as they are pulled; the builder's scratch is freed at the end. */
  private static final class Batches<T> implements Iterator<CachedBatch> {
    private final Iterator<T> input;
    private final Fill<T> fill;
    private BatchBuilder builder;
    private ArrowCachedBatch next;

    Batches(Iterator<T> input, CachedType[] types, BatchSize size, Fill<T> fill) {
      this.input = input;
      this.fill = fill;
      this.builder = new BatchBuilder(types, size.rows(), size.bytes());
      onTaskEnd(this::close);
    }

    @Override
    public boolean hasNext() {
      if (next == null && builder != null) {
        fill.fill(builder, input);
        if (builder.rows() > 0) {
          next = builder.build();
        } else {
          close();
        }
      }
      return next != null;
    }

    @Override
    public CachedBatch next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      CachedBatch out = next;
      next = null;
      return out;
    }

    private void close() {
      if (builder != null) {
        builder.close();
        builder = null;
      }
    }
  }

  /** Turns one retained cached batch into output; the batch stays retained until the next one or the task's end. */
  private interface Expand<R> {
    Iterator<R> of(ArrowCachedBatch batch);
  }

  /**
   * Reads a partition's cached batches. Each batch is retained while its output is consumed, so an
   * unpersist or eviction in the middle of a scan frees the memory only after the scan moves on.
   */
  private static final class Reading<R> implements Iterator<R> {
    private final Iterator<CachedBatch> batches;
    private final Expand<R> expand;
    private ArrowCachedBatch held;
    private Iterator<R> current = Collections.emptyIterator();

    Reading(Iterator<CachedBatch> batches, Expand<R> expand) {
      this.batches = batches;
      this.expand = expand;
      onTaskEnd(this::letGo);
    }

    @Override
    public boolean hasNext() {
      while (!current.hasNext()) {
        if (!batches.hasNext()) {
          return false;
        }
        ArrowCachedBatch b = (ArrowCachedBatch) batches.next();
        b.retain();
        letGo();
        held = b;
        current = expand.of(b);
      }
      return true;
    }

    @Override
    public R next() {
      if (!current.hasNext() && !hasNext()) {
        throw new NoSuchElementException();
      }
      return current.next();
    }

    private void letGo() {
      if (held != null) {
        held.release();
        held = null;
      }
    }
  }

  /** The pass-through batch filter. */
  private static final class EveryBatch
      extends AbstractFunction2<Object, scala.collection.Iterator<CachedBatch>, scala.collection.Iterator<CachedBatch>>
      implements Serializable {
    private static final long serialVersionUID = 1L;

    @Override
    public scala.collection.Iterator<CachedBatch> apply(Object partition, scala.collection.Iterator<CachedBatch> batches) {
      return batches;
    }
  }
}
