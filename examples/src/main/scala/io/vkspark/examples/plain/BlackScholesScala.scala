package io.vkspark.examples.plain

import org.apache.spark.sql.SparkSession

/**
 * Black-Scholes price of a European call as a Scala closure, as a Scala user writes a UDF: no
 * vkspark API and no GLSL, registered with `spark.udf.register("black_scholes_scala", price)` (or
 * `udf(price)`). The Scala twin of [[BlackScholesJava]] (the same fdlibm `erfc` and the same
 * domain: NaN outside it, the discounted intrinsic value for `t = 0` or `v = 0`), in Scala's
 * idioms: `math.*`, helper definitions local to the closure (scalac makes them static methods),
 * `final val` constants of the object (inlined). With the vkspark plugin and
 * `spark.vkspark.translate=true` (the default) vkspark translates the closure's bytecode into a
 * GPU kernel (issue 31); with `false` Spark runs the closure on the CPU. Spark returns null for a
 * null argument without calling it (the parameters are primitives).
 */
object BlackScholesScala {
  val price: (Double, Double, Double, Double, Double) => Double =
    (s: Double, k: Double, t: Double, r: Double, v: Double) => {
      // helpers: the Java twin's static methods
      /** erfc(x) for 1.25 <= |x| < 28 from the rational approximation r / q at a = |x|. */
      def erfcTail(a: Double, hx: Int, r: Double, q: Double): Double = {
        val z = java.lang.Double.longBitsToDouble(java.lang.Double.doubleToRawLongBits(a) & 0xffffffff00000000L)
        val e = math.exp(-z * z - 0.5625) * math.exp((z - a) * (z + a) + r / q)
        if (hx > 0) e / a else 2.0 - e / a
      }
      /** The complementary error function (fdlibm's algorithm, error below 1 ulp). */
      def erfc(x: Double): Double = {
        val hx = (java.lang.Double.doubleToRawLongBits(x) >>> 32).toInt
        val ix = hx & 0x7fffffff
        if (ix >= 0x7ff00000) {
          if (java.lang.Double.isNaN(x)) x else if (x > 0) 0.0 else 2.0
        } else if (ix < 0x3feb0000) { // |x| < 0.84375
          if (ix < 0x3c700000) {
            1.0 - x
          } else {
            val z = x * x
            val r = Pp0 + z * (Pp1 + z * (Pp2 + z * (Pp3 + z * Pp4)))
            val s = 1.0 + z * (Qq1 + z * (Qq2 + z * (Qq3 + z * (Qq4 + z * Qq5))))
            val y = r / s
            if (hx < 0x3fd00000) 1.0 - (x + x * y) // x < 1/4
            else 0.5 - (x * y + (x - 0.5))
          }
        } else if (ix < 0x3ff40000) { // 0.84375 <= |x| < 1.25
          val s = math.abs(x) - 1.0
          val p = Pa0 + s * (Pa1 + s * (Pa2 + s * (Pa3 + s * (Pa4 + s * (Pa5 + s * Pa6)))))
          val q = 1.0 + s * (Qa1 + s * (Qa2 + s * (Qa3 + s * (Qa4 + s * (Qa5 + s * Qa6)))))
          if (hx >= 0) (1.0 - Erx) - p / q else 1.0 + (Erx + p / q)
        } else if (ix < 0x4006db6d) { // 1.25 <= |x| < 1/0.35
          val a = math.abs(x)
          val s = 1.0 / (a * a)
          val r = Ra0 + s * (Ra1 + s * (Ra2 + s * (Ra3 + s * (Ra4 + s * (Ra5 + s * (Ra6 + s * Ra7))))))
          val q = 1.0 + s * (Sa1 + s * (Sa2 + s * (Sa3 + s * (Sa4 + s * (Sa5 + s * (Sa6 + s * (Sa7 + s * Sa8)))))))
          erfcTail(a, hx, r, q)
        } else if (ix < 0x403c0000) { // 1/0.35 <= |x| < 28
          if (hx < 0 && ix >= 0x40180000) { // x <= -6
            2.0
          } else {
            val a = math.abs(x)
            val s = 1.0 / (a * a)
            val r = Rb0 + s * (Rb1 + s * (Rb2 + s * (Rb3 + s * (Rb4 + s * (Rb5 + s * Rb6)))))
            val q = 1.0 + s * (Sb1 + s * (Sb2 + s * (Sb3 + s * (Sb4 + s * (Sb5 + s * (Sb6 + s * Sb7))))))
            erfcTail(a, hx, r, q)
          }
        } else {
          if (hx > 0) 0.0 else 2.0
        }
      }

      /** The standard normal CDF, `erfc(-x/sqrt(2))/2`, corrected for the rounding of `x/sqrt(2)`. */
      def normCdf(x: Double): Double = {
        if (java.lang.Double.isNaN(x)) {
          x
        } else {
          val z = x * InvSqrt2H
          var r = 0.5 * erfc(-z)
          if (z < -0.25 && r > 0) {
            val dz = java.lang.Math.fma(x, InvSqrt2H, -z) + x * InvSqrt2L
            r += dz * math.exp(-z * z) * InvSqrtPi
          }
          r
        }
      }

      if (!(s > 0 && k > 0 && t >= 0 && v >= 0) || java.lang.Double.isInfinite(s) || java.lang.Double.isInfinite(k)
        || java.lang.Double.isInfinite(t) || !java.lang.Double.isFinite(r) || java.lang.Double.isInfinite(v)) {
        Double.NaN
      } else {
        val df = math.exp(-r * t)
        val sd = v * math.sqrt(t)
        if (sd == 0) {
          math.max(s - k * df, 0.0)
        } else {
          val d1 = (math.log(s / k) + (r + 0.5 * v * v) * t) / sd
          val d2 = d1 - sd
          s * normCdf(d1) - k * df * normCdf(d2)
        }
      }
    }

  /** Registers `black_scholes_scala` in `spark`. */
  def register(spark: SparkSession): Unit = spark.udf.register("black_scholes_scala", price)

  private final val InvSqrt2H = 0.7071067811865476 // 1/sqrt(2) = H + L
  private final val InvSqrt2L = -4.833646656726457e-17
  private final val InvSqrtPi = 0.5641895835477563

  // fdlibm s_erf.c (Sun Microsystems, freely redistributable), erfc part
  private final val Erx = 8.45062911510467529297e-01
  private final val Pp0 = 1.28379167095512558561e-01
  private final val Pp1 = -3.25042107247001499370e-01
  private final val Pp2 = -2.84817495755985104766e-02
  private final val Pp3 = -5.77027029648944159157e-03
  private final val Pp4 = -2.37630166566501626084e-05
  private final val Qq1 = 3.97917223959155352819e-01
  private final val Qq2 = 6.50222499887672944485e-02
  private final val Qq3 = 5.08130628187576562776e-03
  private final val Qq4 = 1.32494738004321644526e-04
  private final val Qq5 = -3.96022827877536812320e-06
  private final val Pa0 = -2.36211856075265944077e-03
  private final val Pa1 = 4.14856118683748331666e-01
  private final val Pa2 = -3.72207876035701323847e-01
  private final val Pa3 = 3.18346619901161753674e-01
  private final val Pa4 = -1.10894694282396677476e-01
  private final val Pa5 = 3.54783043256182359371e-02
  private final val Pa6 = -2.16637559486879084300e-03
  private final val Qa1 = 1.06420880400844228286e-01
  private final val Qa2 = 5.40397917702171048937e-01
  private final val Qa3 = 7.18286544141962662868e-02
  private final val Qa4 = 1.26171219808761642112e-01
  private final val Qa5 = 1.36370839120290507362e-02
  private final val Qa6 = 1.19844998467991074170e-02
  private final val Ra0 = -9.86494403484714822705e-03
  private final val Ra1 = -6.93858572707181764372e-01
  private final val Ra2 = -1.05586262253232909814e+01
  private final val Ra3 = -6.23753324503260060396e+01
  private final val Ra4 = -1.62396669462573470355e+02
  private final val Ra5 = -1.84605092906711035994e+02
  private final val Ra6 = -8.12874355063065934246e+01
  private final val Ra7 = -9.81432934416914548592e+00
  private final val Sa1 = 1.96512716674392571292e+01
  private final val Sa2 = 1.37657754143519042600e+02
  private final val Sa3 = 4.34565877475229228821e+02
  private final val Sa4 = 6.45387271733267880336e+02
  private final val Sa5 = 4.29008140027567833386e+02
  private final val Sa6 = 1.08635005541779435134e+02
  private final val Sa7 = 6.57024977031928170135e+00
  private final val Sa8 = -6.04244152148580987438e-02
  private final val Rb0 = -9.86494292470009928597e-03
  private final val Rb1 = -7.99283237680523006574e-01
  private final val Rb2 = -1.77579549177547519889e+01
  private final val Rb3 = -1.60636384855821916062e+02
  private final val Rb4 = -6.37566443368389627722e+02
  private final val Rb5 = -1.02509513161107724954e+03
  private final val Rb6 = -4.83519191608651397019e+02
  private final val Sb1 = 3.03380607434824582924e+01
  private final val Sb2 = 3.25792512996573918826e+02
  private final val Sb3 = 1.53672958608443695994e+03
  private final val Sb4 = 3.19985821950859553908e+03
  private final val Sb5 = 2.55305040643316442583e+03
  private final val Sb6 = 4.74528541206955367215e+02
  private final val Sb7 = -2.24409524465858183362e+01
}
