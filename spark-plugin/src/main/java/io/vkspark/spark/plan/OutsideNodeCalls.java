package io.vkspark.spark.plan;

import io.vkspark.spark.udf.CountedFunction;
import io.vkspark.spark.udf.ScalaUdfs;

import org.apache.spark.SparkContext;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.util.LongAccumulator;
import scala.runtime.AbstractPartialFunction;

/**
 * Counts the rows that GPU UDF calls left in Spark's own operators (a join key, a lambda, a branch
 * vkspark cannot guard, ...) compute with {@code call()}: no {@code VkGpuEval} node sees them, so
 * its {@code rows on CPU} cannot. The physical rule swaps each such call's Scala function for a
 * {@link CountedFunction} one that adds every row to a named accumulator of the application (the Spark UI
 * shows it on each stage) and to this executor's total ({@link CountedFunction#ROWS}, the plugin's metric
 * {@code cpuRowsOutsideNode}).
 */
public final class OutsideNodeCalls {
  /** The accumulator's name, as the Spark UI and EXPLAIN show it. */
  public static final String NAME = "vkspark: GPU UDF rows computed by call() outside VkGpuEval";

  private static SparkContext owner;
  private static LongAccumulator accumulator;

  private OutsideNodeCalls() {}

  /** The application's accumulator, registered with {@code sc} on first use (one per SparkContext). */
  public static synchronized LongAccumulator accumulator(SparkContext sc) {
    if (owner != sc) {
      accumulator = sc.longAccumulator(NAME);
      owner = sc;
    }
    return accumulator;
  }

  /** Replaces the function of each GPU UDF call with a counted one (once: counted calls are kept). */
  static Expression counted(Expression e, LongAccumulator rows) {
    return e.transformUp(new AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof ScalaUDF u && !(u.function() instanceof CountedFunction) && ScalaUdfs.of(u).isPresent();
      }

      @Override
      public Expression apply(Expression x) {
        return withFunction((ScalaUDF) x, new CountedFunction(((ScalaUDF) x).function(), rows));
      }
    });
  }

  /** {@code u} with its original function: a GPU node computes it, and counts its rows itself. */
  static ScalaUDF uncounted(ScalaUDF u) {
    return u.function() instanceof CountedFunction c ? withFunction(u, c.inner()) : u;
  }

  private static ScalaUDF withFunction(ScalaUDF u, Object function) {
    return new ScalaUDF(function, u.dataType(), u.children(), u.inputEncoders(), u.outputEncoder(), u.udfName(),
        u.nullable(), u.udfDeterministic());
  }

}
