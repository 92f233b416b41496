package io.vkspark.examples;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import org.apache.spark.sql.api.java.UDF2;

/**
 * Whether a call option is in the money: {@code in_the_money(s, k)} is {@code s > k}.
 *
 * <p>Why the GPU: a predicate for {@code WHERE}. On its own it is too cheap to be worth a trip to
 * the GPU, but in a query whose other GPU UDFs already upload {@code s} and {@code k}, vkspark
 * evaluates it in the same node, and boolean results come back as bits (1/64 of a double column).
 * It shows that GPU UDFs filter rows like any Spark predicate: a null result (null in) drops the
 * row. Exact on both halves; NaN compares false, as in Java.
 */
public final class InTheMoney implements UDF2<Double, Double, Boolean>, GpuUdf {
  private static final long serialVersionUID = 1L;

  @Override
  public Boolean call(Double s, Double k) {
    return s == null || k == null ? null : s > k;
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("boolean").arg("s", "double").arg("k", "double").body("s > k");
  }
}
