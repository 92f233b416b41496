package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.internal.FaultInjection;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntUnaryOperator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Bounded time and loop limits on lavapipe: loops are guarded, rows a driver's loop limit cut
 * short are never returned, a kernel past its timeout or cancelled is aborted and its buffers serve
 * the next batch, and a lost device fails clearly.
 */
final class BoundedTimeTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();
  private static final Path CACHE = Path.of("target", "shader-cache");

  @AfterEach
  void resetFaults() {
    FaultInjection.reset();
  }

  @Test
  void loopGuard_guardsEveryLoopWithinItsLines() {
    String body = """
        int s = 0; // for (;;) in a comment stays
        for (int i = 0; i < x; i++) { s += i; }
        for (;;) { break; }
        while (s > 10 /* (a) */) { s -= 3; }
        do { s++; } while (s < 5
        );
        int forx = 1; int whiley = 2;
        return s + forx + whiley;""";
    LoopGuard.Guarded g = LoopGuard.rewrite(body);
    assertEquals(4, g.loops());
    assertEquals("""
        int s = 0; // for (;;) in a comment stays
        for (int i = 0;vk_tick() && ( i < x); i++) { s += i; }
        for (; vk_tick();) { break; }
        while (vk_tick() && (s > 10 /* (a) */)) { s -= 3; }
        do { s++; } while (vk_tick() && (s < 5
        ));
        int forx = 1; int whiley = 2;
        return s + forx + whiley;""", g.body());
    assertEquals(0, LoopGuard.rewrite("x * 2 + forever").loops());
  }

  @Test
  void loopGuard_keepsBodyLinesInCompileErrors() {
    GpuException e = assertThrows(GpuException.class, () -> ColumnKernel.compile(
        KernelSignature.of("bad_loop", SqlType.INT, arg("x", SqlType.INT)),
        "int s = 0;\nfor (int i = 0; i < x; i++) {\n  s += undefinedThing;\n}\nreturn s;", CACHE));
    assertEquals(Code.COMPILE, e.code());
    assertTrue(e.getMessage().contains("line 3 of its body"), e.getMessage());
  }

  @Test
  void loopLimit_isProbedWhenTheDeviceOpens() {
    int limit = GPU.device().loopLimit();
    if (GPU.device().info().driver().toLowerCase().contains("llvmpipe") || GPU.device().info().name().contains("llvmpipe")) {
      assertEquals(65_535, limit, "lavapipe's gallivm loop limiter (LP_MAX_TGSI_LOOP_ITERATIONS)");
    } else {
      assertEquals(0, limit, "a GPU runs the 200,000-iteration probe in full");
    }
    assertEquals(limit, GPU.device().loopLimit(), "probed once, then remembered");
  }

  /** s = sum over i < n of ((x + i) & 7), looping n times per row. */
  private static final String SUM_LOOP = "int s = 0;\nfor (int i = 0; i < n; i++) {\n  s += (x + i) & 7;\n}\nreturn s;";

  private static int sumLoop(int x, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
      s += (x + i) & 7;
    }
    return s;
  }

  @Test
  void longLoop_neverReturnsRowsTheLoopLimitCut() {
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("sum_loop", SqlType.INT, arg("x", SqlType.INT),
        arg("n", SqlType.INT)), SUM_LOOP, CACHE);
    assertTrue(k.hasLoops());
    int rows = 300;
    IntUnaryOperator longN = r -> r % 3 == 0 ? 100_000 : 1_000 + r;
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})),
        List.of(SqlType.INT, SqlType.INT), 4096, GPU.allocator())) {
      int limit = GPU.device().loopLimit();
      if (limit > 0 && limit < 100_000) {
        GpuException e = assertThrows(GpuException.class, () -> run(runner, rows, r -> r * 7, longN));
        assertEquals(Code.LOOP_LIMIT, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains(" of 300 rows"), e.getMessage());
        assertTrue(e.getMessage().contains("'sum_loop'") && e.getMessage().contains("Fix: "), e.getMessage());
      } else {
        check(runner, rows, r -> r * 7, longN);
      }
      // Loops under the limit: every row right, nothing flagged; the runner is still usable.
      check(runner, rows, r -> r * 7 - 500, r -> r * 200);
    }
  }

  @Test
  void endlessLoop_withoutLimitFailsAndNeverInventsValues() {
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("forever", SqlType.INT, arg("x", SqlType.INT),
        arg("n", SqlType.INT)), "int k = x;\nwhile (true) { k++; }\nreturn k;", CACHE);
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})),
        List.of(SqlType.INT, SqlType.INT), 4096, GPU.allocator())) {
      runner.bound(Duration.ofSeconds(2), () -> false);
      GpuException e = assertThrows(GpuException.class, () -> run(runner, 64, r -> r, r -> r));
      assertEquals(GPU.device().loopLimit() > 0 ? Code.LOOP_LIMIT : Code.TIMEOUT, e.code(), e.getMessage());
    }
  }

  /** Rows of a batch that keeps lavapipe busy for seconds: each SIMD group loops 65,535 times before its limit. */
  private static final int BIG = 1 << 20;

  @Test
  void slowKernel_pastTimeout_isAbortedAndTheNextBatchRuns() {
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("slow", SqlType.INT, arg("x", SqlType.INT),
        arg("n", SqlType.INT)), SUM_LOOP, CACHE);
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})),
        List.of(SqlType.INT, SqlType.INT), BIG, GPU.allocator())) {
      runner.bound(Duration.ofSeconds(2), () -> false);
      check(runner, BIG, r -> r, r -> r & 15); // warm: compiled, recorded, correct
      long sets = GPU.runtime().bufferSetsCreated();
      long t0 = System.nanoTime();
      GpuException e = assertThrows(GpuException.class, () -> run(runner, BIG, r -> r, r -> Integer.MAX_VALUE));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertEquals(Code.TIMEOUT, e.code(), e.getMessage());
      assertTrue(e.getMessage().contains("'slow'") && e.getMessage().contains("spark.vkspark.kernelTimeout"), e.getMessage());
      assertTrue(ms >= 2_000 && ms < 4_000, "aborted after " + ms + " ms; the bound is 2 s + a 50 ms slice + the abort");
      check(runner, BIG, r -> r + 3, r -> r & 15);
      assertEquals(sets, GPU.runtime().bufferSetsCreated(), "the aborted buffer set served the next batch");
    }
  }

  @Test
  void slowKernel_cancelled_releasesTheGpuQuickly() throws Exception {
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("slow", SqlType.INT, arg("x", SqlType.INT),
        arg("n", SqlType.INT)), SUM_LOOP, CACHE);
    AtomicBoolean cancel = new AtomicBoolean();
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})),
        List.of(SqlType.INT, SqlType.INT), BIG, GPU.allocator())) {
      runner.bound(Duration.ZERO, cancel::get);
      Thread canceller = new Thread(() -> {
        try {
          Thread.sleep(500);
        } catch (InterruptedException ignored) {
          return;
        }
        cancel.set(true);
      });
      long t0 = System.nanoTime();
      canceller.start();
      GpuException e = assertThrows(GpuException.class, () -> run(runner, BIG, r -> r, r -> Integer.MAX_VALUE));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      canceller.join();
      assertEquals(Code.CANCELLED, e.code(), e.getMessage());
      assertTrue(ms < 2_000, "released after " + ms + " ms");
      cancel.set(false);
      check(runner, 4096, r -> 2 * r, r -> r & 15);
    }
  }

  @Test
  void deviceLost_failsClearly_andANewDeviceServes() {
    GpuDevice own = GpuDevices.open(DeviceOptions.defaults().withShaderCacheDir(CACHE));
    ColumnRuntime rt = new ColumnRuntime(own);
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("sum_loop", SqlType.INT, arg("x", SqlType.INT),
        arg("n", SqlType.INT)), SUM_LOOP, CACHE);
    List<KernelCall> calls = List.of(new KernelCall(k, new int[] {0, 1}));
    try (BatchRunner runner = rt.runner(calls, List.of(SqlType.INT, SqlType.INT), 4096, GPU.allocator())) {
      check(runner, 100, r -> r, r -> r);
      FaultInjection.loseDeviceOnNextWait();
      GpuException e = assertThrows(GpuException.class, () -> run(runner, 100, r -> r, r -> r));
      assertEquals(Code.DEVICE_LOST, e.code(), e.getMessage());
      assertTrue(own.isLost());
      GpuException again = assertThrows(GpuException.class, () -> run(runner, 100, r -> r, r -> r));
      assertEquals(Code.DEVICE_LOST, again.code(), "a lost device fails at once: " + again.getMessage());
    } finally {
      rt.close();
      own.close();
    }
    try (GpuDevice fresh = GpuDevices.open(DeviceOptions.defaults().withShaderCacheDir(CACHE))) {
      ColumnRuntime rt2 = new ColumnRuntime(fresh);
      try (BatchRunner runner = rt2.runner(calls, List.of(SqlType.INT, SqlType.INT), 4096, GPU.allocator())) {
        assertFalse(fresh.isLost());
        check(runner, 100, r -> r + 1, r -> r);
      } finally {
        rt2.close();
      }
    }
  }

  private List<FieldVector> run(BatchRunner runner, int rows, IntUnaryOperator x, IntUnaryOperator n) {
    try (IntVector xs = ints("x", rows, x); IntVector ns = ints("n", rows, n)) {
      return runner.run(List.of(ArrowInputs.of(xs, SqlType.INT), ArrowInputs.of(ns, SqlType.INT)), rows);
    }
  }

  private void check(BatchRunner runner, int rows, IntUnaryOperator x, IntUnaryOperator n) {
    IntVector out = (IntVector) run(runner, rows, x, n).get(0);
    for (int r = 0; r < rows; r++) {
      int xi = x.applyAsInt(r);
      int ni = n.applyAsInt(r);
      int expected = sumLoop(xi, ni);
      assertEquals(expected, out.get(r), "row " + r + " x=" + xi + " n=" + ni);
    }
  }

  private IntVector ints(String name, int rows, IntUnaryOperator f) {
    IntVector v = new IntVector(name, GPU.allocator());
    v.allocateNew(rows);
    for (int r = 0; r < rows; r++) {
      v.set(r, f.applyAsInt(r));
    }
    v.setValueCount(rows);
    return v;
  }
}
