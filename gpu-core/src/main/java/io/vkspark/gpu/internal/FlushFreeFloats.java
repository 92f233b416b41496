package io.vkspark.gpu.internal;

import static io.vkspark.gpu.internal.SpirvEmitter.*;

import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Gives 32-bit float arithmetic Java's bits on a device that flushes 32-bit subnormals (no
 * {@code shaderDenormPreserveFloat32}: the NVIDIA H200 reads a subnormal operand as 0 and returns
 * 0 for a subnormal result; a float logistic UDF gave {@code 0.0} where Java gives
 * {@code 6.054601E-39}). Each such operation is computed in double from the floats' bits and
 * rounded back to float bits with integer operations, so nothing on the way is a 32-bit
 * floating-point operation the device could flush:
 *
 * <ul>
 *   <li>{@code vk_f32_widen}: a float's exact double, a subnormal from its significand bits times
 *       2^-149, others by {@code OpFConvert} (exact);</li>
 *   <li>{@code vk_f32_narrow}: a double rounded to the nearest float, ties to even: below 2^-126 in
 *       magnitude on the subnormal grid ({@code (|d| * 2^149 + 2^52) - 2^52} is the integer of the
 *       float's bits), above by {@code OpFConvert} (whose result is then normal);</li>
 *   <li>{@code +}, {@code -}, {@code *}, {@code /}, {@code mod}, {@code sqrt} and the exact GLSL
 *       functions (abs, sign, floor, ceil, trunc, round, fract, min, max, clamp, step, ldexp):
 *       widen, the same operation on doubles, narrow. Double rounding is innocuous here: 53 >= 2 *
 *       24 + 2 for normal results, a sum or product of two floats is exact in double, and a
 *       quotient is never within 2^-179 of a midpoint of the subnormal grid without being on it;</li>
 *   <li>comparisons: on the widened doubles; negation: the sign bit; conversions between float and
 *       double: widen and narrow.</li>
 * </ul>
 *
 * <p>Double divisions and square roots it makes are refined afterwards where the device's are not
 * correctly rounded ({@link DoubleRoundingRewrite}). Left to the device: {@code fma}, the
 * transcendental functions (within their tolerance anyway), dot and matrix products, and
 * integer-float conversions (exact: an integer is never subnormal, a subnormal truncates to 0).
 * Needs float64; vectors are done component by component.
 */
final class FlushFreeFloats {
  private static final int OP_EXT_INST_IMPORT = 11;
  private static final int OP_MEMORY_MODEL = 14;
  private static final int OP_TYPE_BOOL = 20;
  private static final int OP_TYPE_INT = 21;
  private static final int OP_TYPE_FLOAT = 22;
  private static final int OP_TYPE_VECTOR = 23;
  private static final int OP_TYPE_FUNCTION = 33;
  private static final int OP_FUNCTION_CALL = 57;
  private static final int OP_DECORATE = 71;
  private static final int OP_CONVERT_F_TO_U = 109;
  private static final int OP_CONVERT_U_TO_F = 112;
  private static final int OP_FCONVERT = 115;
  private static final int OP_IEQUAL = 170;
  private static final int CAP_FLOAT64 = 10;
  private static final int DEC_RELAXED_PRECISION = 0;
  private static final int FIRST_COMPARISON = 180; // OpFOrdEqual
  private static final int LAST_COMPARISON = 191; // OpFUnordGreaterThanEqual
  /** GLSL.std.450 functions that are exact on doubles as on floats: operand count by number. */
  private static final Map<Integer, Integer> EXACT_FUNCTIONS = Map.ofEntries(
      Map.entry(1, 1), Map.entry(2, 1), Map.entry(3, 1), Map.entry(4, 1), Map.entry(6, 1), Map.entry(8, 1),
      Map.entry(9, 1), Map.entry(10, 1), Map.entry(31, 1), Map.entry(37, 2), Map.entry(40, 2), Map.entry(43, 3),
      Map.entry(48, 2), Map.entry(53, 2), Map.entry(79, 2), Map.entry(80, 2), Map.entry(81, 3));
  private static final int GLSL_LDEXP_NUMBER = 53;
  private static final Set<Integer> BINARY = Set.of(NoContraction.OP_FADD, NoContraction.OP_FSUB, NoContraction.OP_FMUL,
      NoContraction.OP_FDIV, NoContraction.OP_FREM, NoContraction.OP_FMOD);

  private FlushFreeFloats() {}

  /** What the module declares. */
  private static final class Found {
    int f32 = -1;
    int f64 = -1;
    int bool = -1;
    int u32 = -1;
    int i32 = -1;
    int uvec2 = -1;
    int glsl = -1;
    int widenType = -1;
    int narrowType = -1;
    boolean float64Capability;
    final Map<Integer, Integer> vectorSize = new HashMap<>(); // vector type -> components
    final Map<Integer, Integer> component = new HashMap<>(); // vector type -> component type
    final Map<Integer, Integer> typeOf = new HashMap<>(); // result id -> type id
  }

  private static Found scan(SpirvModule m) {
    Found f = new Found();
    boolean inFunction = false;
    for (Insn in : m.instructions()) {
      int op = in.opcode();
      switch (op) {
        case SpirvEdit.OP_CAPABILITY -> f.float64Capability |= m.operand(in, 0) == CAP_FLOAT64;
        case OP_EXT_INST_IMPORT -> {
          if (m.string(in, 1).equals("GLSL.std.450")) {
            f.glsl = m.operand(in, 0);
          }
        }
        case OP_TYPE_FLOAT -> {
          if (m.operand(in, 1) == 32) {
            f.f32 = m.operand(in, 0);
          } else if (m.operand(in, 1) == 64) {
            f.f64 = m.operand(in, 0);
          }
        }
        case OP_TYPE_BOOL -> f.bool = m.operand(in, 0);
        case OP_TYPE_INT -> {
          if (m.operand(in, 1) == 32) {
            if (m.operand(in, 2) == 0) {
              f.u32 = m.operand(in, 0);
            } else {
              f.i32 = m.operand(in, 0);
            }
          }
        }
        case OP_TYPE_VECTOR -> {
          f.vectorSize.put(m.operand(in, 0), m.operand(in, 2));
          f.component.put(m.operand(in, 0), m.operand(in, 1));
          if (m.operand(in, 1) == f.u32 && m.operand(in, 2) == 2) {
            f.uvec2 = m.operand(in, 0);
          }
        }
        case OP_TYPE_FUNCTION -> {
          if (in.operands() == 3 && f.f64 >= 0 && f.f32 >= 0) {
            if (m.operand(in, 1) == f.f64 && m.operand(in, 2) == f.f32) {
              f.widenType = m.operand(in, 0);
            } else if (m.operand(in, 1) == f.f32 && m.operand(in, 2) == f.f64) {
              f.narrowType = m.operand(in, 0);
            }
          }
        }
        default -> {
          if (op == OP_FUNCTION) {
            inFunction = true;
          } else if (op == OP_FUNCTION_END) {
            inFunction = false;
          }
          boolean typed = inFunction ? !NO_RESULT_TYPE.contains(op) : (op >= 41 && op <= 52) || op == 59 || op == 1;
          if (typed && in.operands() >= 2) {
            f.typeOf.put(m.operand(in, 1), m.operand(in, 0));
          }
        }
      }
    }
    return f;
  }

  /** Instructions of a function body that have no result type (all others a compute shader has do). */
  private static final Set<Integer> NO_RESULT_TYPE = Set.of(8, 56, 62, 63, 224, 225, 228, 246, 247, 248, 249, 250, 251,
      252, 253, 254, 255, 256, 257, 317, 4416);

  private static boolean isFloat32(Found f, int type) {
    return type == f.f32 || (f.component.containsKey(type) && f.component.get(type) == f.f32);
  }

  private static boolean isFloat64(Found f, int type) {
    return type == f.f64 || (f.component.containsKey(type) && f.component.get(type) == f.f64);
  }

  /** Whether {@code in} is a 32-bit float operation a flushing device could flush, and this pass replaces. */
  private static boolean target(SpirvModule m, Found f, Insn in) {
    int op = in.opcode();
    if (in.operands() < 3) {
      return false;
    }
    int type = m.operand(in, 0);
    if (BINARY.contains(op) || op == NoContraction.OP_FNEGATE || op == NoContraction.OP_VECTOR_TIMES_SCALAR) {
      return isFloat32(f, type);
    }
    if (op == OP_FCONVERT) {
      int from = f.typeOf.getOrDefault(m.operand(in, 2), -1);
      return (isFloat32(f, type) && isFloat64(f, from)) || (isFloat64(f, type) && isFloat32(f, from));
    }
    if (op >= FIRST_COMPARISON && op <= LAST_COMPARISON) {
      return isFloat32(f, f.typeOf.getOrDefault(m.operand(in, 2), -1));
    }
    if (op == SpirvEmitter.OP_EXT_INST && in.operands() >= 5 && m.operand(in, 2) == f.glsl) {
      Integer args = EXACT_FUNCTIONS.get(m.operand(in, 3));
      return args != null && in.operands() == 4 + args && isFloat32(f, type);
    }
    return false;
  }

  /**
   * The most 32-bit float operations one module may have for {@link #rewrite}: each becomes about
   * 35 instructions once the driver inlines the helpers, and a driver's compile time grows faster
   * than the code (on the H200 a body of 20,000 float additions, rewritten, did not finish
   * compiling in 8 minutes). Real UDF bodies have tens to hundreds.
   */
  static final int MAX_OPERATIONS = 2048;

  /** How many 32-bit float operations of {@code spirv} {@link #rewrite} would replace. */
  static int operations(byte[] spirv) {
    SpirvModule m = SpirvModule.parse("SPIR-V", spirv);
    Found f = scan(m);
    return f.f32 < 0 ? 0 : (int) m.instructions().stream().filter(in -> target(m, f, in)).count();
  }

  /** Whether {@code spirv} has 32-bit float operations {@link #rewrite} would replace. */
  static boolean needed(byte[] spirv) {
    SpirvModule m = SpirvModule.parse("SPIR-V", spirv);
    Found f = scan(m);
    return f.f32 >= 0 && m.instructions().stream().anyMatch(in -> target(m, f, in));
  }

  /** {@code spirv} with its 32-bit float operations computed without flushing; itself when it has none. */
  static byte[] rewrite(byte[] spirv) {
    SpirvModule m = SpirvModule.parse("SPIR-V", spirv);
    Found f = scan(m);
    if (f.f32 < 0 || m.instructions().stream().noneMatch(in -> target(m, f, in))) {
      return spirv;
    }
    int next = m.bound();
    List<int[]> newTypes = new ArrayList<>();
    int f64 = f.f64 >= 0 ? f.f64 : next++;
    if (f.f64 < 0) {
      newTypes.add(SpirvEdit.insn(OP_TYPE_FLOAT, f64, 64));
    }
    int bool = f.bool >= 0 ? f.bool : next++;
    if (f.bool < 0) {
      newTypes.add(SpirvEdit.insn(OP_TYPE_BOOL, bool));
    }
    int u32 = f.u32 >= 0 ? f.u32 : next++;
    if (f.u32 < 0) {
      newTypes.add(SpirvEdit.insn(OP_TYPE_INT, u32, 32, 0));
    }
    int i32 = f.i32 >= 0 ? f.i32 : next++;
    if (f.i32 < 0) {
      newTypes.add(SpirvEdit.insn(OP_TYPE_INT, i32, 32, 1));
    }
    int uvec2 = f.uvec2 >= 0 ? f.uvec2 : next++;
    if (f.uvec2 < 0) {
      newTypes.add(SpirvEdit.insn(OP_TYPE_VECTOR, uvec2, u32, 2));
    }
    int widenType = f.widenType >= 0 && f.f64 >= 0 ? f.widenType : next++;
    if (widenType >= m.bound()) {
      newTypes.add(SpirvEdit.insn(OP_TYPE_FUNCTION, widenType, f64, f.f32));
    }
    int narrowType = f.narrowType >= 0 && f.f64 >= 0 ? f.narrowType : next++;
    if (narrowType >= m.bound()) {
      newTypes.add(SpirvEdit.insn(OP_TYPE_FUNCTION, narrowType, f.f32, f64));
    }
    int glsl = f.glsl >= 0 ? f.glsl : next++;
    SpirvEmitter w = new SpirvEmitter(new SpirvEmitter.Types(f64, bool, u32, i32, uvec2, glsl), next);
    int widen = widen(w, f.f32, widenType);
    int narrow = narrow(w, f.f32, narrowType);
    List<int[]> functions = new ArrayList<>(w.code);
    w.code.clear();

    Set<Integer> replaced = new HashSet<>();
    for (Insn in : m.instructions()) {
      if (target(m, f, in)) {
        replaced.add(m.operand(in, 1));
      }
    }
    List<int[]> out = new ArrayList<>();
    boolean decorated = false;
    boolean typed = false;
    boolean capable = f.float64Capability;
    Rewriter r = new Rewriter(m, f, w, f64, bool, widen, narrow);
    for (Insn in : m.instructions()) {
      int op = in.opcode();
      if (!capable && op == SpirvEdit.OP_CAPABILITY) {
        out.add(SpirvEdit.insn(SpirvEdit.OP_CAPABILITY, CAP_FLOAT64));
        capable = true;
      }
      if (op == OP_MEMORY_MODEL && f.glsl < 0) {
        int[] name = {0x4c534c47, 0x6474732e, 0x3035342e, 0}; // "GLSL.std.450"
        int[] imp = new int[2 + name.length];
        imp[0] = (imp.length << 16) | OP_EXT_INST_IMPORT;
        imp[1] = glsl;
        System.arraycopy(name, 0, imp, 2, name.length);
        out.add(imp);
      }
      if (!decorated && SpirvEdit.isGlobalDeclaration(op)) {
        out.add(null); // the NoContraction decorations go here, once every id is known
        decorated = true;
      }
      if (!typed && op == OP_FUNCTION) {
        out.addAll(newTypes);
        out.add(new int[0]); // the constants go here
        typed = true;
      }
      if (op == OP_DECORATE && replaced.contains(m.operand(in, 0))
          && (m.operand(in, 1) == SpirvEdit.DEC_NO_CONTRACTION || m.operand(in, 1) == DEC_RELAXED_PRECISION)) {
        continue; // a call or a bit operation replaces the arithmetic instruction
      }
      if (target(m, f, in)) {
        w.code.clear();
        r.replace(in);
        out.addAll(w.code);
        continue;
      }
      out.add(SpirvEdit.copy(m, in));
    }
    out.addAll(functions);
    List<int[]> done = new ArrayList<>();
    for (int[] insn : out) {
      if (insn == null) {
        w.noContraction.forEach(id -> done.add(SpirvEdit.noContraction(id)));
      } else if (insn.length == 0) {
        done.addAll(w.constants);
      } else {
        done.add(insn);
      }
    }
    return SpirvEdit.assemble(spirv, w.bound(), done);
  }

  /** Emits {@code double vk_f32_widen(float x)}: the exact double of {@code x}'s bits. */
  private static int widen(SpirvEmitter w, int f32, int fnType) {
    SpirvEmitter.Types t = w.types();
    int fn = w.fresh();
    w.raw(OP_FUNCTION, t.f64(), fn, 0, fnType);
    int x = w.op(OP_FUNCTION_PARAMETER, f32);
    w.raw(OP_LABEL, w.fresh());
    int bits = w.op(OP_BITCAST, t.u32(), x);
    int subnormal = w.op(OP_IEQUAL, t.bool(), w.op(OP_BITWISE_AND, t.u32(), bits, w.uconst(0x7f800000)), w.uconst(0));
    int magnitude = w.mul(w.op(OP_CONVERT_U_TO_F, t.f64(), w.op(OP_BITWISE_AND, t.u32(), bits, w.uconst(0x7fffff))),
        w.dconst(0x1p-149));
    int negative = w.op(OP_INOT_EQUAL, t.bool(), w.op(OP_BITWISE_AND, t.u32(), bits, w.uconst(0x80000000)), w.uconst(0));
    int small = w.dsel(negative, w.neg(magnitude), magnitude); // zeros too, with their sign
    int result = w.dsel(subnormal, small, w.op(OP_FCONVERT, t.f64(), x));
    w.raw(OP_RETURN_VALUE, result);
    w.raw(OP_FUNCTION_END);
    return fn;
  }

  /** Emits {@code float vk_f32_narrow(double d)}: {@code d} rounded to the nearest float, ties to even, subnormals kept. */
  private static int narrow(SpirvEmitter w, int f32, int fnType) {
    SpirvEmitter.Types t = w.types();
    int fn = w.fresh();
    w.raw(OP_FUNCTION, f32, fn, 0, fnType);
    int d = w.op(OP_FUNCTION_PARAMETER, t.f64());
    w.raw(OP_LABEL, w.fresh());
    int abs = w.dsel(w.cmp(OP_FORD_LESS_THAN, d, w.dconst(0.0)), w.neg(d), d);
    int small = w.cmp(OP_FORD_LESS_THAN, abs, w.dconst(0x1p-126));
    // on the subnormal grid: the integer nearest |d| * 2^149 (ties to even, by the double addition), which is
    // the float's bits; 2^23 is 2^-126, the smallest normal
    int big = w.dconst(0x1p52);
    int k = w.sub(w.add(w.mul(abs, w.dconst(0x1p149)), big), big);
    int sign = w.op(OP_BITWISE_AND, t.u32(), w.hiWord(d), w.uconst(0x80000000));
    int smallBits = w.op(OP_BITWISE_OR, t.u32(), w.op(OP_CONVERT_F_TO_U, t.u32(), k), sign);
    int normalBits = w.op(OP_BITCAST, t.u32(), w.op(OP_FCONVERT, f32, d));
    int bits = w.select(t.u32(), small, smallBits, normalBits);
    w.raw(OP_RETURN_VALUE, w.op(OP_BITCAST, f32, bits));
    w.raw(OP_FUNCTION_END);
    return fn;
  }

  /** Writes the replacement of one instruction into the emitter's code. */
  private record Rewriter(SpirvModule m, Found f, SpirvEmitter w, int f64, int bool, int widen, int narrow) {
    void replace(Insn in) {
      int op = in.opcode();
      int type = m.operand(in, 0);
      int result = m.operand(in, 1);
      int n = f.vectorSize.getOrDefault(type, 0);
      int[] operands = new int[in.operands() - 2];
      for (int i = 0; i < operands.length; i++) {
        operands[i] = m.operand(in, 2 + i);
      }
      if (n == 0) {
        scalar(op, type, result, operands, -1);
        return;
      }
      int[] parts = new int[n];
      int componentType = f.component.get(type);
      for (int c = 0; c < n; c++) {
        parts[c] = w.fresh();
        int[] scalars = operands.clone();
        for (int i = 0; i < operands.length; i++) {
          if (isVectorOperand(op, i)) {
            int vt = f.typeOf.getOrDefault(operands[i], -1);
            int ct = f.component.getOrDefault(vt, -1);
            scalars[i] = w.op(OP_COMPOSITE_EXTRACT, ct, operands[i], c);
          }
        }
        scalar(op, componentType, parts[c], scalars, c);
      }
      int[] construct = new int[2 + n];
      construct[0] = type;
      construct[1] = result;
      System.arraycopy(parts, 0, construct, 2, n);
      w.raw(OP_COMPOSITE_CONSTRUCT, construct);
    }

    /** Whether operand {@code i} (after type and result) is a vector to split. */
    private boolean isVectorOperand(int op, int i) {
      if (op == NoContraction.OP_VECTOR_TIMES_SCALAR) {
        return i == 0;
      }
      if (op == SpirvEmitter.OP_EXT_INST) {
        return i >= 2; // set and instruction number first
      }
      return true;
    }

    /** One component: its result {@code id} of {@code type}. */
    private void scalar(int op, int type, int id, int[] a, int component) {
      SpirvEmitter.Types t = w.types();
      if (op == NoContraction.OP_FNEGATE) {
        int bits = w.op(OP_BITWISE_XOR, t.u32(), w.op(OP_BITCAST, t.u32(), a[0]), w.uconst(0x80000000));
        w.raw(OP_BITCAST, type, id, bits);
      } else if (op == OP_FCONVERT) {
        w.raw(OP_FUNCTION_CALL, type, id, type == f.f32 ? narrow : widen, a[0]);
      } else if (op >= FIRST_COMPARISON && op <= LAST_COMPARISON) {
        w.raw(op, type, id, wide(a[0]), wide(a[1]));
      } else if (op == NoContraction.OP_VECTOR_TIMES_SCALAR) {
        w.raw(OP_FUNCTION_CALL, type, id, narrow, w.arith(NoContraction.OP_FMUL, wide(a[0]), wide(a[1])));
      } else if (op == SpirvEmitter.OP_EXT_INST) {
        int[] args = new int[a.length];
        args[0] = a[0];
        args[1] = a[1];
        for (int i = 2; i < a.length; i++) {
          boolean exponent = a[1] == GLSL_LDEXP_NUMBER && i == 3;
          args[i] = exponent ? a[i] : wide(a[i]);
        }
        int d = w.op(OP_EXT_INST, f64, args);
        w.raw(OP_FUNCTION_CALL, type, id, narrow, d);
      } else {
        w.raw(OP_FUNCTION_CALL, type, id, narrow, w.arith(op, wide(a[0]), wide(a[1])));
      }
    }

    private int wide(int x) {
      return w.op(OP_FUNCTION_CALL, f64, widen, x);
    }
  }
}
