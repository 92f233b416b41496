package io.vkspark.examples;

import io.vkspark.spark.GpuKernel;
import io.vkspark.spark.GpuUdf;
import java.sql.Date;
import org.apache.spark.sql.api.java.UDF2;

/**
 * Calendar days from a trade date to an expiry date: {@code days_to_expiry(trade, expiry)},
 * negative when the option has expired (the same as Spark's {@code datediff(expiry, trade)}).
 *
 * <p>Why the GPU: dates reach the kernel as {@code int} days since 1970-01-01, so date arithmetic
 * is integer arithmetic on 4-byte columns; a building block for the time to expiry of an option
 * ({@code days_to_expiry(trade, expiry) / 365D}) computed next to the pricing UDFs.
 *
 * <p>Time zones: Spark passes {@code call()} a {@link java.sql.Date} at local midnight of the JVM's
 * default time zone. {@code toLocalDate().toEpochDay()} recovers Spark's day number in any time
 * zone; {@code getTime() / 86_400_000} would not (off by one day east of UTC, and before 1970).
 * Dates carry no time zone, so the result does not depend on {@code spark.sql.session.timeZone}
 * either. Null in, null out.
 */
public final class DaysToExpiry implements UDF2<Date, Date, Integer>, GpuUdf {
  private static final long serialVersionUID = 1L;

  @Override
  public Integer call(Date trade, Date expiry) {
    if (trade == null || expiry == null) {
      return null;
    }
    return (int) (expiry.toLocalDate().toEpochDay() - trade.toLocalDate().toEpochDay());
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("int").arg("trade", "date").arg("expiry", "date").body("expiry - trade");
  }
}
