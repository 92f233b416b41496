package io.vkspark.gpu.translate;

import io.vkspark.gpu.column.SqlType;

/**
 * The date and time values a translated UDF may take, return and call methods on, each kept on the
 * device as Spark keeps it ({@link SqlType#DATE}: days since 1970-01-01, an {@code int};
 * {@link SqlType#TIMESTAMP}: microseconds since 1970-01-01T00:00Z, a {@code long}) and as Spark
 * hands it to {@code call()}:
 * <ul>
 *   <li>{@code java.time.LocalDate} (a date column with
 *       {@code spark.sql.datetime.java8API.enabled=true}): {@code LocalDate.ofEpochDay(days)},
 *       proleptic Gregorian, no time zone;</li>
 *   <li>{@code java.time.Instant} (a timestamp column, java8API): the same instant, no time zone;</li>
 *   <li>{@code java.sql.Timestamp} (a timestamp column, the default): {@code new Timestamp(millis)}
 *       with its nanoseconds, exactly the instant for timestamps from 1900-01-01T00:00Z on (earlier
 *       ones Spark rebases to the Julian calendar in the JVM's default time zone: their rows are
 *       recomputed with {@code call()});</li>
 *   <li>{@code DayOfWeek}: an enum, kept as its value (1 for Monday).</li>
 * </ul>
 * {@code java.sql.Date} is refused: Spark makes one from the JVM's default time zone (local
 * midnight), so {@code getTime()}, {@code getYear()} and even {@code toLocalDate()} (a zone that
 * skipped a day) depend on it.
 */
enum Temporal implements ObjType {
  LOCAL_DATE("java/time/LocalDate", JType.I, SqlType.DATE),
  INSTANT("java/time/Instant", JType.J, SqlType.TIMESTAMP),
  TIMESTAMP("java/sql/Timestamp", JType.J, SqlType.TIMESTAMP),
  DAY_OF_WEEK("java/time/DayOfWeek", JType.I, null);

  /** 1900-01-01T00:00:00Z in microseconds: a {@code java.sql.Timestamp} from here on is the instant itself. */
  static final long TIMESTAMP_EXACT_FROM = -2208988800000000L;

  final String internalName;
  private final JType repr;
  private final SqlType sql;

  Temporal(String internalName, JType repr, SqlType sql) {
    this.internalName = internalName;
    this.repr = repr;
    this.sql = sql;
  }

  @Override
  public JType repr() {
    return repr;
  }

  @Override
  public String className() {
    return internalName.replace('/', '.');
  }

  @Override
  public SqlType sqlType() {
    return sql;
  }

  /** The value type of JVM class {@code internalName}, or null. */
  static Temporal of(String internalName) {
    for (Temporal t : values()) {
      if (t.internalName.equals(internalName)) {
        return t;
      }
    }
    return null;
  }
}
