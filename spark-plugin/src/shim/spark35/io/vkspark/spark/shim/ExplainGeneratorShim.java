package io.vkspark.spark.shim;

/**
 * Spark 3.5 shim: Spark 3.5 has no extended explain generators (spark.sql.extendedExplainProviders
 * came in 4.0), so EXPLAIN shows no "vkspark" section; {@link VkExplain#visit} still works.
 */
public abstract class ExplainGeneratorShim {}
