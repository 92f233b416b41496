package io.vkspark.gpu.column.input;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.SqlType;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.lwjgl.system.MemoryUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a body sees of a {@code string} argument: the UTF-8 encoding of the Java {@code String} that
 * the UDF's {@code call()} receives, so the two agree on every row. Spark hands a Java UDF
 * {@code new String(bytes, UTF_8)} ({@code UTF8String.toString()}), which turns each ill-formed
 * sequence into U+FFFD; a string column holding such bytes (from {@code CAST(binary AS STRING)}, or
 * a file Spark does not validate) is therefore staged decoded the same way: each row through Java's
 * own decoder and encoder, so the replacement is Java's by construction. Valid UTF-8 (every batch
 * in practice) is checked on the host, eight ASCII bytes at a time, and staged as it is.
 */
public final class DecodedStrings {
  private static final Logger LOG = LoggerFactory.getLogger(DecodedStrings.class);
  /** Bytes checked per copy out of a column. */
  private static final int CHUNK = 1 << 16;
  private static final ThreadLocal<ByteBuffer> SCRATCH = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(CHUNK));

  private DecodedStrings() {}

  /** {@code inputs} with each string column whose rows {@code [0, rows)} hold ill-formed UTF-8 decoded as Java does. */
  public static List<InputColumn> of(List<InputColumn> inputs, int rows) {
    List<InputColumn> out = null;
    for (int c = 0; c < inputs.size(); c++) {
      if (inputs.get(c).type() == SqlType.STRING && !valid((VarColumn) inputs.get(c), rows)) {
        if (out == null) {
          out = new ArrayList<>(inputs);
        }
        out.set(c, decoded((VarColumn) inputs.get(c), rows));
        LOG.debug("vkspark: string argument {} of a batch of {} rows holds ill-formed UTF-8: staged as Java decodes it", c, rows);
      }
    }
    return out == null ? inputs : out;
  }

  /** Whether each of rows {@code [0, rows)} is well-formed UTF-8 (Unicode Table 3-7, as Java's decoder requires). */
  static boolean valid(VarColumn c, int rows) {
    long scratch = MemoryUtil.memAddress0(SCRATCH.get());
    int at = 0; // the scratch holds elements [at, at + held)
    int held = 0;
    for (int r = 0; r < rows; r++) {
      int end = c.offset(r + 1);
      int state = 0;
      for (int p = c.offset(r); p < end; ) {
        if (p < at || p >= at + held) {
          at = p;
          held = Math.min(CHUNK, c.offset(rows) - p);
          c.copyElements(at, held, scratch);
        }
        int stop = Math.min(end, at + held);
        state = scan(scratch + (p - at), stop - p, state);
        if (state < 0) {
          return false;
        }
        p = stop;
      }
      if (state != 0) { // the row ends inside a sequence
        return false;
      }
    }
    return true;
  }

  /** The state after {@code len} bytes at {@code address} from {@code state}; -1 at an ill-formed byte. */
  private static int scan(long address, int len, int state) {
    int i = 0;
    while (i < len) {
      if (state == 0) {
        while (i + 8 <= len && (MemoryUtil.memGetLong(address + i) & 0x8080808080808080L) == 0) {
          i += 8;
        }
        if (i == len) {
          break;
        }
      }
      state = step(state, MemoryUtil.memGetByte(address + i) & 0xff);
      if (state < 0) {
        return -1;
      }
      i++;
    }
    return state;
  }

  /**
   * One byte of the well-formed sequences: state 0 between characters, 1 to 3 continuation bytes
   * still due, 4 to 7 the restricted second byte after E0 (A0..BF), ED (80..9F, no surrogates), F0
   * (90..BF) and F4 (80..8F, at most U+10FFFF); -1 when {@code b} cannot come next.
   */
  static int step(int state, int b) {
    return switch (state) {
      case 0 -> b < 0x80 ? 0 : b < 0xC2 ? -1 : b < 0xE0 ? 1 : b == 0xE0 ? 4 : b == 0xED ? 5 : b < 0xF0 ? 2
          : b == 0xF0 ? 6 : b < 0xF4 ? 3 : b == 0xF4 ? 7 : -1;
      case 1, 2, 3 -> (b & 0xC0) == 0x80 ? state - 1 : -1;
      case 4 -> b >= 0xA0 && b <= 0xBF ? 1 : -1;
      case 5 -> b >= 0x80 && b <= 0x9F ? 1 : -1;
      case 6 -> b >= 0x90 && b <= 0xBF ? 2 : -1;
      case 7 -> b >= 0x80 && b <= 0x8F ? 2 : -1;
      default -> -1;
    };
  }

  /** Rows {@code [0, rows)} of {@code c}, each as the UTF-8 of {@code new String(bytes, UTF_8)}; validity is c's. */
  private static VarColumn decoded(VarColumn c, int rows) {
    int base = c.offset(0);
    byte[] in = new byte[c.offset(rows) - base];
    ByteBuffer scratch = SCRATCH.get();
    for (int p = 0; p < in.length; p += CHUNK) {
      int n = Math.min(CHUNK, in.length - p);
      c.copyElements(base + p, n, MemoryUtil.memAddress0(scratch));
      scratch.get(0, in, p, n); // absolute: the buffer's position stays 0
    }
    int[] offsets = new int[rows + 1];
    List<byte[]> decoded = new ArrayList<>(rows);
    long total = 0;
    for (int r = 0; r < rows; r++) {
      int from = c.offset(r) - base;
      byte[] b = new String(in, from, c.offset(r + 1) - base - from, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
      decoded.add(b);
      total += b.length;
      if (total > Integer.MAX_VALUE - 16) {
        throw GpuException.of(Code.SIZE, "a batch of a string argument grows past 2 GiB once its ill-formed UTF-8 is "
            + "decoded (each ill-formed byte becomes U+FFFD, 3 bytes).", "use smaller batches (spark.vkspark.batchRows), "
            + "or pass the column as binary (CAST(s AS BINARY)) to hash its bytes as they are.");
      }
      offsets[r + 1] = (int) total;
    }
    byte[] data = new byte[(int) total];
    for (int r = 0; r < rows; r++) {
      System.arraycopy(decoded.get(r), 0, data, offsets[r], decoded.get(r).length);
    }
    return new Decoded(c, rows, offsets, data);
  }

  /** Decoded rows over the validity of the column they came from. */
  private record Decoded(VarColumn source, int rows, int[] offsets, byte[] data) implements VarColumn {
    @Override
    public SqlType type() {
      return SqlType.STRING;
    }

    @Override
    public int offset(int row) {
      return offsets[row];
    }

    @Override
    public void copyElements(int from, int count, long dst) {
      RawMemory.copyFromArray(data, from, dst, count);
    }

    @Override
    public boolean hasElementNulls() {
      return false;
    }

    @Override
    public void copyElementValidity(int from, int count, long dst, long dstBit) {
      Bits.fill(dst, dstBit, count);
    }

    @Override
    public boolean hasNulls() {
      return source.hasNulls();
    }

    @Override
    public void andValidity(long dst, int n) {
      source.andValidity(dst, n);
    }
  }
}
