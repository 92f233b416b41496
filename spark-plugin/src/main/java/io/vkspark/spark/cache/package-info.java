/**
 * vkspark's cache ({@code spark.sql.cache.serializer=io.vkspark.spark.cache.VkCacheSerializer}):
 * cached batches as Arrow buffers the GPU copy reads directly, the columns Spark's generated code
 * reads them through, and the plan rule and node that keep its scans columnar.
 *
 * <p>May import: shim, conf.
 */
package io.vkspark.spark.cache;
