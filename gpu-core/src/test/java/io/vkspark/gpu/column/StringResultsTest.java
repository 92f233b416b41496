package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.Function;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * String and binary results, and the string helpers, on lavapipe: every row against a Java
 * reference (the {@code String} method the helper stands for), over random ASCII and non-ASCII text
 * (accents, CJK, surrogate pairs), ill-formed UTF-8 input (decoded as call() sees it), empty
 * strings, nulls and null results, odd and empty batches, results that outgrow the first data
 * buffer, and long rows. A row the kernel hands back must be exactly the rows Java's semantics
 * need: non-ASCII where the body asked for ASCII, and results that are not well-formed UTF-8.
 */
final class StringResultsTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  /** issue 32's first benchmark: {@code name.trim().toLowerCase()}, on ASCII rows. */
  static final String NORMALIZE = "vk_str_require_ascii(name); return vk_str_lower(vk_str_trim(name));";
  /** issue 32's second: {@code email.substring(email.indexOf('@') + 1).toLowerCase()}, on ASCII rows. */
  static final String DOMAIN = """
      vk_str_require_ascii(email);
      return vk_str_lower(vk_str_sub(email, vk_str_find(email, 64u, 0) + 1, vk_str_len(email)));""";

  private static final String[] PIECES = {"a", "B", "z", "Q", "0", "9", " ", "  ", "\t", "@", ".", "-", "x@y.COM",
      "Ab", "é", "ß", "İ", "名前", "🎉", "Ω", "\n"};

  /** Random rows: ASCII mostly, some non-ASCII, empty, whitespace-only and null ({@code nulls}). */
  static List<String> text(int rows, Random r, boolean nulls) {
    List<String> out = new ArrayList<>(rows);
    for (int i = 0; i < rows; i++) {
      int kind = r.nextInt(20);
      if (kind == 0 && nulls) {
        out.add(null);
      } else if (kind == 1) {
        out.add("");
      } else if (kind == 2) {
        out.add(" \t ");
      } else {
        boolean ascii = kind > 6;
        StringBuilder b = new StringBuilder();
        int n = r.nextInt(24);
        for (int k = 0; k < n; k++) {
          String p = PIECES[r.nextInt(ascii ? 14 : PIECES.length)];
          b.append(p);
        }
        out.add(b.toString());
      }
    }
    return out;
  }

  static VarCharVector varChar(List<byte[]> values) {
    VarCharVector v = new VarCharVector("s", GPU.allocator());
    v.allocateNew();
    for (int i = 0; i < values.size(); i++) {
      if (values.get(i) == null) {
        v.setNull(i);
      } else {
        v.setSafe(i, values.get(i));
      }
    }
    v.setValueCount(values.size());
    return v;
  }

  static List<byte[]> utf8(List<String> s) {
    return s.stream().map(x -> x == null ? null : x.getBytes(StandardCharsets.UTF_8)).toList();
  }

  static boolean ascii(String s) {
    return s.chars().allMatch(c -> c < 128);
  }

  /**
   * Checks a string result against {@code java} per row (null in, null out): {@code java} gives the
   * expected bytes, or null for a null result, or throws {@link ToCpu} for a row the kernel must
   * hand to call(); those rows are null in the vector and exactly the runner's cpuRows.
   */
  static void check(BatchRunner runner, int call, FieldVector out, List<String> in, Function<String, byte[]> java,
                    String what) {
    assertEquals(in.size(), out.getValueCount(), what);
    List<Integer> cpu = new ArrayList<>();
    int nulls = 0;
    for (int i = 0; i < in.size(); i++) {
      byte[] want;
      try {
        want = in.get(i) == null ? null : java.apply(in.get(i));
      } catch (ToCpu e) {
        cpu.add(i);
        want = null;
      }
      nulls += want == null ? 1 : 0;
      byte[] got = out.isNull(i) ? null : out instanceof VarCharVector v ? v.get(i) : ((VarBinaryVector) out).get(i);
      if (want == null || got == null) {
        assertEquals(want == null, got == null, what + " row " + i + " [" + clip(in.get(i)) + "] null-ness, got "
            + (got == null ? null : clip(new String(got, StandardCharsets.UTF_8))) + "; rows for call() "
            + Arrays.toString(runner.cpuRows(call)));
      } else {
        if (!Arrays.equals(want, got)) {
          fail(what + " row " + i + " [" + clip(in.get(i)) + "]: want '" + clip(new String(want, StandardCharsets.UTF_8))
              + "' got '" + clip(new String(got, StandardCharsets.UTF_8)) + "'");
        }
      }
    }
    assertEquals(nulls, out.getNullCount(), what + " null count");
    assertArrayEquals(cpu.stream().mapToInt(Integer::intValue).toArray(), runner.cpuRows(call), what + " rows for call()");
  }

  static String clip(String s) {
    return s == null || s.length() < 80 ? s : s.substring(0, 77) + "...(" + s.length() + ")";
  }

  /** Thrown by a reference for a row whose Java result the kernel hands back. */
  static final class ToCpu extends RuntimeException {
    ToCpu() {
      super(null, null, false, false);
    }
  }

  static byte[] asciiOnly(String s, Function<String, String> f) {
    if (!ascii(s)) {
      throw new ToCpu();
    }
    return f.apply(s).getBytes(StandardCharsets.UTF_8);
  }

  static ColumnKernel kernel(String name, SqlType result, String body, KernelSignature.Arg... args) {
    return ColumnKernel.compile(KernelSignature.of(name, result, args), body);
  }

  @Test
  void normalizeAndDomain_randomText_matchJavaOnAsciiRowsAndHandBackTheRest() {
    ColumnKernel norm = kernel("normalize", SqlType.STRING, NORMALIZE, arg("name", SqlType.STRING));
    ColumnKernel domain = kernel("domain", SqlType.STRING, DOMAIN.replace("email", "name"), arg("name", SqlType.STRING));
    Random r = new Random(32);
    List<KernelCall> calls = List.of(new KernelCall(norm, new int[] {0}), new KernelCall(domain, new int[] {0}));
    try (BatchRunner runner = GPU.runtime().runner(calls, List.of(SqlType.STRING), 4096, GPU.allocator())) {
      for (int rows : new int[] {0, 1, 777, 64, 9000, 0, 63}) { // 9,000 rows: three dispatches of one batch
        List<String> s = text(rows, r, true);
        try (VarCharVector v = varChar(utf8(s))) {
          List<FieldVector> out = runner.run(List.of(ArrowInputs.of(v, SqlType.STRING)), rows);
          check(runner, 0, out.get(0), s, x -> asciiOnly(x, y -> y.trim().toLowerCase(Locale.ROOT)), "normalize " + rows);
          check(runner, 1, out.get(1), s, x -> asciiOnly(x, y -> y.substring(y.indexOf('@') + 1).toLowerCase(Locale.ROOT)),
              "domain " + rows);
        }
        // staged from the heap, as Spark's own column vectors are
        List<FieldVector> out = runner.run(List.of(VarArgsTest.staged(SqlType.STRING, utf8(s))), rows);
        check(runner, 0, out.get(0), s, x -> asciiOnly(x, y -> y.trim().toLowerCase(Locale.ROOT)), "staged " + rows);
      }
      long[] causes = runner.cpuRowCauses();
      assertTrue(causes[CpuCause.NON_ASCII.ordinal()] > 500, Arrays.toString(causes));
      assertEquals(0, causes[CpuCause.OVERFLOW.ordinal()], Arrays.toString(causes));
    }
  }

  @Test
  void writer_intsBytesAndViews_matchJava() {
    ColumnKernel k = kernel("writer", SqlType.STRING, """
        vk_out_int(n);
        vk_out_byte(58u);
        vk_out_long(int64_t(n) * 3000000000l);
        vk_out_byte(124u);
        vk_out_str(s);
        if (vk_out_len() > 40) { return vk_str_empty(); }
        return vk_str_upper(s);""", arg("s", SqlType.STRING), arg("n", SqlType.INT));
    Random r = new Random(5);
    int[] special = {0, -1, 1, 9, 10, -10, 99, Integer.MIN_VALUE, Integer.MAX_VALUE, 1_000_000_000, -999_999_999};
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})),
        List.of(SqlType.STRING, SqlType.INT), 4096, GPU.allocator())) {
      for (int rows : new int[] {300, 1, 4100}) {
        List<String> s = text(rows, r, true);
        int[] n = new int[rows];
        for (int i = 0; i < rows; i++) {
          n[i] = i < special.length ? special[i] : r.nextInt();
        }
        try (VarCharVector v = varChar(utf8(s)); IntVector iv = new IntVector("n", GPU.allocator())) {
          iv.allocateNew(rows);
          for (int i = 0; i < rows; i++) {
            iv.set(i, n[i]);
          }
          iv.setValueCount(rows);
          VarCharVector out = (VarCharVector) runner.run(List.of(ArrowInputs.of(v, SqlType.STRING),
              ArrowInputs.of(iv, SqlType.INT)), rows).get(0);
          for (int i = 0; i < rows; i++) {
            if (s.get(i) == null) {
              assertTrue(out.isNull(i), "row " + i);
              continue;
            }
            String head = n[i] + ":" + ((long) n[i] * 3_000_000_000L) + "|" + s.get(i);
            byte[] headBytes = head.getBytes(StandardCharsets.UTF_8);
            String want = headBytes.length > 40 ? head : head + upperAscii(s.get(i));
            assertEquals(want, new String(out.get(i), StandardCharsets.UTF_8), "row " + i);
          }
          assertEquals(0, runner.cpuRows(0).length);
        }
      }
    }
  }

  /** ASCII letters upper-cased, every other character kept: vk_str_upper's bytes. */
  static String upperAscii(String s) {
    StringBuilder b = new StringBuilder();
    s.chars().forEach(c -> b.append((char) (c >= 'a' && c <= 'z' ? c - 32 : c)));
    return b.toString();
  }

  @Test
  void nullResultsAndIllFormedInput_decodedAsCallSeesIt() {
    ColumnKernel k = kernel("nonempty", SqlType.STRING, "vk_str_len(s) == 0 ? vk_str_null() : vk_str_lower(s)",
        arg("s", SqlType.STRING));
    List<byte[]> raw = new ArrayList<>();
    List<String> decoded = new ArrayList<>();
    byte[][] bad = {{(byte) 0xFF}, {'A', (byte) 0x80, 'b'}, {(byte) 0xE2, (byte) 0x82}, {(byte) 0xC0, (byte) 0xAF},
        {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, {}, null, "OK Grüße".getBytes(StandardCharsets.UTF_8)};
    for (int i = 0; i < 200; i++) {
      byte[] b = bad[i % bad.length];
      raw.add(b);
      decoded.add(b == null ? null : new String(b, StandardCharsets.UTF_8));
    }
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0})), List.of(SqlType.STRING), 4096,
        GPU.allocator()); VarCharVector v = varChar(raw)) {
      FieldVector out = runner.run(List.of(ArrowInputs.of(v, SqlType.STRING)), raw.size()).get(0);
      // the body sees the UTF-8 of the String call() gets (U+FFFD for each ill-formed sequence); ASCII letters lowered
      check(runner, 0, out, decoded, x -> x.isEmpty() ? null : lowerAscii(x).getBytes(StandardCharsets.UTF_8), "nonempty");
    }
  }

  static String lowerAscii(String s) {
    StringBuilder b = new StringBuilder();
    s.chars().forEach(c -> b.append((char) (c >= 'A' && c <= 'Z' ? c + 32 : c)));
    return b.toString();
  }

  @Test
  void malformedResults_stringHandedBack_binaryKept() {
    // the first k bytes: a cut inside a multi-byte character is not UTF-8, so a string row goes to call()
    String body = "vk_out_str(vk_str_sub(s, 0, k)); if (k == 7) { vk_out_byte(255u); } return vk_str_empty();";
    ColumnKernel str = kernel("cut", SqlType.STRING, body, arg("s", SqlType.STRING), arg("k", SqlType.INT));
    ColumnKernel bin = kernel("cutb", SqlType.BINARY, body, arg("s", SqlType.STRING), arg("k", SqlType.INT));
    List<String> s = text(3000, new Random(9), true);
    int[] k = new Random(10).ints(3000, -1, 12).toArray();
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(str, new int[] {0, 1}),
        new KernelCall(bin, new int[] {0, 1})), List.of(SqlType.STRING, SqlType.INT), 4096, GPU.allocator());
         VarCharVector v = varChar(utf8(s)); IntVector iv = new IntVector("k", GPU.allocator())) {
      iv.allocateNew(s.size());
      for (int i = 0; i < s.size(); i++) {
        iv.set(i, k[i]);
      }
      iv.setValueCount(s.size());
      List<FieldVector> out = runner.run(List.of(ArrowInputs.of(v, SqlType.STRING), ArrowInputs.of(iv, SqlType.INT)), s.size());
      List<Integer> handed = new ArrayList<>();
      for (int i = 0; i < s.size(); i++) {
        if (s.get(i) == null) {
          assertTrue(out.get(0).isNull(i) && out.get(1).isNull(i));
          continue;
        }
        byte[] b = s.get(i).getBytes(StandardCharsets.UTF_8);
        byte[] cut = Arrays.copyOf(b, Math.max(0, Math.min(k[i], b.length)));
        byte[] want = k[i] == 7 ? Arrays.copyOf(cut, cut.length + 1) : cut;
        if (k[i] == 7) {
          want[cut.length] = (byte) 0xFF;
        }
        assertArrayEquals(want, ((VarBinaryVector) out.get(1)).get(i), "binary row " + i);
        boolean wellFormed = Arrays.equals(want, new String(want, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8));
        if (wellFormed) {
          assertArrayEquals(want, ((VarCharVector) out.get(0)).get(i), "string row " + i);
        } else {
          assertTrue(out.get(0).isNull(i), "ill-formed string row " + i + " is null until call() fills it");
          handed.add(i);
        }
      }
      assertTrue(handed.size() > 100, "rows with ill-formed results: " + handed.size());
      assertArrayEquals(handed.stream().mapToInt(Integer::intValue).toArray(), runner.cpuRows(0));
      assertEquals(0, runner.cpuRows(1).length, "binary results are any bytes");
      assertEquals(handed.size(), runner.cpuRowCauses()[CpuCause.MALFORMED_UTF8.ordinal()]);
    }
  }

  @Test
  void results_outgrowTheFirstDataBuffer_growInPlaceAndStayGrown() {
    ColumnKernel k = kernel("repeat", SqlType.STRING, "for (int i = 0; i < n; i++) { vk_out_str(s); } return vk_str_empty();",
        arg("s", SqlType.STRING), arg("n", SqlType.INT));
    Random r = new Random(3);
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0, 1})),
        List.of(SqlType.STRING, SqlType.INT), 4096, GPU.allocator())) {
      long setsBefore = -1;
      for (int batch = 0; batch < 3; batch++) {
        int rows = 2000;
        List<String> s = text(rows, r, true);
        int[] n = r.ints(rows, 0, batch == 0 ? 3 : 40).toArray(); // about 20 bytes x 20: past 64 KiB
        try (VarCharVector v = varChar(utf8(s)); IntVector iv = new IntVector("n", GPU.allocator())) {
          iv.allocateNew(rows);
          for (int i = 0; i < rows; i++) {
            iv.set(i, n[i]);
          }
          iv.setValueCount(rows);
          VarCharVector out = (VarCharVector) runner.run(List.of(ArrowInputs.of(v, SqlType.STRING),
              ArrowInputs.of(iv, SqlType.INT)), rows).get(0);
          long total = 0;
          for (int i = 0; i < rows; i++) {
            if (s.get(i) == null) {
              assertTrue(out.isNull(i));
              continue;
            }
            String want = s.get(i).repeat(n[i]);
            total += want.getBytes(StandardCharsets.UTF_8).length;
            assertEquals(want, new String(out.get(i), StandardCharsets.UTF_8), "batch " + batch + " row " + i);
          }
          if (batch > 0) {
            assertTrue(total > StringBuffers.MIN_DATA_BYTES, "bytes " + total);
          }
        }
        if (batch == 1) {
          setsBefore = GPU.runtime().bufferSetsCreated();
        }
      }
      assertEquals(setsBefore, GPU.runtime().bufferSetsCreated(), "a grown data buffer stays with its set");
    }
  }

  @Test
  void longRows_exactOrLoopLimit() {
    ColumnKernel k = kernel("normalize", SqlType.STRING, NORMALIZE, arg("name", SqlType.STRING));
    String big = "  " + "Abc-".repeat(7_000) + " "; // 28,003 bytes: read twice by the writing pass, within lavapipe's 65,535
    List<String> s = List.of("x", big, "", "Q");
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(k, new int[] {0})), List.of(SqlType.STRING), 4096,
        GPU.allocator()); VarCharVector v = varChar(utf8(s))) {
      FieldVector out = runner.run(List.of(ArrowInputs.of(v, SqlType.STRING)), s.size()).get(0);
      check(runner, 0, out, s, x -> asciiOnly(x, y -> y.trim().toLowerCase(Locale.ROOT)), "long");
      String huge = "a".repeat(200_000);
      try (VarCharVector h = varChar(utf8(List.of(huge)))) {
        if (GPU.device().loopLimit() > 0) { // lavapipe: 65,535 loop passes per invocation, then the batch is refused
          GpuException e = assertThrows(GpuException.class, () -> runner.run(List.of(ArrowInputs.of(h, SqlType.STRING)), 1));
          assertEquals(GpuException.Code.LOOP_LIMIT, e.code());
        } else {
          FieldVector o = runner.run(List.of(ArrowInputs.of(h, SqlType.STRING)), 1).get(0);
          assertEquals(huge, new String(((VarCharVector) o).get(0), StandardCharsets.UTF_8));
        }
      }
    }
  }

  /** The helpers that a translated String method calls, one column each: Java's results on ASCII rows. */
  static final String ASCII_OPS = """
      vk_str_require_ascii(s);
      vk_str_require_ascii(t);
      int ops[13] = int[13](vk_str_find(s, 97u, k), vk_str_rfind(s, 97u, k), vk_str_find_str(s, t, k),
          vk_str_rfind_str(s, t, k), vk_str_starts(s, t) ? 1 : 0, vk_str_ends(s, t) ? 1 : 0,
          vk_str_contains(s, t) ? 1 : 0, vk_str_eq(s, t) ? 1 : 0, vk_str_eq_ignore_case(s, t) ? 1 : 0,
          vk_str_cmp(s, t), vk_str_len(vk_str_trim(s)), vk_str_find(vk_str_upper(s), 65u, 0),
          vk_str_eq(vk_str_lower(s), vk_str_lower(t)) ? 1 : 0);
      for (int i = 0; i < 13; i++) {
        vk_out_int(ops[i]);
        vk_out_byte(44u);
      }
      return vk_str_sub(s, clamp(k, 0, vk_str_len(s)), vk_str_len(s));""";

  static String asciiOps(String s, String t, int k) {
    int[] ops = {s.indexOf('a', k), s.lastIndexOf('a', k), s.indexOf(t, k), s.lastIndexOf(t, k), s.startsWith(t) ? 1 : 0,
        s.endsWith(t) ? 1 : 0, s.contains(t) ? 1 : 0, s.equals(t) ? 1 : 0, s.equalsIgnoreCase(t) ? 1 : 0, s.compareTo(t),
        s.trim().length(), s.toUpperCase(Locale.ROOT).indexOf('A'),
        s.toLowerCase(Locale.ROOT).equals(t.toLowerCase(Locale.ROOT)) ? 1 : 0};
    StringBuilder b = new StringBuilder();
    for (int o : ops) {
      b.append(o).append(',');
    }
    return b.append(s.substring(Math.max(0, Math.min(k, s.length())))).toString();
  }

  @Test
  void helpers_matchJavasStringMethods() {
    ColumnKernel ascii = kernel("ascii_ops", SqlType.STRING, ASCII_OPS, arg("s", SqlType.STRING), arg("t", SqlType.STRING),
        arg("k", SqlType.INT));
    // UTF-16 length and hashCode are exact for every well-formed row, non-ASCII and surrogate pairs too
    ColumnKernel utf16 = kernel("utf16", SqlType.STRING, "vk_out_int(vk_str_utf16_len(s)); vk_out_byte(44u); "
        + "vk_out_int(vk_str_hash(s)); return vk_str_empty();", arg("s", SqlType.STRING), arg("t", SqlType.STRING),
        arg("k", SqlType.INT));
    Random r = new Random(11);
    int rows = 6000;
    List<String> s = text(rows, r, true);
    List<String> t = new ArrayList<>();
    int[] k = new int[rows];
    for (int i = 0; i < rows; i++) {
      String x = s.get(i) == null ? "" : s.get(i);
      int a = x.isEmpty() ? 0 : r.nextInt(x.length());
      int kind = r.nextInt(5);
      t.add(kind == 0 ? "" : kind == 1 ? x.substring(a, Math.min(x.length(), a + 1 + r.nextInt(3)))
          : kind == 2 ? x.toUpperCase(Locale.ROOT) : kind == 3 ? x : PIECES[r.nextInt(14)]);
      k[i] = r.nextInt(x.length() + 7) - 3;
    }
    try (BatchRunner runner = GPU.runtime().runner(List.of(new KernelCall(ascii, new int[] {0, 1, 2}),
        new KernelCall(utf16, new int[] {0, 1, 2})), List.of(SqlType.STRING, SqlType.STRING, SqlType.INT), 4096,
        GPU.allocator()); VarCharVector sv = varChar(utf8(s)); VarCharVector tv = varChar(utf8(t));
         IntVector kv = new IntVector("k", GPU.allocator())) {
      kv.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        kv.set(i, k[i]);
      }
      kv.setValueCount(rows);
      List<FieldVector> out = runner.run(List.of(ArrowInputs.of(sv, SqlType.STRING), ArrowInputs.of(tv, SqlType.STRING),
          ArrowInputs.of(kv, SqlType.INT)), rows);
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < rows; i++) {
        keys.add(s.get(i) == null ? null : String.valueOf(i));
      }
      check(runner, 0, out.get(0), keys, x -> {
        int i = Integer.parseInt(x);
        if (!ascii(s.get(i)) || !ascii(t.get(i))) {
          throw new ToCpu();
        }
        return asciiOps(s.get(i), t.get(i), k[i]).getBytes(StandardCharsets.UTF_8);
      }, "ascii ops");
      check(runner, 1, out.get(1), keys, x -> {
        String v = s.get(Integer.parseInt(x));
        return (v.length() + "," + v.hashCode()).getBytes(StandardCharsets.UTF_8);
      }, "utf16 length and hashCode");
    }
  }

  @Test
  void body_mayNotTouchTheWriterState() {
    GpuException e = assertThrows(GpuException.class, () -> kernel("x", SqlType.STRING,
        "vk_o_at = 0u; return s;", arg("s", SqlType.STRING)));
    assertEquals(GpuException.Code.COMPILE, e.code());
    assertTrue(e.getMessage().contains("vk_o_at"), e.getMessage());
    // the public names are allowed, including vk_string locals
    kernel("y", SqlType.STRING, "vk_string t = vk_str_trim(s); return vk_str_sub(t, 1, 3);", arg("s", SqlType.STRING));
  }
}
