package io.vkspark.gpu.column.input;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.column.ColumnGpu;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.VarArgsTest;
import io.vkspark.gpu.column.run.BatchRunner;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Ill-formed UTF-8 in string arguments, on lavapipe: the body sees the UTF-8 of the Java String
 * that {@code new String(bytes, UTF_8)} makes of each row (what Spark hands {@code call()}), for
 * lone bytes, truncated and overlong sequences, surrogates, code points past U+10FFFF, a character
 * split between two rows and one split between two of the checker's chunks; valid batches are
 * staged untouched.
 */
final class DecodedStringsTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();
  private static final Path CACHE = Path.of("target", "shader-cache");

  private static byte[] bytes(int... b) {
    byte[] out = new byte[b.length];
    for (int i = 0; i < b.length; i++) {
      out[i] = (byte) b[i];
    }
    return out;
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  /** What call() gets, as UTF-8: Java's decoding of the bytes, encoded again. */
  private static byte[] javaDecoded(byte[] b) {
    return new String(b, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
  }

  static final List<byte[]> ILL_FORMED = List.of(
      bytes(0xFF), bytes(0x80), bytes(0xE2, 0x82), bytes(0xC0, 0xAF), bytes(0xED, 0xA0, 0x80), bytes(0xF4, 0x90, 0x80, 0x80),
      bytes(0xF5, 0x41), bytes(0xE0, 0x80, 0x80), bytes(0xF0, 0x80, 0x80, 0x80), bytes(0xC2),
      concat("Grüße ".getBytes(StandardCharsets.UTF_8), bytes(0xFF), " 名前 🎉".getBytes(StandardCharsets.UTF_8), bytes(0xE2, 0x82)));

  static final List<byte[]> WELL_FORMED = List.of(bytes(), "abc".getBytes(StandardCharsets.UTF_8),
      "Grüße, 名前 🎉".getBytes(StandardCharsets.UTF_8), bytes(0xED, 0x9F, 0xBF), bytes(0xEE, 0x80, 0x80),
      bytes(0xF4, 0x8F, 0xBF, 0xBF), bytes(0xE0, 0xA0, 0x80), bytes(0xF0, 0x90, 0x80, 0x80), bytes(0xC2, 0x80));

  @Test
  void validity_followsJavasDecoder_rowByRow() {
    for (byte[] b : ILL_FORMED) {
      assertFalse(Arrays.equals(b, javaDecoded(b)), "Java replaces something in " + Arrays.toString(b));
      assertFalse(DecodedStrings.valid(staged(List.of(b)), 1), Arrays.toString(b));
    }
    for (byte[] b : WELL_FORMED) {
      assertArrayEquals(b, javaDecoded(b));
      assertTrue(DecodedStrings.valid(staged(List.of(b)), 1), Arrays.toString(b));
    }
    // E2 82 | AC: together the euro sign, but each row alone is ill-formed
    assertFalse(DecodedStrings.valid(staged(List.of(bytes(0xE2, 0x82), bytes(0xAC))), 2));
    // a row past the batch's rows is not looked at
    assertTrue(DecodedStrings.valid(staged(List.of(bytes(0x41), bytes(0xFF))), 1));
  }

  @Test
  void longRows_sequencesAcrossTheCheckersChunks() {
    byte[] euro = "€".getBytes(StandardCharsets.UTF_8);
    for (int at = 65533; at <= 65537; at++) {
      byte[] b = new byte[140_000];
      Arrays.fill(b, (byte) 'z');
      System.arraycopy(euro, 0, b, at, 3);
      assertTrue(DecodedStrings.valid(staged(List.of(bytes(0x41), b)), 2), "euro at " + at);
      b[at + 2] = 'z';
      assertFalse(DecodedStrings.valid(staged(List.of(bytes(0x41), b)), 2), "truncated euro at " + at);
    }
  }

  @Test
  void wellFormedBatch_isStagedAsItIs() {
    List<InputColumn> in = List.of(staged(WELL_FORMED));
    assertSame(in, DecodedStrings.of(in, WELL_FORMED.size()));
  }

  @Test
  void body_seesWhatCallGets_arrowAndStaged() {
    ColumnKernel hash = VarArgsTest.kernel("fnv1a", SqlType.INT, VarArgsTest.FNV, arg("s", SqlType.STRING));
    ColumnKernel length = VarArgsTest.kernel("len", SqlType.INT, "return s_length();", arg("s", SqlType.STRING));
    List<byte[]> rows = new ArrayList<>();
    for (int k = 0; k < 40; k++) { // ill-formed rows among well-formed ones and nulls, a few times over
      rows.add(ILL_FORMED.get(k % ILL_FORMED.size()));
      rows.add(WELL_FORMED.get(k % WELL_FORMED.size()));
      rows.add(k % 3 == 0 ? null : bytes(0x31, 0xFF, 0x32));
    }
    List<byte[]> decoded = rows.stream().map(b -> b == null ? null : javaDecoded(b)).toList();
    List<KernelCall> calls = List.of(new KernelCall(hash, new int[] {0}), new KernelCall(length, new int[] {0}));
    try (BatchRunner runner = GPU.runtime().runner(calls, List.of(SqlType.STRING), 1024, GPU.allocator())) {
      try (VarCharVector v = new VarCharVector("s", GPU.allocator())) {
        v.allocateNew();
        for (int i = 0; i < rows.size(); i++) {
          if (rows.get(i) == null) {
            v.setNull(i);
          } else {
            v.setSafe(i, rows.get(i));
          }
        }
        v.setValueCount(rows.size());
        check(runner.run(List.of(ArrowInputs.of(v, SqlType.STRING)), rows.size()), decoded, "arrow");
      }
      check(runner.run(List.of(staged(rows)), rows.size()), decoded, "staged");
    }
  }

  private static void check(List<FieldVector> out, List<byte[]> decoded, String what) {
    VarArgsTest.checkInts(out.get(0), decoded, VarArgsTest::fnv, what + " fnv");
    VarArgsTest.checkInts(out.get(1), decoded, b -> b.length, what + " s_length()");
  }

  private static StagedVarColumn staged(List<byte[]> rows) {
    return VarArgsTest.staged(SqlType.STRING, rows);
  }
}
