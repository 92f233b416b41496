package io.vkspark.gpu.column.input;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.VarArgs;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * {@link VarColumn}s over Arrow vectors in their own memory: {@code VarCharVector} (string),
 * {@code VarBinaryVector} (binary) and {@code ListVector}s of {@code Float4Vector},
 * {@code Float8Vector} or {@code IntVector} (arrays). Elements move with one bulk copy per staged range.
 */
final class ArrowVarInputs {
  private ArrowVarInputs() {}

  static VarColumn of(FieldVector vector, SqlType type, int rows) {
    ArrowType actual = vector.getField().getType();
    if ((type == SqlType.STRING || type == SqlType.BINARY) && vector instanceof BaseVariableWidthVector v
        && actual.equals(type.arrowType())) {
      return new Column(vector, type, rows, v.getOffsetBuffer(), v.getDataBuffer(), null);
    }
    if (vector instanceof ListVector list && VarArgs.isArray(type) && list.getDataVector() instanceof BaseFixedWidthVector child
        && child.getField().getType().equals(elementArrowType(type))) {
      return new Column(vector, type, rows, list.getOffsetBuffer(), child.getDataBuffer(), child);
    }
    throw GpuException.of(Code.INVALID_ARGUMENT, "Arrow vector '" + vector.getName() + "' has type " + actual
            + (vector instanceof ListVector l ? "<" + l.getDataVector().getField().getType() + ">" : "")
            + " but the GPU UDF argument is " + type.sqlName() + ".",
        "pass a vector of the argument's Arrow type (Utf8, Binary, or a List of Float32, Float64 or Int32), or cast the column in SQL.");
  }

  private static ArrowType elementArrowType(SqlType t) {
    return switch (t) {
      case ARRAY_FLOAT -> SqlType.FLOAT.arrowType();
      case ARRAY_DOUBLE -> SqlType.DOUBLE.arrowType();
      case ARRAY_INT -> SqlType.INT.arrowType();
      default -> throw new IllegalArgumentException(t.sqlName());
    };
  }

  private record Column(FieldVector vector, SqlType type, int rows, ArrowBuf offsets, ArrowBuf data,
      BaseFixedWidthVector child) implements VarColumn {
    @Override
    public int offset(int row) {
      long at = 4L * row;
      return at + 4 > offsets.capacity() ? 0 : offsets.getInt(at); // an empty vector may have no offset buffer
    }

    @Override
    public void copyElements(int from, int count, long dst) {
      long w = VarArgs.elementBytes(type);
      RawMemory.memCopy(data.memoryAddress() + from * w, dst, count * w);
    }

    @Override
    public boolean hasElementNulls() {
      return child != null && child.getNullCount() > 0;
    }

    @Override
    public void copyElementValidity(int from, int count, long dst, long dstBit) {
      ArrowBuf bits = child.getValidityBuffer();
      for (int done = 0; done < count; done += 64) { // byte reads: never past the bitmap's last byte
        int k = Math.min(64, count - done);
        long word = 0;
        for (int b = 0; b < k; ) {
          long e = (long) from + done + b;
          int shift = (int) (e & 7);
          int take = Math.min(8 - shift, k - b);
          long v = (bits.getByte(e >>> 3) & 0xff) >>> shift;
          word |= (v & ((1L << take) - 1)) << b;
          b += take;
        }
        Bits.write(dst, dstBit + done, word, k);
      }
    }

    @Override
    public boolean hasNulls() {
      return vector.getNullCount() > 0;
    }

    @Override
    public void andValidity(long dst, int rows) {
      ArrowInputs.andBits(vector.getValidityBuffer(), rows, dst);
    }
  }
}
