/**
 * Spark's data as GPU inputs: column vectors ({@link io.vkspark.spark.exec.input.SparkInputs}, the
 * variable-width ones in bulk), rows gathered into columns, and the coalescer that joins small child
 * batches into one. Its own package because it knows Spark's and Arrow's vectors and nothing of
 * calls, placement or the node: the GPU step and the CPU path both read through it.
 *
 * <p>May import: api, cache.
 */
package io.vkspark.spark.exec.input;
