package io.vkspark.spark.scalaudfs

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.expressions.UserDefinedFunction
import org.apache.spark.sql.functions.{col, udf}

/** A fee schedule, as a case class a closure captures: its fields are pure arithmetic. */
case class Fee(rate: Double, minimum: Double)

/** Pricing as a trait with a pure arithmetic method, called from a closure through an object. */
trait Pricing {
  def markup: Double
  def price(cost: Double): Double = cost * (1 + markup)
}

object RetailPricing extends Pricing {
  val markup: Double = 0.25
}

/**
 * Scala closures as Spark users write them (the shapes of issue 31's corpus: TPC-H helpers,
 * haversine, age buckets, temperature conversion, hour of day, risk scores, `math.*`, `Option`
 * results), registered the two usual ways: `udf(...)` (the `*Udf` values, applied by
 * [[Closures.select]]) and `spark.udf.register(...)` ([[Closures.register]], SQL names `scala_*`).
 * The Java tests (JUnit 5) call them and compare each with Spark's own run.
 */
object Closures {
  // ---- pure arithmetic: specialized function classes (JFunctionN$mc..$sp), a static $anonfun each
  val affine: Double => Double = (x: Double) => x * 2 + 1
  val absDiff: (Int, Int) => Int = (a: Int, b: Int) => if (a > b) a - b else b - a
  val discountedPrice: (Double, Double) => Double = (price: Double, discount: Double) => price * (1 - discount)
  val celsiusToFahrenheit: Double => Double = (c: Double) => c * 9.0 / 5.0 + 32.0
  val ageBucket: Int => Int = (age: Int) => if (age < 18) 0 else if (age < 35) 1 else if (age < 65) 2 else 3
  val statusClass: Int => Int = (code: Int) => code match {
    case 200 => 0
    case 301 | 302 => 1
    case 404 => 2
    case 500 => 3
    case _ => 4
  }
  /** Hour of day (UTC) of an epoch second, negative epochs too. */
  val hourOfDay: Long => Int = (epochSeconds: Long) => (((epochSeconds % 86400) + 86400) % 86400 / 3600).toInt
  val isHighValue: (Double, Int) => Boolean = (amount: Double, quantity: Int) => amount * quantity > 1000.0

  // ---- pure arithmetic through a Function3: the lambda is a $anonfun$...$adapted bridge over Objects
  val chargedPrice: (Double, Double, Double) => Double =
    (price: Double, discount: Double, tax: Double) => price * (1 - discount) * (1 + tax)
  val riskScore: (Int, Double, Double) => Int = (age: Int, income: Double, debt: Double) => {
    var score = 0
    if (age < 25) score += 2 else if (age > 60) score += 1
    if (income < 20000.0) score += 3
    if (debt > income * 0.4) score += 4
    score
  }

  /** A local helper definition: scalac makes it a static method of the enclosing class. */
  val bmiClass: (Double, Double) => Int = (kg: Double, m: Double) => {
    def bmi(w: Double, h: Double): Double = w / (h * h)
    val b = bmi(kg, m)
    if (b < 18.5) 0 else if (b < 25) 1 else if (b < 30) 2 else 3
  }

  /** A closure over a value of the enclosing method: captured, read as a constant. */
  def scaledBy(k: Double): UserDefinedFunction = udf((x: Double) => x * k + 1.0)

  // ---- Scala idioms the translator learns on branch ir (math.*, Option, MatchError, objects)
  val haversineKm: (Double, Double, Double, Double) => Double = (lat1: Double, lon1: Double, lat2: Double, lon2: Double) => {
    val dLat = math.toRadians(lat2 - lat1)
    val dLon = math.toRadians(lon2 - lon1)
    val a = math.pow(math.sin(dLat / 2), 2) + math.cos(math.toRadians(lat1)) * math.cos(math.toRadians(lat2)) * math.pow(math.sin(dLon / 2), 2)
    6371.0 * 2 * math.asin(math.sqrt(a))
  }
  val clampedLog: Double => Double = (x: Double) => math.log(math.max(x, 1.0)) + math.abs(x) / 10
  val halfIfEven: Int => Option[Int] = (x: Int) => if (x % 2 == 0) Some(x / 2) else None
  val quarter: Int => Int = (x: Int) => (x & 3) match {
    case 0 => 10
    case 1 => 20
    case 2 => 30
  }
  def feeOf(fee: Fee): UserDefinedFunction =
    udf((amount: Double) => if (amount * fee.rate > fee.minimum) amount * fee.rate else fee.minimum)
  val retailPrice: Double => Double = (cost: Double) => RetailPricing.price(cost)

  // ---- does not translate: it allocates (a sample bucket from a seeded generator)
  val sampleBucket: Long => Int = (seed: Long) => new java.util.Random(seed).nextInt(100)
  /** The same, a new closure each call. */
  def sampledFrom(base: Long): UserDefinedFunction = udf((seed: Long) => new java.util.Random(seed + base).nextInt(100))

  val affineUdf: UserDefinedFunction = udf(affine)
  val absDiffUdf: UserDefinedFunction = udf(absDiff)
  val chargedPriceUdf: UserDefinedFunction = udf(chargedPrice)
  val sampleBucketUdf: UserDefinedFunction = udf(sampleBucket)

  /** Registers the SQL functions scala_* in `spark` (`spark.udf.register`). */
  def register(spark: SparkSession): Unit = {
    spark.udf.register("scala_affine", affine)
    spark.udf.register("scala_abs_diff", absDiff)
    spark.udf.register("scala_discounted_price", discountedPrice)
    spark.udf.register("scala_charged_price", chargedPrice)
    spark.udf.register("scala_c_to_f", celsiusToFahrenheit)
    spark.udf.register("scala_age_bucket", ageBucket)
    spark.udf.register("scala_status_class", statusClass)
    spark.udf.register("scala_hour_of_day", hourOfDay)
    spark.udf.register("scala_is_high_value", isHighValue)
    spark.udf.register("scala_risk_score", riskScore)
    spark.udf.register("scala_bmi_class", bmiClass)
    spark.udf.register("scala_haversine_km", haversineKm)
    spark.udf.register("scala_clamped_log", clampedLog)
    spark.udf.register("scala_half_if_even", halfIfEven)
    spark.udf.register("scala_quarter", quarter)
    spark.udf.register("scala_retail_price", retailPrice)
    spark.udf.register("scala_sample_bucket", sampleBucket)
  }

  /**
   * `udf(...)` values applied to the columns of `df`: id, a, i, j, price, discount, tax, b, then
   * affine(a), absDiff(i, j), chargedPrice(price, discount, tax), scaledBy(0.5)(b).
   */
  def select(df: DataFrame): DataFrame =
    df.select(col("id"), col("a"), col("i"), col("j"), col("price"), col("discount"), col("tax"), col("b"),
      affineUdf(col("a")).as("affine"), absDiffUdf(col("i"), col("j")).as("abs_diff"),
      chargedPriceUdf(col("price"), col("discount"), col("tax")).as("charged"), scaledBy(0.5)(col("b")).as("scaled"))
}
