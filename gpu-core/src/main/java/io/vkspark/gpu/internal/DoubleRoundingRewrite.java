package io.vkspark.gpu.internal;

import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Rewrites a SPIR-V module so that every 64-bit {@code OpFDiv} and GLSL {@code sqrt} of a double
 * calls a correctly rounded function ({@link CorrectlyRounded}) appended to the module, for a device
 * whose own are not correctly rounded ({@link DoubleRoundingProbe}).
 *
 * <p>Done on the compiled SPIR-V, when a kernel is loaded on such a device, rather than on the GLSL
 * text: only the compiler knows which {@code /} divides doubles (the body's, the Java-semantics
 * helpers', vkmath's and generated device expressions' alike), a rewrite of the text would have to
 * parse GLSL expressions and would break constant expressions, and the SPIR-V that is compiled,
 * cached and checked stays the same for every device. Vector divisions are split into components.
 * Constant divisions folded by the compiler are already exact (folded on the host).
 */
final class DoubleRoundingRewrite {
  private static final int OP_EXT_INST_IMPORT = 11;
  private static final int OP_MEMORY_MODEL = 14;
  private static final int OP_DECORATE = 71;
  private static final int OP_TYPE_BOOL = 20;
  private static final int OP_TYPE_INT = 21;
  private static final int OP_TYPE_FLOAT = 22;
  private static final int OP_TYPE_VECTOR = 23;
  private static final int OP_TYPE_FUNCTION = 33;
  private static final int OP_FUNCTION = 54;
  private static final int OP_FUNCTION_CALL = 57;
  private static final int OP_VARIABLE = 59;
  private static final int DEC_RELAXED_PRECISION = 0;
  private static final int DEC_NO_CONTRACTION = 42;

  private DoubleRoundingRewrite() {}

  /** Whether {@code spirv} divides or takes the square root of doubles (what {@link #refine} would change). */
  static boolean needed(byte[] spirv, boolean divide, boolean sqrt) {
    SpirvModule m = SpirvModule.parse("SPIR-V", spirv);
    return !targets(m, scan(m), divide, sqrt, false).isEmpty();
  }

  /** What the module already declares. */
  private static final class Found {
    int f64 = -1;
    int bool = -1;
    int u32 = -1;
    int i32 = -1;
    int uvec2 = -1;
    int glsl = -1;
    int divType = -1;
    int sqrtType = -1;
    final Map<Integer, Integer> f64Vectors = new HashMap<>();
    final Set<Integer> precise = new HashSet<>();
  }

  private static Found scan(SpirvModule m) {
    Found f = new Found();
    for (Insn in : m.instructions()) {
      switch (in.opcode()) {
        case OP_EXT_INST_IMPORT -> {
          if (m.string(in, 1).equals("GLSL.std.450")) {
            f.glsl = m.operand(in, 0);
          }
        }
        case OP_TYPE_FLOAT -> {
          if (m.operand(in, 1) == 64) {
            f.f64 = m.operand(in, 0);
          }
        }
        case OP_TYPE_BOOL -> f.bool = m.operand(in, 0);
        case OP_DECORATE -> {
          if (m.operand(in, 1) == DEC_NO_CONTRACTION) {
            f.precise.add(m.operand(in, 0));
          }
        }
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
          if (m.operand(in, 1) == f.f64 && f.f64 >= 0) {
            f.f64Vectors.put(m.operand(in, 0), m.operand(in, 2));
          } else if (m.operand(in, 1) == f.u32 && f.u32 >= 0 && m.operand(in, 2) == 2) {
            f.uvec2 = m.operand(in, 0);
          }
        }
        case OP_TYPE_FUNCTION -> {
          if (f.f64 >= 0 && m.operand(in, 1) == f.f64) {
            if (in.operands() == 4 && m.operand(in, 2) == f.f64 && m.operand(in, 3) == f.f64) {
              f.divType = m.operand(in, 0);
            } else if (in.operands() == 3 && m.operand(in, 2) == f.f64) {
              f.sqrtType = m.operand(in, 0);
            }
          }
        }
        default -> { }
      }
    }
    return f;
  }

  /** The instructions to replace, by their position in the module. */
  private static Map<Integer, Boolean> targets(SpirvModule m, Found f, boolean divide, boolean sqrt,
                                               boolean nativePrecise) {
    Map<Integer, Boolean> out = new HashMap<>(); // start word -> true for a division, false for a sqrt
    if (f.f64 < 0) {
      return out;
    }
    for (Insn in : m.instructions()) {
      boolean doubles = in.operands() >= 2 && (m.operand(in, 0) == f.f64 || f.f64Vectors.containsKey(m.operand(in, 0)));
      if (!doubles) {
        continue;
      }
      if (divide && in.opcode() == SpirvEmitter.OP_FDIV && !(nativePrecise && f.precise.contains(m.operand(in, 1)))) {
        out.put(in.start(), true);
      } else if (sqrt && in.opcode() == SpirvEmitter.OP_EXT_INST && in.operands() == 5 && m.operand(in, 2) == f.glsl
          && m.operand(in, 3) == SpirvEmitter.GLSL_SQRT) {
        out.put(in.start(), false);
      }
    }
    return out;
  }

  /**
   * The module with its double divisions ({@code divide}) and square roots ({@code sqrt})
   * correctly rounded, with {@code fma} where the device fuses it ({@code fusedFma}); {@code
   * spirv} itself when it has none.
   */
  static byte[] refine(byte[] spirv, boolean divide, boolean sqrt, boolean fusedFma) {
    return refine(spirv, divide, sqrt, fusedFma, false);
  }

  /**
   * As {@link #refine(byte[], boolean, boolean, boolean)}; with {@code nativePrecise}, divisions
   * decorated {@code NoContraction} (GLSL {@code precise}: vkmath's) are left to the device.
   */
  static byte[] refine(byte[] spirv, boolean divide, boolean sqrt, boolean fusedFma, boolean nativePrecise) {
    SpirvModule m = SpirvModule.parse("SPIR-V", spirv);
    Found f = scan(m);
    Map<Integer, Boolean> targets = targets(m, f, divide, sqrt, nativePrecise);
    if (targets.isEmpty()) {
      return spirv;
    }
    boolean anyDiv = targets.containsValue(true);
    boolean anySqrt = targets.containsValue(false);
    int next = m.bound();
    List<int[]> newTypes = new ArrayList<>();
    int glsl = f.glsl >= 0 ? f.glsl : next++;
    int bool = f.bool >= 0 ? f.bool : next++;
    int u32 = f.u32 >= 0 ? f.u32 : next++;
    int i32 = f.i32 >= 0 ? f.i32 : next++;
    int uvec2 = f.uvec2 >= 0 ? f.uvec2 : next++;
    if (f.bool < 0) {
      newTypes.add(new int[] {(2 << 16) | OP_TYPE_BOOL, bool});
    }
    if (f.u32 < 0) {
      newTypes.add(new int[] {(4 << 16) | OP_TYPE_INT, u32, 32, 0});
    }
    if (f.i32 < 0) {
      newTypes.add(new int[] {(4 << 16) | OP_TYPE_INT, i32, 32, 1});
    }
    if (f.uvec2 < 0) {
      newTypes.add(new int[] {(4 << 16) | OP_TYPE_VECTOR, uvec2, u32, 2});
    }
    int divType = f.divType;
    if (anyDiv && divType < 0) {
      divType = next++;
      newTypes.add(new int[] {(5 << 16) | OP_TYPE_FUNCTION, divType, f.f64, f.f64, f.f64});
    }
    int sqrtType = f.sqrtType;
    if (anySqrt && sqrtType < 0) {
      sqrtType = next++;
      newTypes.add(new int[] {(4 << 16) | OP_TYPE_FUNCTION, sqrtType, f.f64, f.f64});
    }
    SpirvEmitter w = new SpirvEmitter(new SpirvEmitter.Types(f.f64, bool, u32, i32, uvec2, glsl), next);
    int divFn = anyDiv ? CorrectlyRounded.divide(w, divType, fusedFma) : -1;
    int sqrtFn = anySqrt ? CorrectlyRounded.sqrt(w, sqrtType, fusedFma) : -1;
    List<int[]> functions = new ArrayList<>(w.code);
    w.code.clear();

    Set<Integer> replaced = new HashSet<>();
    for (Insn in : m.instructions()) {
      if (targets.containsKey(in.start())) {
        replaced.add(m.operand(in, 1));
      }
    }
    List<int[]> out = new ArrayList<>();
    boolean decorated = false;
    boolean typed = false;
    for (Insn in : m.instructions()) {
      int op = in.opcode();
      if (op == OP_MEMORY_MODEL && f.glsl < 0) {
        int[] name = words("GLSL.std.450");
        int[] imp = new int[2 + name.length];
        imp[0] = (imp.length << 16) | OP_EXT_INST_IMPORT;
        imp[1] = glsl;
        System.arraycopy(name, 0, imp, 2, name.length);
        out.add(imp);
      }
      if (!decorated && isGlobalDeclaration(op)) {
        for (int id : w.noContraction) {
          out.add(new int[] {(3 << 16) | OP_DECORATE, id, DEC_NO_CONTRACTION});
        }
        decorated = true;
      }
      if (!typed && op == OP_FUNCTION) {
        out.addAll(newTypes);
        out.addAll(w.constants);
        typed = true;
      }
      if (op == OP_DECORATE && replaced.contains(m.operand(in, 0))
          && (m.operand(in, 1) == DEC_NO_CONTRACTION || m.operand(in, 1) == DEC_RELAXED_PRECISION)) {
        continue; // the call that replaces the result is not an arithmetic instruction
      }
      Boolean isDiv = targets.get(in.start());
      if (isDiv == null) {
        out.add(copy(m, in));
        continue;
      }
      int type = m.operand(in, 0);
      int result = m.operand(in, 1);
      int[] args = isDiv ? new int[] {m.operand(in, 2), m.operand(in, 3)} : new int[] {m.operand(in, 4)};
      int fn = isDiv ? divFn : sqrtFn;
      Integer n = f.f64Vectors.get(type);
      if (n == null) {
        out.add(call(f.f64, result, fn, args));
        continue;
      }
      int[] parts = new int[n];
      for (int c = 0; c < n; c++) {
        int[] scalars = new int[args.length];
        for (int k = 0; k < args.length; k++) {
          scalars[k] = w.fresh();
          out.add(new int[] {(5 << 16) | SpirvEmitter.OP_COMPOSITE_EXTRACT, f.f64, scalars[k], args[k], c});
        }
        parts[c] = w.fresh();
        out.add(call(f.f64, parts[c], fn, scalars));
      }
      int[] construct = new int[3 + n];
      construct[0] = (construct.length << 16) | SpirvEmitter.OP_COMPOSITE_CONSTRUCT;
      construct[1] = type;
      construct[2] = result;
      System.arraycopy(parts, 0, construct, 3, n);
      out.add(construct);
    }
    out.addAll(functions);
    int total = 5 + out.stream().mapToInt(a -> a.length).sum();
    ByteBuffer bytes = ByteBuffer.allocate(4 * total).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer header = ByteBuffer.wrap(spirv).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < 5; i++) {
      bytes.putInt(i == 3 ? w.bound() : header.getInt(4 * i));
    }
    for (int[] insn : out) {
      for (int word : insn) {
        bytes.putInt(word);
      }
    }
    return bytes.array();
  }

  /** The first instruction of the types, constants and global variables section. */
  private static boolean isGlobalDeclaration(int op) {
    return (op >= 19 && op <= 39) || (op >= 41 && op <= 52) || op == OP_VARIABLE || op == 1 || op == OP_FUNCTION;
  }

  private static int[] call(int type, int result, int fn, int[] args) {
    int[] w = new int[4 + args.length];
    w[0] = (w.length << 16) | OP_FUNCTION_CALL;
    w[1] = type;
    w[2] = result;
    w[3] = fn;
    System.arraycopy(args, 0, w, 4, args.length);
    return w;
  }

  private static int[] copy(SpirvModule m, Insn in) {
    int[] w = new int[in.wordCount()];
    w[0] = (in.wordCount() << 16) | in.opcode();
    for (int i = 1; i < w.length; i++) {
      w[i] = m.operand(in, i - 1);
    }
    return w;
  }

  /** A literal string's words, NUL-terminated. */
  private static int[] words(String s) {
    byte[] b = Arrays.copyOf(s.getBytes(StandardCharsets.UTF_8), s.length() / 4 * 4 + 4);
    int[] w = new int[b.length / 4];
    ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(w);
    return w;
  }
}
