package io.vkspark.gpu.translate;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.TestGpu;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.translate.MethodCheck.Kind;
import io.vkspark.gpu.translate.MethodCheck.Outcome;
import io.vkspark.gpu.translate.MethodGenerator.P;
import io.vkspark.gpu.translate.MethodGenerator.Tolerance;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;





import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Scala closures as scalac 2.13 (Spark 4.2's Scala) compiles them, compiled here at test time with
 * the real compiler: each closure object goes through {@link JavaTranslator#translate(Object)}
 * (its {@code SerializedLambda} names the {@code $anonfun} method or its {@code $adapted} bridge),
 * and its rows run on the GPU against the closure's own method ({@link MethodCheck}, bit for bit).
 */
final class ScalaClosuresTest {
  static final String SOURCE = """
      package vkscala

      object S {
        val sqrt2: Double => Double = (x: Double) => math.sqrt(x) * 2
        val maxOf: (Int, Int) => Int = (a: Int, b: Int) => if (a > b) a else b
        val positiveTwice: Double => Option[Double] = (x: Double) => if (x > 0) Some(x * 2) else None
        val rich: Double => Long = (x: Double) => x.abs.max(1.5).toInt + math.round(x) + x.round
        val matchLit: Int => Int = (x: Int) => x match { case 1 => 10; case 2 => 20; case 3 => 30 }
        val boxedNull: java.lang.Double => Double = (x: java.lang.Double) => if (x == null) 0.0 else x * 2
        val required: Long => Long = (x: Long) => { require(x > 0); math.max(x, 3L) + x.abs + x.signum }
        val celsius: Double => Double = (f: Double) => (f - 32) * 5 / 9
        val ageBucket: Int => String = null
        val bucket: Int => Int = (age: Int) => if (age < 18) 0 else if (age < 65) 1 else 2
        val risk: (Double, Double, Int) => Double =
          (a: Double, b: Double, n: Int) => math.min(100.0, math.max(0.0, a * 0.3 + b * 0.7 - n))
        val hourOfDay: Long => Int = (ts: Long) => ((ts / 3600000L) % 24).toInt
        val powAbs: (Double, Double) => Double =
          (x: Double, y: Double) => math.pow(math.abs(x), 2) + math.floor(y) + math.ceil(x) + math.signum(y) + math.rint(x)
        val richInt: (Int, Int) => Int = (a: Int, b: Int) => a.abs.max(b).min(1000) + a.signum + (a % 7).abs
        val floats: Float => Int = (f: Float) => math.round(f) + f.abs.toInt + (if (f.isNaN) 1 else 0)
        val remainder: (Double, Double) => Double = (a: Double, b: Double) => a % b
        val optionOf: Long => Option[Long] = (x: Long) => if (x % 3 == 0) None else Some(x / 3)
        val matchGuard: Double => Double = (x: Double) => x match {
          case v if v < 0 => -v
          case v if v > 100 => 100.0
          case v => v * 1.5
        }
      }
      """;

  private static ScalacClasses fixtures;
  private static Object module;
  private static GpuDevice device;
  private static ColumnRuntime runtime;

  @BeforeAll
  static void compile() throws Exception {
    fixtures = new ScalacClasses(SOURCE);
    module = fixtures.module("vkscala.S");
    device = TestGpu.openRefining();
    runtime = new ColumnRuntime(device);
  }

  @AfterAll
  static void close() throws Exception {
    if (runtime != null) {
      runtime.close();
    }
    if (device != null) {
      TestGpu.closeClean(device);
    }
    if (fixtures != null) {
      fixtures.close();
    }
  }

  static Object closure(String name) throws Exception {
    return module.getClass().getMethod(name).invoke(module);
  }

  /** The static method a closure runs (its SerializedLambda's implementation). */
  static Method implementation(Object closure) throws Exception {
    Method w = closure.getClass().getDeclaredMethod("writeReplace");
    w.setAccessible(true);
    SerializedLambda l = (SerializedLambda) w.invoke(closure);
    for (Method m : module.getClass().getDeclaredMethods()) {
      if (m.getName().equals(l.getImplMethodName())) {
        return m;
      }
    }
    throw new AssertionError(l.getImplMethodName());
  }

  static P type(String t) {
    return P.valueOf(t);
  }

  @ParameterizedTest
  @ValueSource(strings = {"sqrt2 DOUBLE DOUBLE", "maxOf INT,INT INT", "positiveTwice DOUBLE DOUBLE", "rich DOUBLE LONG",
      "matchLit INT INT", "boxedNull DOUBLE DOUBLE", "required LONG LONG", "celsius DOUBLE DOUBLE", "bucket INT INT",
      "risk DOUBLE,DOUBLE,INT DOUBLE", "hourOfDay LONG INT", "powAbs DOUBLE,DOUBLE DOUBLE", "richInt INT,INT INT",
      "floats FLOAT INT", "remainder DOUBLE,DOUBLE DOUBLE", "optionOf LONG LONG", "matchGuard DOUBLE DOUBLE"})
  void closureGivesItsOwnResults(String spec) throws Exception {
    String[] s = spec.split(" ");
    Object f = closure(s[0]);
    Method m = implementation(f);
    List<P> params = Stream.of(s[1].split(",")).map(ScalaClosuresTest::type).toList();
    P result = type(s[2]);
    Translation t = JavaTranslator.translate(f);
    assertInstanceOf(Translation.Translated.class, t, () -> s[0] + ": " + t);
    try (BufferAllocator allocator = new RootAllocator()) {
      MethodCheck check = new MethodCheck(runtime, allocator, x -> t);
      String src = s[0] + " (" + m + ")\n";
      MethodCheck.Prepared p = check.prepare(m, params, result, src);
      Outcome o = check.run(p, params, result, Tolerance.EXACT, src, 512, new Random(s[0].hashCode()));
      assertEquals(Kind.PASSED, o.kind(), o.category() + "\n" + o.detail());
    }
  }

  @Test
  void optionResult_isTheBoxWithNoneAsNull() throws Exception {
    Translation.Translated t = assertInstanceOf(Translation.Translated.class, JavaTranslator.translate(closure("positiveTwice")));
    assertEquals(SqlType.DOUBLE, t.result());
    assertEquals(List.of(SqlType.DOUBLE), t.args());
    Translation.Translated o = assertInstanceOf(Translation.Translated.class, JavaTranslator.translate(closure("optionOf")));
    assertEquals(SqlType.BIGINT, o.result());
  }
}
