package io.vkspark.spark.exec.call;

import io.vkspark.gpu.column.ArgOps;
import io.vkspark.gpu.column.ArithOp;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.spark.api.SparkTypes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.DoubleStream;
import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BinaryArithmetic;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Multiply;
import org.apache.spark.sql.catalyst.expressions.Subtract;
import org.apache.spark.sql.types.DataTypes;

/**
 * A GPU UDF argument that the kernel computes itself: a constant ({@link #constant}: a literal,
 * {@code CAST(2.5 AS FLOAT)}, {@code lit(3)}, any foldable expression, of a fixed-width type but
 * decimal), which reads no column at all, or one computed from one column of the node's child: {@code r + 0.01},
 * {@code 1.1 * v}, {@code (v * 1.1) + 0.01}, over DOUBLE, with non-null literals. The planner then
 * reads the column itself (a cached column straight from its device copy) instead of putting the
 * expression into a CPU projection below the node; the kernel's shape ({@link ArgOps}) is part of
 * its identity, the literal values are not (every scenario of a sweep runs one kernel).
 *
 * <p>Double {@code +}, {@code -} and {@code *} are exact IEEE operations on the device (the kernel
 * keeps them {@code precise}) and cannot fail in any mode, so the value equals Spark's, and a null
 * column value is a null argument, as in Spark. Division, float and integer arithmetic are not
 * taken (see docs/GLSL-SEMANTICS.md).
 *
 * <p>A constant's value reaches the kernel in its literal slot ({@link ArgOps#constantBits}), so no
 * projection sits under the node for it (issue 33: {@code saxpy(x, y, CAST(2.5 AS FLOAT))} read rows
 * turned back into columns), and a sweep over constants runs one kernel. A null constant is not
 * one: a strict call over it is null for every row ({@code InsertGpuEval} plans it as a null
 * literal), a translated UDF's {@code call()} sees it through the projection as before. Decimals stay
 * in the projection: their device form follows the column's precision, which the runner's upload owns.
 *
 * @param column the child column the argument reads (null for a constant)
 * @param ops the steps after the column, or {@link ArgOps#CONSTANT}
 * @param literals the value of each step's literal, or the constant's bits
 */
public record DeviceArg(Attribute column, ArgOps ops, double[] literals) {
  /**
   * {@code arg} as a constant of the kernel's argument type {@code type}: foldable, deterministic,
   * not null, of a type with a device constant. Empty otherwise.
   */
  public static Optional<DeviceArg> constant(Expression arg, SqlType type) {
    if (!arg.foldable() || !arg.deterministic() || !ArgOps.constantType(type)
        || !SparkTypes.of(arg.dataType()).equals(Optional.of(type))) {
      return Optional.empty();
    }
    Object v = arg.eval(null);
    return v == null ? Optional.empty()
        : Optional.of(new DeviceArg(null, ArgOps.CONSTANT, new double[] {ArgOps.constantBits(type, v)}));
  }

  /** Whether {@code arg} is a null constant (foldable, deterministic, null). */
  public static boolean nullConstant(Expression arg) {
    return arg.foldable() && arg.deterministic() && arg.eval(null) == null;
  }

  /** {@code arg} as a computed argument over one column, empty when it is a column or not of that form. */
  public static Optional<DeviceArg> of(Expression arg) {
    List<ArgOps.Step> steps = new ArrayList<>();
    List<Double> values = new ArrayList<>();
    Expression e = arg;
    while (!(e instanceof Attribute)) {
      if (!(e instanceof BinaryArithmetic b) || !DataTypes.DoubleType.equals(b.dataType())) {
        return Optional.empty();
      }
      ArithOp op = e instanceof Add ? ArithOp.ADD : e instanceof Subtract ? ArithOp.SUBTRACT
          : e instanceof Multiply ? ArithOp.MULTIPLY : null;
      Double right = value(b.right());
      Double left = value(b.left());
      if (op == null || (right == null) == (left == null)) {
        return Optional.empty();
      }
      steps.add(0, new ArgOps.Step(op, left != null)); // the innermost step runs first
      values.add(0, left != null ? left : right);
      e = left != null ? b.right() : b.left();
    }
    if (steps.isEmpty() || !DataTypes.DoubleType.equals(e.dataType())) {
      return Optional.empty();
    }
    return Optional.of(new DeviceArg((Attribute) e, new ArgOps(steps), values.stream().mapToDouble(Double::doubleValue).toArray()));
  }

  /** The same operations in the same order (a canonical plan may swap the operands of + and *). */
  private static boolean sameOps(ArgOps a, ArgOps b) {
    if (a.steps().size() != b.steps().size()) {
      return false;
    }
    for (int s = 0; s < a.steps().size(); s++) {
      ArgOps.Step x = a.steps().get(s);
      ArgOps.Step y = b.steps().get(s);
      if (x.op() != y.op() || (x.op() == ArithOp.SUBTRACT && x.literalFirst() != y.literalFirst())) {
        return false;
      }
    }
    return true;
  }

  /** The non-null double value of a literal; null for anything else. */
  private static Double value(Expression e) {
    return e instanceof Literal l && l.value() instanceof Double d && DataTypes.DoubleType.equals(l.dataType()) ? d : null;
  }

  /**
   * The literals of {@code args} (a call's arguments) for a kernel computing them as {@code ops}
   * say, in argument then step order: what the call's {@code KernelCall} carries.
   */
  static double[] literals(List<Expression> args, List<ArgOps> ops) {
    if (ops.isEmpty()) {
      return new double[0];
    }
    DoubleStream.Builder out = DoubleStream.builder();
    for (int i = 0; i < args.size(); i++) {
      ArgOps want = ops.get(i);
      Expression arg = args.get(i);
      if (want.constant()) {
        out.add(constant(arg, SparkTypes.of(arg.dataType()).orElseThrow()).orElseThrow(() -> new IllegalStateException(
            "argument " + arg + " is no constant of its kernel's type")).literals()[0]);
      } else if (!want.isEmpty()) {
        DeviceArg a = of(arg).filter(d -> sameOps(d.ops(), want)).orElseThrow(() -> new IllegalStateException(
            "argument " + arg + " is not of the shape " + want + " its kernel computes"));
        for (double v : a.literals()) {
          out.add(v);
        }
      }
    }
    return out.build().toArray();
  }
}
