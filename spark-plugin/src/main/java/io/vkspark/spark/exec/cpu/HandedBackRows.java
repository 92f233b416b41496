package io.vkspark.spark.exec.cpu;

import io.vkspark.gpu.column.SqlType;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * One call's GPU results with the rows its kernel handed back computed by {@code call()}
 * ({@code vk_str_require_ascii}, {@code vk_to_cpu}, a string result that could not be Java's; see
 * gpu-core {@code CpuCause}): a fixed-width result is set in place; a string or binary result is
 * rebuilt, the GPU's bytes copied a run of rows at a time around the rows from {@code call()}, into
 * a vector reused from batch to batch. The rest of the batch keeps the GPU's values.
 */
final class HandedBackRows implements AutoCloseable {
  private final BufferAllocator allocator;
  private FieldVector merged;

  HandedBackRows(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  /**
   * {@code gpu} with {@code rows} (ascending, null in {@code gpu}) computed by {@code cpu} over
   * {@code in}: {@code gpu} itself, or the merged vector (valid until the next call).
   */
  FieldVector merge(FieldVector gpu, SqlType type, int[] rows, CpuCallProjection cpu, ColumnarBatch in) {
    if (gpu instanceof BaseFixedWidthVector) {
      for (int r : rows) {
        cpu.set(gpu, r, cpu.row(in, r));
      }
      return gpu;
    }
    BaseVariableWidthVector src = (BaseVariableWidthVector) gpu;
    int n = src.getValueCount();
    byte[][] values = new byte[rows.length][];
    long extra = 0;
    for (int k = 0; k < rows.length; k++) {
      InternalRow x = cpu.row(in, rows[k]);
      values[k] = x == null ? null : type == SqlType.STRING ? x.getUTF8String(0).getBytes() : x.getBinary(0);
      extra += values[k] == null ? 0 : values[k].length;
    }
    if (merged == null) {
      merged = new Field(gpu.getName(), FieldType.nullable(gpu.getField().getType()), null).createVector(allocator);
    }
    BaseVariableWidthVector out = (BaseVariableWidthVector) merged;
    ArrowBuf srcOff = src.getOffsetBuffer();
    long bytes = Integer.toUnsignedLong(srcOff.getInt(4L * n)) + extra;
    out.clear();
    out.allocateNew(Math.max(bytes, 1), n);
    out.getValidityBuffer().setBytes(0, src.getValidityBuffer(), 0, (n + 7) / 8);
    ArrowBuf off = out.getOffsetBuffer();
    ArrowBuf data = out.getDataBuffer();
    off.setInt(0, 0);
    long at = 0;
    int from = 0; // the next GPU row to copy
    for (int k = 0; k <= rows.length; k++) {
      int to = k < rows.length ? rows[k] : n; // GPU rows [from, to), then row `to` from call()
      if (to > from) {
        int base = srcOff.getInt(4L * from);
        int end = srcOff.getInt(4L * to);
        data.setBytes(at, src.getDataBuffer(), base, end - base);
        for (int r = from + 1; r <= to; r++) {
          off.setInt(4L * r, (int) (at + srcOff.getInt(4L * r) - base));
        }
        at += end - base;
      }
      if (k < rows.length) {
        byte[] v = values[k];
        if (v != null) {
          data.setBytes(at, v);
          at += v.length;
          out.setIndexDefined(to);
        }
        off.setInt(4L * (to + 1), (int) at);
        from = to + 1;
      }
    }
    out.setLastSet(n - 1);
    out.setValueCount(n);
    return out;
  }

  @Override
  public void close() {
    if (merged != null) {
      merged.close();
    }
  }
}
