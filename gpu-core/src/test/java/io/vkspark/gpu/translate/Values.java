package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.MethodGenerator.P;
import java.util.Random;

/** Input values per Java type: each type's edges (NaN, infinities, signed zeros, subnormals, MIN and MAX ...) and random ones. */
final class Values {
  private Values() {}

  static {
    ModuleLayer.boot().findModule("java.sql").ifPresent(m -> Values.class.getModule().addReads(m));
  }

  static final Object[] BOOLEANS = {false, true};
  static final Object[] BYTES = {(byte) 0, (byte) 1, (byte) -1, Byte.MIN_VALUE, Byte.MAX_VALUE, (byte) 2, (byte) -2,
      (byte) 7, (byte) 16, (byte) -127};
  static final Object[] SHORTS = {(short) 0, (short) 1, (short) -1, Short.MIN_VALUE, Short.MAX_VALUE, (short) 255,
      (short) 256, (short) -129, (short) 3, (short) 16};
  static final Object[] INTS = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, Integer.MIN_VALUE + 1,
      Integer.MAX_VALUE - 1, 2, -2, 3, 7, 15, 16, 31, 32, 33, 63, 64, 127, 128, 255, 256, -129, 65535, 65536,
      (int) Short.MIN_VALUE, (int) Short.MAX_VALUE, 46341, -46341, 1 << 24, (1 << 24) + 1};
  static final Object[] LONGS = {0L, 1L, -1L, Long.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE + 1, Long.MAX_VALUE - 1,
      2L, -2L, 3L, 15L, 31L, 32L, 63L, 64L, (long) Integer.MIN_VALUE, (long) Integer.MAX_VALUE,
      (long) Integer.MAX_VALUE + 1, (long) Integer.MIN_VALUE - 1, 1L << 32, (1L << 53) + 1, 1L << 62, 3037000500L,
      -3037000500L, 0xffffffffL};
  static final Object[] FLOATS = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 0.0f, -0.0f,
      Float.MIN_VALUE, -Float.MIN_VALUE, Float.MIN_NORMAL, -Float.MIN_NORMAL, Float.MAX_VALUE, -Float.MAX_VALUE, 1.0f,
      -1.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 3.0f, 0.1f, 2.14748365E9f, -2.14748365E9f, 9.223372E18f, -9.223372E18f,
      1e10f, 16777217f, 0.99999994f, 3.4e38f, 1e-40f};
  static final Object[] DOUBLES = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0.0, -0.0,
      Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL, -Double.MIN_NORMAL, Double.MAX_VALUE, -Double.MAX_VALUE,
      1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 0.1, 2147483647.0, 2147483648.0, -2147483649.0, 9.223372036854776E18,
      -9.223372036854776E18, 1e300, 1e-300, 4.9e-320, 9007199254740993.0, 0.49999999999999994, 3.4028235677973366E38,
      1.401298464324817E-45, 710.0, -745.0, Math.PI, 1e15 + 0.5};

  /** Epoch days: 1970, before it, 1582-10-15 and the day before, leap days, 0001-01-01, 9999-12-31, far years. */
  static final Object[] DAYS = {0, -1, 1, -141427, -141428, 11016, 11017, 19782, -719162, 2932896, -719468, -719469, 59,
      60, 365, 366, 10957, 10956, -25567, 2000000000, -2000000000, Integer.MAX_VALUE, Integer.MIN_VALUE};
  /** Epoch microseconds from 1900-01-01T00:00Z on (a java.sql.Timestamp before it is rebased by Spark). */
  static final Object[] MICROS = {0L, -1L, 1L, 999L, -999L, 1000L, -1001L, -2208988800000000L, 1700000000123456L,
      -1_000_000L, 999_999L, 253402300799999999L, 86_400_000_000L};

  static Object[] edges(P t) {
    return switch (t) {
      case BOOLEAN -> BOOLEANS;
      case BYTE -> BYTES;
      case SHORT -> SHORTS;
      case INT -> INTS;
      case LONG -> LONGS;
      case FLOAT -> FLOATS;
      case DOUBLE -> DOUBLES;
      case LOCALDATE -> DAYS;
      case INSTANT, SQLTIMESTAMP -> MICROS;
    };
  }

  /**
   * The value of column {@code col} in row {@code row}: the first rows walk each type's edges (offset
   * per column, so edges meet other edges), later ones mix edges and random values.
   */
  static Object value(P t, Random r, int row, int col) {
    Object v = value0(t, r, row, col);
    switch (t) {
      case LOCALDATE -> {
        int d = (Integer) v;
        return java.time.LocalDate.ofEpochDay(d);
      }
      case INSTANT -> {
        long us = (Long) v;
        return java.time.Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000L), Math.floorMod(us, 1_000_000L) * 1000);
      }
      case SQLTIMESTAMP -> { // Spark's DateTimeUtils.toJavaTimestampNoRebase
        long us = Math.max((Long) v, -2208988800000000L);
        long seconds = Math.floorDiv(us, 1_000_000L);
        java.sql.Timestamp ts = new java.sql.Timestamp(seconds * 1000);
        ts.setNanos((int) ((us - seconds * 1_000_000L) * 1000));
        return ts;
      }
      default -> { }
    }
    return v; // subnormals included on every device
  }

  private static Object value0(P t, Random r, int row, int col) {
    Object[] e = edges(t);
    if (row < 48) {
      return e[(row + col * 7) % e.length];
    }
    if (r.nextInt(3) == 0) {
      return e[r.nextInt(e.length)];
    }
    return switch (t) {
      case BOOLEAN -> r.nextBoolean();
      case BYTE -> (byte) (r.nextBoolean() ? r.nextInt() : r.nextInt(21) - 10);
      case SHORT -> (short) (r.nextBoolean() ? r.nextInt() : r.nextInt(201) - 100);
      case INT -> switch (r.nextInt(3)) {
        case 0 -> r.nextInt();
        case 1 -> r.nextInt(41) - 20;
        default -> r.nextInt(2_000_001) - 1_000_000;
      };
      case LONG -> switch (r.nextInt(3)) {
        case 0 -> r.nextLong();
        case 1 -> (long) r.nextInt(41) - 20;
        default -> r.nextLong() >> r.nextInt(64);
      };
      case FLOAT -> switch (r.nextInt(3)) {
        case 0 -> (float) ((r.nextDouble() - 0.5) * Math.pow(2, r.nextInt(260) - 130));
        case 1 -> (r.nextInt(81) - 40) / 4.0f;
        default -> {
          float f = Float.intBitsToFloat(r.nextInt());
          yield Float.isNaN(f) ? Float.NaN : f;
        }
      };
      case LOCALDATE -> r.nextInt(3) == 0 ? r.nextInt() : r.nextInt(4_000_000) - 1_000_000;
      case INSTANT, SQLTIMESTAMP -> r.nextInt(3) == 0 ? r.nextLong() >> r.nextInt(8)
          : -2208988800000000L + (long) (r.nextDouble() * 1e17);
      case DOUBLE -> switch (r.nextInt(3)) {
        case 0 -> (r.nextDouble() - 0.5) * Math.pow(2, r.nextInt(2100) - 1050);
        case 1 -> (r.nextInt(81) - 40) / 4.0;
        default -> {
          double d = Double.longBitsToDouble(r.nextLong());
          yield Double.isNaN(d) ? Double.NaN : d;
        }
      };
    };
  }
}
