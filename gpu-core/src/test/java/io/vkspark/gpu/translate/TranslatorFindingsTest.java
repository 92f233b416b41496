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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Minimal reproductions of what {@link GeneratedMethodsTest} found in {@link JavaTranslator}, each a
 * method of class {@code vkgen.F} checked like a generated one ({@link MethodCheck}: edge and random
 * rows, each against Java). A method here fails until its translation is fixed.
 */
final class TranslatorFindingsTest {
  static final String SOURCE = """
      package vkgen;

      public final class F {
        // FINDINGS 1 to 4 are fixed on main in 7017e25 (kept as guards)
        // FINDING 1: a boxed parameter the method never reads: its local l0bD is assigned but never
        // declared, and the kernel does not compile ('l0bD' : undeclared identifier)
        public static float unusedBoxedParameter(Double a0, float a1) {
          return a1;
        }

        // FINDING 2: Math.rint(1.5) is 1.0 on lavapipe, Java 2.0 (the translation is GLSL roundEven of
        // a double, which lavapipe gets wrong; floor and ceil below are right)
        public static double rint(double a0) {
          return Math.rint(a0);
        }

        // FINDING 3: an int widened to long and compared with a constant is true for every row on
        // lavapipe (int64_t(a0) > 17l: 135 of 256 rows wrong; int64_t(a0) - 17l > 0l is right). Found
        // as wrong results, and as rows where Java throws but the GPU skipped the throwing branch.
        public static boolean intGtLong(int a0) {
          return a0 > 17L;
        }

        public static boolean shortGtLong(short a0) {
          return a0 > 17L;
        }

        public static boolean negateExactByte(byte a0) {
          return ((byte) Math.negateExact(a0)) > Math.abs(13L);
        }

        public static int earlyUshr(short a0, short a1) {
          if (!(a0 > 17L)) return ((false ? 852391676 : a1) >>> a0);
          return 5;
        }

        // FINDING 4: the Java 9+ overloads javac picks for (long, int) arguments are refused ("has no
        // device version"): Math/StrictMath multiplyExact(JI)J, floorDiv(JI)J, floorMod(JI)I
        public static long multiplyExactLongInt(long a0, int a1) {
          return Math.multiplyExact(a0, a1);
        }

        public static long floorDivLongInt(long a0, int a1) {
          return Math.floorDiv(a0, a1);
        }

        public static int floorModLongInt(long a0, int a1) {
          return Math.floorMod(a0, a1);
        }

        // FINDING 5: StrictMath.sin of a constant made lavapipe's vkCreateComputePipelines run for over
        // ten minutes (generated G13.m4, seed 23); fixed: the translator folds calls of constants on the
        // JVM, with Java's own result (Folding)
        public static double sinOfConstant(float a0) {
          return StrictMath.sin(((double) Math.rint((double) (-9.75)) / ((float) (short) 29788)));
        }

        // FINDING 6 (after 7017e25; seed 23 G3.m14, G8.m11): an int rounded to float and back is the
        // int itself on the GPU: (byte) (float) -754905127 is -39 there, Java -64 (the float is
        // -754905152). The translation is right (precise float t1 = float(t0); int t2 = jint(t1);):
        // a compiler folds the round trip (float to int of int to float, double to long of long to
        // double) into the identity
        public static byte intToFloatToByte(int a0) {
          return (byte) ((float) a0);
        }

        public static int intToFloatToInt(int a0) {
          return (int) (float) a0;
        }

        public static long longToDoubleToLong(long a0) {
          return (long) (double) a0;
        }

        public static float intToFloat(int a0) {
          return (float) a0;
        }

        // controls: right now, kept as guards
        public static double usedBoxedParameter(Double a0, double a1) {
          return (+a0) * 2.0 + a1;
        }

        public static int returnInsideLoop(int a0) {
          for (int i = 0; i < 2; i++) {
            if (a0 > 0) return 1;
            int x = Math.subtractExact(Integer.MIN_VALUE, i + 1);
          }
          return 0;
        }

        public static double floor(double a0) {
          return Math.floor(a0);
        }

        public static double ceil(double a0) {
          return Math.ceil(a0);
        }

        public static int remConstZero(int a0) {
          return a0 % 0;
        }

        public static int remConstZeroUnused(int a0) {
          int v = a0 % 0;
          return a0;
        }

        public static int divConstZeroUnused(int a0) {
          int v = a0 / 0;
          return a0;
        }

        public static int remZeroUnused(int a0, int a1) {
          int v = a0 % a1;
          return a0;
        }

        public static int fallThroughThrows(int a0) {
          switch (a0 & 3) {
            case 1: {
              a0 += 1;
            }
            case 3: {
              float v = Math.floorMod(a0, a0) % 0;
            }
            break;
          }
          return a0;
        }

        public static int shiftByMax(int a0) {
          return (a0 / 4) >> Math.max(a0, a0);
        }

        public static byte byteRemAssign(byte a0) {
          a0 %= ((byte) Math.min(a0, 16L));
          return a0;
        }

        public static float minSignum(float a0) {
          return Math.min(Math.signum(6.25f), Math.signum(a0));
        }

        public static short idShort(short a0) {
          return a0;
        }

        public static byte idByte(byte a0) {
          return a0;
        }

        public static boolean shortGtInt(short a0) {
          return a0 > 17;
        }

        public static long shortToLong(short a0) {
          return a0;
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
    classes = new GeneratedClasses(Map.of("vkgen.F", SOURCE));
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

  static P type(Class<?> c) {
    for (P p : P.values()) {
      if (p.java.equals(c.getName()) || ("java.lang." + p.box).equals(c.getName())) {
        return p;
      }
    }
    throw new IllegalArgumentException(c.toString());
  }

  @ParameterizedTest
  @MethodSource("methods")
  void givesJavasResults(String name) {
    Method m = java.util.Arrays.stream(classes.load("vkgen.F").getDeclaredMethods())
        .filter(x -> x.getName().equals(name)).findFirst().orElseThrow();
    List<P> ps = java.util.Arrays.stream(m.getParameterTypes()).map(TranslatorFindingsTest::type).toList();
    P result = type(m.getReturnType());
    try (BufferAllocator allocator = new RootAllocator()) {
      MethodCheck check = new MethodCheck(runtime, allocator, JavaTranslator::translate);
      String src = "vkgen.F." + name + "\n";
      Outcome o = check.run(check.prepare(m, ps, result, src), ps, result, Tolerance.EXACT, src, 256, new Random(7));
      assertEquals(Kind.PASSED, o.kind(), o.category() + "\n" + o.detail());
    }
  }
}
