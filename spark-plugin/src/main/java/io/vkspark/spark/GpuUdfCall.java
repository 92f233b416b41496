package io.vkspark.spark;

import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;
import java.util.stream.Collectors;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;

/**
 * One GPU UDF call planned into a {@link GpuEvalExec}: the call, its kernel, the child columns it
 * reads and the attribute it produces. {@code cpuReason} is null when it runs on the GPU; otherwise
 * the node evaluates it with the UDF's {@code call()} and EXPLAIN shows why.
 *
 * @param expr the original call, for EXPLAIN
 * @param boundCpu the call bound to the child's columns, for the CPU path
 * @param argOrdinals the child column each argument reads
 * @param guard null when Spark evaluates the call for every row; otherwise the condition, bound to
 *     the child's columns, under which it does (a CASE branch, the right of AND, ...): {@code call()}
 *     runs only where it is true, and the result elsewhere is never read (see {@link CallSites})
 */
record GpuUdfCall(String name, ScalaUDF expr, Expression boundCpu, ColumnKernel kernel, int[] argOrdinals,
                  AttributeReference result, String cpuReason, Expression guard) implements Serializable {

  /** Records compare arrays by identity; plans compare calls by value (exchange reuse, AQE). */
  @Override
  public boolean equals(Object o) {
    return o instanceof GpuUdfCall c && c.name.equals(name) && c.expr.equals(expr) && c.boundCpu.equals(boundCpu)
        && c.kernel.id().equals(kernel.id()) && java.util.Arrays.equals(c.argOrdinals, argOrdinals)
        && c.result.equals(result) && java.util.Objects.equals(c.cpuReason, cpuReason)
        && java.util.Objects.equals(c.guard, guard);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(name, expr, kernel.id(), java.util.Arrays.hashCode(argOrdinals), result, cpuReason);
  }

  boolean onGpu() {
    return cpuReason == null;
  }

  SqlType resultType() {
    return kernel.signature().result();
  }

  GpuUdfCall onCpu(String reason) {
    return new GpuUdfCall(name, expr, boundCpu, kernel, argOrdinals, result, reason, guard);
  }

  /** Whether Spark evaluates this call for {@code row} of the child: no guard, or the guard is true. */
  boolean evaluatedFor(org.apache.spark.sql.catalyst.InternalRow row) {
    return guard == null || Boolean.TRUE.equals(guard.eval(row));
  }

  /** {@code black_scholes(s#1, k#2) AS r#9 on GPU} or {@code ... on CPU because ...}. */
  String describe() {
    return name + "(" + Scala.list(expr.children()).stream().map(Expression::toString).collect(Collectors.joining(", "))
        + ") AS " + result.name() + "#" + result.exprId().id() + (guard == null ? "" : " (guarded)") + (onGpu() ? " on GPU" : " on CPU because " + cpuReason);
  }
}
