/**
 * Column kernels run over batches on one device: {@link io.vkspark.gpu.column.run.ColumnRuntime}
 * (a device's loaded kernels and buffer pool) and {@link io.vkspark.gpu.column.run.BatchRunner} (one
 * task's stream of batches: staging, dispatch, results) with its parts: buffer sets, their pool and
 * lease, variable-width staging, the results and their readback (strings, decimals, rows handed back
 * to {@code call()} by {@link io.vkspark.gpu.column.run.CpuCause}) and bounded waiting.
 *
 * <p>May import: root, internal, column, column.input, column.cache, column.reduce.
 */
package io.vkspark.gpu.column.run;
