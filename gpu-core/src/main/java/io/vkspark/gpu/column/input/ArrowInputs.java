package io.vkspark.gpu.column.input;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.DecimalSpec;
import io.vkspark.gpu.column.SqlType;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.types.pojo.ArrowType;

/** {@link InputColumn}s over Arrow vectors: one bulk copy per buffer, validity a word at a time. */
public final class ArrowInputs {
  private ArrowInputs() {}

  /**
   * Adapts {@code vector} as a column of {@code type}, of all its rows.
   *
   * @throws GpuException INVALID_ARGUMENT when the vector's Arrow type is not the type's
   */
  public static InputColumn of(FieldVector vector, SqlType type) {
    return of(vector, type, vector.getValueCount());
  }

  /**
   * Adapts the first {@code rows} rows of {@code vector} as a column of {@code type} (a batch that
   * sees fewer rows than its vectors hold, as Spark's may); a {@link VarColumn} for a variable-width type.
   *
   * @throws GpuException INVALID_ARGUMENT when the vector's Arrow type is not the type's
   */
  public static InputColumn of(FieldVector vector, SqlType type, int rows) {
    if (type.isVariableWidth()) {
      return ArrowVarInputs.of(vector, type, rows);
    }
    if (type == SqlType.DECIMAL) {
      if (vector instanceof DecimalVector d && d.getPrecision() <= DecimalSpec.MAX_PRECISION) {
        return new Decimals(d, rows);
      }
      throw GpuException.of(Code.INVALID_ARGUMENT, "Arrow vector '" + vector.getName() + "' has type "
          + vector.getField().getType() + " but the GPU UDF argument is a decimal of at most "
          + DecimalSpec.MAX_PRECISION + " digits (Arrow Decimal128).",
          "pass a DecimalVector of precision 18 or less, or cast the column in SQL.");
    }
    if (!(vector instanceof BaseFixedWidthVector fixed) || !sameLayout(vector.getField().getType(), type.arrowType())) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "Arrow vector '" + vector.getName() + "' has type "
          + vector.getField().getType() + " but the GPU UDF argument is " + type.sqlName() + " (" + type.arrowType() + ").",
          "pass a vector of the argument's Arrow type, or cast the column in SQL.");
    }
    return new Column(fixed, type, rows);
  }

  /**
   * Arrow's Decimal128 values as the GPU's {@code int64_t} unscaled values: the low 8 bytes of each
   * 16 (a value of at most 18 digits fits them; the high 8 are its sign). The scale is the
   * caller's to match: the GPU UDF sees the unscaled value at the column's scale.
   */
  private record Decimals(DecimalVector vector, int rows) implements InputColumn {
    @Override
    public SqlType type() {
      return SqlType.DECIMAL;
    }

    @Override
    public void copyValues(int start, int count, long dst) {
      long src = vector.getDataBuffer().memoryAddress() + 16L * start;
      for (int i = 0; i < count; i++) {
        RawMemory.memPutLong(dst + 8L * i, RawMemory.memGetLong(src + 16L * i));
      }
    }

    @Override
    public boolean hasNulls() {
      return vector.getNullCount() > 0;
    }

    @Override
    public void andValidity(long dst, int rows) {
      andBits(vector.getValidityBuffer(), rows, dst);
    }
  }

  /** Same type, where a timestamp's time zone does not matter: the values are UTC microseconds either way. */
  static boolean sameLayout(ArrowType actual, ArrowType want) {
    if (actual instanceof ArrowType.Timestamp a
        && want instanceof ArrowType.Timestamp w) {
      return a.getUnit() == w.getUnit() && (a.getTimezone() == null) == (w.getTimezone() == null);
    }
    return actual.equals(want);
  }

  private record Column(BaseFixedWidthVector vector, SqlType type, int rows) implements InputColumn {
    @Override
    public void copyValues(int start, int count, long dst) {
      ArrowBuf data = vector.getDataBuffer();
      if (type.isBitPacked()) {
        copyBits(data, start, count, dst);
      } else {
        RawMemory.memCopy(data.memoryAddress() + (long) start * type.byteWidth(), dst, (long) count * type.byteWidth());
      }
    }

    @Override
    public boolean hasNulls() {
      return vector.getNullCount() > 0;
    }

    @Override
    public void andValidity(long dst, int rows) {
      andBits(vector.getValidityBuffer(), rows, dst);
    }
  }

  /** Copies {@code count} bits starting at bit {@code start} (a multiple of 64) to bit 0 of dst. */
  static void copyBits(ArrowBuf src, int start, int count, long dst) {
    if (start % 64 != 0) {
      throw new IllegalArgumentException("bit copies start at a multiple of 64, not " + start);
    }
    RawMemory.memCopy(src.memoryAddress() + start / 8, dst, (count + 7) / 8);
  }

  /** dst &= src over {@code rows} bits ({@link Bits#and}). */
  static void andBits(ArrowBuf src, int rows, long dst) {
    Bits.and(src.memoryAddress(), rows, dst);
  }
}
