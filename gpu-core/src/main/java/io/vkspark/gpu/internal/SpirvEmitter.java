package io.vkspark.gpu.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes the straight-line SPIR-V of {@link CorrectlyRounded}'s functions: fresh ids from the
 * module's bound, each arithmetic result remembered for a {@code NoContraction} decoration (so no
 * driver fuses a multiply and an add the algorithm keeps apart), and constants made once per value.
 */
final class SpirvEmitter {
  // opcodes used by the functions
  static final int OP_CONSTANT = 43;
  static final int OP_FUNCTION = 54;
  static final int OP_FUNCTION_PARAMETER = 55;
  static final int OP_FUNCTION_END = 56;
  static final int OP_LABEL = 248;
  static final int OP_RETURN_VALUE = 254;
  static final int OP_EXT_INST = 12;
  static final int OP_COMPOSITE_CONSTRUCT = 80;
  static final int OP_COMPOSITE_EXTRACT = 81;
  static final int OP_BITCAST = 124;
  static final int OP_FNEGATE = 127;
  static final int OP_IADD = 128;
  static final int OP_FADD = 129;
  static final int OP_ISUB = 130;
  static final int OP_FSUB = 131;
  static final int OP_FMUL = 133;
  static final int OP_FDIV = 136;
  static final int OP_IS_NAN = 156;
  static final int OP_IS_INF = 157;
  static final int OP_LOGICAL_OR = 166;
  static final int OP_LOGICAL_AND = 167;
  static final int OP_SELECT = 169;
  static final int OP_INOT_EQUAL = 171;
  static final int OP_SGREATER_THAN_EQUAL = 175;
  static final int OP_FORD_EQUAL = 180;
  static final int OP_FORD_NOT_EQUAL = 182;
  static final int OP_FORD_LESS_THAN = 184;
  static final int OP_FORD_GREATER_THAN = 186;
  static final int OP_FORD_LESS_THAN_EQUAL = 188;
  static final int OP_FORD_GREATER_THAN_EQUAL = 190;
  static final int OP_SHIFT_RIGHT_LOGICAL = 194;
  static final int OP_SHIFT_RIGHT_ARITHMETIC = 195;
  static final int OP_BITWISE_OR = 197;
  static final int OP_BITWISE_XOR = 198;
  static final int OP_BITWISE_AND = 199;
  // GLSL.std.450
  static final int GLSL_FABS = 4;
  static final int GLSL_SQRT = 31;
  static final int GLSL_SCLAMP = 45;
  static final int GLSL_FMA = 50;
  static final int GLSL_LDEXP = 53;

  /** The ids of the types the functions use (some made by the rewrite). */
  record Types(int f64, int bool, int u32, int i32, int uvec2, int glsl) {}

  private final Types t;
  private int next;
  final List<int[]> constants = new ArrayList<>();
  final List<int[]> code = new ArrayList<>();
  final List<Integer> noContraction = new ArrayList<>();
  private final Map<Long, Integer> doubles = new HashMap<>();
  private final Map<Long, Integer> ints = new HashMap<>();

  SpirvEmitter(Types t, int firstId) {
    this.t = t;
    this.next = firstId;
  }

  Types types() {
    return t;
  }

  int fresh() {
    return next++;
  }

  /** The next unused id: the module's new bound. */
  int bound() {
    return next;
  }

  void raw(int opcode, int... operands) {
    int[] w = new int[operands.length + 1];
    w[0] = (w.length << 16) | opcode;
    System.arraycopy(operands, 0, w, 1, operands.length);
    code.add(w);
  }

  int op(int opcode, int type, int... operands) {
    int id = fresh();
    int[] all = new int[operands.length + 2];
    all[0] = type;
    all[1] = id;
    System.arraycopy(operands, 0, all, 2, operands.length);
    raw(opcode, all);
    return id;
  }

  /** An arithmetic instruction on doubles, decorated NoContraction. */
  int arith(int opcode, int... operands) {
    int id = op(opcode, t.f64(), operands);
    noContraction.add(id);
    return id;
  }

  int ext(int type, int inst, int... args) {
    int[] all = new int[args.length + 2];
    all[0] = t.glsl();
    all[1] = inst;
    System.arraycopy(args, 0, all, 2, args.length);
    return op(OP_EXT_INST, type, all);
  }

  int fma(int a, int b, int c) {
    return ext(t.f64(), GLSL_FMA, a, b, c);
  }

  int mul(int a, int b) {
    return arith(OP_FMUL, a, b);
  }

  int add(int a, int b) {
    return arith(OP_FADD, a, b);
  }

  int sub(int a, int b) {
    return arith(OP_FSUB, a, b);
  }

  int neg(int a) {
    return arith(OP_FNEGATE, a);
  }

  int ldexp(int x, int exp) {
    return ext(t.f64(), GLSL_LDEXP, x, exp);
  }

  int cmp(int opcode, int a, int b) {
    return op(opcode, t.bool(), a, b);
  }

  int or(int a, int b) {
    return op(OP_LOGICAL_OR, t.bool(), a, b);
  }

  int and(int a, int b) {
    return op(OP_LOGICAL_AND, t.bool(), a, b);
  }

  int select(int type, int cond, int a, int b) {
    return op(OP_SELECT, type, cond, a, b);
  }

  int dsel(int cond, int a, int b) {
    return select(t.f64(), cond, a, b);
  }

  int isel(int cond, int a, int b) {
    return select(t.i32(), cond, a, b);
  }

  int dconst(double v) {
    long bits = Double.doubleToRawLongBits(v);
    return doubles.computeIfAbsent(bits, b -> {
      int id = fresh();
      constants.add(new int[] {(5 << 16) | OP_CONSTANT, t.f64(), id, (int) (long) b, (int) (b >>> 32)});
      return id;
    });
  }

  int iconst(int v) {
    return intConst(t.i32(), v);
  }

  int uconst(int v) {
    return intConst(t.u32(), v);
  }

  private int intConst(int type, int v) {
    long key = ((long) type << 32) | (v & 0xffffffffL);
    return ints.computeIfAbsent(key, k -> {
      int id = fresh();
      constants.add(new int[] {(4 << 16) | OP_CONSTANT, type, id, v});
      return id;
    });
  }

  /** The high word of a double, as a uint. */
  int hiWord(int x) {
    int v = op(OP_BITCAST, t.uvec2(), x);
    return op(OP_COMPOSITE_EXTRACT, t.u32(), v, 1);
  }

  /** The low word of a double, as a uint. */
  int loWord(int x) {
    int v = op(OP_BITCAST, t.uvec2(), x);
    return op(OP_COMPOSITE_EXTRACT, t.u32(), v, 0);
  }

  /** A double from its low and high words. */
  int fromWords(int lo, int hi) {
    int v = op(OP_COMPOSITE_CONSTRUCT, t.uvec2(), lo, hi);
    return op(OP_BITCAST, t.f64(), v);
  }
}
