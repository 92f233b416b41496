package io.vkspark.spark.javaudfs;

import org.apache.spark.sql.api.java.UDF1;

/** Does not translate: it builds a string ({@code new StringBuilder}). */
public final class DigitCount implements UDF1<Long, Integer> {
  @Override
  public Integer call(Long x) {
    if (x == null) {
      return null;
    }
    return new StringBuilder().append(x).length();
  }
}
