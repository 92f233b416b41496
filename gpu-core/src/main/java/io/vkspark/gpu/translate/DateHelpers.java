package io.vkspark.gpu.translate;

import java.util.List;
import java.util.Map;

/**
 * GLSL helpers for dates ({@link DateCalls}): the proleptic Gregorian calendar of
 * {@code java.time.LocalDate}, by Howard Hinnant's {@code civil_from_days} and
 * {@code days_from_civil} (exact for every {@code int} day), and a floor division of longs by a
 * positive constant. Ordered {@code int64} comparisons with constants are avoided (lavapipe, see
 * {@link Helpers}): signs are read with a shift.
 */
final class DateHelpers {
  private DateHelpers() {}

  static final Map<String, String> TEXT = Map.ofEntries(
      Map.entry("vkt_lfloordiv", "int64_t vkt_lfloordiv(int64_t a, int64_t b) { int64_t q = jdiv(a, b);"
          + " return ((a >> 63) != 0l && q * b != a) ? q - 1l : q; }"),
      Map.entry("vkt_civil", "ivec3 vkt_civil(int days) { int64_t z = int64_t(days) + 719468l;"
          + " int64_t era = vkt_lfloordiv(z, 146097l); int doe = int(z - era * 146097l);"
          + " int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;"
          + " int doy = doe - (365 * yoe + yoe / 4 - yoe / 100); int mp = (5 * doy + 2) / 153;"
          + " int d = doy - (153 * mp + 2) / 5 + 1; int m = mp < 10 ? mp + 3 : mp - 9;"
          + " return ivec3(int(int64_t(yoe) + era * 400l) + (m <= 2 ? 1 : 0), m, d); }"),
      Map.entry("vkt_year", "int vkt_year(int days) { return vkt_civil(days).x; }"),
      Map.entry("vkt_month", "int vkt_month(int days) { return vkt_civil(days).y; }"),
      Map.entry("vkt_day", "int vkt_day(int days) { return vkt_civil(days).z; }"),
      Map.entry("vkt_days", "int64_t vkt_days(int y, int m, int d) { int64_t yy = int64_t(y) - (m <= 2 ? 1l : 0l);"
          + " int64_t era = vkt_lfloordiv(yy, 400l); int yoe = int(yy - era * 400l);"
          + " int doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;"
          + " int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; return era * 146097l + int64_t(doe) - 719468l; }"),
      // IsoChronology.isLeapYear
      Map.entry("vkt_leap", "bool vkt_leap(int y) { return (y & 3) == 0 && (jrem(y, 100) != 0 || jrem(y, 400) == 0); }"),
      Map.entry("vkt_month_length", "int vkt_month_length(int y, int m) { return m == 2 ? (vkt_leap(y) ? 29 : 28)"
          + " : (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31; }"),
      // LocalDate.compareTo0
      Map.entry("vkt_date_cmp", "int vkt_date_cmp(int a, int b) { ivec3 x = vkt_civil(a); ivec3 y = vkt_civil(b);"
          + " return x.x != y.x ? x.x - y.x : x.y != y.y ? x.y - y.y : x.z - y.z; }"));

  static final Map<String, List<String>> NEEDS = Map.of(
      "vkt_civil", List.of("vkt_lfloordiv"),
      "vkt_year", List.of("vkt_civil"),
      "vkt_month", List.of("vkt_civil"),
      "vkt_day", List.of("vkt_civil"),
      "vkt_days", List.of("vkt_lfloordiv"),
      "vkt_month_length", List.of("vkt_leap"),
      "vkt_date_cmp", List.of("vkt_civil"));
}
