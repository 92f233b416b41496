package io.vkspark.spark.javaudfs;

import org.apache.spark.sql.api.java.UDF1;

/** Not strict: {@code x + 1}, and {@code -1} for a null {@code x}. */
public final class OrMinusOne implements UDF1<Integer, Integer> {
  @Override
  public Integer call(Integer x) {
    return x == null ? -1 : x + 1;
  }
}
