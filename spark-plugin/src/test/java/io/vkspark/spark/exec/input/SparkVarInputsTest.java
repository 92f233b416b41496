package io.vkspark.spark.exec.input;

import io.vkspark.spark.exec.input.SparkInputs;
import io.vkspark.spark.exec.input.SparkVarBulk;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.input.StagedVarColumn;
import io.vkspark.gpu.column.input.VarColumn;
import java.nio.charset.StandardCharsets;
import org.apache.spark.sql.execution.vectorized.OffHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.Platform;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Spark's on-heap and off-heap string and array vectors as GPU inputs (no SparkSession): read in
 * place when rows lie one after another, row by row otherwise, the same offsets, elements and
 * validity either way.
 */
final class SparkVarInputsTest {
  private static WritableColumnVector vector(boolean offHeap, int rows, DataType t) {
    return offHeap ? new OffHeapColumnVector(rows, t) : new OnHeapColumnVector(rows, t);
  }

  /** Row {@code r}'s elements as bytes, or null for a null row. */
  private static byte[] row(VarColumn c, int r, int width) {
    int from = c.offset(r);
    int n = c.offset(r + 1) - from;
    long mem = Platform.allocateMemory(Math.max(8, (long) n * width));
    try {
      c.copyElements(from, n, mem);
      byte[] out = new byte[n * width];
      Platform.copyMemory(null, mem, out, Platform.BYTE_ARRAY_OFFSET, out.length);
      return out;
    } finally {
      Platform.freeMemory(mem);
    }
  }

  private static boolean valid(InputColumn c, int r) {
    long mem = Platform.allocateMemory(64);
    try {
      Platform.setMemory(mem, (byte) 0xff, 64);
      c.andValidity(mem, c.rows());
      return ((Platform.getLong(null, mem + 8L * (r >>> 6)) >>> (r & 63)) & 1) != 0;
    } finally {
      Platform.freeMemory(mem);
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void strings_inPlace_andOutOfOrder_rowByRow(boolean offHeap) {
    String[] values = {"Grüße", null, "", "名前 🎉", null, "12345"};
    try (WritableColumnVector v = vector(offHeap, values.length, DataTypes.StringType)) {
      for (int r = 0; r < values.length; r++) {
        if (values[r] == null) {
          v.putNull(r);
        } else {
          v.putByteArray(r, values[r].getBytes(StandardCharsets.UTF_8));
        }
      }
      InputColumn c = SparkInputs.of(v, SqlType.STRING, values.length);
      assertInstanceOf(SparkVarBulk.class, c, "contiguous rows are read in place");
      for (int r = 0; r < values.length; r++) {
        assertEquals(values[r] != null, valid(c, r), "row " + r);
        byte[] want = values[r] == null ? new byte[0] : values[r].getBytes(StandardCharsets.UTF_8);
        assertArrayEquals(want, row((VarColumn) c, r, 1), "row " + r);
      }
      // row 0 now points behind row 5: out of order, so row by row
      v.putByteArray(0, "again".getBytes(StandardCharsets.UTF_8));
      InputColumn d = SparkInputs.of(v, SqlType.STRING, values.length);
      assertInstanceOf(StagedVarColumn.class, d);
      assertArrayEquals("again".getBytes(StandardCharsets.UTF_8), row((VarColumn) d, 0, 1));
      assertArrayEquals(values[5].getBytes(StandardCharsets.UTF_8), row((VarColumn) d, 5, 1));
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void floatArrays_withNullsInside_inPlace(boolean offHeap) {
    Float[][] values = {{1f, null, 3f}, null, {}, {null}, {5.5f}};
    try (WritableColumnVector v = vector(offHeap, values.length, DataTypes.createArrayType(DataTypes.FloatType, true))) {
      WritableColumnVector child = v.arrayData();
      int e = 0;
      for (int r = 0; r < values.length; r++) {
        if (values[r] == null) {
          v.putNull(r);
          continue;
        }
        child.reserve(e + values[r].length);
        for (Float x : values[r]) {
          if (x == null) {
            child.putNull(e++);
          } else {
            child.putFloat(e++, x);
          }
        }
        v.putArray(r, e - values[r].length, values[r].length);
      }
      VarColumn c = (VarColumn) SparkInputs.of(v, SqlType.ARRAY_FLOAT, values.length);
      assertInstanceOf(SparkVarBulk.class, c);
      assertTrue(c.hasElementNulls());
      long bits = Platform.allocateMemory(16);
      try {
        Platform.setMemory(bits, (byte) 0, 16);
        c.copyElementValidity(c.offset(0), c.offset(values.length) - c.offset(0), bits, 3);
        long word = Platform.getLong(null, bits) >>> 3;
        assertEquals(0b10101L, word, "elements 1, null, 3, null, 5.5");
      } finally {
        Platform.freeMemory(bits);
      }
      for (int r = 0; r < values.length; r++) {
        byte[] got = row(c, r, 4);
        int n = values[r] == null ? 0 : values[r].length;
        assertEquals(4 * n, got.length, "row " + r);
        for (int k = 0; k < n; k++) {
          if (values[r][k] != null) {
            int bitsK = (got[4 * k] & 0xff) | (got[4 * k + 1] & 0xff) << 8 | (got[4 * k + 2] & 0xff) << 16 | (got[4 * k + 3] & 0xff) << 24;
            assertEquals(values[r][k], Float.intBitsToFloat(bitsK), "row " + r + " element " + k);
          }
        }
      }
    }
  }
}
