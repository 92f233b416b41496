package io.vkspark.gpu.column;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.translate.JavaTranslator;
import io.vkspark.gpu.translate.Translation;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.IntFunction;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Java methods that tolerate null arguments or return null, translated in their null-aware form
 * ({@link Translation#nullAwareSpec}): the kernel reads its arguments' validity and writes its
 * result's, and every row (value and null) is the method's, with no row left to {@code call()}.
 */
class NullAwareKernelTest {
  private static GpuDevice device;
  private static ColumnRuntime runtime;
  private static final BufferAllocator ALLOCATOR = new RootAllocator();

  @BeforeAll
  static void open() {
    device = GpuDevices.open(DeviceOptions.defaults().withValidation(true));
    runtime = new ColumnRuntime(device);
  }

  @AfterAll
  static void close() {
    runtime.close();
    var c = device.counters();
    device.close();
    assertEquals(0, ALLOCATOR.getAllocatedMemory(), "Arrow memory leaked");
    ALLOCATOR.close();
    assertTrue(c.nothingLive(), c.toString());
    assertEquals(0, device.validationErrors(), device.validationMessages().toString());
  }

  /** Methods that compute a value for null arguments, or null for some rows. */
  public static final class Methods {
    public static Double twice(Double x) {
      return x == null ? 0.0 : x * 2;
    }

    public static Double ratio(Double x, Integer k) {
      if (x == null) {
        return k == null ? -1.0 : k * 2.0;
      }
      if (k == null || k == 0) {
        return null;
      }
      return x / k;
    }

    public static Integer ints(Integer a, Integer b) {
      if (a == null && b == null) {
        return null;
      }
      int x = a == null ? 7 : a;
      return b == null ? x * 3 : x - b;
    }

    public static Long longs(Long a) {
      if (a == null) {
        return Long.MIN_VALUE;
      }
      return a % 3 == 0 ? null : a * 31 + 1;
    }

    public static Float floats(Float a, Float b) {
      if (b == null) {
        return a;
      }
      if (a == null) {
        return null;
      }
      return a * b + 0.5f;
    }

    public static Boolean bools(Integer a, Boolean b) {
      if (a == null) {
        return b;
      }
      if (b == null) {
        return a > 0 ? null : Boolean.FALSE;
      }
      return b ? a > 10 : a < -10;
    }

    /** A primitive argument (strict: null there gives null, as Spark's check does) and a null result for odd values. */
    public static Integer halfIfEven(int x, Long y) {
      return x % 2 == 0 ? Integer.valueOf(x / 2 + (y == null ? 0 : 1)) : null;
    }

    /** Strict: a null argument gives null (the strict kernel's). */
    public static Double strict(Double x) {
      return x == null ? null : x + 1;
    }
  }

  private static Translation.Translated translated(String name) throws Exception {
    Method m = Arrays.stream(Methods.class.getMethods()).filter(x -> x.getName().equals(name)).findFirst().orElseThrow();
    Translation t = JavaTranslator.translate(m);
    return assertInstanceOf(Translation.Translated.class, t, () -> String.valueOf(t));
  }

  @Test
  void double_nullArgumentGivesAValue() throws Exception {
    check("twice", SqlType.DOUBLE);
  }

  @Test
  void double_twoArguments_nullResults() throws Exception {
    check("ratio", SqlType.DOUBLE, SqlType.INT);
  }

  @Test
  void int_nullArgumentsAndResults() throws Exception {
    check("ints", SqlType.INT, SqlType.INT);
  }

  @Test
  void long_nullResultForNonNullArguments() throws Exception {
    check("longs", SqlType.BIGINT);
  }

  @Test
  void float_nullResults() throws Exception {
    check("floats", SqlType.FLOAT, SqlType.FLOAT);
  }

  @Test
  void boolean_argumentAndResult() throws Exception {
    check("bools", SqlType.INT, SqlType.BOOLEAN);
  }

  @Test
  void primitiveArgumentStaysStrict_nullResultOnTheDevice() throws Exception {
    assertEquals(new NullFlags(List.of(false, true), true), translated("halfIfEven").nullAwareSpec("h").nulls());
    check("halfIfEven", SqlType.INT, SqlType.BIGINT);
  }

  /**
   * Computed and constant arguments ({@link ArgOps}): a computed one reads its column's validity, a
   * constant is never null and has no validity buffer, whichever argument it is.
   */
  @Test
  void computedAndConstantArguments_readTheRightValidity() throws Exception {
    KernelSpec spec = translated("ratio").nullAwareSpec("ratio");
    ArgOps times = ArgOps.of(new ArgOps.Step(ArithOp.MULTIPLY, false));
    ColumnKernel xComputedKConstant = ColumnKernel.compile(spec.withArgOps(List.of(times, ArgOps.CONSTANT)));
    ColumnKernel xConstantKColumn = ColumnKernel.compile(spec.withArgOps(List.of(ArgOps.CONSTANT, ArgOps.NONE)));
    Random rnd = new Random(11);
    int rows = 777;
    Object[] x = new Object[rows];
    Object[] k = new Object[rows];
    for (int i = 0; i < rows; i++) {
      x[i] = rnd.nextInt(3) == 0 ? null : value(SqlType.DOUBLE, rnd);
      k[i] = rnd.nextInt(3) == 0 ? null : value(SqlType.INT, rnd);
    }
    List<SqlType> types = List.of(SqlType.DOUBLE, SqlType.INT);
    FieldVector xv = vector(SqlType.DOUBLE, x);
    FieldVector kv = vector(SqlType.INT, k);
    try {
      List<InputColumn> in = List.of(ArrowInputs.of(xv, SqlType.DOUBLE), ArrowInputs.of(kv, SqlType.INT));
      try (BatchRunner r = runtime.runner(List.of(new KernelCall(xComputedKConstant, new int[] {0, -1},
              new double[] {2.5, ArgOps.constantBits(SqlType.INT, 3)}),
          new KernelCall(xConstantKColumn, new int[] {-1, 1}, new double[] {ArgOps.constantBits(SqlType.DOUBLE, 7.0)})),
          types, 4096, ALLOCATOR)) {
        List<FieldVector> out = r.run(in, rows);
        for (int i = 0; i < rows; i++) {
          Double xi = (Double) x[i];
          assertEquals(Methods.ratio(xi == null ? null : xi * 2.5, 3), out.get(0).getObject(i), "x * 2.5, 3: row " + i);
          assertEquals(Methods.ratio(7.0, (Integer) k[i]), out.get(1).getObject(i), "7.0, k: row " + i);
        }
      }
    } finally {
      xv.close();
      kv.close();
    }
  }

  @Test
  void strictMethod_hasNoNullAwareForm() throws Exception {
    assertNull(translated("strict").nullAwareSpec("strict"));
    KernelSpec spec = translated("ratio").nullAwareSpec("ratio");
    assertNotNull(spec.nulls());
    assertEquals(new NullFlags(List.of(true, true), true), spec.nulls());
  }

  @Test
  void reductionOverNullAwareCall_isRefused() throws Exception {
    ColumnKernel k = ColumnKernel.compile(translated("twice").nullAwareSpec("twice"));
    ColumnReduction r = ColumnReduction.of(List.of(new ColumnReduction.Aggregate(ColumnReduction.Function.SUM, 0)), List.of(SqlType.DOUBLE));
    GpuException e = assertThrows(GpuException.class, () -> runtime.runner(List.of(new KernelCall(k, new int[] {0})),
        List.of(SqlType.DOUBLE), 1024, ALLOCATOR, r).close());
    assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("Fix: "), e.getMessage());
  }

  /**
   * Runs method {@code name}'s null-aware kernel over batches of several sizes (empty, odd, all
   * null, larger than the buffers), one runner for all of them (slots reused), and two batches
   * appended behind each other (rows landing off a 64-row boundary), comparing every row with the
   * method.
   */
  private void check(String name, SqlType... types) throws Exception {
    Translation.Translated t = translated(name);
    KernelSpec spec = t.nullAwareSpec(name);
    assertNotNull(spec, name + " has a null-aware form");
    ColumnKernel k = ColumnKernel.compile(spec);
    Method m = Arrays.stream(Methods.class.getMethods()).filter(x -> x.getName().equals(name)).findFirst().orElseThrow();
    Random rnd = new Random(name.hashCode());
    int[] ordinals = new int[types.length];
    Arrays.setAll(ordinals, i -> i);
    List<SqlType> inputTypes = List.of(types);
    int nulls = 0;
    int resultNulls = 0;
    try (BatchRunner runner = runtime.runner(List.of(new KernelCall(k, ordinals)), inputTypes, 4096, ALLOCATOR)) {
      for (int rows : new int[] {0, 1, 7, 63, 64, 65, 333, 1000, 4097, 9001}) {
        int[] counts = batch(runner, m, types, rnd, List.of(rows), i -> rnd.nextInt(4) == 0);
        nulls += counts[0];
        resultNulls += counts[1];
      }
      batch(runner, m, types, rnd, List.of(100), i -> true); // every argument null
      batch(runner, m, types, rnd, List.of(37, 0, 91, 64, 5), i -> i % 3 == 1); // appended: off a 64-row boundary
      batch(runner, m, types, rnd, List.of(200), i -> false); // no nulls: columns without validity
    }
    assertTrue(nulls > 1000, name + ": null arguments seen: " + nulls);
    assertTrue(resultNulls > 0 || !spec.nulls().result() || name.equals("twice"), name + ": null results seen");
  }

  /** Appends batches of {@code sizes} rows, takes the results and compares them; returns {null arguments, null results}. */
  private int[] batch(BatchRunner runner, Method m, SqlType[] types, Random rnd, List<Integer> sizes, IntFunction<Boolean> isNull)
      throws Exception {
    List<Object[]> rowsIn = new ArrayList<>();
    List<FieldVector> vectors = new ArrayList<>();
    int nulls = 0;
    try {
      for (int rows : sizes) {
        List<InputColumn> inputs = new ArrayList<>();
        Object[][] cols = new Object[types.length][rows];
        for (int c = 0; c < types.length; c++) {
          for (int r = 0; r < rows; r++) {
            boolean n = isNull.apply(r + c) && (types.length == 1 || rnd.nextBoolean() || isNull.apply(0));
            cols[c][r] = n ? null : value(types[c], rnd);
            nulls += n ? 1 : 0;
          }
          FieldVector v = vector(types[c], cols[c]);
          vectors.add(v);
          inputs.add(ArrowInputs.of(v, types[c]));
        }
        for (int r = 0; r < rows; r++) {
          Object[] row = new Object[types.length];
          for (int c = 0; c < types.length; c++) {
            row[c] = cols[c][r];
          }
          rowsIn.add(row);
        }
        runner.append(inputs, rows);
      }
      FieldVector out = runner.results().get(0);
      assertEquals(rowsIn.size(), out.getValueCount());
      assertEquals(0, runner.cpuRows(0).length, "no row for call()");
      int resultNulls = 0;
      for (int r = 0; r < rowsIn.size(); r++) {
        boolean nullPrimitive = false;
        for (int c = 0; c < types.length; c++) {
          nullPrimitive |= rowsIn.get(r)[c] == null && m.getParameterTypes()[c].isPrimitive();
        }
        Object want = nullPrimitive ? null : m.invoke(null, rowsIn.get(r)); // Spark's check of a primitive argument
        Object got = out.isNull(r) ? null : out.getObject(r);
        resultNulls += want == null ? 1 : 0;
        assertEquals(want, got, m.getName() + " row " + r + " of " + rowsIn.size() + ": " + Arrays.toString(rowsIn.get(r)));
      }
      assertEquals(resultNulls, out.getNullCount(), "null count");
      return new int[] {nulls, resultNulls};
    } finally {
      vectors.forEach(FieldVector::close);
    }
  }

  private static Object value(SqlType t, Random rnd) {
    return switch (t) {
      case INT -> rnd.nextInt(41) - 20;
      case BIGINT -> rnd.nextLong() >> rnd.nextInt(60);
      case FLOAT -> (rnd.nextFloat() - 0.5f) * 100;
      case DOUBLE -> rnd.nextInt(10) == 0 ? -0.0 : (rnd.nextDouble() - 0.5) * 1e6;
      case BOOLEAN -> rnd.nextBoolean();
      default -> throw new IllegalArgumentException(t.toString());
    };
  }

  private static FieldVector vector(SqlType t, Object[] values) {
    FieldVector v = new Field("c", FieldType.nullable(t.arrowType()), null).createVector(ALLOCATOR);
    v.setInitialCapacity(values.length);
    v.allocateNew();
    for (int i = 0; i < values.length; i++) {
      if (values[i] == null) {
        switch (t) { // garbage under the null, which the kernel must not read as the value
          case INT -> ((IntVector) v).set(i, 12345);
          case BIGINT -> ((BigIntVector) v).set(i, 12345L);
          case FLOAT -> ((Float4Vector) v).set(i, 12345f);
          case DOUBLE -> ((Float8Vector) v).set(i, 12345.0);
          case BOOLEAN -> ((BitVector) v).set(i, 1);
          default -> throw new IllegalArgumentException(t.toString());
        }
        v.setNull(i);
        continue;
      }
      switch (t) {
        case INT -> ((IntVector) v).set(i, (Integer) values[i]);
        case BIGINT -> ((BigIntVector) v).set(i, (Long) values[i]);
        case FLOAT -> ((Float4Vector) v).set(i, (Float) values[i]);
        case DOUBLE -> ((Float8Vector) v).set(i, (Double) values[i]);
        case BOOLEAN -> ((BitVector) v).set(i, (Boolean) values[i] ? 1 : 0);
        default -> throw new IllegalArgumentException(t.toString());
      }
    }
    v.setValueCount(values.length);
    return v;
  }
}
