package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A kernel applied to columns of a batch: argument {@code i} reads input column
 * {@code argColumns[i]}. Several calls over one batch share the uploads of the columns they read.
 *
 * <p>{@code literals}: the values of the kernel's computed arguments ({@link ArgOps}), in argument
 * then step order ({@code r + 0.01}: 0.01; a constant argument: its bits, {@link ArgOps#constantBits},
 * and column -1). They are not part of the call's identity: calls that
 * differ only in them share buffer sets, and the runner writes its own values into the set's
 * literal buffers each time it takes one ({@link BufferSet#writeLiterals}).
 */
public record KernelCall(ColumnKernel kernel, int[] argColumns, double[] literals) {
  public KernelCall {
    Objects.requireNonNull(kernel, "kernel");
    argColumns = argColumns.clone();
    literals = literals == null ? new double[0] : literals.clone();
    if (literals.length != kernel.spec().literals()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + kernel.signature().name() + "' computes its arguments "
          + kernel.spec().argOps() + " from " + kernel.spec().literals() + " literals but " + literals.length + " were given.",
          "pass one value per step of the computed arguments, in argument order.");
    }
    if (argColumns.length != kernel.signature().args().size()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + kernel.signature().name() + "' takes "
          + kernel.signature().args().size() + " arguments but " + argColumns.length + " columns were given.",
          "pass one column per argument.");
    }
  }

  /** A call whose arguments are its columns (a kernel without computed arguments). */
  public KernelCall(ColumnKernel kernel, int[] argColumns) {
    this(kernel, argColumns, null);
  }

  /** The literal values (a copy). */
  @Override
  public double[] literals() {
    return literals.clone();
  }

  /** Checks that every argument column exists and has the argument's type; a constant argument reads none (-1). */
  void check(List<SqlType> inputTypes) {
    for (int i = 0; i < argColumns.length; i++) {
      int c = argColumns[i];
      boolean constant = ArgOps.isConstant(kernel.spec().argOps(), i);
      if (constant || c == -1) {
        if (constant != (c == -1)) {
          throw GpuException.of(Code.INVALID_ARGUMENT, "argument " + (i + 1) + " ('" + kernel.signature().args().get(i).name()
              + "') of GPU UDF '" + kernel.signature().name() + "' " + (constant ? "is a constant but reads column " + c
              : "reads no column but is not a constant") + ".", "pass column -1 exactly for the constant arguments (ArgOps.CONSTANT).");
        }
        continue;
      }
      SqlType want = kernel.signature().args().get(i).type();
      if (c < 0 || c >= inputTypes.size() || inputTypes.get(c) != want) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "argument " + (i + 1) + " ('" + kernel.signature().args().get(i).name()
            + "') of GPU UDF '" + kernel.signature().name() + "' is " + want.sqlName() + " but reads column " + c
            + (c >= 0 && c < inputTypes.size() ? " of type " + inputTypes.get(c).sqlName() : " of " + inputTypes.size()) + ".",
            "cast the column to " + want.sqlName() + " or pass a column of that type.");
      }
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof KernelCall k && k.kernel.id().equals(kernel.id()) && Arrays.equals(k.argColumns, argColumns);
  }

  @Override
  public int hashCode() {
    return 31 * kernel.id().hashCode() + Arrays.hashCode(argColumns);
  }

  @Override
  public String toString() {
    return kernel.signature().name() + Arrays.toString(argColumns) + (literals.length == 0 ? "" : Arrays.toString(literals));
  }
}
