package io.vkspark.gpu.internal;

import static io.vkspark.gpu.internal.SpirvEmitter.*;

import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * For tests only: makes a device that keeps 32-bit subnormals (lavapipe) behave as one that flushes
 * them (the NVIDIA H200): every scalar 32-bit float operation of a loaded module (arithmetic,
 * comparison, conversion, GLSL function) reads a subnormal operand as a zero of its sign and
 * returns a zero for a subnormal result. So CI runs the path such a device needs
 * ({@link FlushFreeFloats}) against a device that would punish its absence
 * ({@link KernelPasses#SIMULATE_FLUSH_PROPERTY}).
 */
final class FlushSimulation {
  private static final int OP_TYPE_BOOL = 20;
  private static final int OP_TYPE_INT = 21;
  private static final int OP_TYPE_FLOAT = 22;
  private static final int OP_TYPE_FUNCTION = 33;
  private static final int OP_FUNCTION_CALL = 57;
  private static final int OP_FCONVERT = 115;
  private static final int OP_IEQUAL = 170;
  private static final Set<Integer> OPS = Set.of(127, 129, 131, 133, 136, 140, 141, 115, 12, 180, 181, 182, 183, 184,
      185, 186, 187, 188, 189, 190, 191);

  private FlushSimulation() {}

  static byte[] rewrite(byte[] spirv) {
    SpirvModule m = SpirvModule.parse("SPIR-V", spirv);
    int f32 = -1;
    int bool = -1;
    int u32 = -1;
    int fnType = -1;
    Map<Integer, Integer> typeOf = new HashMap<>();
    boolean inFunction = false;
    for (Insn in : m.instructions()) {
      int op = in.opcode();
      if (op == OP_TYPE_FLOAT && m.operand(in, 1) == 32) {
        f32 = m.operand(in, 0);
      } else if (op == OP_TYPE_BOOL) {
        bool = m.operand(in, 0);
      } else if (op == OP_TYPE_INT && m.operand(in, 1) == 32 && m.operand(in, 2) == 0) {
        u32 = m.operand(in, 0);
      } else if (op == OP_TYPE_FUNCTION && in.operands() == 3 && f32 >= 0 && m.operand(in, 1) == f32
          && m.operand(in, 2) == f32) {
        fnType = m.operand(in, 0);
      }
      inFunction |= op == OP_FUNCTION;
      boolean typed = inFunction ? !Set.of(8, 56, 62, 63, 224, 225, 228, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255)
          .contains(op) : (op >= 41 && op <= 52) || op == 59;
      if (typed && in.operands() >= 2) {
        typeOf.put(m.operand(in, 1), m.operand(in, 0));
      }
    }
    if (f32 < 0) {
      return spirv;
    }
    int next = m.bound();
    List<int[]> types = new ArrayList<>();
    if (bool < 0) {
      bool = next++;
      types.add(SpirvEdit.insn(OP_TYPE_BOOL, bool));
    }
    if (u32 < 0) {
      u32 = next++;
      types.add(SpirvEdit.insn(OP_TYPE_INT, u32, 32, 0));
    }
    if (fnType < 0) {
      fnType = next++;
      types.add(SpirvEdit.insn(OP_TYPE_FUNCTION, fnType, f32, f32));
    }
    SpirvEmitter w = new SpirvEmitter(new SpirvEmitter.Types(-1, bool, u32, -1, -1, -1), next);
    int flush = w.fresh();
    w.raw(OP_FUNCTION, f32, flush, 0, fnType);
    int x = w.op(OP_FUNCTION_PARAMETER, f32);
    w.raw(OP_LABEL, w.fresh());
    int bits = w.op(OP_BITCAST, u32, x);
    int sub = w.op(OP_IEQUAL, bool, w.op(OP_BITWISE_AND, u32, bits, w.uconst(0x7f800000)), w.uconst(0));
    int flushed = w.select(u32, sub, w.op(OP_BITWISE_AND, u32, bits, w.uconst(0x80000000)), bits);
    w.raw(OP_RETURN_VALUE, w.op(OP_BITCAST, f32, flushed));
    w.raw(OP_FUNCTION_END);
    List<int[]> function = new ArrayList<>(w.code);
    w.code.clear();

    List<int[]> out = new ArrayList<>();
    boolean typedIn = false;
    for (Insn in : m.instructions()) {
      int op = in.opcode();
      if (!typedIn && op == OP_FUNCTION) {
        out.addAll(types);
        out.addAll(w.constants);
        typedIn = true;
      }
      int[] words = SpirvEdit.copy(m, in);
      if (!OPS.contains(op) || in.operands() < 3) {
        out.add(words);
        continue;
      }
      int first = op == SpirvEmitter.OP_EXT_INST ? 4 : 3; // word index of the first value operand
      boolean any = false;
      for (int i = first; i < words.length; i++) {
        if (typeOf.getOrDefault(words[i], -1) == f32) {
          int f = w.fresh();
          out.add(SpirvEdit.insn(OP_FUNCTION_CALL, f32, f, flush, words[i]));
          words[i] = f;
          any = true;
        }
      }
      if (words[1] == f32 && (any || op == OP_FCONVERT)) {
        int result = words[2];
        words[2] = w.fresh();
        out.add(words);
        out.add(SpirvEdit.insn(OP_FUNCTION_CALL, f32, result, flush, words[2]));
      } else {
        out.add(words);
      }
    }
    out.addAll(function);
    return SpirvEdit.assemble(spirv, w.bound(), out);
  }
}
