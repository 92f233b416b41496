package io.vkspark.gpu.internal;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/** Waiting for work handed to one of vkspark's dedicated threads (the Vulkan instance's, shaderc's). */
public final class Futures {
  private Futures() {}

  /**
   * The task's result, waiting through interrupts: the task holds native state on its thread and
   * must finish (a killed Spark task may be waiting); the caller's interrupt flag is restored after.
   * The task's own exception is rethrown as it is.
   */
  public static <T> T awaitUninterruptibly(Future<T> f) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return f.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          if (e.getCause() instanceof RuntimeException r) {
            throw r;
          }
          if (e.getCause() instanceof Error err) {
            throw err;
          }
          throw new IllegalStateException(e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
