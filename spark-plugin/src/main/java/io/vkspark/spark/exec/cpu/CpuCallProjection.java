package io.vkspark.spark.exec.cpu;

import io.vkspark.spark.shim.Scala;

import io.vkspark.gpu.column.SqlType;
import io.vkspark.spark.exec.call.GpuUdfCall;
import java.util.List;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.MutableProjection;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * One call's CPU path as Spark evaluates a UDF in its own plans: the bound call (inside
 * {@code If(guard, call, null)} when guarded) compiled by Spark's code generation into a
 * {@link MutableProjection}, so the CPU path is as fast as Spark running the Java UDF itself
 * (interpreted {@code eval} was several times slower). Spark's factory falls back to the
 * interpreted projection where code generation fails. The result row has primitive slots and the
 * values go into the Arrow vector by type, so no value is boxed on the way out. A null argument of
 * a null-strict call gives null before the guard or {@code call()} runs, as before. One per call
 * per task (code generation costs milliseconds; Spark caches the generated class).
 */
final class CpuCallProjection {
  private final MutableProjection projection;
  private final SqlType type;
  private final int[] args;
  private final boolean strict;
  private final ColumnVector[] argColumns;

  private CpuCallProjection(MutableProjection projection, SqlType type, int[] args, boolean strict) {
    this.projection = projection;
    this.type = type;
    this.args = args;
    this.strict = strict;
    this.argColumns = new ColumnVector[args.length];
  }

  /** Call {@code c}'s projection; {@code strict}: a null argument gives null without {@code call()}. */
  static CpuCallProjection of(GpuUdfCall c, boolean strict) {
    DataType dt = c.boundCpu().dataType();
    Expression e = c.guard() == null ? c.boundCpu() : new If(c.guard(), c.boundCpu(), Literal.create(null, dt));
    MutableProjection p = MutableProjection.create(Scala.seq(List.of(e)));
    p.target(new SpecificInternalRow(Scala.seq(List.of(dt))));
    TaskContext task = TaskContext.get();
    p.initialize(task == null ? 0 : task.partitionId());
    // the columns whose nulls give a null result (a constant argument, -1, is never null)
    return new CpuCallProjection(p, c.resultType(), c.argOrdinals().stream().mapToInt(Integer::intValue).filter(o -> o >= 0).toArray(),
        strict);
  }

  /** The call over {@code rows} rows of {@code in} into {@code out}, allocated for {@code rows} values. */
  void run(ColumnarBatch in, int rows, FieldVector out) {
    boolean checkNulls = false;
    if (strict) {
      for (int a = 0; a < args.length; a++) {
        argColumns[a] = in.column(args[a]);
        checkNulls |= argColumns[a].hasNull();
      }
    }
    switch (type) {
      case DOUBLE -> {
        Float8Vector v = (Float8Vector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            v.set(r, x.getDouble(0));
          }
        }
      }
      case FLOAT -> {
        Float4Vector v = (Float4Vector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            v.set(r, x.getFloat(0));
          }
        }
      }
      case INT -> {
        IntVector v = (IntVector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            v.set(r, x.getInt(0));
          }
        }
      }
      case BIGINT -> {
        BigIntVector v = (BigIntVector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            v.set(r, x.getLong(0));
          }
        }
      }
      case BOOLEAN -> {
        BitVector v = (BitVector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            v.set(r, x.getBoolean(0) ? 1 : 0);
          }
        }
      }
      case DATE -> {
        DateDayVector v = (DateDayVector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            v.set(r, x.getInt(0));
          }
        }
      }
      case TIMESTAMP -> {
        TimeStampVector v = (TimeStampVector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            v.set(r, x.getLong(0));
          }
        }
      }
      case TINYINT -> {
        TinyIntVector v = (TinyIntVector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            v.set(r, x.getByte(0));
          }
        }
      }
      case SMALLINT -> {
        SmallIntVector v = (SmallIntVector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            v.set(r, x.getShort(0));
          }
        }
      }
      case STRING, BINARY -> {
        BaseVariableWidthVector v = (BaseVariableWidthVector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            byte[] b = type == SqlType.STRING ? x.getUTF8String(0).getBytes() : x.getBinary(0);
            v.setSafe(r, b, 0, b.length);
          }
        }
      }
      case ARRAY_FLOAT, ARRAY_DOUBLE, ARRAY_INT -> throw new IllegalStateException(type.sqlName() + " is not a result type");
      case DECIMAL -> {
        DecimalVector v = (DecimalVector) out;
        for (int r = 0; r < rows; r++) {
          InternalRow x = eval(in, r, checkNulls);
          if (x == null) {
            v.setNull(r);
          } else {
            v.set(r, x.getDecimal(0, v.getPrecision(), v.getScale()).toUnscaledLong());
          }
        }
      }
    }
  }

  /**
   * The projection's row for row {@code r} of {@code in} alone (a row a kernel handed back; its
   * arguments are not null), or null where the result is null. Valid until the next evaluation.
   */
  InternalRow row(ColumnarBatch in, int r) {
    return eval(in, r, false);
  }

  /** Sets row {@code r} of the fixed-width {@code out} to {@code x}'s value (null when {@code x} is null). */
  void set(FieldVector out, int r, InternalRow x) {
    if (x == null) {
      out.setNull(r);
      return;
    }
    switch (type) {
      case DOUBLE -> ((Float8Vector) out).set(r, x.getDouble(0));
      case FLOAT -> ((Float4Vector) out).set(r, x.getFloat(0));
      case INT -> ((IntVector) out).set(r, x.getInt(0));
      case DATE -> ((DateDayVector) out).set(r, x.getInt(0));
      case BIGINT -> ((BigIntVector) out).set(r, x.getLong(0));
      case TIMESTAMP -> ((TimeStampVector) out).set(r, x.getLong(0));
      case BOOLEAN -> ((BitVector) out).set(r, x.getBoolean(0) ? 1 : 0);
      case TINYINT -> ((TinyIntVector) out).set(r, x.getByte(0));
      case SMALLINT -> ((SmallIntVector) out).set(r, x.getShort(0));
      case DECIMAL -> {
        DecimalVector v = (DecimalVector) out;
        v.set(r, x.getDecimal(0, v.getPrecision(), v.getScale()).toUnscaledLong());
      }
      default -> throw new IllegalStateException(type.sqlName() + " is not a fixed-width result");
    }
  }

  /** The projection's row for row {@code r}, or null where the result is null. */
  private InternalRow eval(ColumnarBatch in, int r, boolean checkNulls) {
    if (checkNulls) {
      for (ColumnVector a : argColumns) {
        if (a.isNullAt(r)) {
          return null;
        }
      }
    }
    InternalRow x = projection.apply(in.getRow(r));
    return x.isNullAt(0) ? null : x;
  }
}
