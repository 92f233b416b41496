package io.vkspark.spark.shim;

import org.apache.spark.sql.ExtendedExplainGenerator;

/** Spark 4.x shim (4.0, 4.1 and 4.2): {@code VkExplain} is one of Spark's extended explain generators (Spark 4.0+). */
public abstract class ExplainGeneratorShim implements ExtendedExplainGenerator {}
