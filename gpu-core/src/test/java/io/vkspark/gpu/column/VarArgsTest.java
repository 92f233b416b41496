package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * String, binary and array arguments on lavapipe: every row against a Java reference, through
 * Arrow vectors and through {@link StagedVarColumn}, with nulls, empty values, nulls inside
 * arrays, unicode, long values, out-of-range indices, odd and empty batches, and batches whose
 * elements overflow one dispatch's data buffers.
 */
final class VarArgsTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();
  private static final Path CACHE = Path.of("target", "shader-cache");

  static final String FNV = """
      uint h = 2166136261u;
      for (int i = 0; i < s_length(); i++) {
        h = (h ^ s_byte(i)) * 16777619u;
      }
      return int(h);""";

  static int fnv(byte[] b) {
    int h = 0x811c9dc5;
    for (byte x : b) {
      h = (h ^ (x & 0xff)) * 16777619;
    }
    return h;
  }

  static final String PARSE_INT = """
      int i = 0;
      bool neg = s_length() > 0 && s_byte(0) == 45u;
      if (neg) { i = 1; }
      int v = 0;
      for (; i < s_length(); i++) {
        uint c = s_byte(i);
        if (c < 48u || c > 57u) { break; }
        v = v * 10 + int(c - 48u);
      }
      return neg ? -v : v;""";

  static int parseInt(byte[] b) {
    int i = 0;
    boolean neg = b.length > 0 && b[0] == '-';
    if (neg) {
      i = 1;
    }
    int v = 0;
    for (; i < b.length && b[i] >= '0' && b[i] <= '9'; i++) {
      v = v * 10 + (b[i] - '0');
    }
    return neg ? -v : v;
  }

  static final String COSINE = """
      float dot = 0.0;
      float na = 0.0;
      float nb = 0.0;
      int n = min(a_length(), b_length());
      for (int i = 0; i < n; i++) {
        if (a_isNull(i) || b_isNull(i)) { continue; }
        dot += a_at(i) * b_at(i);
        na += a_at(i) * a_at(i);
        nb += b_at(i) * b_at(i);
      }
      return na == 0.0 || nb == 0.0 ? 0.0 : dot / sqrt(na * nb);""";

  static double cosine(Float[] a, Float[] b) {
    double dot = 0;
    double na = 0;
    double nb = 0;
    for (int i = 0; i < Math.min(a.length, b.length); i++) {
      if (a[i] != null && b[i] != null) {
        dot += a[i] * b[i];
        na += a[i] * a[i];
        nb += b[i] * b[i];
      }
    }
    return na == 0 || nb == 0 ? 0 : dot / Math.sqrt(na * nb);
  }

  static ColumnKernel kernel(String name, SqlType result, String body, KernelSignature.Arg... args) {
    return ColumnKernel.compile(KernelSignature.of(name, result, args), body, CACHE);
  }

  /** Random strings: nulls, empty, ASCII, unicode (2-, 3- and 4-byte UTF-8), digits with signs. */
  static List<String> strings(int rows, Random r) {
    String[] special = {"", "a", "Grüße, 名前 🎉", "-2147483648", "007", "-", "12x3", "\u0000z", "ÿ"};
    List<String> out = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      int kind = r.nextInt(10);
      if (kind == 0) {
        out.add(null);
      } else if (kind == 1) {
        out.add(special[r.nextInt(special.length)]);
      } else if (kind == 2) {
        out.add(Integer.toString(r.nextInt()));
      } else {
        StringBuilder b = new StringBuilder();
        for (int k = r.nextInt(40); k > 0; k--) {
          b.appendCodePoint(r.nextInt(8) == 0 ? 0x80 + r.nextInt(0x10000 - 0x80 - 0x800) : 32 + r.nextInt(95));
        }
        out.add(b.toString());
      }
    }
    return out;
  }

  VarCharVector varChar(List<String> values) {
    VarCharVector v = new VarCharVector("s", GPU.allocator());
    v.allocateNew();
    for (int i = 0; i < values.size(); i++) {
      if (values.get(i) == null) {
        v.setNull(i);
      } else {
        v.setSafe(i, values.get(i).getBytes(StandardCharsets.UTF_8));
      }
    }
    v.setValueCount(values.size());
    return v;
  }

  static StagedVarColumn staged(SqlType t, List<byte[]> values) {
    StagedVarColumn c = StagedVarColumn.of(t);
    values.forEach(b -> {
      if (b == null) {
        c.appendNull();
      } else {
        c.appendBytes(b);
      }
    });
    return c;
  }

  static List<byte[]> utf8(List<String> s) {
    return s.stream().map(x -> x == null ? null : x.getBytes(StandardCharsets.UTF_8)).toList();
  }

  /** Checks an INT result against {@code cpu} over byte rows (null in, null out). */
  static void checkInts(FieldVector out, List<byte[]> in, Function<byte[], Integer> cpu, String what) {
    assertEquals(in.size(), out.getValueCount(), what);
    int nulls = 0;
    for (int i = 0; i < in.size(); i++) {
      Integer want = in.get(i) == null ? null : cpu.apply(in.get(i));
      nulls += want == null ? 1 : 0;
      assertEquals(want, out.isNull(i) ? null : ((IntVector) out).get(i), what + " row " + i);
    }
    assertEquals(nulls, out.getNullCount(), what);
  }

  @Test
  void stringHashAndParse_arrowAndStaged_matchJava() {
    ColumnKernel hash = kernel("fnv1a", SqlType.INT, FNV, arg("s", SqlType.STRING));
    ColumnKernel parse = kernel("parse_int", SqlType.INT, PARSE_INT, arg("s", SqlType.STRING));
    Random r = new Random(12);
    List<KernelCall> calls = List.of(new KernelCall(hash, new int[] {0}), new KernelCall(parse, new int[] {0}));
    try (BatchRunner runner = GPU.runtime().runner(calls, List.of(SqlType.STRING), 8192, GPU.allocator())) {
      for (int rows : new int[] {0, 1, 777, 64, 5000, 0, 63}) {
        List<String> s = strings(rows, r);
        List<byte[]> bytes = utf8(s);
        try (VarCharVector v = varChar(s)) {
          List<FieldVector> out = runner.run(List.of(ArrowInputs.of(v, SqlType.STRING)), rows);
          checkInts(out.get(0), bytes, VarArgsTest::fnv, "arrow fnv rows=" + rows);
          checkInts(out.get(1), bytes, VarArgsTest::parseInt, "arrow parse rows=" + rows);
        }
        List<FieldVector> out = runner.run(List.of(staged(SqlType.STRING, bytes)), rows);
        checkInts(out.get(0), bytes, VarArgsTest::fnv, "staged fnv rows=" + rows);
        checkInts(out.get(1), bytes, VarArgsTest::parseInt, "staged parse rows=" + rows);
      }
    }
  }

  @Test
  void strings_appendedBatchesAndFullDataBuffers_splitDispatches() {
    ColumnKernel hash = kernel("fnv1a", SqlType.INT, FNV, arg("s", SqlType.STRING));
    Random r = new Random(7);
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(hash, new int[] {0})), List.of(SqlType.STRING), 4096,
        GPU.allocator())) {
      // short strings first, then 4,000 of 100 bytes: past the first dispatch's 64 Ki data bytes
      List<byte[]> all = new ArrayList<>();
      List<byte[]> first = utf8(strings(3000, r));
      List<byte[]> second = new ArrayList<>();
      for (int i = 0; i < 4000; i++) {
        byte[] b = new byte[100 + (i % 7)];
        r.nextBytes(b);
        second.add(i % 97 == 0 ? null : b);
      }
      List<byte[]> third = utf8(strings(11, r));
      all.addAll(first);
      all.addAll(second);
      all.addAll(third);
      // one append: its first 4,096 rows size the data buffers (256 Ki), the rows after them need more
      List<byte[]> firstTwo = new ArrayList<>(first);
      firstTwo.addAll(second);
      runner.append(List.of(staged(SqlType.STRING, firstTwo)), firstTwo.size());
      runner.append(List.of(staged(SqlType.STRING, third)), third.size());
      List<FieldVector> out = runner.results();
      // the random bytes are mostly ill-formed UTF-8: the body sees them as Java decodes them (DecodedStringsTest)
      List<byte[]> decoded = all.stream().map(b -> b == null ? null
          : new String(b, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8)).toList();
      checkInts(out.get(0), decoded, VarArgsTest::fnv, "appended");
      assertTrue(runner.stats().dispatches() >= 3, "the data buffers filled: " + runner.stats());
    }
  }

  @Test
  void longStringsAndOutOfRangeIndices_readZero_neverOutside() {
    // no loop: the last byte, bytes at -1 and at length (0), and the length
    ColumnKernel k = kernel("edges", SqlType.BIGINT,
        "int64_t(s_length()) * 1000000l + int64_t(s_byte(s_length() - 1)) * 1000l"
            + " + int64_t(s_byte(-1)) + int64_t(s_byte(s_length())) + int64_t(s_byte(1 << 30))",
        arg("s", SqlType.BINARY));
    Random r = new Random(3);
    List<byte[]> rows = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      byte[] b = new byte[i == 150 ? 300_000 : i == 151 ? 70_000 : r.nextInt(9)];
      r.nextBytes(b);
      rows.add(i % 50 == 7 ? null : b);
    }
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0})), List.of(SqlType.BINARY), 4096,
        GPU.allocator())) {
      for (List<byte[]> batch : List.of(rows, rows.subList(140, 160), rows.subList(0, 0))) {
        FieldVector out = runner.run(List.of(staged(SqlType.BINARY, batch)), batch.size()).get(0);
        for (int i = 0; i < batch.size(); i++) {
          byte[] b = batch.get(i);
          Long want = b == null ? null : b.length * 1_000_000L + (b.length == 0 ? 0 : (b[b.length - 1] & 0xff) * 1000L);
          assertEquals(want, out.isNull(i) ? null : out.getObject(i), "row " + i);
        }
      }
    }
  }

  ListVector floatLists(List<Float[]> rows) {
    ListVector v = ListVector.empty("v", GPU.allocator());
    v.addOrGetVector(FieldType.nullable(SqlType.FLOAT.arrowType()));
    v.allocateNew();
    Float4Vector child = (Float4Vector) v.getDataVector();
    int e = 0;
    for (int i = 0; i < rows.size(); i++) {
      Float[] a = rows.get(i);
      if (a == null) {
        v.setNull(i);
        continue;
      }
      v.startNewValue(i);
      for (Float x : a) {
        if (x == null) {
          child.setNull(e++);
        } else {
          child.setSafe(e++, x);
        }
      }
      v.endValue(i, a.length);
    }
    child.setValueCount(e);
    v.setValueCount(rows.size());
    return v;
  }

  static List<Float[]> floatArrays(int rows, int dim, Random r) {
    List<Float[]> out = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      int kind = r.nextInt(12);
      if (kind == 0) {
        out.add(null);
      } else if (kind == 1) {
        out.add(new Float[0]);
      } else {
        Float[] a = new Float[kind == 2 ? r.nextInt(dim + 3) : dim];
        for (int k = 0; k < a.length; k++) {
          a[k] = kind == 3 && r.nextInt(4) == 0 ? null : r.nextFloat() * 2 - 1;
        }
        out.add(a);
      }
    }
    return out;
  }

  static StagedVarColumn stagedFloats(List<Float[]> rows) {
    StagedVarColumn c = StagedVarColumn.of(SqlType.ARRAY_FLOAT);
    for (Float[] a : rows) {
      if (a == null) {
        c.appendNull();
        continue;
      }
      for (Float x : a) {
        if (x == null) {
          c.addNullElement();
        } else {
          c.addFloat(x);
        }
      }
      c.endRow();
    }
    return c;
  }

  @Test
  void cosineSimilarity_withAConstantVector_nullsEmptyAndNullElements_matchJava() {
    ColumnKernel k = kernel("cosine", SqlType.FLOAT, COSINE, arg("a", SqlType.ARRAY_FLOAT), arg("b", SqlType.ARRAY_FLOAT));
    Random r = new Random(5);
    int dim = 16;
    Float[] constant = new Float[dim];
    for (int i = 0; i < dim; i++) {
      constant[i] = (i + 1) / 10f;
    }
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})),
        List.of(SqlType.ARRAY_FLOAT, SqlType.ARRAY_FLOAT), 8192, GPU.allocator())) {
      for (int rows : new int[] {1, 0, 999, 4100}) {
        List<Float[]> a = floatArrays(rows, dim, r);
        List<Float[]> b = new ArrayList<>();
        for (int i = 0; i < rows; i++) {
          b.add(constant); // a literal array, as Spark's projection hands it over: one copy per row
        }
        for (boolean arrow : new boolean[] {true, false}) {
          try (ListVector va = floatLists(a); ListVector vb = floatLists(b)) {
            List<InputColumn> in = arrow ? List.of(ArrowInputs.of(va, SqlType.ARRAY_FLOAT), ArrowInputs.of(vb, SqlType.ARRAY_FLOAT))
                : List.of(stagedFloats(a), stagedFloats(b));
            Float4Vector out = (Float4Vector) runner.run(in, rows).get(0);
            for (int i = 0; i < rows; i++) {
              String where = (arrow ? "arrow" : "staged") + " rows=" + rows + " row " + i + " " + Arrays.toString(a.get(i));
              if (a.get(i) == null) {
                assertTrue(out.isNull(i), where);
              } else {
                assertEquals(cosine(a.get(i), constant), out.get(i), 1e-5, where);
              }
            }
          }
        }
      }
    }
  }

  @Test
  void intAndDoubleArrays_outOfRangeAndNullElementsReadZero() {
    ColumnKernel k = kernel("mix", SqlType.DOUBLE, """
        double s = 0.0lf;
        for (int i = -1; i <= v_length(); i++) {
          s += double(v_at(i)) * 1000.0lf + (v_isNull(i) ? 1.0lf : 0.0lf);
        }
        for (int i = 0; i < d_length(); i++) {
          s += d_at(i);
        }
        return s + double(v_length()) * 1000000.0lf + d_at(-5) + d_at(d_length());""",
        arg("v", SqlType.ARRAY_INT), arg("d", SqlType.ARRAY_DOUBLE));
    Random r = new Random(9);
    int rows = 1000;
    List<Integer[]> v = new ArrayList<>();
    List<Double[]> d = new ArrayList<>();
    StagedVarColumn sv = StagedVarColumn.of(SqlType.ARRAY_INT);
    try (ListVector ld = ListVector.empty("d", GPU.allocator())) {
      ld.addOrGetVector(FieldType.nullable(SqlType.DOUBLE.arrowType()));
      ld.allocateNew();
      Float8Vector child = (Float8Vector) ld.getDataVector();
      int e = 0;
      for (int i = 0; i < rows; i++) {
        Integer[] a = i % 17 == 0 ? null : new Integer[r.nextInt(6)];
        if (a == null) {
          sv.appendNull();
        } else {
          for (int j = 0; j < a.length; j++) {
            a[j] = r.nextInt(5) == 0 ? null : r.nextInt(2000) - 1000;
            if (a[j] == null) {
              sv.addNullElement();
            } else {
              sv.addInt(a[j]);
            }
          }
          sv.endRow();
        }
        v.add(a);
        Double[] b = i % 13 == 0 ? null : new Double[r.nextInt(4)];
        if (b == null) {
          ld.setNull(i);
        } else {
          ld.startNewValue(i);
          for (int j = 0; j < b.length; j++) {
            b[j] = r.nextInt(3) == 0 ? null : r.nextDouble();
            if (b[j] == null) {
              child.setNull(e++);
            } else {
              child.setSafe(e++, b[j]);
            }
          }
          ld.endValue(i, b.length);
        }
        d.add(b);
      }
      child.setValueCount(e);
      ld.setValueCount(rows);
      try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})),
          List.of(SqlType.ARRAY_INT, SqlType.ARRAY_DOUBLE), 4096, GPU.allocator())) {
        Float8Vector out = (Float8Vector) runner.run(List.of(sv, ArrowInputs.of(ld, SqlType.ARRAY_DOUBLE)), rows).get(0);
        int nulls = 0;
        for (int i = 0; i < rows; i++) {
          if (v.get(i) == null || d.get(i) == null) {
            assertTrue(out.isNull(i), "row " + i);
            nulls++;
            continue;
          }
          double s = 0;
          Integer[] a = v.get(i);
          for (int j = -1; j <= a.length; j++) {
            boolean in = j >= 0 && j < a.length && a[j] != null;
            s += (in ? a[j] : 0) * 1000.0 + (in ? 0 : 1);
          }
          for (Double x : d.get(i)) {
            s += x == null ? 0 : x;
          }
          s += a.length * 1_000_000.0;
          assertEquals(s, out.get(i), 1e-9 * Math.max(1, Math.abs(s)), "row " + i);
        }
        assertEquals(nulls, out.getNullCount());
      }
    }
  }

  @Test
  void doubleArray_aloneBringsTheDoubleMathLibrary() {
    // no "double" in the body: the array<double> argument alone must bring the double exp
    ColumnKernel k = kernel("dexp", SqlType.DOUBLE, "exp(d_at(0)) + d_at(1)", arg("d", SqlType.ARRAY_DOUBLE));
    StagedVarColumn d = StagedVarColumn.of(SqlType.ARRAY_DOUBLE);
    d.addDouble(1.5).addDouble(0.25).endRow();
    d.addDouble(-3.0).endRow();
    d.endRow();
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0})), List.of(SqlType.ARRAY_DOUBLE), 4096,
        GPU.allocator())) {
      Float8Vector out = (Float8Vector) runner.run(List.of(d), 3).get(0);
      double[] want = {StrictMath.exp(1.5) + 0.25, StrictMath.exp(-3.0), 1.0};
      for (int i = 0; i < 3; i++) {
        assertEquals(want[i], out.get(i), 4 * Math.ulp(want[i]), "row " + i);
      }
    }
  }

  @Test
  void binaryVector_andMixedWithFixedWidthArguments() {
    ColumnKernel k = kernel("salted", SqlType.INT, """
        uint h = uint(salt);
        for (int i = 0; i < b_length(); i++) { h = h * 31u + b_byte(i); }
        return int(h);""", arg("salt", SqlType.INT), arg("b", SqlType.BINARY));
    Random r = new Random(11);
    int rows = 333;
    List<byte[]> values = new ArrayList<>();
    try (VarBinaryVector b = new VarBinaryVector("b", GPU.allocator()); IntVector salt = new IntVector("salt", GPU.allocator())) {
      b.allocateNew();
      salt.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        byte[] x = i % 10 == 3 ? null : new byte[r.nextInt(20)];
        if (x == null) {
          b.setNull(i);
        } else {
          r.nextBytes(x);
          b.setSafe(i, x);
        }
        values.add(x);
        salt.set(i, i * 7);
      }
      b.setValueCount(rows);
      salt.setValueCount(rows);
      try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})),
          List.of(SqlType.INT, SqlType.BINARY), 4096, GPU.allocator())) {
        FieldVector out = runner.run(List.of(ArrowInputs.of(salt, SqlType.INT), ArrowInputs.of(b, SqlType.BINARY)), rows).get(0);
        for (int i = 0; i < rows; i++) {
          Integer want = null;
          if (values.get(i) != null) {
            int h = i * 7;
            for (byte x : values.get(i)) {
              h = h * 31 + (x & 0xff);
            }
            want = h;
          }
          assertEquals(want, out.isNull(i) ? null : ((IntVector) out).get(i), "row " + i);
        }
      }
    }
  }

  @Test
  void signature_refusesArrayResult_andAccessorNameClash() {
    KernelSignature.of("f", SqlType.STRING, arg("s", SqlType.STRING)); // string and binary results: StringResultsTest
    GpuException e = assertThrows(GpuException.class,
        () -> KernelSignature.of("f", SqlType.ARRAY_INT, arg("s", SqlType.STRING)));
    assertEquals(GpuException.Code.UNSUPPORTED, e.code());
    assertTrue(e.getMessage().contains("arguments only"), e.getMessage());
    e = assertThrows(GpuException.class,
        () -> KernelSignature.of("f", SqlType.INT, arg("v", SqlType.ARRAY_FLOAT), arg("v_at", SqlType.INT)));
    assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("'v_at'"), e.getMessage());
    assertEquals(SqlType.ARRAY_FLOAT, SqlType.parse(" Array< Float > "));
    assertEquals(SqlType.STRING, SqlType.parse("string"));
  }

  @Test
  void compileError_namesTheAccessors() {
    GpuException e = assertThrows(GpuException.class,
        () -> kernel("bad", SqlType.INT, "s + 1", arg("s", SqlType.STRING)));
    assertEquals(GpuException.Code.COMPILE, e.code());
    assertTrue(e.getMessage().contains("int s_length(), uint s_byte(int i)"), e.getMessage());
  }

  @Test
  void arrowVectorOfAnotherElementType_isRefused() {
    try (ListVector v = ListVector.empty("v", GPU.allocator())) {
      v.addOrGetVector(FieldType.nullable(SqlType.INT.arrowType()));
      GpuException e = assertThrows(GpuException.class, () -> ArrowInputs.of(v, SqlType.ARRAY_FLOAT));
      assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("array<float>"), e.getMessage());
      assertTrue(v.getDataVector() instanceof BaseFixedWidthVector);
    }
  }
}
