package io.vkspark.gpu.internal;

import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Decorates every floating-point arithmetic result of a module {@code NoContraction} (GLSL's
 * {@code precise}), so that no driver fuses {@code a * b + c} into one {@code fma} (NVIDIA does,
 * rounding once where Java and Spark round twice) or otherwise merges operations, whoever wrote
 * the code: a hand-written body, {@code vkspark_define}, a {@code spark.vkspark.glsl} file,
 * translated bytecode, vkmath, argument expressions or a reduction. Done on the SPIR-V when a
 * program loads, so it does not depend on how the body is written; a program with
 * {@link io.vkspark.gpu.Program#fastMath()} is left as it is.
 *
 * <p>The operations: {@code OpFAdd}, {@code OpFSub}, {@code OpFMul}, {@code OpFDiv},
 * {@code OpFRem}, {@code OpFMod}, {@code OpFNegate}, and the vector and matrix products
 * ({@code OpVectorTimesScalar} through {@code OpDot}), which a driver expands into multiplies and
 * adds. An explicit {@code fma} ({@code OpExtInst Fma}) stays what it is. shaderc's optimizer does
 * not fold or reassociate floats before this pass: every module vkspark compiles declares
 * {@code SPV_KHR_float_controls}, under which spirv-opt refuses floating-point folding
 * ({@link SealedCompiler}).
 */
final class NoContraction {
  static final int OP_FNEGATE = 127;
  static final int OP_FADD = 129;
  static final int OP_FSUB = 131;
  static final int OP_FMUL = 133;
  static final int OP_FDIV = 136;
  static final int OP_FREM = 140;
  static final int OP_FMOD = 141;
  static final int OP_VECTOR_TIMES_SCALAR = 142;
  static final int OP_DOT = 148;

  private NoContraction() {}

  /** Whether {@code op} is a floating-point operation a driver may contract (given a float result type). */
  static boolean contractible(int op) {
    return op == OP_FNEGATE || op == OP_FADD || op == OP_FSUB || op == OP_FMUL || op == OP_FDIV || op == OP_FREM
        || op == OP_FMOD || (op >= OP_VECTOR_TIMES_SCALAR && op <= OP_DOT);
  }

  /** {@code spirv} with every float arithmetic result decorated {@code NoContraction}; itself when none lacks it. */
  static byte[] decorate(byte[] spirv) {
    SpirvModule m = SpirvModule.parse("SPIR-V", spirv);
    List<Integer> targets = undecorated(m);
    if (targets.isEmpty()) {
      return spirv;
    }
    List<int[]> out = new ArrayList<>();
    boolean placed = false;
    for (Insn in : m.instructions()) {
      if (!placed && SpirvEdit.isGlobalDeclaration(in.opcode())) {
        targets.forEach(id -> out.add(SpirvEdit.noContraction(id)));
        placed = true;
      }
      out.add(SpirvEdit.copy(m, in));
    }
    return SpirvEdit.assemble(spirv, m.bound(), out);
  }

  /** The float arithmetic results of {@code m} without {@code NoContraction}, in module order. */
  static List<Integer> undecorated(SpirvModule m) {
    Set<Integer> floats = new HashSet<>(); // float scalar, vector and matrix types
    Set<Integer> decorated = new HashSet<>();
    List<Integer> out = new ArrayList<>();
    for (Insn in : m.instructions()) {
      int op = in.opcode();
      if (op == SpirvEdit.OP_TYPE_FLOAT) {
        floats.add(m.operand(in, 0));
      } else if ((op == SpirvEdit.OP_TYPE_VECTOR || op == SpirvEdit.OP_TYPE_MATRIX) && floats.contains(m.operand(in, 1))) {
        floats.add(m.operand(in, 0));
      } else if (op == SpirvEdit.OP_DECORATE && in.operands() >= 2 && m.operand(in, 1) == SpirvEdit.DEC_NO_CONTRACTION) {
        decorated.add(m.operand(in, 0));
      } else if (contractible(op) && in.operands() >= 2 && floats.contains(m.operand(in, 0))
          && !decorated.contains(m.operand(in, 1))) {
        out.add(m.operand(in, 1));
      }
    }
    return out;
  }
}
