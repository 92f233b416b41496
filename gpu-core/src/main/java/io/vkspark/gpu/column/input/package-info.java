/**
 * A batch's argument columns as the device reads them: {@link io.vkspark.gpu.column.input.InputColumn}
 * and {@link io.vkspark.gpu.column.input.VarColumn}, over Arrow vectors
 * ({@link io.vkspark.gpu.column.input.ArrowInputs}) or built row by row
 * ({@link io.vkspark.gpu.column.input.StagedVarColumn}); strings as the UDF's {@code call()} sees
 * them ({@link io.vkspark.gpu.column.input.DecodedStrings}); the raw memory values are copied through
 * ({@link io.vkspark.gpu.column.input.RawMemory}, {@link io.vkspark.gpu.column.input.Bits}).
 *
 * <p>May import: root, column.
 */
package io.vkspark.gpu.column.input;
