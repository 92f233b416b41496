package io.vkspark.gpu.internal;

import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/** What the load-time SPIR-V passes share: instruction words and a module written back from them. */
final class SpirvEdit {
  static final int OP_CAPABILITY = 17;
  static final int OP_DECORATE = 71;
  static final int OP_TYPE_FLOAT = 22;
  static final int OP_TYPE_VECTOR = 23;
  static final int OP_TYPE_MATRIX = 24;
  static final int OP_VARIABLE = 59;
  static final int DEC_NO_CONTRACTION = 42;

  private SpirvEdit() {}

  /** The words of {@code in}, opcode word first. */
  static int[] copy(SpirvModule m, Insn in) {
    int[] w = new int[in.wordCount()];
    w[0] = (in.wordCount() << 16) | in.opcode();
    for (int i = 1; i < w.length; i++) {
      w[i] = m.operand(in, i - 1);
    }
    return w;
  }

  /** One instruction's words. */
  static int[] insn(int opcode, int... operands) {
    int[] w = new int[operands.length + 1];
    w[0] = (w.length << 16) | opcode;
    System.arraycopy(operands, 0, w, 1, operands.length);
    return w;
  }

  /** {@code OpDecorate id NoContraction}. */
  static int[] noContraction(int id) {
    return insn(OP_DECORATE, id, DEC_NO_CONTRACTION);
  }

  /** The first instruction of the types, constants and global variables section. */
  static boolean isGlobalDeclaration(int op) {
    return (op >= 19 && op <= 39) || (op >= 41 && op <= 52) || op == OP_VARIABLE || op == 1 || op == 54;
  }

  /** A module of {@code original}'s header (with {@code bound}) and {@code insns}. */
  static byte[] assemble(byte[] original, int bound, List<int[]> insns) {
    int total = 5 + insns.stream().mapToInt(a -> a.length).sum();
    ByteBuffer bytes = ByteBuffer.allocate(4 * total).order(ByteOrder.LITTLE_ENDIAN);
    ByteBuffer header = ByteBuffer.wrap(original).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < 5; i++) {
      bytes.putInt(i == 3 ? bound : header.getInt(4 * i));
    }
    for (int[] insn : insns) {
      for (int word : insn) {
        bytes.putInt(word);
      }
    }
    return bytes.array();
  }
}
