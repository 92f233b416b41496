package io.vkspark.spark.exec.call;

import io.vkspark.spark.udf.UdfKind;
import io.vkspark.spark.shim.Scala;

import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.PlanExpression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.sql.catalyst.plans.QueryPlan;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;
import scala.runtime.AbstractPartialFunction;

/**
 * One GPU UDF call planned into a {@code VkGpuEvalExec}: the call, its kernel, the child columns it
 * reads and the attribute it produces. Its {@link Placement} says whether it runs on the GPU; if not,
 * the node evaluates it with the UDF's {@code call()} and EXPLAIN shows why.
 *
 * @param expr the original call, for EXPLAIN
 * @param boundCpu the call bound to the child's columns, for the CPU path
 * @param argOrdinals the child column each argument reads: the argument itself, or the column an
 *     argument computed on the device reads ({@link DeviceArg}: {@code r + 0.01} reads {@code r}, and
 *     the kernel's {@link io.vkspark.gpu.column.ArgOps} say how; the literals come from {@code expr});
 *     -1 for a constant argument, which the kernel reads from its literal slot
 * @param guard null when Spark evaluates the call for every row; otherwise the condition, bound to
 *     the child's columns, under which it does (a CASE branch, the right of AND, ...): {@code call()}
 *     runs only where it is true, and the result elsewhere is never read (see {@code CallSites})
 * @param kind what kind of GPU UDF it calls, decided once by the planner: the executor reads it and
 *     never looks at the UDF's function again
 */
public record GpuUdfCall(String name, ScalaUDF expr, Expression boundCpu, ColumnKernel kernel, List<Integer> argOrdinals,
                  AttributeReference result, Placement placement, Expression guard, UdfKind kind) implements Serializable {

  public GpuUdfCall {
    argOrdinals = List.copyOf(argOrdinals);
    Objects.requireNonNull(kind, "kind");
  }

  /** Plans compare calls by value (exchange reuse, AQE); kernels by their id. */
  @Override
  public boolean equals(Object o) {
    return o instanceof GpuUdfCall c && c.name.equals(name) && c.expr.equals(expr) && c.boundCpu.equals(boundCpu)
        && c.kernel.id().equals(kernel.id()) && c.argOrdinals.equals(argOrdinals)
        && c.result.equals(result) && c.placement.equals(placement)
        && Objects.equals(c.guard, guard) && c.kind.equals(kind);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, expr, boundCpu, kernel.id(), argOrdinals, result, placement, guard, kind);
  }

  /** The literal values of the arguments the kernel computes ({@link DeviceArg}), for its {@code KernelCall}. */
  public double[] literals() {
    return DeviceArg.literals(Scala.list(expr.children()), kernel.spec().argOps());
  }

  public boolean onGpu() {
    return placement.onGpu();
  }

  /** Whether the UDF is defined in GLSL only: its CPU path runs its SPIR-V on the CPU Vulkan device ({@link CpuVulkan}). */
  public boolean glslOnly() {
    return kind instanceof UdfKind.GlslOnly;
  }

  /** Whether the UDF is a plain Java UDF or Scala closure translated to the GPU ({@link UdfKind.Translated}). */
  public boolean translated() {
    return kind instanceof UdfKind.Translated;
  }

  /**
   * Whether a null argument means a null result without running the UDF: every GPU UDF, except a
   * translated one whose {@code call()} may return a value for a null argument.
   */
  public boolean nullStrict() {
    return kind.nullStrict();
  }

  /** Whether the kernel computes null arguments and null results itself ({@link UdfKind#nullsOnDevice()}). */
  public boolean nullsOnDevice() {
    return kind.nullsOnDevice();
  }

  public SqlType resultType() {
    return kernel.signature().result();
  }

  /** This call placed elsewhere (the executor's decision). */
  public GpuUdfCall placed(Placement p) {
    return new GpuUdfCall(name, expr, boundCpu, kernel, argOrdinals, result, p, guard, kind);
  }

  /** Whether Spark evaluates this call for {@code row} of the child: no guard, or the guard is true. */
  public boolean evaluatedFor(InternalRow row) {
    return guard == null || Boolean.TRUE.equals(guard.eval(row));
  }

  /** {@code black_scholes(s#1, k#2) AS r#9 on GPU} or {@code ... (guarded) on CPU because ...}. */
  public String describe() {
    return describe(null);
  }

  /**
   * As {@link #describe()}; with the child's columns ({@code input}, may be null) the guard is shown
   * as its condition over them: {@code ... AS r#9 when coalesce((a#5 > 0.0), false) on GPU}.
   */
  public String describe(List<Attribute> input) {
    String when = guard == null ? "" : input == null ? " (guarded)" : " when " + unbind(guard, input);
    return name + "(" + Scala.list(expr.children()).stream().map(GpuUdfCall::shown).collect(Collectors.joining(", "))
        + ") AS " + result.name() + "#" + result.exprId().id() + when + " " + placement.render()
        + (onGpu() && kind instanceof UdfKind.Translated t ? " (translated from " + t.language() + ")" : "")
        + (kernel.fastMath() ? " (fastMath: a * b + c may be one fused multiply-add, float32 subnormals may be flushed)" : "")
        + (!onGpu() && !placement.leftToSpark() && glslOnly() ? " (GLSL-only: its SPIR-V runs on the CPU Vulkan device)" : "");
  }

  /** Characters of a string or binary literal that plans show; the rest is counted, not copied. */
  static final int SHOWN_LITERAL = 64;

  /**
   * {@code e} as plans show it, with each string or binary literal longer than
   * {@link #SHOWN_LITERAL} cut short: Spark keeps every query's plan text for its UI, so a 140 MB
   * literal rendered in full stayed on the heap once per query and the node (issue 33).
   */
  static String shown(Expression e) {
    return e.transformUp(new AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof Literal l && l.value() != null
            && (l.value() instanceof UTF8String s ? s.numBytes() > SHOWN_LITERAL
            : l.value() instanceof byte[] b && b.length > SHOWN_LITERAL);
      }

      @Override
      public Expression apply(Expression x) {
        Object v = ((Literal) x).value();
        String text = v instanceof byte[] b ? b.length + " bytes" : ((UTF8String) v)
            .substring(0, SHOWN_LITERAL).toString() + "... (" + ((UTF8String) v).numBytes() + " bytes)";
        return Literal.create(text, DataTypes.StringType);
      }
    }).toString();
  }

  /** Plans print their arguments with {@code toString}: the readable form, never an array's identity. */
  @Override
  public String toString() {
    return describe();
  }

  /**
   * The call with its expressions in canonical form over the child's columns {@code input} and its
   * result numbered {@code id}: two copies of one subquery (a CTE used twice) then compare equal,
   * so Spark reuses the exchange or subquery above them.
   */
  public GpuUdfCall canonical(List<Attribute> input, long id) {
    AttributeReference r = (AttributeReference) result.withExprId(new ExprId(id, result.exprId().jvmId())).canonicalized();
    return new GpuUdfCall(name, (ScalaUDF) normalize(expr, input), normalize(boundCpu, input), kernel, argOrdinals, r,
        placement, guard == null ? null : normalize(guard, input), kind);
  }

  /** Spark's {@code QueryPlan.normalizeExpressions}: columns numbered by their position in {@code input}. */
  private static Expression normalize(Expression e, List<Attribute> input) {
    return e.transformUp(new AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof PlanExpression<?> || x instanceof AttributeReference;
      }

      @Override
      @SuppressWarnings({"unchecked", "rawtypes"})
      public Expression apply(Expression x) {
        if (x instanceof PlanExpression p) {
          return (Expression) p.withNewPlan(((QueryPlan<?>) p.plan()).canonicalized());
        }
        AttributeReference a = (AttributeReference) x;
        for (int i = 0; i < input.size(); i++) {
          if (input.get(i).exprId().equals(a.exprId())) {
            return a.withExprId(new ExprId(i, a.exprId().jvmId()));
          }
        }
        return a;
      }
    }).canonicalized();
  }

  /** {@code e} with each {@link BoundReference} replaced by the column of {@code input} it reads, for EXPLAIN. */
  private static Expression unbind(Expression e, List<Attribute> input) {
    return e.transformUp(new AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof BoundReference b && b.ordinal() < input.size();
      }

      @Override
      public Expression apply(Expression x) {
        return input.get(((BoundReference) x).ordinal());
      }
    });
  }
}
