package io.vkspark.spark.shim;

import org.apache.spark.QueryContext;
import org.apache.spark.sql.AnalysisException;
import scala.Option;

/**
 * Spark 4.2 shim: {@code VkAnalysisException}'s constructor. Spark 4.2's AnalysisException also
 * carries the SQLSTATE (vkspark's; the message template is Spark's, from its table).
 */
public abstract class AnalysisExceptionShim extends AnalysisException {
  private static final long serialVersionUID = 1L;

  public AnalysisExceptionShim(String message, scala.collection.immutable.Map<String, String> parameters, Throwable cause,
      String condition, String sqlState) {
    super(message, Option.empty(), Option.empty(), Option.apply(cause), Option.apply(condition), parameters,
        new QueryContext[0], Option.apply(sqlState), Option.empty());
  }
}
