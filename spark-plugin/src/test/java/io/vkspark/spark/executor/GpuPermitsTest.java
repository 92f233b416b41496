package io.vkspark.spark.executor;

import io.vkspark.spark.executor.GpuLease;
import io.vkspark.spark.executor.GpuPermits;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The GPU permit protocol on its own (no Spark, no device): leases, a killed waiter, closing. */
final class GpuPermitsTest {

  @Test
  void lease_isGivenBackOnClose_once() {
    GpuPermits p = new GpuPermits(2);
    try (GpuLease a = p.lease(); GpuLease b = p.lease()) {
      assertEquals(0, p.available());
      a.close();
      a.close(); // idempotent: gives back one permit, not two
      assertEquals(1, p.available());
    }
    assertEquals(2, p.available());
  }

  @Test
  void waiter_measuresItsWait_andAKilledWaiterStopsWithCancelled() throws Exception {
    GpuPermits p = new GpuPermits(1);
    GpuLease held = p.lease();
    CompletableFuture<Long> waited = CompletableFuture.supplyAsync(() -> {
      try (GpuLease l = p.lease()) {
        return l.waitNs();
      }
    });
    Thread.sleep(200);
    held.close();
    assertTrue(waited.get(10, TimeUnit.SECONDS) >= TimeUnit.MILLISECONDS.toNanos(150), "the wait is measured");

    held = p.lease();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicBoolean stillInterrupted = new AtomicBoolean();
    Thread killed = new Thread(() -> {
      try (GpuLease l = p.lease()) {
        fail("got a permit that was held");
      } catch (GpuException e) {
        failure.set(e);
        stillInterrupted.set(Thread.currentThread().isInterrupted());
      }
    });
    killed.start();
    Thread.sleep(100);
    killed.interrupt();
    killed.join(10_000);
    GpuException e = (GpuException) failure.get();
    assertEquals(GpuException.Code.CANCELLED, e.code());
    assertTrue(e.getMessage().contains("interrupted while waiting for the GPU") && e.getMessage().contains("Fix:"),
        e.getMessage());
    assertTrue(stillInterrupted.get(), "the interrupt stays visible to Spark");
    held.close();
    assertEquals(1, p.available(), "the killed waiter took no permit");
  }

  @Test
  void closeWhenIdle_waitsForTheHolder_thenWaitersFailClosed_andEveryPermitComesBack() throws Exception {
    GpuPermits p = new GpuPermits(2);
    GpuLease running = p.lease();
    CountDownLatch closing = new CountDownLatch(1);
    AtomicBoolean closedWhileRunning = new AtomicBoolean();
    AtomicReference<Boolean> quiet = new AtomicReference<>();
    Thread shutdown = new Thread(() -> {
      closing.countDown();
      quiet.set(p.closeWhenIdle(Duration.ofSeconds(30), () -> closedWhileRunning.set(p.available() != 0)));
    });
    shutdown.start();
    closing.await();
    Thread.sleep(100);
    // Two tasks arrive while the shutdown waits for the running one: they queue behind it.
    CompletableFuture<GpuException> w1 = waiter(p);
    CompletableFuture<GpuException> w2 = waiter(p);
    Thread.sleep(100);
    assertNull(quiet.get(), "closing waits for the task holding a permit");
    running.close();
    shutdown.join(10_000);
    assertEquals(Boolean.TRUE, quiet.get());
    assertFalse(closedWhileRunning.get(), "the device closed while the shutdown held every permit");
    for (CompletableFuture<GpuException> w : List.of(w1, w2)) {
      GpuException e = w.get(10, TimeUnit.SECONDS);
      assertEquals(GpuException.Code.CLOSED, e.code());
      assertTrue(e.getMessage().contains("was closed while this task waited") && e.getMessage().contains("Fix:"),
          e.getMessage());
    }
    assertEquals(2, p.available(), "every permit is back: later waiters fail fast too");
    assertThrows(GpuException.class, p::lease);
    assertEquals(2, p.available());
  }

  @Test
  void closeWhenIdle_closesAnywayAfterItsWait() {
    GpuPermits p = new GpuPermits(1);
    GpuLease stuck = p.lease();
    AtomicBoolean closed = new AtomicBoolean();
    assertFalse(p.closeWhenIdle(Duration.ofMillis(100), () -> closed.set(true)));
    assertTrue(closed.get());
    assertTrue(p.isClosed());
    // a waiter fails fast at once, while the stuck task still holds its permit
    assertEquals(GpuException.Code.CLOSED, assertThrows(GpuException.class, p::lease).code());
    stuck.close();
    assertEquals(GpuException.Code.CLOSED, assertThrows(GpuException.class, p::lease).code());
  }

  private static CompletableFuture<GpuException> waiter(GpuPermits p) {
    return CompletableFuture.supplyAsync(() -> {
      try (GpuLease l = p.lease()) {
        return null;
      } catch (GpuException e) {
        return e;
      }
    }, r -> new Thread(r).start());
  }
}
