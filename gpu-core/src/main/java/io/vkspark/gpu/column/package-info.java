/**
 * What a GPU UDF's kernel is: the column types ({@link io.vkspark.gpu.column.SqlType},
 * {@link io.vkspark.gpu.column.DecimalSpec}), its signature and spec
 * ({@link io.vkspark.gpu.column.KernelSignature}, {@link io.vkspark.gpu.column.KernelSpec},
 * {@link io.vkspark.gpu.column.ArgOps}), a call of it over a batch's columns
 * ({@link io.vkspark.gpu.column.KernelCall}), the GLSL generated around its body and the checks on it
 * (the body check, loop guards, Java semantics, strings and variable-width arguments),
 * {@link io.vkspark.gpu.column.ColumnKernel} (compiled and sealed), and the meter every part of a
 * run counts into ({@link io.vkspark.gpu.column.BatchMeter}, {@link io.vkspark.gpu.column.BatchStats}).
 *
 * <p>Below it, lowest first: {@code column.input} (argument columns), {@code column.cache} (device
 * copies of cached columns), {@code column.reduce} (aggregates reduced on the device) and
 * {@code column.run} (kernels run over batches), which uses them all.
 *
 * <p>May import: root, internal.
 */
package io.vkspark.gpu.column;
