package io.vkspark.spark.shim;

import java.io.Serializable;
import java.util.List;
import org.apache.spark.SparkThrowable;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF10;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.api.java.UDF3;
import org.apache.spark.sql.api.java.UDF4;
import org.apache.spark.sql.api.java.UDF5;
import org.apache.spark.sql.api.java.UDF6;
import org.apache.spark.sql.api.java.UDF7;
import org.apache.spark.sql.api.java.UDF8;
import org.apache.spark.sql.api.java.UDF9;
import scala.Function1;
import scala.Function10;
import scala.Function2;
import scala.Function3;
import scala.Function4;
import scala.Function5;
import scala.Function6;
import scala.Function7;
import scala.Function8;
import scala.Function9;

/**
 * The Spark 3.5 shim: the calls into Spark that differ between the Spark lines vkspark builds for,
 * one static method each. Every line has its own copy of this class in
 * spark-plugin/src/shim/sparkNN/ (one is compiled, chosen by the Maven profile); all copies have
 * the same methods. How to add one: README, "Spark versions".
 */
public final class SparkShim {
  private SparkShim() {}

  /** This line, as in the plugin jar's name. */
  static final String LINE = "3.5";

  /** Whether EXPLAIN takes extra sections (spark.sql.extendedExplainProviders, Spark 4.0+). */
  public static final boolean EXTENDED_EXPLAIN = false;

  /**
   * Whether Spark formats vkspark's error conditions as STANDARD JSON (spark.sql.error.messageFormat):
   * that needs the message template carried by the exception (Spark 3.5: no; PRETTY and MINIMAL work everywhere).
   */
  public static final boolean STANDARD_JSON_ERRORS = false;

  /**
   * The Scala function for a Java UDF of {@code arity} arguments, as Spark 3.5's
   * UDFRegistration.register makes it inline (Spark 4 has ToScalaUDF for this).
   */
  @SuppressWarnings({"rawtypes", "unchecked"})
  public static Object javaUdfFunction(Object udf, int arity) {
    return switch (arity) {
      case 1 -> (Function1<Object, Object> & Serializable) a -> call(() -> ((UDF1) udf).call(a));
      case 2 -> (Function2<Object, Object, Object> & Serializable) (a, b) -> call(() -> ((UDF2) udf).call(a, b));
      case 3 -> (Function3<Object, Object, Object, Object> & Serializable) (a, b, c) ->
          call(() -> ((UDF3) udf).call(a, b, c));
      case 4 -> (Function4<Object, Object, Object, Object, Object> & Serializable) (a, b, c, d) ->
          call(() -> ((UDF4) udf).call(a, b, c, d));
      case 5 -> (Function5<Object, Object, Object, Object, Object, Object> & Serializable) (a, b, c, d, e) ->
          call(() -> ((UDF5) udf).call(a, b, c, d, e));
      case 6 -> (Function6<Object, Object, Object, Object, Object, Object, Object> & Serializable)
          (a, b, c, d, e, f) -> call(() -> ((UDF6) udf).call(a, b, c, d, e, f));
      case 7 -> (Function7<Object, Object, Object, Object, Object, Object, Object, Object> & Serializable)
          (a, b, c, d, e, f, g) -> call(() -> ((UDF7) udf).call(a, b, c, d, e, f, g));
      case 8 -> (Function8<Object, Object, Object, Object, Object, Object, Object, Object, Object> & Serializable)
          (a, b, c, d, e, f, g, h) -> call(() -> ((UDF8) udf).call(a, b, c, d, e, f, g, h));
      case 9 -> (Function9<Object, Object, Object, Object, Object, Object, Object, Object, Object, Object>
          & Serializable) (a, b, c, d, e, f, g, h, i) -> call(() -> ((UDF9) udf).call(a, b, c, d, e, f, g, h, i));
      case 10 -> (Function10<Object, Object, Object, Object, Object, Object, Object, Object, Object, Object,
          Object> & Serializable) (a, b, c, d, e, f, g, h, i, j) ->
          call(() -> ((UDF10) udf).call(a, b, c, d, e, f, g, h, i, j));
      default -> throw new IllegalStateException("arity " + arity);
    };
  }

  private interface Call {
    Object run() throws Exception;
  }

  /** call() may throw checked exceptions; Scala functions throw them undeclared, as Spark's own do. */
  private static Object call(Call c) {
    try {
      return c.run();
    } catch (Exception e) {
      throw SparkShim.<RuntimeException>sneaky(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }

  /** A logical Aggregate like {@code like} with these expressions and child (Spark 3.5's has no hint). */
  public static Aggregate aggregate(List<Expression> grouping, List<NamedExpression> aggregates, LogicalPlan child,
      Aggregate like) {
    return new Aggregate(Scala.seq(grouping), Scala.seq(aggregates), child);
  }

  /** The error condition of a Spark error (Spark 3.5 has only getErrorClass). */
  public static String condition(SparkThrowable t) {
    return t.getErrorClass();
  }
}
