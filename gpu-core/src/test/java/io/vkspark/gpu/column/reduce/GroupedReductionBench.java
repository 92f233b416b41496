package io.vkspark.gpu.column.reduce;

import static io.vkspark.gpu.column.KernelSignature.arg;

import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction.Aggregate;
import io.vkspark.gpu.column.reduce.ColumnReduction.Function;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;

/**
 * Times the grouped GPU reduction against the ungrouped one on the best device (not a test: run
 * {@code java -cp 'gpu-core jar, its test classes and dependencies' io.vkspark.gpu.column.GroupedReductionBench ROWS}):
 * {@code sum, min, max, count(*)} of {@code 2.0 * x} over ROWS rows (default 2^20) in one dispatch,
 * keyed by {@code row % keys} for 10, 64 and 256 keys in 64 and 256 slots, five runs each, checking
 * each key's row count, MIN and MAX exactly. Prints wall and device time per run.
 */
public final class GroupedReductionBench {
  public static void main(String[] args) {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 1 << 20;
    GpuDevice d = GpuDevices.open(DeviceOptions.defaults());
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("twice", SqlType.DOUBLE, arg("x", SqlType.DOUBLE)), "2.0 * x");
    List<KernelCall> calls = List.of(new KernelCall(k, new int[] {0}));
    List<SqlType> types = List.of(SqlType.DOUBLE);
    List<Aggregate> aggs = List.of(new Aggregate(Function.SUM, 0), new Aggregate(Function.MIN, 0),
        new Aggregate(Function.MAX, 0), new Aggregate(Function.COUNT, -1));
    try (BufferAllocator a = new RootAllocator(); ColumnRuntime rt = new ColumnRuntime(d);
         Float8Vector x = new Float8Vector("x", a); IntVector key = new IntVector("k", a)) {
      System.out.println("device " + d.info().name() + " wg " + ColumnKernel.workgroupSize(d.info()) + " rows " + rows);
      x.allocateNew(rows);
      key.allocateNew(rows);
      for (int r = 0; r < rows; r++) {
        x.set(r, r * 0.5);
      }
      x.setValueCount(rows);
      key.setValueCount(rows);
      List<InputColumn> in = List.of(ArrowInputs.of(x, SqlType.DOUBLE), ArrowInputs.of(key, SqlType.INT));
      try (BatchRunner plain = rt.runner(calls, List.of(SqlType.DOUBLE, SqlType.INT), rows, a, ColumnReduction.of(aggs, types))) {
        long d0 = 0;
        for (int i = 0; i < 5; i++) {
          long t = System.nanoTime();
          plain.runReduced(in, rows);
          long dev = plain.stats().deviceNs();
          System.out.printf("ungrouped wall %.2f ms device %.3f ms%n", (System.nanoTime() - t) / 1e6, (dev - d0) / 1e6);
          d0 = dev;
        }
      }
      for (int slots : new int[] {64, 256}) {
        for (int used : new int[] {10, 64, 256}) {
          if (used > slots) {
            continue;
          }
          for (int r = 0; r < rows; r++) {
            key.set(r, r % used);
          }
          try (BatchRunner g = rt.runner(calls, List.of(SqlType.DOUBLE, SqlType.INT), rows, a,
              ColumnReduction.grouped(aggs, types, 1, SqlType.INT, slots))) {
            long d0 = 0;
            long h0 = 0;
            for (int i = 0; i < 5; i++) {
              long t = System.nanoTime();
              ColumnReduction.Grouped res = g.runGrouped(in, rows).orElseThrow();
              long dev = g.stats().deviceNs();
              long host = g.stats().hostNs();
              // check against the exact values: count and max per key
              for (ColumnReduction.Group gr : res.groups()) {
                long kk = gr.key();
                long n = (rows - kk + used - 1) / used;
                long lastRow = kk + (n - 1) * used;
                if (gr.rows() != n || gr.values().get(2).floating() != lastRow * 1.0 || gr.values().get(1).floating() != kk * 1.0) {
                  throw new AssertionError("key " + kk + " got " + gr);
                }
              }
              System.out.printf("grouped slots %d keys %d wall %.2f ms device %.3f ms host %.2f ms read %d B%n", slots, used,
                  (System.nanoTime() - t) / 1e6, (dev - d0) / 1e6, (host - h0) / 1e6, g.stats().bytesRead());
              d0 = dev;
              h0 = host;
            }
          }
        }
      }
    } finally {
      d.close();
    }
  }
}
