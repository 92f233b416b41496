package io.vkspark.gpu.column.reduce;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.TransferMode;
import io.vkspark.gpu.column.BatchStats;
import io.vkspark.gpu.column.ColumnGpu;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.reduce.ColumnReduction.Aggregate;
import io.vkspark.gpu.column.reduce.ColumnReduction.Function;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.run.ReducedSample;
import java.util.List;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A reducing runner's {@link ReducedSample}: the first rows' per-row results come back from the
 * batch's own submission (no dispatch of their own), equal to what the kernels computed, with the
 * rows' validity, on both transfer paths (a staged output's host twin included).
 */
final class ReducedSampleTest {
  private static final List<SqlType> TYPES = List.of(SqlType.DOUBLE, SqlType.INT);
  private static final List<KernelCall> CALLS = List.of(
      new KernelCall(ColumnKernel.compile(KernelSignature.of("twice", SqlType.DOUBLE, arg("x", SqlType.DOUBLE)), "2.0 * x"),
          new int[] {0}),
      new KernelCall(ColumnKernel.compile(KernelSignature.of("plus_one", SqlType.INT, arg("i", SqlType.INT)), "i + 1"),
          new int[] {1}));
  private static final List<Aggregate> AGGS = List.of(new Aggregate(Function.SUM, 0), new Aggregate(Function.SUM, 1));

  @ParameterizedTest
  @EnumSource(TransferMode.class)
  void sample_isTheFirstRowsResults_fromTheBatchsOwnDispatches(TransferMode mode) throws Exception {
    int rows = 1000; // two dispatches of at most 512 rows
    ColumnGpu.onDevice(mode, (d, rt, a) -> {
      try (BatchRunner runner = rt.runner(CALLS, TYPES, 512, a, ColumnReduction.of(AGGS, TYPES));
           Float8Vector x = new Float8Vector("x", a); IntVector i = new IntVector("i", a)) {
        x.allocateNew(rows);
        i.allocateNew(rows);
        for (int r = 0; r < rows; r++) {
          x.set(r, r * 0.25);
          if (r % 7 != 3) { // null where r % 7 == 3
            i.set(r, r);
          }
        }
        x.setValueCount(rows);
        i.setValueCount(rows);
        List<InputColumn> in = List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(i, SqlType.INT));
        runner.runReduced(in, rows);
        BatchStats plain = runner.stats();
        assertEquals(0, runner.sample().vectors().get(0).getValueCount(), "no sample unless asked");

        runner.sample().request(100);
        ColumnReduction.Result got = runner.runReduced(in, rows);
        BatchStats sampled = runner.stats();
        assertEquals(100L * 8 + SqlType.INT.bytesFor(100), runner.sample().bytesRead());
        assertEquals(plain.dispatches(), sampled.dispatches() - plain.dispatches(), "the sample has no dispatch of its own");
        assertEquals(100L * 8 + SqlType.INT.bytesFor(100), sampled.bytesRead() - 2 * plain.bytesRead(),
            "the partials and the sampled rows' results, nothing more");
        Float8Vector twice = (Float8Vector) runner.sample().vectors().get(0);
        IntVector plusOne = (IntVector) runner.sample().vectors().get(1);
        assertEquals(100, twice.getValueCount());
        assertEquals(100, plusOne.getValueCount());
        for (int r = 0; r < 100; r++) {
          assertEquals(r * 0.5, twice.get(r), "row " + r);
          assertEquals(r % 7 == 3, plusOne.isNull(r), "row " + r + "'s validity");
          if (r % 7 != 3) {
            assertEquals(r + 1, plusOne.get(r), "row " + r);
          }
        }
        assertEquals(14, plusOne.getNullCount()); // rows 3, 10, ..., 94
        assertEquals(2.0 * 0.25 * rows * (rows - 1) / 2, got.values().get(0).floating(), 1e-9, "the sum is untouched");

        runner.sample().request(600);
        runner.runReduced(in, rows);
        assertEquals(512, runner.sample().vectors().get(0).getValueCount(), "at most the rows of the batch's first dispatch");
        assertEquals(511 * 0.5, ((Float8Vector) runner.sample().vectors().get(0)).get(511));

        runner.runReduced(in, rows);
        assertEquals(0, runner.sample().vectors().get(1).getValueCount(), "a request is for one batch");
      }
    });
  }

  @Test
  void request_refusesAResultTypeItDoesNotCarry() throws Exception {
    ColumnKernel upper = ColumnKernel.compile(KernelSignature.of("same", SqlType.STRING, arg("s", SqlType.STRING)), "s");
    ColumnGpu.onDevice(TransferMode.AUTO, (d, rt, a) -> {
      List<SqlType> types = List.of(SqlType.STRING);
      List<Aggregate> count = List.of(new Aggregate(Function.COUNT, -1)); // COUNT(*): the string result is read by nothing
      try (BatchRunner runner = rt.runner(List.of(new KernelCall(upper, new int[] {0})), types, 64, a,
          ColumnReduction.of(count, types))) {
        runner.sample().request(0); // nothing asked: fine
        GpuException e = assertThrows(GpuException.class, () -> runner.sample().request(1));
        assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
        assertTrue(e.getMessage().contains("'same', of type string"), e.getMessage());
        assertFalse(ReducedSample.carries(SqlType.DECIMAL));
        assertTrue(ReducedSample.carries(SqlType.BOOLEAN));
      }
    });
  }
}
