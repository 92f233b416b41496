package io.vkspark.spark.exec.input;

import java.util.Iterator;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.RowToColumnConverter;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.TaskCompletionListener;

/**
 * One partition's rows as column batches of at most {@code maxRows} rows and {@code maxBytes}
 * bytes ({@code VkRowToColumnarExec}). The vectors are reused from batch to batch, as Spark's
 * are, so they grow to about the byte bound at most (twice it where a vector doubles). The row
 * that would pass the bound is held, not copied, and starts the next batch: the row iterator is
 * not asked for more until then, so the row stays valid. A row wider than the bound alone is a
 * batch of its own, read in place.
 */
public final class BoundedRowBatches implements Iterator<ColumnarBatch> {
  private final Iterator<InternalRow> rows;
  private final StructType schema;
  private final int maxRows;
  private final long maxBytes;
  private final boolean offHeap;
  private final SQLMetric inputRows;
  private final SQLMetric outputBatches;
  private final SQLMetric wideRows;
  private final RowToColumnConverter converter;
  private WritableColumnVector[] vectors;
  private ColumnarBatch batch;
  private InternalRow held;
  private long heldBytes;

  public BoundedRowBatches(Iterator<InternalRow> rows, StructType schema, int maxRows, long maxBytes, boolean offHeap,
                    SQLMetric inputRows, SQLMetric outputBatches, SQLMetric wideRows) {
    this.rows = rows;
    this.schema = schema;
    this.maxRows = maxRows;
    this.maxBytes = maxBytes;
    this.offHeap = offHeap;
    this.inputRows = inputRows;
    this.outputBatches = outputBatches;
    this.wideRows = wideRows;
    this.converter = new RowToColumnConverter(schema);
    TaskContext task = TaskContext.get();
    if (task != null) {
      task.addTaskCompletionListener((TaskCompletionListener) ctx -> close());
    }
  }

  @Override
  public boolean hasNext() {
    return held != null || rows.hasNext();
  }

  @Override
  public ColumnarBatch next() {
    InternalRow first = held != null ? held : rows.next();
    long bytes = held != null ? heldBytes : RowBytes.of(first, schema);
    held = null;
    outputBatches.add(1);
    inputRows.add(1);
    if (bytes > maxBytes) {
      wideRows.add(1);
      return RowColumn.batchOf(first, schema);
    }
    ColumnarBatch out = vectors();
    converter.convert(first, vectors);
    int n = 1;
    while (n < maxRows && rows.hasNext()) {
      InternalRow r = rows.next();
      long b = RowBytes.of(r, schema);
      if (bytes + b > maxBytes) {
        held = r;
        heldBytes = b;
        break;
      }
      converter.convert(r, vectors);
      bytes += b;
      n++;
    }
    inputRows.add(n - 1);
    out.setNumRows(n);
    return out;
  }

  /** The reused vectors, emptied (made on the first batch). */
  private ColumnarBatch vectors() {
    if (vectors == null) {
      vectors = offHeap ? OffHeapColumnVector.allocateColumns(maxRows, schema)
          : OnHeapColumnVector.allocateColumns(maxRows, schema);
      batch = new ColumnarBatch(vectors);
    }
    for (WritableColumnVector v : vectors) {
      v.reset();
    }
    return batch;
  }

  private void close() {
    if (batch != null) {
      batch.close();
      batch = null;
    }
    held = null;
  }
}
