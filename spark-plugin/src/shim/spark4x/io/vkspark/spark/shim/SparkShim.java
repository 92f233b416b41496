package io.vkspark.spark.shim;

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
import org.apache.spark.sql.internal.ToScalaUDF$;

/**
 * The Spark 4.x shim: the calls into Spark that differ between the Spark lines vkspark builds for,
 * one static method each. Spark 4.0, 4.1 and 4.2 share this class (spark-plugin/src/shim/spark4x/);
 * what differs between them is in each line's {@link SparkLine} (src/shim/spark40 .. spark42) and
 * Spark 3.5 has its own copy (src/shim/spark35); all copies have the same methods. How to add one:
 * README, "Spark versions".
 */
public final class SparkShim {
  private SparkShim() {}

  /** This line, as in the plugin jar's name. */
  static final String LINE = SparkLine.LINE;

  /** Whether EXPLAIN takes extra sections (spark.sql.extendedExplainProviders, Spark 4.0+). */
  public static final boolean EXTENDED_EXPLAIN = true;

  /**
   * Whether Spark formats vkspark's error conditions as STANDARD JSON (spark.sql.error.messageFormat):
   * that needs the message template carried by the exception (Spark 4.1+: yes, 4.0: no; PRETTY and
   * MINIMAL work everywhere).
   */
  public static final boolean STANDARD_JSON_ERRORS = SparkLine.STANDARD_JSON_ERRORS;

  /** The Scala function Spark itself makes for a Java UDF of {@code arity} arguments (Spark 4: ToScalaUDF). */
  @SuppressWarnings({"rawtypes"})
  public static Object javaUdfFunction(Object udf, int arity) {
    ToScalaUDF$ t = ToScalaUDF$.MODULE$;
    return switch (arity) {
      case 1 -> t.apply((UDF1) udf);
      case 2 -> t.apply((UDF2) udf);
      case 3 -> t.apply((UDF3) udf);
      case 4 -> t.apply((UDF4) udf);
      case 5 -> t.apply((UDF5) udf);
      case 6 -> t.apply((UDF6) udf);
      case 7 -> t.apply((UDF7) udf);
      case 8 -> t.apply((UDF8) udf);
      case 9 -> t.apply((UDF9) udf);
      case 10 -> t.apply((UDF10) udf);
      default -> throw new IllegalStateException("arity " + arity);
    };
  }

  /** A logical Aggregate like {@code like} (its hint kept) with these expressions and child. */
  public static Aggregate aggregate(List<Expression> grouping, List<NamedExpression> aggregates, LogicalPlan child,
      Aggregate like) {
    return new Aggregate(Scala.seq(grouping), Scala.seq(aggregates), child, like.hint());
  }

  /** The error condition of a Spark error (Spark 4: getCondition; getErrorClass is deprecated). */
  public static String condition(SparkThrowable t) {
    return t.getCondition();
  }
}
