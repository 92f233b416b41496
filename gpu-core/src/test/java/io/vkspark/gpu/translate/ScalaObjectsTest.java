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





import java.util.List;
import java.util.Random;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Scala closures over objects known when translating (issue 31): a captured case class whose
 * fields become constants, a Scala {@code object}'s method inherited from a trait, Scala's
 * {@code ==} on boxes, and the mutable state that must stay refused. Compiled here with scalac 2.13;
 * each closure's rows run on the GPU against the closure itself ({@link MethodCheck}, bit for bit),
 * through a static method of {@code vkobj.S} that calls it.
 */
final class ScalaObjectsTest {
  static final String SOURCE = """
      package vkobj

      case class Fee(rate: Double, minimum: Double)
      case class Tier(fee: Fee, cap: Double)
      case class VarFee(var rate: Double)
      case class Holder[T](value: T)
      class Meter(val scale: Double) { var readings: Int = 0 }

      trait Pricing {
        def markup: Double
        def price(cost: Double): Double = cost * (1 + markup)
      }
      object RetailPricing extends Pricing { val markup: Double = 0.25 }
      object Wholesale extends Pricing {
        val markup: Double = 0.1
        override def price(cost: Double): Double = super.price(cost) - 1.0
      }
      object Tuning { var factor: Double = 1.5 }

      object S {
        def feeOf(fee: Fee): Double => Double =
          (amount: Double) => if (amount * fee.rate > fee.minimum) amount * fee.rate else fee.minimum
        def tierOf(t: Tier): Double => Double = (x: Double) => math.min(x * t.fee.rate + t.fee.minimum, t.cap)
        def varFeeOf(f: VarFee): Double => Double = (x: Double) => x * f.rate
        def meterOf(m: Meter): Double => Double = (x: Double) => x * m.scale
        def readingsOf(m: Meter): Double => Double = (x: Double) => x + m.readings
        def heldOf(h: Holder[Fee], p: Pricing): Double => Double =
          (x: Double) => (if (p eq RetailPricing) p.price(x) else -x) * h.value.rate

        val small: Double => Double = feeOf(Fee(0.015, 2.5))
        val large: Double => Double = feeOf(Fee(0.1, 0.3))
        val tiered: Double => Double = tierOf(Tier(Fee(0.2, 1.0), 40.0))
        val metered: Double => Double = meterOf(new Meter(0.7))
        val held: Double => Double = heldOf(Holder(Fee(0.3, 0.0)), RetailPricing)
        val heldOther: Double => Double = heldOf(Holder(Fee(0.3, 0.0)), Wholesale)
        val retail: Double => Double = (cost: Double) => RetailPricing.price(cost)
        val wholesale: Double => Double = (cost: Double) => Wholesale.price(cost) + Wholesale.markup
        val tuned: Double => Double = (x: Double) => x * Tuning.factor
        val sameIntDouble: (java.lang.Integer, java.lang.Double) => Boolean = (a: java.lang.Integer, b: java.lang.Double) => a == b
        val sameLongFloat: (java.lang.Long, java.lang.Float) => Boolean = (a: java.lang.Long, b: java.lang.Float) => a == b
        val sameShortInt: (java.lang.Short, java.lang.Integer) => Boolean = (a: java.lang.Short, b: java.lang.Integer) => a == b
        val sameDoubles: (java.lang.Double, java.lang.Double) => Boolean = (a: java.lang.Double, b: java.lang.Double) => a == b
        val sameAny: (java.lang.Double, java.lang.Double) => Boolean = (a: java.lang.Double, b: java.lang.Double) => (a: Any) == (b: Any)

        def smallRow(x: Double): Double = small(x)
        def largeRow(x: Double): Double = large(x)
        def tieredRow(x: Double): Double = tiered(x)
        def meteredRow(x: Double): Double = metered(x)
        def heldRow(x: Double): Double = held(x)
        def heldOtherRow(x: Double): Double = heldOther(x)
        def retailRow(x: Double): Double = retail(x)
        def wholesaleRow(x: Double): Double = wholesale(x)
        def sameIntDoubleRow(a: java.lang.Integer, b: java.lang.Double): Boolean = sameIntDouble(a, b)
        def sameLongFloatRow(a: java.lang.Long, b: java.lang.Float): Boolean = sameLongFloat(a, b)
        def sameShortIntRow(a: java.lang.Short, b: java.lang.Integer): Boolean = sameShortInt(a, b)
        def sameDoublesRow(a: java.lang.Double, b: java.lang.Double): Boolean = sameDoubles(a, b)
      }
      """;

  private static ScalacClasses fixtures;
  private static Object module;
  private static Class<?> statics;
  private static GpuDevice device;
  private static ColumnRuntime runtime;

  @BeforeAll
  static void compile() throws Exception {
    fixtures = new ScalacClasses(SOURCE);
    module = fixtures.module("vkobj.S");
    statics = fixtures.load("vkobj.S");
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

  private static Object closure(String name) throws Exception {
    return module.getClass().getMethod(name).invoke(module);
  }

  private static Object make(String factory, String className, Object... args) throws Exception {
    Class<?> c = fixtures.load("vkobj." + className);
    Object value = c.getConstructors()[0].newInstance(args);
    return module.getClass().getMethod(factory, c).invoke(module, value);
  }

  /** Closure {@code name}'s translation, checked row by row against {@code S.<name>Row}. */
  private static Translation.Translated check(String name, List<P> params, P result) throws Exception {
    return check(name, closure(name), params, result);
  }

  private static Translation.Translated check(String name, Object closure, List<P> params, P result) throws Exception {
    Translation t = JavaTranslator.translate(closure);
    Translation.Translated tr = assertInstanceOf(Translation.Translated.class, t, () -> name + ": " + t);
    Method row = null;
    for (Method m : statics.getMethods()) {
      if (m.getName().equals(name + "Row")) {
        row = m;
      }
    }
    assertNotNull(row, name + "Row");
    try (BufferAllocator allocator = new RootAllocator()) {
      MethodCheck check = new MethodCheck(runtime, allocator, x -> t);
      String src = name + " (" + row + ")\n";
      MethodCheck.Prepared p = check.prepare(row, params, result, src);
      Outcome o = check.run(p, params, result, Tolerance.EXACT, src, 512, new Random(name.hashCode()));
      assertEquals(Kind.PASSED, o.kind(), o.category() + "\n" + o.detail());
    }
    return tr;
  }

  private static String refusal(Object closure) {
    Translation t = JavaTranslator.translate(closure);
    return assertInstanceOf(Translation.Refused.class, t, () -> "translated: " + t).reason();
  }

  @Test
  void capturedCaseClass_fieldsAreConstants_andEachFeeIsItsOwnKernel() throws Exception {
    Translation.Translated small = check("small", List.of(P.DOUBLE), P.DOUBLE);
    Translation.Translated large = check("large", List.of(P.DOUBLE), P.DOUBLE);
    assertNotEquals(small.functions() + small.body(), large.functions() + large.body(),
        "one closure class over two fees is two kernels");
    // an equal fee in another object is the same kernel: the cache compares the fields' values
    assertSame(JavaTranslator.translate(closure("small")), JavaTranslator.translate(make("feeOf", "Fee", 0.015, 2.5)));
  }

  @Test
  void nestedCaseClass_andAPlainClassFinalField_areConstants() throws Exception {
    check("tiered", List.of(P.DOUBLE), P.DOUBLE);
    check("metered", List.of(P.DOUBLE), P.DOUBLE);
  }

  @Test
  void genericField_isCastNow_andReferencesToKnownObjects_compareNow() throws Exception {
    check("held", List.of(P.DOUBLE), P.DOUBLE); // h.value: an Object, cast to Fee; p eq RetailPricing: true
    check("heldOther", List.of(P.DOUBLE), P.DOUBLE); // p eq RetailPricing: false
  }

  @Test
  void objectMethodInheritedFromATrait_runsForThatObject() throws Exception {
    check("retail", List.of(P.DOUBLE), P.DOUBLE);
    check("wholesale", List.of(P.DOUBLE), P.DOUBLE); // an override calling the trait's method (super.price)
  }

  @Test
  void scalaEqualityOnBoxes_comparesAsTheWiderNumber() throws Exception {
    check("sameIntDouble", List.of(P.INT, P.DOUBLE), P.BOOLEAN);
    check("sameLongFloat", List.of(P.LONG, P.FLOAT), P.BOOLEAN);
    check("sameShortInt", List.of(P.SHORT, P.INT), P.BOOLEAN);
    check("sameDoubles", List.of(P.DOUBLE, P.DOUBLE), P.BOOLEAN); // equalsNumNum: NaN is never equal
    // as Any: BoxesRunTime.equals, where a NaN equals itself as one object, which the device
    // cannot see: such a row is call()'s
    Translation any = JavaTranslator.translate(closure("sameAny"));
    Translation.Translated tr = assertInstanceOf(Translation.Translated.class, any, () -> "sameAny: " + any);
    assertTrue(tr.functions().contains("vkt_isnan("), tr.functions());
  }

  @Test
  void mutableState_staysRefused_withTheReason() throws Exception {
    assertTrue(refusal(make("varFeeOf", "VarFee", 0.5)).contains("reads field rate of vkobj.VarFee, which is not final"),
        refusal(make("varFeeOf", "VarFee", 0.5)));
    assertTrue(refusal(make("readingsOf", "Meter", 0.5)).contains("reads field readings of vkobj.Meter, which is not final"),
        refusal(make("readingsOf", "Meter", 0.5)));
    assertTrue(refusal(closure("tuned")).contains("reads a static field that is not final (mutable state)"),
        refusal(closure("tuned")));
  }
}
