package io.vkspark.gpu.translate;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.ArrowInputs;
import io.vkspark.gpu.column.BatchRunner;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.ColumnRuntime;
import io.vkspark.gpu.column.CpuCause;
import io.vkspark.gpu.column.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.SqlType;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;

/**
 * A translated string UDF against Java, row by row, as the Spark side runs it: rows with a null in
 * an argument the method is not null-strict in go to Java; the other rows run on the GPU, and a
 * row the kernel hands back ({@link BatchRunner#cpuRows}) is computed by Java. Rows where Java
 * throws run apart: their batch must be recomputed (RECOMPUTE) or hand each back. Every result is
 * compared with Java's, byte for byte (the UTF-8 Spark would encode). String arguments are given
 * as UTF-8 bytes (ill-formed ones included) and decoded for Java as {@code call()} sees them.
 */
final class StringRows {
  /** What one run saw: rows handed back per cause, rows Java computed for a null, recomputed batches. */
  record Seen(long[] causes, int handedBack, int nullRows, int gpuRows) {
    long cause(CpuCause c) {
      return causes[c.ordinal()];
    }
  }

  private final ColumnRuntime runtime;
  private final BufferAllocator allocator;

  StringRows(ColumnRuntime runtime, BufferAllocator allocator) {
    this.runtime = runtime;
    this.allocator = allocator;
  }

  /** Random text: ASCII words, non-ASCII (accents, CJK, surrogate pairs), empty, blank, ill-formed UTF-8, nulls. */
  static List<byte[]> text(int rows, Random r) {
    String[] ascii = {"a", "B", "z", "Q", "0", "9", " ", ",", "@", ".", "-", "x@Y.com", "Ab", "i", "I", "\t", "42",
        "-7", "+3", "|", "  "};
    String[] other = {"é", "ß", "İ", "ı", "名前", "🎉", "Ω", "\u00a0", "\u2003", "K", "\u212a"};
    List<byte[]> out = new ArrayList<>();
    for (int i = 0; i < rows; i++) {
      int kind = r.nextInt(24);
      if (kind == 0) {
        out.add(null);
      } else if (kind == 1) {
        out.add(new byte[0]);
      } else if (kind == 2) {
        out.add(new byte[] {'a', (byte) 0xFF, '@', (byte) 0xC3}); // ill-formed: U+FFFD for call()
      } else {
        StringBuilder b = new StringBuilder();
        int n = r.nextInt(14);
        for (int k = 0; k < n; k++) {
          b.append(kind > 6 || r.nextInt(6) > 0 ? ascii[r.nextInt(ascii.length)] : other[r.nextInt(other.length)]);
        }
        out.add(b.toString().getBytes(StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  static byte[] utf8(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  /** The value {@code call()} sees for argument value {@code v} (bytes decoded as Spark decodes them). */
  static Object javaValue(Object v) {
    return v instanceof byte[] b ? new String(b, StandardCharsets.UTF_8) : v;
  }

  static SqlType sqlType(Class<?> c) {
    return c == String.class ? SqlType.STRING : c == int.class || c == Integer.class ? SqlType.INT
        : c == long.class || c == Long.class ? SqlType.BIGINT : c == boolean.class ? SqlType.BOOLEAN : null;
  }

  /** Java's value of one row, or {@link #THROWS}. */
  interface Java {
    Object call(Object[] args);
  }

  /** What {@link Java#call} returns for a row where Java throws. */
  static final Object THROWS = new Object();

  /** Checks {@code m} (static) translated as {@code tr} over {@code rows} (one value per parameter). */
  Seen check(Method m, Translation.Translated tr, List<Object[]> rows) {
    return check(m.getName(), args -> {
      try {
        return m.invoke(null, args);
      } catch (InvocationTargetException e) {
        return THROWS;
      } catch (IllegalAccessException e) {
        throw new AssertionError(e);
      }
    }, Arrays.stream(m.getParameterTypes()).map(StringRows::sqlType).toList(), tr, rows);
  }

  /** Checks UDF {@code name} ({@code java}) translated as {@code tr} over {@code rows} of {@code types}. */
  Seen check(String name, Java javaUdf, List<SqlType> types, Translation.Translated tr, List<Object[]> rows) {
    ColumnKernel k = ColumnKernel.compile(tr.spec(name.toLowerCase()));
    Object[] java = new Object[rows.size()];
    boolean[] throwsRow = new boolean[rows.size()];
    List<Integer> gpu = new ArrayList<>();
    List<Integer> throwing = new ArrayList<>();
    int nullRows = 0;
    for (int i = 0; i < rows.size(); i++) {
      Object[] row = rows.get(i);
      Object[] args = Arrays.stream(row).map(StringRows::javaValue).toArray();
      java[i] = javaUdf.call(args);
      throwsRow[i] = java[i] == THROWS;
      boolean lenientNull = false;
      boolean strictNull = false;
      for (int c = 0; c < row.length; c++) {
        if (row[c] == null) {
          lenientNull |= !tr.nullStrict().get(c);
          strictNull |= tr.nullStrict().get(c);
        }
      }
      if (lenientNull) {
        nullRows++; // call() computes it, as GpuEvalIterator does for a lenient call
      } else if (strictNull) {
        assertTrue(!throwsRow[i] && java[i] == null, name + ": null-strict but Java gives " + java[i] + " on "
            + show(row));
        gpu.add(i);
      } else {
        (throwsRow[i] ? throwing : gpu).add(i);
      }
    }
    long[] causes = new long[CpuCause.values().length];
    int handed = 0;
    if (!gpu.isEmpty()) {
      try (BatchRunner runner = runner(k, types, gpu.size())) {
        FieldVector out;
        try {
          out = runner.run(inputs(types, rows, gpu), gpu.size()).get(0);
        } catch (GpuException e) {
          throw new AssertionError(name + ": the batch of rows where Java does not throw failed: " + e.getMessage()
              + "\n" + tr.functions(), e);
        }
        List<Integer> back = Arrays.stream(runner.cpuRows(0)).boxed().toList();
        handed = back.size();
        for (int j = 0; j < gpu.size(); j++) {
          int i = gpu.get(j);
          if (back.contains(j)) {
            continue; // call() computes it: Java's value by construction
          }
          Object got = out.isNull(j) ? null : out instanceof VarCharVector v ? new String(v.get(j), StandardCharsets.UTF_8)
              : out instanceof BitVector b ? (Object) (b.get(j) != 0) : out.getObject(j);
          Object want = java[i];
          boolean same = want instanceof String s && got instanceof String g
              ? Arrays.equals(s.getBytes(StandardCharsets.UTF_8), g.getBytes(StandardCharsets.UTF_8))
              : want == null ? got == null : want.equals(got);
          assertTrue(same, name + " row " + show(rows.get(i)) + ": Java " + quote(want) + ", GPU " + quote(got)
              + "\n" + tr.functions());
        }
        causes = runner.cpuRowCauses();
      }
    }
    // the rows where Java throws: together, then the first few alone, each batch recomputed or every row handed back
    List<List<Integer>> batches = new ArrayList<>();
    if (!throwing.isEmpty()) {
      batches.add(throwing);
      throwing.stream().limit(3).forEach(i -> batches.add(List.of(i)));
    }
    for (List<Integer> b : batches) {
      try (BatchRunner runner = runner(k, types, b.size())) {
        runner.run(inputs(types, rows, b), b.size());
        assertEquals(b.size(), runner.cpuRows(0).length, name + ": Java throws on " + show(rows.get(b.get(0)))
            + (b.size() > 1 ? " (a batch of " + b.size() + ")" : "") + " but the GPU neither recomputes nor hands the rows back\n"
            + tr.functions());
      } catch (GpuException e) {
        assertEquals(GpuException.Code.RECOMPUTE, e.code(), name + ": " + e.getMessage());
      }
    }
    return new Seen(causes, handed, nullRows, gpu.size() - handed);
  }

  private BatchRunner runner(ColumnKernel k, List<SqlType> types, int rows) {
    return runtime.runner(List.of(new KernelCall(k, IntStream.range(0, types.size()).toArray())), types, Math.max(64, rows),
        allocator);
  }

  private final List<FieldVector> open = new ArrayList<>();

  private List<InputColumn> inputs(List<SqlType> types, List<Object[]> rows, List<Integer> which) {
    open.forEach(FieldVector::close);
    open.clear();
    List<InputColumn> in = new ArrayList<>();
    for (int c = 0; c < types.size(); c++) {
      FieldVector v = switch (types.get(c)) {
        case STRING -> new VarCharVector("s" + c, allocator);
        case INT -> new IntVector("i" + c, allocator);
        case BIGINT -> new BigIntVector("l" + c, allocator);
        default -> throw new IllegalArgumentException(String.valueOf(types.get(c)));
      };
      v.allocateNew();
      for (int j = 0; j < which.size(); j++) {
        Object x = rows.get(which.get(j))[c];
        if (x == null) {
          v.setNull(j);
        } else if (v instanceof VarCharVector s) {
          s.setSafe(j, x instanceof byte[] b ? b : utf8((String) x));
        } else if (v instanceof IntVector iv) {
          iv.setSafe(j, (Integer) x);
        } else {
          ((BigIntVector) v).setSafe(j, (Long) x);
        }
      }
      v.setValueCount(which.size());
      open.add(v);
      in.add(ArrowInputs.of(v, types.get(c)));
    }
    return in;
  }

  /** Closes the last batch's input vectors. */
  void close() {
    open.forEach(FieldVector::close);
    open.clear();
  }

  static String show(Object[] row) {
    return Arrays.stream(row).map(x -> x instanceof byte[] b ? quote(new String(b, StandardCharsets.UTF_8)) : quote(x))
        .toList().toString();
  }

  static String quote(Object v) {
    if (!(v instanceof String s)) {
      return String.valueOf(v);
    }
    String c = s.length() > 60 ? s.substring(0, 57) + "...(" + s.length() + ")" : s;
    return "\"" + c.replace("\t", "\\t") + "\"";
  }
}
