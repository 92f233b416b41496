package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.reduce.DeviceExpr.ArithOp;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The shape of an argument that the kernel computes from its column before the call, as a chain of
 * {@code +}, {@code -} and {@code *} with literals: {@code (v * 1.1) + 0.01} is the column, then
 * {@code MULTIPLY} by literal 0, then {@code ADD} literal 1. A query that passes {@code r + 0.01}
 * then reads the column {@code r} itself (a cached column straight from its device copy) instead of
 * a column that a CPU projection computed and uploaded.
 *
 * <p>Only the shape is here, and it is part of the kernel's identity ({@link KernelSpec}); the
 * literal values are not: they reach the kernel in a small buffer the runner writes
 * ({@link KernelCall#literals()}), so every scenario of a sweep ({@code r + 0.01}, {@code r + 0.02},
 * ...) runs one compiled kernel and one pipeline.
 *
 * <p>Double only: each step is a {@code precise} IEEE operation (no fused multiply-add), so it
 * equals Java's bit for bit (up to the payload of a NaN, which Spark does not distinguish). No
 * division (GLSL's differs) and no float (a device may flush 32-bit subnormals); see
 * docs/GLSL-SEMANTICS.md.
 */
public record ArgOps(List<Step> steps) implements Serializable {
  /** No computation: the argument is its column. */
  public static final ArgOps NONE = new ArgOps(List.of());

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
  }

  /** The shape of {@code steps}, applied in order. */
  public static ArgOps of(Step... steps) {
    return new ArgOps(List.of(steps));
  }

  /** Whether the argument is its column unchanged. */
  public boolean isEmpty() {
    return steps.isEmpty();
  }

  /** How many literals the steps read. */
  public int literals() {
    return steps.size();
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
      if (!ops.get(i).isEmpty() && sig.args().get(i).type() != SqlType.DOUBLE) {
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
   * GLSL: the literal buffer at {@code binding} and one function {@code vk_argI(double)} per computed
   * argument, every temporary {@code precise}. Empty when no argument is computed.
   */
  static List<String> declarations(List<ArgOps> ops, int binding) {
    List<String> lines = new ArrayList<>();
    if (literals(ops) == 0) {
      return lines;
    }
    lines.add("layout(std430, set = 0, binding = " + binding + ") readonly buffer VkLits { double vk_lit[]; };");
    int slot = 0;
    for (int i = 0; i < ops.size(); i++) {
      List<Step> steps = ops.get(i).steps();
      if (steps.isEmpty()) {
        continue;
      }
      lines.add("double vk_arg" + i + "(double x) {");
      String value = "x";
      for (int s = 0; s < steps.size(); s++) {
        lines.add("  precise double v" + s + " = " + steps.get(s).glsl(value, "vk_lit[" + slot++ + "]") + ";");
        value = "v" + s;
      }
      lines.add("  return " + value + ";");
      lines.add("}");
    }
    return lines;
  }

  /** The load of argument {@code i} from {@code load}: through {@code vk_argI} when it is computed. */
  static String load(List<ArgOps> ops, int i, String load) {
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
    return steps.toString();
  }
}
