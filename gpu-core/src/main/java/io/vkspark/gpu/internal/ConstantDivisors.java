package io.vkspark.gpu.internal;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.MemoryKind;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Keeps every floating-point division a division: a driver compiles {@code x / c} with a divisor
 * it knows as {@code x * (1 / c)}, which rounds twice (NVIDIA's does; {@code 123456789.0 / 100.0}
 * gave 1234567.8900000001, Java 1234567.89), and it knows more divisors than the SPIR-V shows: a
 * literal, a {@code const} variable, a parenthesised constant expression, a local variable holding
 * one, a helper's parameter after inlining, constants reached through arithmetic.
 *
 * <p>So each {@code OpFDiv}'s divisor is multiplied by a 1.0 no compiler can know: {@code
 * min(rows, 1)} as a float, where {@code rows} is the first word of the program's parameter
 * buffer (the row count of vkspark's column kernels and reductions; a division runs only for a
 * row below it, so it is at least 1 there). The product is exactly the divisor (zeros, infinities
 * and NaN included) and the division stays the device's run-time one, which is correctly rounded
 * (refined where the device's is not, {@link DoubleRoundingRewrite}, which runs after this pass).
 * A division by a constant zero is {@link ZeroDivisors}' before this pass. A program without a
 * parameter buffer of that shape is left as it is. {@code -Dvkspark.constantDivisors=native}
 * leaves divisors to the compilers, for measuring what they do.
 */
final class ConstantDivisors {
  /** {@code native} leaves divisors to the compilers. */
  static final String PROPERTY = "vkspark.constantDivisors";
  private static final int OP_EXT_INST_IMPORT = 11;
  private static final int OP_MEMORY_MODEL = 14;
  private static final int OP_TYPE_INT = 21;
  private static final int OP_TYPE_STRUCT = 30;
  private static final int OP_TYPE_POINTER = 32;
  private static final int OP_CONSTANT = 43;
  private static final int OP_FUNCTION = 54;
  private static final int OP_LABEL = 248;
  private static final int OP_LOAD = 61;
  private static final int OP_ACCESS_CHAIN = 65;
  private static final int OP_MEMBER_DECORATE = 72;
  private static final int OP_CONVERT_U_TO_F = 112;
  private static final int DEC_BINDING = 33;
  private static final int DEC_DESCRIPTOR_SET = 34;
  private static final int DEC_OFFSET = 35;
  private static final int SC_UNIFORM = 2;
  private static final int GLSL_UMIN = 38;

  private ConstantDivisors() {}

  /** {@code spirv} with each float division's divisor multiplied by a run-time 1.0; itself when it has none. */
  static byte[] hide(byte[] spirv, Program program) {
    if ("native".equals(System.getProperty(PROPERTY))) {
      return spirv;
    }
    Optional<BufferDecl> params = program.buffers().stream()
        .filter(d -> d.kind() == MemoryKind.UNIFORM && d.elementType() == ElementType.UINT32).findFirst();
    if (params.isEmpty()) {
      return spirv;
    }
    SpirvModule m = SpirvModule.parse("program '" + program.name() + "'", spirv);
    Map<Integer, Integer> floatWidth = new HashMap<>();
    Map<Integer, Integer> vectorOf = new HashMap<>(); // float vector type -> component type
    Map<Integer, Integer> set = new HashMap<>();
    Map<Integer, Integer> binding = new HashMap<>();
    Map<Integer, Integer> pointee = new HashMap<>(); // Uniform pointer type -> pointee
    Map<Integer, Integer> uniformPointerTo = new HashMap<>(); // pointee -> Uniform pointer type
    Set<Integer> offsetZero = new HashSet<>(); // structs whose member 0 is at offset 0
    Map<Integer, Integer> firstMember = new HashMap<>();
    Map<Integer, Integer> variableType = new HashMap<>();
    int u32 = -1;
    int glsl = -1;
    int uintZero = -1;
    int uintOne = -1;
    boolean any = false;
    for (Insn in : m.instructions()) {
      switch (in.opcode()) {
        case OP_EXT_INST_IMPORT -> {
          if (m.string(in, 1).equals("GLSL.std.450")) {
            glsl = m.operand(in, 0);
          }
        }
        case SpirvEdit.OP_DECORATE -> {
          if (in.operands() >= 3 && m.operand(in, 1) == DEC_BINDING) {
            binding.put(m.operand(in, 0), m.operand(in, 2));
          } else if (in.operands() >= 3 && m.operand(in, 1) == DEC_DESCRIPTOR_SET) {
            set.put(m.operand(in, 0), m.operand(in, 2));
          }
        }
        case OP_MEMBER_DECORATE -> {
          if (in.operands() >= 4 && m.operand(in, 1) == 0 && m.operand(in, 2) == DEC_OFFSET && m.operand(in, 3) == 0) {
            offsetZero.add(m.operand(in, 0));
          }
        }
        case OP_TYPE_INT -> {
          if (m.operand(in, 1) == 32 && m.operand(in, 2) == 0) {
            u32 = m.operand(in, 0);
          }
        }
        case SpirvEdit.OP_TYPE_FLOAT -> floatWidth.put(m.operand(in, 0), m.operand(in, 1));
        case SpirvEdit.OP_TYPE_VECTOR -> {
          if (floatWidth.containsKey(m.operand(in, 1))) {
            vectorOf.put(m.operand(in, 0), m.operand(in, 1));
          }
        }
        case OP_TYPE_STRUCT -> {
          if (in.operands() >= 2) {
            firstMember.put(m.operand(in, 0), m.operand(in, 1));
          }
        }
        case OP_TYPE_POINTER -> {
          if (m.operand(in, 1) == SC_UNIFORM) {
            pointee.put(m.operand(in, 0), m.operand(in, 2));
            uniformPointerTo.putIfAbsent(m.operand(in, 2), m.operand(in, 0));
          }
        }
        case OP_CONSTANT -> {
          if (m.operand(in, 0) == u32 && in.operands() == 3) {
            if (m.operand(in, 2) == 0) {
              uintZero = m.operand(in, 1);
            } else if (m.operand(in, 2) == 1) {
              uintOne = m.operand(in, 1);
            }
          }
        }
        case SpirvEdit.OP_VARIABLE -> {
          if (in.operands() >= 3 && m.operand(in, 2) == SC_UNIFORM) {
            variableType.put(m.operand(in, 1), m.operand(in, 0));
          }
        }
        case NoContraction.OP_FDIV -> any |= floatWidth.containsKey(m.operand(in, 0)) || vectorOf.containsKey(m.operand(in, 0));
        default -> { }
      }
    }
    if (!any || u32 < 0) {
      return spirv;
    }
    int paramsVar = -1;
    for (Map.Entry<Integer, Integer> v : variableType.entrySet()) {
      Integer block = pointee.get(v.getValue());
      if (set.getOrDefault(v.getKey(), -1) == params.get().set() && binding.getOrDefault(v.getKey(), -1) == params.get().binding()
          && block != null && offsetZero.contains(block) && Integer.valueOf(u32).equals(firstMember.get(block))) {
        paramsVar = v.getKey();
      }
    }
    if (paramsVar < 0) {
      return spirv;
    }
    int next = m.bound();
    List<int[]> newGlobals = new ArrayList<>();
    int ptr = uniformPointerTo.getOrDefault(u32, -1);
    if (ptr < 0) {
      ptr = next++;
      newGlobals.add(SpirvEdit.insn(OP_TYPE_POINTER, ptr, SC_UNIFORM, u32));
    }
    if (uintZero < 0) {
      uintZero = next++;
      newGlobals.add(SpirvEdit.insn(OP_CONSTANT, u32, uintZero, 0));
    }
    if (uintOne < 0) {
      uintOne = next++;
      newGlobals.add(SpirvEdit.insn(OP_CONSTANT, u32, uintOne, 1));
    }
    int glslId = glsl >= 0 ? glsl : next++;
    Set<Integer> dividing = new HashSet<>(); // functions with a float division: only they read the 1.0
    int current = -1;
    for (Insn in : m.instructions()) {
      if (in.opcode() == OP_FUNCTION) {
        current = m.operand(in, 1);
      } else if (in.opcode() == NoContraction.OP_FDIV
          && (floatWidth.containsKey(m.operand(in, 0)) || vectorOf.containsKey(m.operand(in, 0)))) {
        dividing.add(current);
      }
    }

    List<int[]> out = new ArrayList<>();
    boolean placed = false;
    boolean inFunction = false;
    boolean atEntry = false;
    Map<Integer, Integer> ones = new HashMap<>(); // float type -> this function's 1.0 of it
    int uOne = -1;
    List<Integer> products = new ArrayList<>();
    for (Insn in : m.instructions()) {
      int op = in.opcode();
      if (op == OP_MEMORY_MODEL && glsl < 0) {
        int[] name = {0x4c534c47, 0x6474732e, 0x3035342e, 0}; // "GLSL.std.450"
        int[] imp = new int[2 + name.length];
        imp[0] = (imp.length << 16) | OP_EXT_INST_IMPORT;
        imp[1] = glslId;
        System.arraycopy(name, 0, imp, 2, name.length);
        out.add(imp);
      }
      if (!placed && op == OP_FUNCTION) {
        out.addAll(newGlobals);
        placed = true;
      }
      if (op == OP_FUNCTION) {
        inFunction = dividing.contains(m.operand(in, 1));
        atEntry = false;
        ones.clear();
        uOne = -1;
      }
      if (inFunction && op == OP_LABEL && !atEntry) {
        out.add(SpirvEdit.copy(m, in));
        atEntry = true;
        continue;
      }
      if (atEntry && op != SpirvEdit.OP_VARIABLE && uOne < 0) {
        // after the entry block's variables: this function's 1.0, for every division below
        int p = next++;
        int rows = next++;
        uOne = next++;
        out.add(SpirvEdit.insn(OP_ACCESS_CHAIN, ptr, p, paramsVar, uintZero));
        out.add(SpirvEdit.insn(OP_LOAD, u32, rows, p));
        out.add(SpirvEdit.insn(SpirvEmitter.OP_EXT_INST, u32, uOne, glslId, GLSL_UMIN, rows, uintOne));
        for (int floatType : floatWidth.keySet()) {
          int one = next++;
          out.add(SpirvEdit.insn(OP_CONVERT_U_TO_F, floatType, one, uOne));
          ones.put(floatType, one);
        }
      }
      if (op == NoContraction.OP_FDIV && inFunction) {
        int type = m.operand(in, 0);
        Integer scalar = floatWidth.containsKey(type) ? Integer.valueOf(type) : vectorOf.get(type);
        if (scalar != null) {
          int divisor = next++;
          out.add(type == scalar
              ? SpirvEdit.insn(NoContraction.OP_FMUL, type, divisor, m.operand(in, 3), ones.get(scalar))
              : SpirvEdit.insn(NoContraction.OP_VECTOR_TIMES_SCALAR, type, divisor, m.operand(in, 3), ones.get(scalar)));
          products.add(divisor);
          out.add(SpirvEdit.insn(NoContraction.OP_FDIV, type, m.operand(in, 1), m.operand(in, 2), divisor));
          continue;
        }
      }
      if (op == SpirvEmitter.OP_FUNCTION_END) {
        inFunction = false;
        atEntry = false;
      }
      out.add(SpirvEdit.copy(m, in));
    }
    if (products.isEmpty()) {
      return spirv;
    }
    // the products are exact; keep a driver from merging them with anything
    List<int[]> decorated = new ArrayList<>();
    boolean done = false;
    for (int[] w : out) {
      if (!done && SpirvEdit.isGlobalDeclaration(w[0] & 0xffff)) {
        products.forEach(id -> decorated.add(SpirvEdit.noContraction(id)));
        done = true;
      }
      decorated.add(w);
    }
    return SpirvEdit.assemble(spirv, next, decorated);
  }
}
