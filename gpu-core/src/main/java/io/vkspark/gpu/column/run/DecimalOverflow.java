package io.vkspark.gpu.column.run;

/**
 * What a {@link BatchRunner} does with a {@code decimal(p, s)} result whose unscaled value has
 * more than {@code p} digits: as Spark does for a UDF's {@code BigDecimal} result, a null with ANSI
 * mode off ({@code spark.sql.ansi.enabled=false}), an error with it on.
 */
public enum DecimalOverflow {
  /** The row's result is null. */
  NULL,
  /** The batch fails with an OVERFLOW {@link io.vkspark.gpu.GpuException} naming the UDF, the row and the value. */
  ERROR
}
