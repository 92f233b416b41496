package io.vkspark.examples;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import java.sql.Timestamp;
import java.time.Instant;
import org.apache.spark.sql.api.java.UDF1;

/**
 * Whole seconds since the last midnight <em>UTC</em>: {@code seconds_since_midnight(ts)}, 0 to
 * 86,399, for timestamps before 1970 too.
 *
 * <p>Why the GPU: timestamps reach the kernel as {@code int64_t} microseconds since the epoch, so
 * this is 64-bit integer arithmetic (a floor modulo and a division) on 8-byte columns.
 *
 * <p>Time zones: the GPU sees UTC microseconds and knows no time-zone rules, so this is the
 * time of day in UTC. It equals Spark's local time of day ({@code hour(ts) * 3600 + ...}) only
 * when {@code spark.sql.session.timeZone=UTC}. The CPU half converts the {@link Timestamp} Spark
 * passes to an {@link Instant}, which is independent of the JVM's time zone, never through its
 * local fields. Timestamps before 1900 may differ by the offsets of Spark's Julian/Gregorian
 * rebasing. Null in, null out.
 */
public final class SecondsSinceMidnight implements UDF1<Timestamp, Long>, GpuUdf {
  private static final long serialVersionUID = 1L;
  private static final long MICROS_PER_DAY = 86_400_000_000L;

  @Override
  public Long call(Timestamp ts) {
    if (ts == null) {
      return null;
    }
    Instant i = ts.toInstant();
    long micros = Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1000);
    return Math.floorMod(micros, MICROS_PER_DAY) / 1_000_000L;
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("bigint").arg("ts", "timestamp").body("""
        int64_t day = 86400000000l;
        int64_t m = ts - (ts / day) * day;   // truncating remainder
        if (m < 0l) {
          m += day;
        }
        return m / 1000000l;
        """);
  }
}
