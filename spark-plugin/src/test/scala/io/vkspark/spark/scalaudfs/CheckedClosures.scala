package io.vkspark.spark.scalaudfs

/** Scala closures for UdfCheckTest's jar: they translate, do not, or cannot be checked. */
object CheckedClosures {
  val affine: Double => Double = (x: Double) => x * 2 + 1
  val chargedPrice: (Double, Double, Double) => Double =
    (price: Double, discount: Double, tax: Double) => price * (1 - discount) * (1 + tax)
  val seeded: Long => Int = (x: Long) => new java.util.Random(x).nextInt()
  def feeOf(fee: Fee): Double => Double = (amount: Double) => amount * fee.rate
  val retail: Double => Double = (cost: Double) => RetailPricing.price(cost)
  val tuned: Double => Double = (x: Double) => x * Tuning.factor
}

/** A setting that may change while the job runs: a closure that reads it stays on the CPU. */
object Tuning {
  var factor: Double = 1.5
}
