package io.vkspark.gpu.column.input;


/**
 * Bit-packed rows (least significant bit first, in little-endian 64-bit words, Arrow's and the
 * kernels' layout) moved between positions that are not on a 64-row boundary: a batch appended
 * behind rows already staged lands at any bit. Public for {@code column.reduce}, not for users.
 */
public final class Bits {
  private Bits() {}

  /**
   * Copies {@code count} bits from bit {@code srcBit} of {@code src} to bit {@code dstBit} of
   * {@code dst}, a 64-bit word at a time. Bits of {@code dst} below {@code dstBit} in its first
   * word are kept; bits past the copied range in its last word are cleared. Both sides are read
   * and written in whole words, so each must cover the words its bit range touches.
   */
  public static void copy(long src, long srcBit, long dst, long dstBit, long count) {
    for (long done = 0; done < count; done += 64) {
      int k = (int) Math.min(64, count - done);
      long p = srcBit + done;
      long sw = src + ((p >>> 6) << 3);
      int s = (int) (p & 63);
      long v = RawMemory.memGetLong(sw) >>> s;
      if (s != 0 && s + k > 64) {
        v |= RawMemory.memGetLong(sw + 8) << (64 - s);
      }
      if (k < 64) {
        v &= (1L << k) - 1;
      }
      long q = dstBit + done;
      long dw = dst + ((q >>> 6) << 3);
      int d = (int) (q & 63);
      long low = d == 0 ? 0 : RawMemory.memGetLong(dw) & ((1L << d) - 1);
      RawMemory.memPutLong(dw, low | (v << d));
      if (d != 0 && d + k > 64) {
        RawMemory.memPutLong(dw + 8, v >>> (64 - d));
      }
    }
  }

  /** Whether bit {@code bit} of {@code address} is set. */
  public static boolean get(long address, long bit) {
    return (RawMemory.memGetByte(address + (bit >>> 3)) & (1 << (bit & 7))) != 0;
  }

  /** Clears bit {@code bit} of {@code address}. */
  public static void clear(long address, long bit) {
    long a = address + (bit >>> 3);
    RawMemory.memPutByte(a, (byte) (RawMemory.memGetByte(a) & ~(1 << (bit & 7))));
  }

  /**
   * Writes the low {@code k} bits (1 to 64) of {@code bits} at bit {@code at} of the bitmap at
   * {@code dst}, keeping the other bits of the words it touches.
   */
  public static void write(long dst, long at, long bits, int k) {
    long word = dst + ((at >>> 6) << 3);
    int s = (int) (at & 63);
    long mask = k == 64 ? -1L : (1L << k) - 1;
    bits &= mask;
    RawMemory.memPutLong(word, (RawMemory.memGetLong(word) & ~(mask << s)) | (bits << s));
    if (s != 0 && s + k > 64) {
      RawMemory.memPutLong(word + 8, (RawMemory.memGetLong(word + 8) & ~(mask >>> (64 - s))) | (bits >>> (64 - s)));
    }
  }

  /**
   * {@code dst &= src} over the first {@code rows} bits: whole 64-bit words, then the tail bytes
   * (so {@code src} need only cover its bytes, as an Arrow validity buffer does).
   */
  public static void and(long src, int rows, long dst) {
    int words = rows >>> 6;
    for (int w = 0; w < words; w++) {
      long off = 8L * w;
      RawMemory.memPutLong(dst + off, RawMemory.memGetLong(dst + off) & RawMemory.memGetLong(src + off));
    }
    int tailBytes = ((rows & 63) + 7) >>> 3;
    for (int b = 0; b < tailBytes; b++) {
      long off = 8L * words + b;
      RawMemory.memPutByte(dst + off, (byte) (RawMemory.memGetByte(dst + off) & RawMemory.memGetByte(src + off)));
    }
  }

  /**
   * {@code dst[at + j] &= src[j]} for {@code j < count}: {@code src} from bit 0, in whole 64-bit
   * words; the other bits of {@code dst} are kept.
   */
  public static void andAt(long src, long dst, long at, long count) {
    for (long done = 0; done < count; done += 64) {
      int k = (int) Math.min(64, count - done);
      long q = at + done;
      long dw = dst + ((q >>> 6) << 3);
      int d = (int) (q & 63);
      long cur = RawMemory.memGetLong(dw) >>> d;
      if (d != 0 && d + k > 64) {
        cur |= RawMemory.memGetLong(dw + 8) << (64 - d);
      }
      write(dst, q, cur & RawMemory.memGetLong(src + (done >>> 3)), k);
    }
  }

  /** Sets bits {@code [from, from + count)} of the bitmap at {@code dst}. */
  public static void fill(long dst, long from, long count) {
    for (long done = 0; done < count; done += 64) {
      write(dst, from + done, -1L, (int) Math.min(64, count - done));
    }
  }

  /**
   * The null count of a validity bitmap of {@code rows} rows ({@code bytes}, whole 64-bit words) at
   * {@code address}; clears the bits past the last row first, so the count (and Arrow) see only real rows.
   */
  public static long nullCount(long address, long bytes, int rows) {
    int tail = rows & 63;
    if (tail != 0) {
      long last = address + 8L * (rows >>> 6);
      RawMemory.memPutLong(last, RawMemory.memGetLong(last) & ((1L << tail) - 1));
    }
    long valid = 0;
    for (long w = 0; w < bytes; w += 8) {
      valid += Long.bitCount(RawMemory.memGetLong(address + w));
    }
    return rows - valid;
  }
}
