package io.vkspark.gpu.internal;

import java.util.Arrays;

/**
 * Closing several objects where any may fail: every one is still closed, so one failure cannot
 * leak the rest (device memory, pipelines). The first failure is thrown, later ones suppressed on it.
 */
public final class Closeables {
  private Closeables() {}

  /** Closes every non-null element in order; throws the first failure with the later ones suppressed. */
  public static void closeAll(Iterable<? extends AutoCloseable> all) {
    RuntimeException failure = closeEach(all, null);
    if (failure != null) {
      throw failure;
    }
  }

  /** {@link #closeAll(Iterable)} over the arguments. */
  public static void closeAll(AutoCloseable... all) {
    closeAll(Arrays.asList(all));
  }

  /**
   * Cleans up after {@code primary} (the failure being thrown): closes every non-null element and
   * adds each close failure to {@code primary} as suppressed. Never throws.
   */
  public static void closeAllAfter(Throwable primary, Iterable<? extends AutoCloseable> all) {
    closeEach(all, primary);
  }

  /** Closes each; failures go onto {@code into} when given, else onto the first failure, which is returned. */
  private static RuntimeException closeEach(Iterable<? extends AutoCloseable> all, Throwable into) {
    RuntimeException first = null;
    for (AutoCloseable c : all) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        RuntimeException r = unchecked(e);
        if (into != null) {
          if (into != r) {
            into.addSuppressed(r);
          }
        } else if (first == null) {
          first = r;
        } else if (first != r) {
          first.addSuppressed(r);
        }
      }
    }
    return first;
  }

  private static RuntimeException unchecked(Exception e) {
    return e instanceof RuntimeException r ? r : new IllegalStateException("close failed: " + e, e);
  }
}
