package io.vkspark.gpu.internal;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

/**
 * A SPIR-V module read word by word, every access bounds-checked: a truncated or garbage module is
 * a {@link GpuException}, never a crash, and nothing here trusts a word count or an id. The one
 * SPIR-V reader of vkspark; {@link SpirvSeal} and the semantics analysis of column kernels read
 * modules through it.
 */
public final class SpirvModule {
  /** SPIR-V magic number, in the module's first word. */
  public static final int MAGIC = 0x07230203;
  /** Ids above this are refused: glslang's modules stay far below, garbage does not. */
  private static final int MAX_BOUND = 1 << 22;

  /** One instruction: its opcode and where its words lie ({@code start} is the opcode word). */
  public record Insn(int opcode, int start, int wordCount) {
    /** Number of operand words after the opcode word. */
    public int operands() {
      return wordCount - 1;
    }
  }

  private final String what;
  private final int[] words;
  private final List<Insn> instructions;

  private SpirvModule(String what, int[] words, List<Insn> instructions) {
    this.what = what;
    this.words = words;
    this.instructions = instructions;
  }

  /**
   * Reads the header and splits the instruction stream.
   *
   * @param what names the module in messages, e.g. {@code program 'saxpy'}
   * @throws GpuException INVALID_ARGUMENT when the bytes are not a well-formed SPIR-V module
   */
  public static SpirvModule parse(String what, byte[] bytes) {
    if (bytes == null || bytes.length < 20 || bytes.length % 4 != 0) {
      throw malformed(what, (bytes == null ? "no bytes" : bytes.length + " bytes")
          + ", not a header of 5 words followed by whole 32-bit words");
    }
    int[] w = new int[bytes.length / 4];
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(w);
    if (w[0] != MAGIC) {
      throw malformed(what, "bad magic number 0x" + Integer.toHexString(w[0]));
    }
    int version = w[1];
    if ((version & 0xff0000ff) != 0 || (version >>> 16) != 1 || ((version >>> 8) & 0xff) > 6) {
      throw malformed(what, "unknown SPIR-V version word 0x" + Integer.toHexString(version));
    }
    if (w[3] <= 0 || w[3] > MAX_BOUND) {
      throw malformed(what, "id bound " + Integer.toUnsignedString(w[3]) + " is out of range");
    }
    if (w[4] != 0) {
      throw malformed(what, "reserved header word is " + w[4] + ", not 0");
    }
    List<Insn> insns = new ArrayList<>();
    int i = 5;
    while (i < w.length) {
      int count = w[i] >>> 16;
      if (count == 0 || count > w.length - i) {
        throw malformed(what, "instruction at word " + i + " has word count " + count + " but "
            + (w.length - i) + " words remain (truncated or corrupt)");
      }
      insns.add(new Insn(w[i] & 0xffff, i, count));
      i += count;
    }
    if (insns.isEmpty()) {
      throw malformed(what, "no instructions");
    }
    return new SpirvModule(what, w, List.copyOf(insns));
  }

  private static GpuException malformed(String what, String why) {
    return GpuException.of(Code.INVALID_ARGUMENT, what + " is not a well-formed SPIR-V module: " + why + ".",
        "recompile it from source; a cached copy is recompiled automatically.");
  }

  public String what() {
    return what;
  }

  /** The id bound from the header: every id is below it. */
  public int bound() {
    return words[3];
  }

  public List<Insn> instructions() {
    return instructions;
  }

  /** Operand {@code index} (0-based, after the opcode word) of {@code insn}. */
  public int operand(Insn insn, int index) {
    if (index < 0 || index >= insn.operands()) {
      throw malformed(what, "opcode " + insn.opcode() + " at word " + insn.start() + " has " + insn.operands()
          + " operands, operand " + index + " was expected");
    }
    return words[insn.start() + 1 + index];
  }

  /** Whether {@code insn} has an operand at {@code index}. */
  public boolean has(Insn insn, int index) {
    return index >= 0 && index < insn.operands();
  }

  /**
   * The literal string starting at operand {@code index}: UTF-8, NUL-terminated within the
   * instruction.
   */
  public String string(Insn insn, int index) {
    int end = insn.start() + insn.wordCount();
    byte[] buf = new byte[4 * insn.wordCount()];
    int n = 0;
    for (int p = insn.start() + 1 + index; p < end; p++) {
      int word = words[p];
      for (int b = 0; b < 4; b++) {
        int c = (word >>> (8 * b)) & 0xff;
        if (c == 0) {
          return new String(buf, 0, n, StandardCharsets.UTF_8);
        }
        buf[n++] = (byte) c;
      }
    }
    throw malformed(what, "string '" + new String(buf, 0, n, StandardCharsets.UTF_8) + "' at word " + insn.start() + " is not NUL-terminated");
  }

  /** Words taken by the literal string starting at operand {@code index}. */
  public int stringWords(Insn insn, int index) {
    return string(insn, index).getBytes(StandardCharsets.UTF_8).length / 4 + 1;
  }

  /** The module's bytes with the instructions {@code drop} selects left out (the header kept as is). */
  public byte[] bytesWithout(Predicate<Insn> drop) {
    ByteBuffer out = ByteBuffer.allocate(words.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < 5; i++) {
      out.putInt(words[i]);
    }
    for (Insn in : instructions) {
      if (!drop.test(in)) {
        for (int i = 0; i < in.wordCount(); i++) {
          out.putInt(words[in.start() + i]);
        }
      }
    }
    return Arrays.copyOf(out.array(), out.position());
  }
}
