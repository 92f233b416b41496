package io.vkspark.gpu.bench;

import java.util.Arrays;

/** Order statistics of timings in nanoseconds. */
public record Stats(long[] ns) {
  public static Stats of(long[] ns) {
    long[] sorted = ns.clone();
    Arrays.sort(sorted);
    return new Stats(sorted);
  }

  public long median() {
    return ns[ns.length / 2];
  }

  public long min() {
    return ns[0];
  }

  public long p99() {
    return ns[Math.min(ns.length - 1, (int) Math.ceil(ns.length * 0.99) - 1)];
  }
}
