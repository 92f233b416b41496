package io.vkspark.spark.exec;

import io.vkspark.spark.exec.call.NodeMetrics;
import io.vkspark.spark.exec.call.VkMetric;
import io.vkspark.spark.exec.input.BatchCoalescer;
import java.util.Iterator;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The gather side of a GPU node's task: its child's batches, one at a time or, with
 * {@code spark.vkspark.coalesce}, several consecutive small ones gathered into one so that one GPU
 * dispatch serves them all: copied into the coalescer's host vectors ({@link BatchCoalescer}), or,
 * on the {@link BatchRoute.GpuAppend} route, appended straight into the runner's GPU input buffers.
 * Apart from the iterator so that routing and running read on their own.
 */
final class ChildBatches implements AutoCloseable {
  private final Iterator<ColumnarBatch> input;
  /** Stages small child batches (null: every child batch is evaluated as it comes). */
  private final BatchCoalescer coalescer;
  private final GpuBatchStep gpu;
  private final NodeMetrics metrics;
  private final int batchRows;
  /** A child batch pulled but not yet evaluated (it did not fit the coalesced batch); valid until the child advances. */
  private ColumnarBatch pending;

  ChildBatches(Iterator<ColumnarBatch> input, BatchCoalescer coalescer, GpuBatchStep gpu, NodeMetrics metrics,
               int batchRows) {
    this.input = input;
    this.coalescer = coalescer;
    this.gpu = gpu;
    this.metrics = metrics;
    this.batchRows = batchRows;
  }

  boolean hasNext() {
    // With a batch pending, the child must not be asked: a file reader's hasNext() overwrites its vectors.
    return pending != null || input.hasNext();
  }

  /** The next child batch, the first of the next gathered batch: the previous gathered batch has been consumed. */
  ColumnarBatch first() {
    if (coalescer != null) {
      coalescer.reset();
    }
    return pull();
  }

  /** Whether {@code first} is small enough to be gathered with the next child batches. */
  boolean small(ColumnarBatch first) {
    return coalescer != null && coalescer.fits(first);
  }

  /**
   * {@code first} and the next small child batches gathered: the coalesced batch, or, {@code direct},
   * an empty batch (no rows) whose reduction dispatches the rows appended to the runner. The time
   * spent reading the child goes to {@code timing} (no part of either path's cost).
   */
  ColumnarBatch gather(ColumnarBatch first, boolean direct, AdaptiveStep.Batch timing) {
    stage(first, direct); // copied before the child is asked for more
    long childNanos = 0;
    while (coalescer.rows() < batchRows) {
      long t0 = timing == null ? 0 : System.nanoTime();
      ColumnarBatch b = input.hasNext() ? pull() : null;
      if (timing != null) {
        childNanos += System.nanoTime() - t0;
      }
      if (b == null) {
        break;
      }
      if (!coalescer.fits(b)) {
        pending = b; // evaluated by the next call, before the child advances
        break;
      }
      stage(b, direct);
    }
    if (timing != null) {
      timing.childTime(childNanos);
      timing.rows(coalescer.rows());
    }
    return direct ? new ColumnarBatch(columnsOf(first), 0) : coalescer.batch();
  }

  /** {@code b}'s rows into the GPU's input buffers ({@code direct}) or the coalescer's host vectors. */
  private void stage(ColumnarBatch b, boolean direct) {
    if (direct) {
      gpu.append(b);
      coalescer.admit(b);
    } else {
      metrics.add(VkMetric.STAGED_BYTES, coalescer.add(b));
    }
  }

  private ColumnarBatch pull() {
    ColumnarBatch b = pending;
    pending = null;
    if (b == null) {
      b = input.next();
      metrics.add(VkMetric.INPUT_BATCHES, 1);
    }
    return b;
  }

  /** The first {@code rows} rows of {@code b}, in place. */
  static ColumnarBatch prefix(ColumnarBatch b, int rows) {
    return new ColumnarBatch(columnsOf(b), rows);
  }

  private static ColumnVector[] columnsOf(ColumnarBatch b) {
    ColumnVector[] out = new ColumnVector[b.numCols()];
    for (int c = 0; c < out.length; c++) {
      out[c] = b.column(c);
    }
    return out;
  }

  @Override
  public void close() {
    if (coalescer != null) {
      coalescer.close();
    }
  }
}
