package io.vkspark.spark.shim;

import org.apache.spark.QueryContext;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.catalyst.trees.Origin;
import scala.Option;

/**
 * Spark 4.0 shim: {@link VkAnalysisException}'s constructor (no SQLSTATE or message template
 * arguments before Spark 4.1: VkAnalysisException overrides getSqlState itself).
 */
public abstract class AnalysisExceptionShim extends AnalysisException {
  private static final long serialVersionUID = 1L;

  public AnalysisExceptionShim(String message, scala.collection.immutable.Map<String, String> parameters, Throwable cause,
      String condition, String sqlState) {
    super(message, Option.empty(), Option.empty(), Option.apply(cause), Option.apply(condition), parameters,
        new QueryContext[0]);
  }

  /**
   * Spark adds the SQL position with {@code copy}, which makes a plain AnalysisException that loses
   * this class and its SQLSTATE (the constructor before 4.1 cannot carry it): keep this exception.
   */
  @Override
  public AnalysisException withPosition(Origin origin) {
    return this;
  }
}
