/**
 * What users call: the GPU UDF interface ({@link io.vkspark.spark.api.GpuUdf}) and its kernel
 * ({@link io.vkspark.spark.api.GpuKernel}), inline GPU UDFs ({@link io.vkspark.spark.api.GpuFunction}),
 * registration ({@link io.vkspark.spark.api.GpuUdfs}), the tolerance verify mode compares within,
 * the SQL types of kernel columns, and the analysis error every Spark client can rebuild. With the
 * plugin class ({@code io.vkspark.spark.VkSparkPlugin}) this is the whole public API; every other
 * package is vkspark's own and may change in any release.
 *
 * <p>May import: shim, conf, kernel.
 */
package io.vkspark.spark.api;
