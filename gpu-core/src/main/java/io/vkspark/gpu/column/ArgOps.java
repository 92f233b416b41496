package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.reduce.DeviceExpr.ArithOp;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The shape of an argument that the kernel computes before the call: a chain of {@code +}, {@code -}
 * and {@code *} with literals over its column ({@code (v * 1.1) + 0.01} is the column, then
 * {@code MULTIPLY} by literal 0, then {@code ADD} literal 1), or a constant with no column at all
 * ({@link #CONSTANT}: {@code CAST(2.5 AS FLOAT)}, {@code 3}, {@code DATE'2024-01-01'}). A query that
 * passes {@code r + 0.01} then reads the column {@code r} itself (a cached column straight from its
 * device copy), and one that passes a constant reads nothing for it, instead of a column that a CPU
 * projection computed and uploaded.
 *
 * <p>Only the shape is here, and it is part of the kernel's identity ({@link KernelSpec}); the
 * literal values are not: they reach the kernel in a small buffer the runner writes
 * ({@link KernelCall#literals()}, 8 bytes a slot), so every scenario of a sweep ({@code r + 0.01},
 * {@code r + 0.02}, ...) runs one compiled kernel and one pipeline.
 *
 * <p>Steps are double only: each is a {@code precise} IEEE operation (no fused multiply-add), so it
 * equals Java's bit for bit (up to the payload of a NaN, which Spark does not distinguish). No
 * division (GLSL's differs) and no float (a device may flush 32-bit subnormals); see
 * docs/GLSL-SEMANTICS.md. A constant is any fixed-width type but decimal (whose device form is
 * the runner's, from the column's precision); its slot holds the value's bits ({@link #constantBits}),
 * read back exactly by the kernel.
 */
public record ArgOps(List<Step> steps, boolean constant) implements Serializable {
  /** No computation: the argument is its column. */
  public static final ArgOps NONE = new ArgOps(List.of());
  /** The argument is a constant of the call: one literal slot, no column. */
  public static final ArgOps CONSTANT = new ArgOps(List.of(), true);

  /** One operation with the next literal; {@code literalFirst}: {@code literal OP value}, else {@code value OP literal}. */
  public record Step(ArithOp op, boolean literalFirst) implements Serializable {
    public Step {
      Objects.requireNonNull(op, "op");
    }

    private String glsl(String value, String literal) {
      String sign = switch (op) {
        case ADD -> " + ";
        case SUBTRACT -> " - ";
        case MULTIPLY -> " * ";
      };
      return literalFirst ? literal + sign + value : value + sign + literal;
    }

    @Override
    public String toString() {
      return literalFirst ? "lit " + op : op + " lit";
    }
  }

  public ArgOps {
    steps = List.copyOf(steps);
    if (constant && !steps.isEmpty()) {
      throw new IllegalArgumentException("a constant argument has no steps: " + steps);
    }
  }

  /** Steps over the argument's column. */
  public ArgOps(List<Step> steps) {
    this(steps, false);
  }

  /** Whether argument {@code i} of calls computed as {@code ops} say is a constant (it reads no column). */
  public static boolean isConstant(List<ArgOps> ops, int i) {
    return !ops.isEmpty() && ops.get(i).constant();
  }

  /**
   * The literal slot of a constant of type {@code t}: its 64 bits as the kernel reads them, carried
   * as the double with those bits ({@link Double#longBitsToDouble}). {@code value} is Java's boxed
   * value of the SQL type (an {@code Integer} for int and date, a {@code Long} for bigint and
   * timestamp, ...).
   */
  public static double constantBits(SqlType t, Object value) {
    long bits = switch (t) {
      case INT, DATE, TINYINT, SMALLINT -> ((Number) value).intValue() & 0xFFFFFFFFL;
      case BIGINT, TIMESTAMP -> (Long) value;
      case FLOAT -> Float.floatToRawIntBits((Float) value) & 0xFFFFFFFFL;
      case DOUBLE -> Double.doubleToRawLongBits((Double) value);
      case BOOLEAN -> ((Boolean) value) ? 1 : 0;
      default -> throw GpuException.of(Code.INVALID_ARGUMENT, "a " + t.sqlName() + " constant has no device form.",
          "pass it as a column (a projection computes it).");
    };
    return Double.longBitsToDouble(bits);
  }

  /** Whether a constant of {@code t} can be a kernel's literal ({@link #constantBits}). */
  public static boolean constantType(SqlType t) {
    return switch (t) {
      case INT, DATE, TINYINT, SMALLINT, BIGINT, TIMESTAMP, FLOAT, DOUBLE, BOOLEAN -> true;
      default -> false;
    };
  }

  /** The shape of {@code steps}, applied in order. */
  public static ArgOps of(Step... steps) {
    return new ArgOps(List.of(steps));
  }

  /** Whether the argument is its column unchanged. */
  public boolean isEmpty() {
    return steps.isEmpty() && !constant;
  }

  /** How many literals the steps (or the constant) read. */
  public int literals() {
    return constant ? 1 : steps.size();
  }

  /** Checks that argument {@code i} of {@code sig} can be computed so: a DOUBLE argument; INVALID_ARGUMENT otherwise. */
  static void check(KernelSignature sig, List<ArgOps> ops) {
    if (ops.isEmpty()) {
      return;
    }
    if (ops.size() != sig.args().size()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + sig.name() + "' takes " + sig.args().size()
          + " arguments but " + ops.size() + " argument shapes were given.", "give one ArgOps per argument (ArgOps.NONE for a plain column).");
    }
    for (int i = 0; i < ops.size(); i++) {
      SqlType t = sig.args().get(i).type();
      if (ops.get(i).constant() && !constantType(t)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "argument " + (i + 1) + " ('" + sig.args().get(i).name() + "') of GPU UDF '"
            + sig.name() + "' is " + t.sqlName() + ", which has no device constant.",
            "pass the value as a column (a projection computes it).");
      }
      if (!ops.get(i).isEmpty() && !ops.get(i).constant() && t != SqlType.DOUBLE) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "argument " + (i + 1) + " ('" + sig.args().get(i).name() + "') of GPU UDF '"
            + sig.name() + "' is " + sig.args().get(i).type().sqlName() + ", but only a DOUBLE argument is computed on the device.",
            "compute the argument before the call (a projection), or pass a double.");
      }
    }
  }

  /** Literals read by all of {@code ops} together. */
  static int literals(List<ArgOps> ops) {
    return ops.stream().mapToInt(ArgOps::literals).sum();
  }

  /**
   * GLSL: the literal buffer at {@code binding} (8 bytes a slot, read as two words so that a kernel
   * needs 64-bit types only where its values have them), one function {@code vk_argI(double)} per
   * argument computed from its column, every temporary {@code precise}, and one {@code vk_constI()}
   * per constant argument of {@code sig}. Empty when no argument is computed.
   */
  static List<String> declarations(KernelSignature sig, List<ArgOps> ops, int binding) {
    List<String> lines = new ArrayList<>();
    if (literals(ops) == 0) {
      return lines;
    }
    lines.add("layout(std430, set = 0, binding = " + binding + ") readonly buffer VkLits { uint vk_lit[]; };");
    int slot = 0;
    for (int i = 0; i < ops.size(); i++) {
      List<Step> steps = ops.get(i).steps();
      if (ops.get(i).constant()) {
        SqlType t = sig.args().get(i).type();
        lines.add(t.glsl() + " vk_const" + i + "() { return " + constant(t, slot(slot++)) + "; }");
        continue;
      }
      if (steps.isEmpty()) {
        continue;
      }
      lines.add("double vk_arg" + i + "(double x) {");
      String value = "x";
      for (int s = 0; s < steps.size(); s++) {
        lines.add("  precise double v" + s + " = " + steps.get(s).glsl(value, "packDouble2x32(" + slot(slot++) + ")") + ";");
        value = "v" + s;
      }
      lines.add("  return " + value + ";");
      lines.add("}");
    }
    return lines;
  }

  /** Literal slot {@code s}: its two 32-bit words, low first. */
  private static String slot(int s) {
    return "uvec2(vk_lit[" + 2 * s + "], vk_lit[" + (2 * s + 1) + "])";
  }

  /** The value of type {@code t} whose bits slot {@code slot} holds ({@link #constantBits}). */
  private static String constant(SqlType t, String slot) {
    return switch (t) {
      case INT, DATE, TINYINT, SMALLINT -> "int(" + slot + ".x)";
      case BIGINT, TIMESTAMP -> "((int64_t(" + slot + ".y) << 32) | int64_t(" + slot + ".x))";
      case FLOAT -> "uintBitsToFloat(" + slot + ".x)";
      case DOUBLE -> "packDouble2x32(" + slot + ")";
      case BOOLEAN -> "(" + slot + ".x != 0u)";
      default -> throw new IllegalStateException(t + " has no device constant");
    };
  }

  /** The load of argument {@code i} from {@code load}: through {@code vk_argI} when it is computed, {@code vk_constI()} when constant. */
  static String load(List<ArgOps> ops, int i, String load) {
    if (isConstant(ops, i)) {
      return "vk_const" + i + "()";
    }
    return ops.isEmpty() || ops.get(i).isEmpty() ? load : "vk_arg" + i + "(" + load + ")";
  }

  /** Java's value of the steps over {@code x} with {@code literals} (for tests and the CPU reference). */
  public double apply(double x, double... literals) {
    if (literals.length != steps.size()) {
      throw new IllegalArgumentException(steps.size() + " literals expected, got " + literals.length);
    }
    double v = x;
    for (int s = 0; s < steps.size(); s++) {
      double l = literals[s];
      Step step = steps.get(s);
      double a = step.literalFirst() ? l : v;
      double b = step.literalFirst() ? v : l;
      v = switch (step.op()) {
        case ADD -> a + b;
        case SUBTRACT -> a - b;
        case MULTIPLY -> a * b;
      };
    }
    return v;
  }

  @Override
  public String toString() {
    return constant ? "[constant]" : steps.toString();
  }
}
