package io.vkspark.gpu.internal;

import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Keeps the sign of a zero through {@code sqrt}: Java's {@code Math.sqrt(-0.0)} is {@code -0.0},
 * and so is SPIR-V's {@code Sqrt}, but a driver may rewrite the code around it as if zeros had no
 * sign. lavapipe (Mesa 22.3) compiles {@code x < 0 ? 0.0 : sqrt(x)} (what a translated {@code if
 * (x < 0) throw ...; return Math.sqrt(x);} becomes) into something that returns {@code 0.0} for
 * {@code x = -0.0}: 6,276 of 200,000 rows of an unseen UDF. Each scalar float {@code Sqrt(x)}
 * becomes {@code x == 0 ? x : Sqrt(x)}, which no such rewrite turns into a positive zero (checked on
 * lavapipe, and against the refined square root, {@link CorrectlyRounded}, which selects the same way).
 */
final class SqrtZeros {
  private static final int OP_EXT_INST_IMPORT = 11;
  private static final int OP_TYPE_BOOL = 20;
  private static final int OP_CONSTANT_NULL = 46;
  private static final int OP_FUNCTION = 54;
  private static final int OP_SELECT = 169;
  private static final int OP_FORD_EQUAL = 180;

  private SqrtZeros() {}

  /** {@code spirv} with every scalar float square root selecting a zero operand itself; itself when it has none. */
  static byte[] rewrite(byte[] spirv) {
    SpirvModule m = SpirvModule.parse("SPIR-V", spirv);
    int glsl = -1;
    int bool = -1;
    Map<Integer, Integer> zeros = new HashMap<>(); // float type -> its +0.0 (made below)
    boolean any = false;
    for (Insn in : m.instructions()) {
      switch (in.opcode()) {
        case OP_EXT_INST_IMPORT -> {
          if (m.string(in, 1).equals("GLSL.std.450")) {
            glsl = m.operand(in, 0);
          }
        }
        case OP_TYPE_BOOL -> bool = m.operand(in, 0);
        case SpirvEdit.OP_TYPE_FLOAT -> zeros.put(m.operand(in, 0), -1);
        case SpirvEmitter.OP_EXT_INST -> any |= in.operands() == 5 && m.operand(in, 2) == glsl
            && m.operand(in, 3) == SpirvEmitter.GLSL_SQRT && zeros.containsKey(m.operand(in, 0));
        default -> { }
      }
    }
    if (!any) {
      return spirv;
    }
    int next = m.bound();
    List<int[]> globals = new ArrayList<>();
    if (bool < 0) {
      bool = next++;
      globals.add(SpirvEdit.insn(OP_TYPE_BOOL, bool));
    }
    for (Map.Entry<Integer, Integer> z : zeros.entrySet()) {
      z.setValue(next++);
      globals.add(SpirvEdit.insn(OP_CONSTANT_NULL, z.getKey(), z.getValue()));
    }
    List<int[]> out = new ArrayList<>();
    boolean placed = false;
    for (Insn in : m.instructions()) {
      if (!placed && in.opcode() == OP_FUNCTION) {
        out.addAll(globals);
        placed = true;
      }
      if (in.opcode() == SpirvEmitter.OP_EXT_INST && in.operands() == 5 && m.operand(in, 2) == glsl
          && m.operand(in, 3) == SpirvEmitter.GLSL_SQRT && zeros.containsKey(m.operand(in, 0))) {
        int type = m.operand(in, 0);
        int x = m.operand(in, 4);
        int root = next++;
        int isZero = next++;
        out.add(SpirvEdit.insn(SpirvEmitter.OP_EXT_INST, type, root, glsl, SpirvEmitter.GLSL_SQRT, x));
        out.add(SpirvEdit.insn(OP_FORD_EQUAL, bool, isZero, x, zeros.get(type)));
        out.add(SpirvEdit.insn(OP_SELECT, type, m.operand(in, 1), isZero, x, root));
        continue;
      }
      out.add(SpirvEdit.copy(m, in));
    }
    return SpirvEdit.assemble(spirv, next, out);
  }
}
