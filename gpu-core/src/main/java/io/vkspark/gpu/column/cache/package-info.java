/**
 * Device copies of cached columns ({@link io.vkspark.gpu.column.cache.DeviceColumnCache},
 * {@link io.vkspark.gpu.column.cache.ResidentColumn}) and a runner's use of them
 * ({@link io.vkspark.gpu.column.cache.ResidentCopies}): queries over a table cache copy its columns
 * on the device instead of from the host again.
 *
 * <p>May import: root, column, column.input.
 */
package io.vkspark.gpu.column.cache;
