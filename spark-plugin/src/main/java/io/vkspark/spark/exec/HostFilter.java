package io.vkspark.spark.exec;

import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Predicate$;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A filter a fused aggregate absorbed (its condition over the GPU node's child's columns), evaluated
 * on the host for a batch that is not reduced on the GPU (the task folds on the host, its keys are
 * too wide, a row is recomputed with {@code call()}): the rows Spark's {@code Filter} would keep,
 * chosen with Spark's own predicate (generated code, or interpreted), before any call runs on them.
 * The batch is not copied: its columns are read through the kept rows' indices. One per task.
 */
final class HostFilter {
  private final BasePredicate predicate;

  private HostFilter(Expression condition) {
    this.predicate = Predicate$.MODULE$.create(condition);
    TaskContext task = TaskContext.get();
    predicate.initialize(task == null ? 0 : task.partitionId());
  }

  /** The filter of {@code condition} (bound to the batch's columns), or null for none. */
  static HostFilter of(Expression condition) {
    return condition == null ? null : new HostFilter(condition);
  }

  /** The rows of {@code in} the condition keeps (true, not false nor null); {@code in} itself when it keeps all. */
  ColumnarBatch apply(ColumnarBatch in) {
    int rows = in.numRows();
    int[] kept = new int[rows];
    int n = 0;
    for (int r = 0; r < rows; r++) {
      if (predicate.eval(in.getRow(r))) {
        kept[n++] = r;
      }
    }
    if (n == rows) {
      return in;
    }
    ColumnVector[] columns = new ColumnVector[in.numCols()];
    for (int c = 0; c < columns.length; c++) {
      columns[c] = new Selected(in.column(c), kept, n);
    }
    return new ColumnarBatch(columns, n);
  }

  /** Rows {@code rows[0..n)} of {@code v}, as a column of {@code n} rows. */
  private static final class Selected extends ColumnVector {
    private final ColumnVector v;
    private final int[] rows;
    private final int n;
    private int nulls = -1;

    Selected(ColumnVector v, int[] rows, int n) {
      super(v.dataType());
      this.v = v;
      this.rows = rows;
      this.n = n;
    }

    @Override
    public void close() {} // the child's column: its owner closes it

    @Override
    public boolean hasNull() {
      return v.hasNull() && numNulls() > 0;
    }

    @Override
    public int numNulls() {
      if (nulls < 0) {
        int k = 0;
        for (int i = 0; v.hasNull() && i < n; i++) {
          k += v.isNullAt(rows[i]) ? 1 : 0;
        }
        nulls = k;
      }
      return nulls;
    }

    @Override
    public boolean isNullAt(int rowId) {
      return v.isNullAt(rows[rowId]);
    }

    @Override
    public boolean getBoolean(int rowId) {
      return v.getBoolean(rows[rowId]);
    }

    @Override
    public byte getByte(int rowId) {
      return v.getByte(rows[rowId]);
    }

    @Override
    public short getShort(int rowId) {
      return v.getShort(rows[rowId]);
    }

    @Override
    public int getInt(int rowId) {
      return v.getInt(rows[rowId]);
    }

    @Override
    public long getLong(int rowId) {
      return v.getLong(rows[rowId]);
    }

    @Override
    public float getFloat(int rowId) {
      return v.getFloat(rows[rowId]);
    }

    @Override
    public double getDouble(int rowId) {
      return v.getDouble(rows[rowId]);
    }

    @Override
    public ColumnarArray getArray(int rowId) {
      return v.getArray(rows[rowId]);
    }

    @Override
    public ColumnarMap getMap(int ordinal) {
      return v.getMap(rows[ordinal]);
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
      return v.getDecimal(rows[rowId], precision, scale);
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
      return v.getUTF8String(rows[rowId]);
    }

    @Override
    public byte[] getBinary(int rowId) {
      return v.getBinary(rows[rowId]);
    }

    @Override
    public ColumnVector getChild(int ordinal) {
      throw new UnsupportedOperationException("a filtered column of structs is not read by the fused aggregate");
    }
  }
}
