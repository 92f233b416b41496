package io.vkspark.gpu.internal;

import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Gives a float division by a constant zero Java's result on every device: SPIR-V leaves
 * {@code OpFDiv} by 0 undefined, and drivers use that, so a body's {@code x / 0.0lf} read whatever
 * was in a register on lavapipe (0.0, 1.99E9, ...) where Java gives an infinity or NaN. Such a
 * division (the compiler keeps it when the dividend is not constant, also after propagating a
 * local {@code double z = 0.0}) becomes {@code x * inf} with the zero's sign, which is IEEE's
 * {@code x / 0} for every {@code x}, NaN and zero included.
 */
final class ZeroDivisors {
  private static final int OP_TYPE_FLOAT = 22;
  private static final int OP_CONSTANT = 43;
  private static final int OP_CONSTANT_NULL = 46;

  private ZeroDivisors() {}

  /** {@code spirv} with its float divisions by a scalar constant zero replaced; itself when it has none. */
  static byte[] rewrite(byte[] spirv) {
    SpirvModule m = SpirvModule.parse("SPIR-V", spirv);
    Map<Integer, Integer> floatWidth = new HashMap<>();
    Map<Integer, Boolean> zeros = new HashMap<>(); // constant id -> negative
    Map<Integer, Integer> zeroType = new HashMap<>();
    Set<Integer> targets = new HashSet<>();
    for (Insn in : m.instructions()) {
      switch (in.opcode()) {
        case OP_TYPE_FLOAT -> floatWidth.put(m.operand(in, 0), m.operand(in, 1));
        case OP_CONSTANT, OP_CONSTANT_NULL -> {
          Integer width = floatWidth.get(m.operand(in, 0));
          if (width == null) {
            continue;
          }
          boolean zero;
          boolean negative = false;
          if (in.opcode() == OP_CONSTANT_NULL) {
            zero = true;
          } else if (width == 64 && in.operands() == 4) {
            zero = m.operand(in, 2) == 0 && (m.operand(in, 3) & 0x7fffffff) == 0;
            negative = m.operand(in, 3) < 0;
          } else if (width == 32 && in.operands() == 3) {
            zero = (m.operand(in, 2) & 0x7fffffff) == 0;
            negative = m.operand(in, 2) < 0;
          } else {
            zero = false;
          }
          if (zero) {
            zeros.put(m.operand(in, 1), negative);
            zeroType.put(m.operand(in, 1), m.operand(in, 0));
          }
        }
        case SpirvEmitter.OP_FDIV -> {
          if (zeros.containsKey(m.operand(in, 3)) && floatWidth.containsKey(m.operand(in, 0))) {
            targets.add(in.start());
          }
        }
        default -> { }
      }
    }
    if (targets.isEmpty()) {
      return spirv;
    }
    int next = m.bound();
    Map<Integer, Integer> infinity = new HashMap<>(); // zero constant -> the infinity with its sign
    for (int zero : zeros.keySet()) {
      infinity.put(zero, next++);
    }
    List<int[]> out = new ArrayList<>();
    boolean placed = false;
    for (Insn in : m.instructions()) {
      if (!placed && in.opcode() == SpirvEmitter.OP_FUNCTION) {
        for (Map.Entry<Integer, Integer> e : infinity.entrySet()) {
          int type = zeroType.get(e.getKey());
          boolean neg = zeros.get(e.getKey());
          out.add(floatWidth.get(type) == 64
              ? new int[] {(5 << 16) | OP_CONSTANT, type, e.getValue(), 0, neg ? 0xfff00000 : 0x7ff00000}
              : new int[] {(4 << 16) | OP_CONSTANT, type, e.getValue(), neg ? 0xff800000 : 0x7f800000});
        }
        placed = true;
      }
      int[] w = new int[in.wordCount()];
      w[0] = (in.wordCount() << 16) | in.opcode();
      for (int i = 1; i < w.length; i++) {
        w[i] = m.operand(in, i - 1);
      }
      if (targets.contains(in.start())) {
        w[0] = (in.wordCount() << 16) | SpirvEmitter.OP_FMUL;
        w[4] = infinity.get(w[4]);
      }
      out.add(w);
    }
    ByteBuffer b = ByteBuffer.allocate(4 * (5 + out.stream().mapToInt(a -> a.length).sum()))
        .order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer header = ByteBuffer.wrap(spirv).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < 5; i++) {
      b.putInt(i == 3 ? next : header.getInt(4 * i));
    }
    out.forEach(a -> {
      for (int x : a) {
        b.putInt(x);
      }
    });
    return b.array();
  }
}
