/**
 * What a UDF in a Spark plan is, answered in one place: a GPU UDF, a GLSL-only UDF, a plain Java UDF
 * or a Scala closure translated to the GPU ({@link io.vkspark.spark.udf.ScalaUdfs#of}), the SQL
 * functions of {@code spark.vkspark.functions}, and the wrappers vkspark puts around a UDF's function
 * (counting, null checks). The planner asks once per call and carries the answer, a
 * {@link io.vkspark.spark.udf.UdfKind}, in the plan, so the executor never recognizes a UDF again.
 *
 * <p>May import: shim, conf, kernel, api, glsl.
 */
package io.vkspark.spark.udf;
