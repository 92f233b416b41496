package io.vkspark.spark.javaudfs;

import org.apache.spark.sql.api.java.UDF2;

/** {@code a / b} in Java ints: throws ArithmeticException where b is 0; null arguments give null. */
public final class IntDiv implements UDF2<Integer, Integer, Integer> {
  @Override
  public Integer call(Integer a, Integer b) {
    if (a == null || b == null) {
      return null;
    }
    return a / b;
  }
}
