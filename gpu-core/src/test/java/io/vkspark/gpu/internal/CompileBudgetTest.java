package io.vkspark.gpu.internal;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Compiles are bounded in time and cancellable, and abandoned ones cannot pile up compiler threads:
 * real shaderc, with bodies that take it seconds (a chain of additions, about 1 ms a term on
 * lavapipe's CI machine and faster elsewhere, so each is long enough to outlast the small budgets here).
 */
final class CompileBudgetTest {
  private static final AtomicInteger SALT = new AtomicInteger();

  /** A slow body, different every call (no cache in between): {@code terms} additions. */
  private static String slowBody(int terms) {
    return SALT.incrementAndGet() + " + x" + " + x".repeat(terms);
  }

  private static ColumnKernel compile(String body) {
    return ColumnKernel.compile(KernelSignature.of("slow", SqlType.INT, KernelSignature.arg("x", SqlType.INT)), body);
  }

  /** Abandoned compiles of an earlier test end by themselves; each test starts with every place free. */
  @BeforeEach
  @AfterEach
  void drain() throws InterruptedException {
    long until = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    while (GlslCompiler.compilesInFlight() > 0 && System.nanoTime() < until) {
      Thread.sleep(50);
    }
    assertEquals(0, GlslCompiler.compilesInFlight(), "abandoned compiles still running after 3 minutes");
  }

  @Test
  void slowCompile_failsWithTimeout_withinBudgetPlusSlack() {
    long t0 = System.nanoTime();
    GpuException e = assertThrows(GpuException.class,
        () -> GlslCompiler.withBudget(Duration.ofMillis(200), () -> compile(slowBody(6_000))));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertEquals(GpuException.Code.TIMEOUT, e.code(), e::getMessage);
    assertTrue(e.getMessage().contains("did not compile within its budget"), e::getMessage);
    assertTrue(e.fix().contains("spark.vkspark.compileTimeout"), e::getMessage);
    assertTrue(ms < 200 + 2_000, "failed after " + ms + " ms");
    // the same body without a budget compiles: the budget, not the body, failed it
    assertNotNull(compile("x + 1"));
  }

  @Test
  void interruptedWaiter_returnsPromptly_withItsInterruptFlag() throws Exception {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<Boolean> flag = new AtomicReference<>();
    Thread waiter = new Thread(() -> {
      try {
        compile(slowBody(6_000)); // no budget: only the interrupt ends the wait
      } catch (Throwable t) {
        thrown.set(t);
      }
      flag.set(Thread.currentThread().isInterrupted());
    }, "compile-waiter");
    waiter.start();
    long until = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (GlslCompiler.compilesInFlight() == 0 && System.nanoTime() < until) {
      Thread.sleep(5);
    }
    Thread.sleep(200); // shaderc is busy now
    assertTrue(waiter.isAlive(), "the slow compile was still running");
    long t0 = System.nanoTime();
    waiter.interrupt();
    waiter.join(2_000);
    assertFalse(waiter.isAlive(), "the interrupted waiter still waits");
    assertTrue((System.nanoTime() - t0) / 1_000_000 < 2_000);
    GpuException e = assertInstanceOf(GpuException.class, thrown.get());
    assertEquals(GpuException.Code.CANCELLED, e.code(), e::getMessage);
    assertTrue(e.getMessage().contains("Fix:"), e::getMessage);
    assertTrue(flag.get(), "the interrupt flag is kept for the caller");
    assertTrue(GlslCompiler.compilesInFlight() > 0, "shaderc runs on; its place stays taken until it ends");
  }

  @Test
  void abandonedCompiles_neverExceedTheInFlightBound() throws Exception {
    int callers = GlslCompiler.MAX_IN_FLIGHT + 3;
    ConcurrentLinkedQueue<GpuException> errors = new ConcurrentLinkedQueue<>();
    List<Thread> threads = new ArrayList<>();
    AtomicInteger mostThreads = new AtomicInteger();
    AtomicInteger mostInFlight = new AtomicInteger();
    for (int i = 0; i < callers; i++) {
      String body = slowBody(6_000);
      Thread t = new Thread(() -> {
        try {
          // a budget well below the compile's own time on a fast machine too (the H200 host compiles
          // 6,000 terms in well under a second): no place frees up while a caller still waits
          GlslCompiler.withBudget(Duration.ofMillis(150), () -> compile(body));
        } catch (GpuException e) {
          errors.add(e);
        }
      }, "compile-caller-" + i);
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      while (t.isAlive()) {
        mostThreads.accumulateAndGet(GlslCompiler.compilerThreads(), Math::max);
        mostInFlight.accumulateAndGet(GlslCompiler.compilesInFlight(), Math::max);
        t.join(5);
      }
    }
    assertEquals(callers, errors.size(), "every caller gave up within its budget");
    long timedOut = errors.stream().filter(e -> e.getMessage().contains("did not compile within its budget")).count();
    long refused = errors.stream().filter(e -> e.getMessage().contains("stayed busy for its whole compile budget")).count();
    assertEquals(GlslCompiler.MAX_IN_FLIGHT, timedOut, () -> errors.toString());
    assertEquals(callers - GlslCompiler.MAX_IN_FLIGHT, refused, () -> errors.toString());
    errors.forEach(e -> assertEquals(GpuException.Code.TIMEOUT, e.code(), e::getMessage));
    assertTrue(mostThreads.get() <= GlslCompiler.MAX_IN_FLIGHT, "compiler threads: " + mostThreads);
    assertTrue(mostInFlight.get() <= GlslCompiler.MAX_IN_FLIGHT, "compiles in flight: " + mostInFlight);
    assertEquals(GlslCompiler.MAX_IN_FLIGHT, GlslCompiler.compilesInFlight(), "the abandoned compiles hold their places");
  }
}
