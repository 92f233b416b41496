package io.vkspark.spark.cache;

import java.util.OptionalInt;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.internal.SQLConf;

/**
 * The cache's only calls into Catalyst internals (not public API), in one place for the per-version
 * shims: each exists with the same shape in Spark 3.5 to 4.2.
 */
public final class CatalystCalls {
  private CatalystCalls() {}

  /** A writer of Spark's UnsafeRow format with {@code fields} fields (strings copied out of the cached memory). */
  static UnsafeRowWriter rowWriter(int fields) {
    return new UnsafeRowWriter(fields);
  }

  /** {@code spark.sql.inMemoryColumnarStorage.batchSize}, or empty where neither the session nor the application sets it. */
  static OptionalInt batchSizeSet(SQLConf conf) {
    return conf.contains(SQLConf.COLUMN_BATCH_SIZE().key())
        ? OptionalInt.of(Math.max(1, conf.columnBatchSize())) : OptionalInt.empty();
  }

  /** A setting of the active session's SQL conf (the executing query's on the driver). */
  static String sessionConf(String key, String orElse) {
    return SQLConf.get().getConfString(key, orElse);
  }
}
