/**
 * Aggregates reduced on the device after a runner's kernels, in the same submission: the spec
 * ({@link io.vkspark.gpu.column.reduce.ColumnReduction}), grouping keys the device computes
 * ({@link io.vkspark.gpu.column.reduce.GroupKey}, bounded by {@link io.vkspark.gpu.column.reduce.KeyRange}),
 * per-row expressions ({@link io.vkspark.gpu.column.reduce.DeviceExpr}), the shader generators, the
 * host fold of partials ({@link io.vkspark.gpu.column.reduce.HostFold}) and a runner's reducing half
 * ({@link io.vkspark.gpu.column.reduce.BatchReducer}). The runner ({@code column.run}) calls into
 * this package, never the reverse.
 *
 * <p>May import: root, internal, column, column.input.
 */
package io.vkspark.gpu.column.reduce;
