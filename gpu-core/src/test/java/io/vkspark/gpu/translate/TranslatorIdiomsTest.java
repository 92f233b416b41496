package io.vkspark.gpu.translate;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.TestGpu;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.translate.MethodCheck.Kind;
import io.vkspark.gpu.translate.MethodCheck.Outcome;
import io.vkspark.gpu.translate.MethodGenerator.P;
import io.vkspark.gpu.translate.MethodGenerator.Tolerance;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The everyday idioms of real UDFs (issue 31): boxes and {@code Objects}, the {@code Math} methods
 * added with exact device versions, floating-point {@code %}, helpers of other classes. Each
 * method of class {@code vkgen.I} is checked like a generated one ({@link MethodCheck}: edge and
 * random rows, every row against Java, bit for bit).
 */
final class TranslatorIdiomsTest {
  static final String SOURCE = """
      package vkgen;

      import java.sql.Timestamp;
      import java.time.DayOfWeek;
      import java.time.Instant;
      import java.time.LocalDate;
      import java.util.Objects;

      public final class I {
        // Math, exact
        public static long roundD(double a0) { return Math.round(a0); }
        public static int roundF(float a0) { return Math.round(a0); }
        public static long roundHalves(int a0) { return Math.round(a0 * 0.5) + Math.round(-a0 * 0.5 - 0.25); }
        public static double hypot(double a0, double a1) { return Math.hypot(a0, a1); }
        public static double hypotNear(double a0) { return StrictMath.hypot(a0, a0 * 0.75) + Math.hypot(a0 * 1e-10, 3.0); }
        public static double cbrt(double a0) { return Math.cbrt(a0); }
        public static double cbrtStrict(float a0) { return StrictMath.cbrt(a0 * 3.0); }
        public static double signumCopySign(double a0, double a1) { return Math.signum(a0) + Math.copySign(a0, a1); }
        public static double strictCopySign(double a0, double a1) { return StrictMath.copySign(a0, a1); }
        public static float copySignF(float a0, float a1) { return Math.copySign(a0, a1); }
        public static int compares(double a0, float a1, int a2, long a3) {
          return Double.compare(a0, a1) * 1000 + Float.compare(a1, (float) a0) * 100 + Integer.compare(a2, (int) a3) * 10
              + Long.compare(a3, a2);
        }
        public static int bitsInt(int a0) {
          return Integer.bitCount(a0) + 100 * Integer.numberOfLeadingZeros(a0) + 10000 * Integer.numberOfTrailingZeros(a0)
              + Integer.signum(a0);
        }
        public static int bitsLong(long a0) {
          return Long.bitCount(a0) + 100 * Long.numberOfLeadingZeros(a0) + 10000 * Long.numberOfTrailingZeros(a0)
              + 1000000 * Long.signum(a0);
        }
        public static long rotations(int a0, long a1, int a2) {
          return Integer.rotateLeft(a0, a2) ^ Integer.rotateRight(a0, 3) ^ Long.rotateLeft(a1, a2) ^ Long.rotateRight(a1, a2 - 5)
              ^ Integer.highestOneBit(a0) ^ Integer.lowestOneBit(a2) ^ Long.lowestOneBit(a1);
        }
        public static long floors(long a0, int a1) {
          return Math.floorDiv(a0, 7L) + Math.floorMod(a1, 5) + Math.abs(a1) + Math.abs(a0 >> 3);
        }
        public static int absExact(int a0) { return Math.absExact(a0); }
        public static long predicates(double a0, float a1) {
          return (Double.isNaN(a0) ? 1 : 0) + (Double.isInfinite(a0) ? 2 : 0) + (Double.isFinite(a0) ? 4 : 0)
              + (Float.isNaN(a1) ? 8 : 0) + Double.doubleToRawLongBits(a0) + Double.doubleToLongBits(a0 * 0.0)
              + Float.floatToIntBits(a1);
        }
        // lavapipe folded x * 0.0 into 0.0 (NaN and infinities give NaN, negatives -0.0), x + 0.0 into x (-0.0 + 0.0
        // is 0.0) and 0.0 - x into -x (0.0 - 0.0 is 0.0): the 0.0 is made opaque
        public static double mulZero(double a0) { return a0 * 0.0; }
        public static double mulNegZero(double a0) { return a0 * -0.0; }
        public static double addZero(double a0) { return a0 + 0.0; }
        public static double addNegZero(double a0) { return a0 + -0.0; }
        public static double subZero(double a0) { return a0 - 0.0; }
        public static double zeroSub(double a0) { return 0.0 - a0; }
        public static float mulZeroF(float a0) { return a0 * 0.0f; }
        public static double subNegZero(double a0) { return a0 - -0.0; }
        public static double zeroAdd(double a0) { return 0.0 + a0; }
        public static float addZeroF(float a0) { return a0 + 0.0f; }
        public static float zeroSubF(float a0) { return 0.0f - a0; }
        public static float subNegZeroF(float a0) { return a0 - -0.0f; }
        public static double fromBits(long a0) { return Double.longBitsToDouble(a0 & 0x7fefffffffffffffL); }
        // floating-point %
        public static double remD(double a0, double a1) { return a0 % a1; }
        public static float remF(float a0, float a1) { return a0 % a1; }
        public static double remAngle(double a0) { return a0 % 360.0; }
        public static double remTiny(double a0) { return a0 % 1e-300; }
        public static double remHuge(double a0) { return 1e300 % a0; }
        public static double remSub(double a0) { return a0 % 4.9e-324; }
        public static double remMax(double a0) { return Double.MAX_VALUE % a0; }
        // boxes and Objects
        public static boolean boxEquals(Integer a0, Integer a1) { return a0.equals(a1) || a0.equals(a0 + 1); }
        public static boolean boxEqualsD(Double a0, Double a1) { return a0.equals(a1) || a0.equals(a0 * 1.0) && a0 > 1; }
        public static boolean boxEqualsF(Float a0) { return a0.equals(-a0) ; }
        public static boolean boolEquals(Boolean a0, boolean a1) { return a0.equals(a1); }
        public static boolean mixedEquals(Integer a0, long a1) { return a0.equals(a1) || a0.equals((int) a1); }
        public static int boxCompare(Long a0, Long a1) { return a0.compareTo(a1) + 3 * Long.valueOf(7L).compareTo(a0); }
        public static int boxCompareD(Double a0, Double a1) { return a0.compareTo(a1); }
        public static int boxHash(Double a0, Long a1, Float a2) { return a0.hashCode() ^ a1.hashCode() * 31 ^ a2.hashCode(); }
        public static int hashes(long a0, double a1, float a2, boolean a3) {
          return Long.hashCode(a0) ^ Double.hashCode(a1) ^ Float.hashCode(a2) ^ Boolean.hashCode(a3) ^ Integer.hashCode((int) a0);
        }
        public static boolean objectsEquals(Integer a0, Integer a1) {
          Integer none = null;
          return Objects.equals(a0, a1) || Objects.equals(none, a0) || Objects.equals(a0, none);
        }
        public static Integer requireNonNull(Integer a0) { return Objects.requireNonNull(a0, "a0") + 1; }
        public static boolean isNull(Double a0) { return Objects.isNull(a0) || Objects.nonNull(a0) && a0 > 1; }
        public static double boxValues(Integer a0, Double a1) {
          return a0.doubleValue() + a1.intValue() + a1.longValue() + a0.byteValue() + Objects.hashCode(a1) + (a1.isNaN() ? 1 : 0);
        }
        // constant tables: static final arrays read when translating, local arrays of constants; Java's bounds
        static final int[] POW10 = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
        static final double[] WEIGHTS = {0.5, -1.25, Double.NaN, Double.NEGATIVE_INFINITY, -0.0, 1e300};
        static final char[] CHARS = {'a', 'Z', '\uffff'};
        static final byte[] BYTES = {-128, 127, -1};
        static final long[] LONGS = {Long.MIN_VALUE, 42L};
        public static int pow10(int a0) { return POW10[a0 & 7] * (a0 >> 8) + POW10.length; }
        public static int pow10Bounds(int a0) { return POW10[a0]; }
        public static double weights(int a0, double a1) { return WEIGHTS[Math.floorMod(a0, WEIGHTS.length)] * a1; }
        public static int localTable(int a0) { int[] t = {3, 1, 4, 1, 5, 9, 2, 6}; return t[a0 & 7] + t.length; }
        public static long localLongs(byte a0) { long[] t = {-1L, Long.MAX_VALUE, 7L}; return t[Math.abs(a0 % 3)]; }
        // Double.compare against NaN, both zeros and both infinities: one base-3 digit each
        static final double[] SPECIALS = {Double.NaN, -0.0, 0.0, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, 1.0,
            -Double.MIN_VALUE};
        public static int compareSpecials(double a0) {
          int s = 0;
          for (int i = 0; i < SPECIALS.length; i++) {
            s = s * 3 + Double.compare(a0, SPECIALS[i]) + 1 + 9 * Double.compare(SPECIALS[i], SPECIALS[(i + a0 > 0 ? 1 : 2) % 7]);
          }
          return s;
        }
        public static int compareSpecialsF(float a0, float a1) {
          return Float.compare(a0, a1) * 9 + Float.compare(a0, (float) SPECIALS[Math.abs((int) a1) % 7]) * 3
              + Float.compare(Float.NaN, a0);
        }
        public static int charsBytes(int a0) { return CHARS[a0 & 1] + BYTES[(a0 >>> 1) % 3] + (int) LONGS[a0 & 1]; }
        public static double localZeros(int a0) { double[] z = new double[3]; return z[a0 & 1] + a0; }
        public static int tableInLoop(int a0) {
          int[] digits = {7, 3, 9};
          int s = 0;
          for (int i = 0; i < (a0 & 15); i++) {
            s = s * 3 + digits[i % digits.length] + POW10[i % 4];
          }
          return s;
        }
        // dates and timestamps (LocalDate and Instant as Spark's java8API passes them, Timestamp from 1900)
        public static int dateFields(LocalDate a0) { return a0.getYear() * 10000 + a0.getMonthValue() * 100 + a0.getDayOfMonth(); }
        public static long epochDay(LocalDate a0) {
          return a0.toEpochDay() + a0.getDayOfYear() * 3L + a0.lengthOfMonth() + (a0.isLeapYear() ? 1000 : 0) + a0.lengthOfYear();
        }
        public static int dayOfWeek(LocalDate a0) {
          DayOfWeek d = a0.getDayOfWeek();
          return d.getValue() * 10 + d.ordinal() + (d == DayOfWeek.SATURDAY || d == DayOfWeek.SUNDAY ? 100 : 0)
              + (d.equals(DayOfWeek.MONDAY) ? 1000 : 0);
        }
        public static LocalDate plusDays(LocalDate a0, int a1) { return a0.plusDays(a1).minusDays(3).plusWeeks(a1 & 7); }
        public static int compareDates(LocalDate a0, LocalDate a1) {
          return a0.compareTo(a1) * 7 + (a0.isBefore(a1) ? 1 : 0) + (a0.isAfter(a1) ? 2 : 0) + (a0.isEqual(a1) ? 4 : 0)
              + (a0.equals(a1) ? 8 : 0) + a0.hashCode() + (a0.equals(a0.plusDays(0)) ? 16 : 0);
        }
        public static LocalDate ofDate(int a0, byte a1, byte a2) { return LocalDate.of(a0 % 3000, a1 & 15, a2 & 31); }
        public static LocalDate ofEpochDay(long a0) { return LocalDate.ofEpochDay(a0 >> 20); }
        public static long instantParts(Instant a0) {
          return a0.toEpochMilli() * 31 + a0.getEpochSecond() + a0.getNano() + a0.hashCode();
        }
        public static Instant instantPlus(Instant a0, int a1) { return a0.plusSeconds(a1).minusMillis(a1 * 7L).plusMillis(5); }
        public static int compareInstants(Instant a0, Instant a1) {
          return a0.compareTo(a1) + (a0.isBefore(a1) ? 10 : 0) + (a0.isAfter(a1) ? 20 : 0) + (a0.equals(a1) ? 40 : 0)
              + a0.compareTo(a0.plusMillis(1)) * 100;
        }
        public static long timestamp(Timestamp a0, Timestamp a1) {
          return a0.getTime() + a0.getNanos() + (a0.before(a1) ? 1 : 0) + (a0.after(a1) ? 2 : 0) + a0.compareTo(a1) * 4
              + a0.toInstant().getEpochSecond() + (a0.equals(a1) ? 8 : 0);
        }
        public static Timestamp sameTimestamp(Timestamp a0) { return a0; }
        // helpers of another class, boxed parameters included
        public static double otherClass(Double a0, int a1) { return Util.scale(a0, a1) + Util.twice(a1) + Util.scale(null, 2); }
      }
      """;

  static final String UTIL = """
      package vkgen;

      public final class Util {
        static double scale(Double x, int k) {
          if (x == null) {
            return -1;
          }
          return x * k;
        }

        static int twice(int x) {
          return 2 * x;
        }
      }
      """;

  private static GpuDevice device;
  private static ColumnRuntime runtime;
  private static GeneratedClasses classes;

  @BeforeAll
  static void open() {
    device = TestGpu.openRefining();
    runtime = new ColumnRuntime(device);
    classes = new GeneratedClasses(Map.of("vkgen.I", SOURCE, "vkgen.Util", UTIL));
  }

  @AfterAll
  static void close() throws Exception {
    try {
      if (classes != null) {
        classes.close();
      }
    } finally {
      if (runtime != null) {
        runtime.close();
      }
      if (device != null) {
        TestGpu.closeClean(device);
      }
    }
  }

  static List<String> methods() {
    List<String> out = new ArrayList<>();
    for (String line : SOURCE.split("\n")) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("public static \\S+ (\\w+)\\(").matcher(line);
      if (m.find()) {
        out.add(m.group(1));
      }
    }
    return out;
  }

  static Method method(String name) {
    return java.util.Arrays.stream(classes.load("vkgen.I").getDeclaredMethods()).filter(x -> x.getName().equals(name))
        .findFirst().orElseThrow();
  }

  @ParameterizedTest
  @MethodSource("methods")
  void givesJavasBits(String name) {
    Method m = method(name);
    List<P> ps = java.util.Arrays.stream(m.getParameterTypes()).map(TranslatorFindingsTest::type).toList();
    P result = TranslatorFindingsTest.type(m.getReturnType());
    int rows = name.startsWith("rem") || name.startsWith("cbrt") || name.startsWith("hypot") || name.startsWith("round")
        ? 2048 : 256;
    try (BufferAllocator allocator = new RootAllocator()) {
      MethodCheck check = new MethodCheck(runtime, allocator, JavaTranslator::translate);
      String src = "vkgen.I." + name + "\n";
      MethodCheck.Prepared p = check.prepare(m, ps, result, src);
      Outcome o = check.run(p, ps, result, Tolerance.EXACT, src, rows, new Random(name.hashCode()));
      assertEquals(Kind.PASSED, o.kind(), o.category() + "\n" + o.detail());
      assertTrue(p.translated().exact(), "no approximate call: " + p.translated().approximate());
    }
  }

  @Test
  void cbrtAndHypotOfJava17AreStrictMaths() {
    // the device computes StrictMath's fdlibm bits; on Java 17 Math's are the same (no intrinsic)
    assertEquals(Runtime.version().feature() < 24, MathCalls.CBRT_IS_STRICT, "Math.cbrt is StrictMath.cbrt on this JVM");
    assertTrue(MathCalls.HYPOT_IS_STRICT, "Math.hypot is StrictMath.hypot on this JVM");
  }
}
