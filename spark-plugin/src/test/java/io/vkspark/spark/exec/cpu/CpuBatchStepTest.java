package io.vkspark.spark.exec.cpu;

import static io.vkspark.spark.TestSpark.gpuNodes;
import static io.vkspark.spark.TestSpark.spark;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vkspark.spark.TestSpark;
import io.vkspark.spark.TestUdfs;
import io.vkspark.spark.conf.MetricsLevel;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.call.NodeMetrics;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link CpuBatchStep} on its own, over one large batch of doubles with nulls: every value equal to
 * the UDF's {@code call()}, a null argument null without {@code call()}, a guarded call null where
 * its guard is not true. Prints the CPU path's ns/row (a measurement, not asserted: the machine
 * decides); the call comes from a real plan of a real local Spark.
 */
@ExtendWith(TestSpark.Validated.class)
final class CpuBatchStepTest {
  private static final int ROWS = 1 << 18;
  /** Timed passes (each also checked row by row): a figure to read in the log, not asserted; kept short for make test. */
  private static final int RUNS = 3;
  private static final TestUdfs.GpuHypot HYPOT = new TestUdfs.GpuHypot();

  private static GpuUdfCall call;
  private static ColumnarBatch batch;
  private static int a;
  private static int b;

  @BeforeAll
  static void plan() {
    VkGpuEvalExec node = gpuNodes(spark().range(0, 10, 1, 1)
        .selectExpr("id * 0.5 AS a", "id * 0.25 AS b").selectExpr("gpu_hypot(a, b) AS h")).get(0);
    call = node.calls().get(0);
    a = call.argOrdinals().get(0);
    b = call.argOrdinals().get(1);
    List<Attribute> input = Scala.list(node.child().output());
    ColumnVector[] columns = new ColumnVector[input.size()];
    for (int i = 0; i < columns.length; i++) {
      OnHeapColumnVector v = new OnHeapColumnVector(ROWS, input.get(i).dataType());
      assertEquals(DataTypes.DoubleType, v.dataType(), input.toString());
      for (int r = 0; r < ROWS; r++) {
        if (i == a && r % 7 == 3 || i == b && r % 11 == 5) {
          v.putNull(r);
        } else {
          v.putDouble(r, (r - ROWS / 2) * (i == a ? 0.37 : 1.13));
        }
      }
      columns[i] = v;
    }
    batch = new ColumnarBatch(columns, ROWS);
  }

  @AfterAll
  static void close() {
    batch.close();
  }

  private static Double arg(int ordinal, int r) {
    return batch.column(ordinal).isNullAt(r) ? null : batch.column(ordinal).getDouble(r);
  }

  @Test
  void results_equalCall_andNullsWithoutCall() {
    try (BufferAllocator allocator = new RootAllocator();
         CpuBatchStep step = new CpuBatchStep(List.of(call), VkConf.of(spark()), allocator,
             NodeMetrics.create(spark().sparkContext(), MetricsLevel.ESSENTIAL))) {
      long best = Long.MAX_VALUE;
      for (int run = 0; run < RUNS; run++) {
        long t0 = System.nanoTime();
        ColumnVector out = step.run(0, batch, ROWS);
        best = Math.min(best, System.nanoTime() - t0);
        for (int r = 0; r < ROWS; r++) {
          check(HYPOT.call(arg(a, r), arg(b, r)), out, r);
        }
      }
      // The floor: call() alone over the same boxed arguments, as a Java loop.
      long floor = Long.MAX_VALUE;
      double sink = 0;
      for (int run = 0; run < RUNS; run++) {
        long t0 = System.nanoTime();
        for (int r = 0; r < ROWS; r++) {
          Double h = HYPOT.call(arg(a, r), arg(b, r));
          sink += h == null ? 0 : h;
        }
        floor = Math.min(floor, System.nanoTime() - t0);
      }
      System.out.printf("[cpu path] gpu_hypot over %,d rows of doubles: %.1f ns/row; call() alone in a Java loop "
          + "%.1f ns/row (best of " + RUNS + "; %s)%n", ROWS, (double) best / ROWS, (double) floor / ROWS, sink);
    }
  }

  /** Row {@code r} of {@code out} is {@code expected} (null: a null). */
  private static void check(Double expected, ColumnVector out, int r) {
    if ((expected == null) != out.isNullAt(r) || expected != null && expected != out.getDouble(r)) {
      fail("row " + r + ": expected " + expected + ", the CPU path gave " + (out.isNullAt(r) ? null : out.getDouble(r)));
    }
  }

  @Test
  void guarded_nullWhereGuardNotTrue() {
    // b > 100 (null for a null b): Spark evaluates the call only where it is true.
    GpuUdfCall guarded = new GpuUdfCall(call.name(), call.expr(), call.boundCpu(), call.kernel(), call.argOrdinals(),
        call.result(), call.placement(),
        new GreaterThan(new BoundReference(b, DataTypes.DoubleType, true), Literal.create(100.0, DataTypes.DoubleType)),
        call.kind());
    try (BufferAllocator allocator = new RootAllocator();
         CpuBatchStep step = new CpuBatchStep(List.of(guarded), VkConf.of(spark()), allocator,
             NodeMetrics.create(spark().sparkContext(), MetricsLevel.ESSENTIAL))) {
      ColumnVector out = step.run(0, batch, ROWS);
      int computed = 0;
      for (int r = 0; r < ROWS; r++) {
        Double bv = arg(b, r);
        Double expected = bv == null || !(bv > 100) ? null : HYPOT.call(arg(a, r), bv);
        check(expected, out, r);
        computed += expected == null ? 0 : 1;
      }
      assertTrue(computed > ROWS / 4 && computed < ROWS * 3 / 4, "rows the guard let through: " + computed);
    }
  }
}
