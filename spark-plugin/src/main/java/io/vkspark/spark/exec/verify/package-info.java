/**
 * Verify mode ({@code spark.vkspark.verify}): a sample of the GPU's rows computed again with the
 * UDFs' {@code call()} and compared within each UDF's tolerance, within a budget of the batch's GPU
 * time ({@link io.vkspark.spark.exec.verify.GpuVerifier}). Its own package because it only reads
 * what the GPU gave back: the node hands it results (a reduced batch's sampled rows' results, read
 * back with its reduction), and it never routes or runs a batch.
 *
 * <p>May import: shim, conf, api, executor, udf, exec.call.
 */
package io.vkspark.spark.exec.verify;
