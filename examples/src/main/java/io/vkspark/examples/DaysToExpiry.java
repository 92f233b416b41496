package io.vkspark.examples;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import java.sql.Date;
import java.time.LocalDate;
import java.time.temporal.ChronoField;
import java.util.Calendar;
import java.util.GregorianCalendar;
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
 * default time zone. Reading its fields in that zone recovers Spark's day number in any time zone;
 * {@code getTime() / 86_400_000} would not (off by one day east of UTC, and before 1970). Dates
 * carry no time zone, so the result does not depend on {@code spark.sql.session.timeZone} either.
 * Null in, null out.
 *
 * <p>Calendars: Spark counts days in the proleptic Gregorian calendar, and hands {@code call()} a
 * {@code Date} with the same year, month and day in Java's Julian/Gregorian calendar. Before year 1
 * that calendar counts years by era (1 BC, not year 0), so {@code Date.toLocalDate()} is a year off
 * there, and fails on 0000-02-29. {@link #epochDay} reads the era too, as Spark's own conversion does.
 */
public final class DaysToExpiry implements UDF2<Date, Date, Integer>, GpuUdf {
  private static final long serialVersionUID = 1L;

  @Override
  public Integer call(Date trade, Date expiry) {
    if (trade == null || expiry == null) {
      return null;
    }
    return (int) (epochDay(expiry) - epochDay(trade));   // int arithmetic, as datediff and the kernel
  }

  /** Spark's day number of a {@code Date} from Spark: its calendar fields, era included, as proleptic Gregorian. */
  static long epochDay(Date date) {
    Calendar c = new GregorianCalendar();
    c.setTime(date);
    // Day 1 then plus days: a Julian leap day (1000-02-29) has no Gregorian twin, as in Spark's rebase.
    return LocalDate.of(c.get(Calendar.YEAR), c.get(Calendar.MONTH) + 1, 1)
        .with(ChronoField.ERA, c.get(Calendar.ERA))
        .plusDays(c.get(Calendar.DAY_OF_MONTH) - 1L)
        .toEpochDay();
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("int").arg("trade", "date").arg("expiry", "date").body("expiry - trade");
  }
}
