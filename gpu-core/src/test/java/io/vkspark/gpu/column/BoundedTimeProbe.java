package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;

import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.time.Duration;
import java.util.List;
import java.util.function.IntUnaryOperator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;

/**
 * The bounded-time checks of {@link BoundedTimeTest} as a plain program, for a real GPU (the H200)
 * where JUnit is not at hand: the loop-limit probe, a 100,000-iteration loop, a kernel aborted at
 * its timeout (is the abort word seen by a running kernel?), a cancelled one, and the next batch.
 * Exits 0 when every check holds, 1 otherwise.
 */
public final class BoundedTimeProbe {
  private static final String SUM_LOOP = "int s = 0;\nfor (int i = 0; i < n; i++) {\n  s += (x + i) & 7;\n}\nreturn s;";
  private static int failures;

  public static void main(String[] args) throws Exception {
    int big = args.length > 0 ? Integer.parseInt(args[0]) : 1 << 20;
    try (GpuDevice device = GpuDevices.open(DeviceOptions.defaults().withShaderCacheDir(null));
         BufferAllocator allocator = new RootAllocator()) {
      System.out.println("device: " + device.info().summary());
      int limit = device.loopLimit();
      System.out.println("loopLimit: " + limit);
      ColumnRuntime runtime = new ColumnRuntime(device);
      ColumnKernel k = ColumnKernel.compile(KernelSignature.of("sum_loop", SqlType.INT, arg("x", SqlType.INT),
          arg("n", SqlType.INT)), SUM_LOOP);
      try (BatchRunner runner = runtime.runner(List.of(new KernelCall(k, new int[] {0, 1})),
          List.of(SqlType.INT, SqlType.INT), big, allocator)) {
        long t = System.nanoTime();
        try {
          check(runner, allocator, 4096, r -> r * 7, r -> r % 3 == 0 ? 100_000 : 1_000 + r);
          System.out.printf("100,000-iteration loop: correct (%d ms)%n", (System.nanoTime() - t) / 1_000_000);
        } catch (GpuException e) {
          System.out.println("100,000-iteration loop: " + e.code() + " " + e.getMessage());
          expect(limit > 0 && e.code() == GpuException.Code.LOOP_LIMIT, "LOOP_LIMIT only where the device has a limit");
        }
        if (args.length > 1 && args[1].equals("--abort-only")) {
          // One timeout round, then halt at once (a kernel that ignored the abort would hang close()).
          runner.bound(Duration.ofSeconds(1), () -> false);
          t = System.nanoTime();
          String what;
          try {
            run(runner, allocator, big, r -> r, r -> Integer.MAX_VALUE);
            what = "returned";
          } catch (GpuException e) {
            what = e.code().toString();
          }
          System.out.printf("ABORT %s %s=%s %s=%s after %d ms%n", what, "controlMemory",
              System.getProperty("vkspark.controlMemory", "default"), "abortRead",
              System.getProperty("vkspark.abortRead", "volatile"), (System.nanoTime() - t) / 1_000_000);
          System.out.flush();
          Runtime.getRuntime().halt(0);
        }
        for (int round = 0; round < 3; round++) {
          runner.bound(Duration.ofSeconds(2), () -> false);
          t = System.nanoTime();
          try {
            run(runner, allocator, big, r -> r, r -> Integer.MAX_VALUE);
            fail("an endless kernel returned");
          } catch (GpuException e) {
            long ms = (System.nanoTime() - t) / 1_000_000;
            System.out.printf("timeout round %d: %s after %d ms: %s%n", round, e.code(), ms, e.getMessage());
            expect(e.code() == GpuException.Code.TIMEOUT, "TIMEOUT");
            expect(ms < 3_000, "aborted within 3 s");
          }
          t = System.nanoTime();
          int shift = round;
          check(runner, allocator, big, r -> r + shift, r -> r & 15);
          System.out.printf("next batch of %d rows correct (%d ms)%n", big, (System.nanoTime() - t) / 1_000_000);
        }
        long cancelAt = System.nanoTime() + 500_000_000L;
        runner.bound(Duration.ZERO, () -> System.nanoTime() > cancelAt);
        t = System.nanoTime();
        try {
          run(runner, allocator, big, r -> r, r -> Integer.MAX_VALUE);
          fail("an endless kernel returned");
        } catch (GpuException e) {
          long ms = (System.nanoTime() - t) / 1_000_000;
          System.out.printf("cancel: %s after %d ms%n", e.code(), ms);
          expect(e.code() == GpuException.Code.CANCELLED && ms < 1_500, "CANCELLED within 1.5 s");
        }
        runner.bound(Duration.ofSeconds(60), () -> false);
        check(runner, allocator, big, r -> 3 * r, r -> r & 15);
        System.out.println("after cancel: correct");
      } finally {
        runtime.close();
      }
    }
    System.out.println(failures == 0 ? "BOUNDED TIME PROBE OK" : "BOUNDED TIME PROBE FAILED: " + failures);
    System.exit(failures == 0 ? 0 : 1);
  }

  private static void expect(boolean ok, String what) {
    if (!ok) {
      fail(what);
    }
  }

  private static void fail(String what) {
    failures++;
    System.out.println("FAILED: " + what);
  }

  private static void run(BatchRunner runner, BufferAllocator a, int rows, IntUnaryOperator x, IntUnaryOperator n) {
    try (IntVector xs = ints(a, "x", rows, x); IntVector ns = ints(a, "n", rows, n)) {
      runner.run(List.of(ArrowInputs.of(xs, SqlType.INT), ArrowInputs.of(ns, SqlType.INT)), rows);
    }
  }

  private static void check(BatchRunner runner, BufferAllocator a, int rows, IntUnaryOperator x, IntUnaryOperator n) {
    IntVector out;
    try (IntVector xs = ints(a, "x", rows, x); IntVector ns = ints(a, "n", rows, n)) {
      out = (IntVector) runner.run(List.of(ArrowInputs.of(xs, SqlType.INT), ArrowInputs.of(ns, SqlType.INT)), rows).get(0);
    }
    int wrong = 0;
    for (int r = 0; r < rows; r++) {
      int xi = x.applyAsInt(r);
      int s = 0;
      for (int i = 0; i < n.applyAsInt(r); i++) {
        s += (xi + i) & 7;
      }
      if (out.get(r) != s) {
        wrong++;
      }
    }
    expect(wrong == 0, wrong + " wrong rows of " + rows);
  }

  private static IntVector ints(BufferAllocator a, String name, int rows, IntUnaryOperator f) {
    IntVector v = new IntVector(name, a);
    v.allocateNew(rows);
    for (int r = 0; r < rows; r++) {
      v.set(r, f.applyAsInt(r));
    }
    v.setValueCount(rows);
    return v;
  }
}
