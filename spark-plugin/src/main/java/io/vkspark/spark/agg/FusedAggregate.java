package io.vkspark.spark.agg;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Objects;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * One aggregate function of a partial aggregation fused into {@link VkGpuAggregateExec}: which
 * function, which columns of the {@code VkGpuEval} output it reads, and the column type. Its partial
 * result is Spark's own aggregation buffer for the function (what the unchanged final aggregation
 * merges): {@code SUM} one {@code sum} (null until a non-null value), {@code COUNT} one {@code count},
 * {@code MIN}/{@code MAX} one value (null until a non-null value), {@code AVG} {@code sum} (0.0) and
 * {@code count} (0).
 *
 * @param kind the function
 * @param ordinals the columns it reads (COUNT: every argument that may be null; none for COUNT(*))
 * @param input the column's type (int, bigint, float or double; ignored for COUNT)
 * @param ansi integral SUM fails on overflow, as Spark's ANSI mode does (else it wraps)
 * @param text the function as Spark prints it, for EXPLAIN
 */
public record FusedAggregate(Kind kind, int[] ordinals, DataType input, boolean ansi, String text) implements Serializable {
  /** The functions vkspark fuses. */
  public enum Kind { SUM, COUNT, MIN, MAX, AVG }

  /** The numeric column types a fused function reads. */
  static boolean supportedInput(DataType t) {
    return t.equals(DataTypes.IntegerType) || t.equals(DataTypes.LongType) || t.equals(DataTypes.FloatType)
        || t.equals(DataTypes.DoubleType);
  }

  /** Whether the input is int or bigint. */
  boolean integral() {
    return input.equals(DataTypes.IntegerType) || input.equals(DataTypes.LongType);
  }

  /** The types of the function's partial-result columns, in Spark's buffer order. */
  DataType[] bufferTypes() {
    return switch (kind) {
      case SUM -> new DataType[] {integral() ? DataTypes.LongType : DataTypes.DoubleType};
      case COUNT -> new DataType[] {DataTypes.LongType};
      case MIN, MAX -> new DataType[] {input};
      case AVG -> new DataType[] {DataTypes.DoubleType, DataTypes.LongType};
    };
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FusedAggregate f && f.kind == kind && Arrays.equals(f.ordinals, ordinals)
        && f.input.equals(input) && f.ansi == ansi && f.text.equals(text);
  }

  @Override
  public int hashCode() {
    return Objects.hash(kind, Arrays.hashCode(ordinals), input, ansi, text);
  }

  @Override
  public String toString() {
    return text;
  }
}
