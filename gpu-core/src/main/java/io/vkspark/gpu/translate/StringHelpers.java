package io.vkspark.gpu.translate;

import java.util.List;
import java.util.Map;

/**
 * The translator's GLSL helpers for strings ({@link StringCalls}), pasted when used, after the
 * string helpers of every string kernel ({@code vk_str_*}, gpu-core {@code vkstring.glsl}) and the
 * row state of {@link StringPool}. Each follows the Java method it stands for exactly on the rows it
 * computes; a row it cannot compute exactly is handed back to {@code call()} ({@code vkt_ascii}:
 * counted as not ASCII; {@code vkt_back}: counted as the body's), after which the translated code
 * returns at once. Helpers that write into the scratch return an {@code int} the code ignores.
 */
final class StringHelpers {
  private StringHelpers() {}

  static final Map<String, String> TEXT = Map.ofEntries(
      Map.entry("vkt_back", "void vkt_back() { if (!vkt_na) { vkt_na = true; vk_to_cpu(); } }"),
      // a row whose string is not ASCII: Java counts UTF-16 units and maps case with Unicode's tables
      Map.entry("vkt_ascii", """
          bool vkt_ascii(vk_string s) {
            if (vkt_na || vk_str_require_ascii(s)) { return !vkt_na; } // a row handed back keeps its first cause
            vkt_na = true;
            return false;
          }"""),
      Map.entry("vkt_put", """
          void vkt_put(uint b) {
            int p = vkt_top;
            if (p >= %d) { vkt_back(); return; }
            uint sh = (uint(p) & 3u) << 3u;
            vkt_scr[p >> 2] = (vkt_scr[p >> 2] & ~(255u << sh)) | ((b & 255u) << sh);
            vkt_top = p + 1;
          }""".formatted(4 * StringPool.SCRATCH_WORDS)),
      Map.entry("vkt_char_ascii", "bool vkt_char_ascii(int c) { if (c < 0 || c >= 128) { vkt_back(); return false; } return true; }"),
      Map.entry("vkt_put_str", "int vkt_put_str(vk_string s) { for (int i = 0; i < s.len && !vkt_na; i++) { vkt_put(vk_str_at(s, i)); } return 0; }"),
      // Integer.toString: the digits of |v| as an unsigned value (MIN_VALUE included)
      Map.entry("vkt_put_int", """
          int vkt_put_int(int v) {
            uint m = v < 0 ? uint(-(v + 1)) + 1u : uint(v);
            if (v < 0) { vkt_put(45u); }
            uint d = 1u;
            while (m / d >= 10u) { d *= 10u; }
            for (; d > 0u; d /= 10u) { vkt_put(48u + (m / d) % 10u); }
            return 0;
          }"""),
      // Long.toString; the sign from the high word (lavapipe compared widened 64-bit values wrongly)
      Map.entry("vkt_put_long", """
          int vkt_put_long(int64_t v) {
            bool neg = int(v >> 32) < 0;
            uint64_t m = neg ? uint64_t(-(v + 1l)) + 1ul : uint64_t(v);
            if (neg) { vkt_put(45u); }
            uint64_t d = 1ul;
            while (m / d >= 10ul) { d *= 10ul; }
            for (; d > 0ul; d /= 10ul) { vkt_put(48u + uint((m / d) % 10ul)); }
            return 0;
          }"""),
      // a char as UTF-8; an unpaired surrogate (Spark would encode it as '?') goes to call()
      Map.entry("vkt_put_char", """
          int vkt_put_char(int c) {
            uint u = uint(c) & 65535u;
            if (u < 128u) { vkt_put(u); }
            else if (u < 2048u) { vkt_put(192u | (u >> 6u)); vkt_put(128u | (u & 63u)); }
            else if (u >= 55296u && u < 57344u) { vkt_back(); }
            else { vkt_put(224u | (u >> 12u)); vkt_put(128u | ((u >> 6u) & 63u)); vkt_put(128u | (u & 63u)); }
            return 0;
          }"""),
      Map.entry("vkt_built", "vk_string vkt_built(int start) { return vk_string(%d, start, vkt_top - start, 0); }"
          .formatted(StringPool.SCRATCH)),
      Map.entry("vkt_sb_new", """
          int vkt_sb_new() {
            if (vkt_nb >= %d) { vkt_back(); return 0; }
            int id = vkt_nb;
            vkt_nb = id + 1;
            vkt_bs[id] = vkt_top;
            vkt_bl[id] = 0;
            return id;
          }""".formatted(StringPool.BUILDERS)),
      // before an append: the builder's bytes end at the top of the scratch (copied there if another string was built since)
      Map.entry("vkt_sb_open", """
          int vkt_sb_open(int id) {
            if (vkt_bs[id] + vkt_bl[id] != vkt_top) {
              int s = vkt_top;
              vkt_put_str(vk_string(%d, vkt_bs[id], vkt_bl[id], 0));
              vkt_bs[id] = s;
            }
            return id;
          }""".formatted(StringPool.SCRATCH)),
      Map.entry("vkt_sb_close", "int vkt_sb_close(int id) { vkt_bl[id] = vkt_top - vkt_bs[id]; return id; }"),
      Map.entry("vkt_sb_view", "vk_string vkt_sb_view(int id) { return vk_string(%d, vkt_bs[id], vkt_bl[id], 0); }"
          .formatted(StringPool.SCRATCH)),
      // Character.isWhitespace of an ASCII char
      Map.entry("vkt_ws", "bool vkt_ws(uint b) { return b == 32u || (b >= 9u && b <= 13u) || (b >= 28u && b <= 31u); }"),
      // strip (3), stripLeading (1), stripTrailing (2): a non-ASCII char where stripping stops may be Unicode white space
      Map.entry("vkt_strip", """
          vk_string vkt_strip(vk_string s, int which) {
            int b = 0;
            int e = s.len;
            if ((which & 1) != 0) {
              while (b < e && vkt_ws(vk_str_at(s, b))) { b++; }
              if (b < e && vk_str_at(s, b) >= 128u) { vkt_ascii(s); }
            }
            if ((which & 2) != 0) {
              while (e > b && vkt_ws(vk_str_at(s, e - 1))) { e--; }
              if (e > b && vk_str_at(s, e - 1) >= 128u) { vkt_ascii(s); }
            }
            return vk_str_sub(s, b, e);
          }"""),
      // Scala's StringOps.slice: clipped to the string
      Map.entry("vkt_slice", """
          vk_string vkt_slice(vk_string s, int from, int until) {
            int b = max(from, 0);
            int e = min(until, s.len);
            return b >= e ? vk_str_empty() : vk_str_sub(s, b, e);
          }"""),
      Map.entry("vkt_cmp_ic", """
          int vkt_cmp_ic(vk_string a, vk_string b) {
            int n = min(a.len, b.len);
            for (int i = 0; i < n; i++) {
              int d = int(vk_ascii_lower(vk_str_at(a, i))) - int(vk_ascii_lower(vk_str_at(b, i)));
              if (d != 0) { return d; }
            }
            return a.len - b.len;
          }"""),
      // startsWith(p, off) on an ASCII s
      Map.entry("vkt_starts_at", """
          bool vkt_starts_at(vk_string s, vk_string p, int off) {
            return off >= 0 && off <= s.len - p.len && vk_str_starts(vk_str_sub(s, off, s.len), p);
          }"""),
      // replace(char, char): an ASCII char is one byte wherever it is in UTF-8
      Map.entry("vkt_replace_c", """
          vk_string vkt_replace_c(vk_string s, int o, int n) {
            if (o >= 128) { vkt_ascii(s); return s; }
            int start = vkt_top;
            for (int i = 0; i < s.len && !vkt_na; i++) {
              uint b = vk_str_at(s, i);
              if (b == uint(o)) { vkt_put_char(n); } else { vkt_put(b); }
            }
            return vkt_built(start);
          }"""),
      // replace(CharSequence, CharSequence): left to right, not overlapping; an empty target goes between every char
      Map.entry("vkt_replace_s", """
          vk_string vkt_replace_s(vk_string s, vk_string t, vk_string r) {
            int start = vkt_top;
            if (t.len == 0) {
              if (!vkt_ascii(s)) { return s; }
              vkt_put_str(r);
              for (int i = 0; i < s.len && !vkt_na; i++) { vkt_put(vk_str_at(s, i)); vkt_put_str(r); }
              return vkt_built(start);
            }
            int i = 0;
            while (i < s.len && !vkt_na) {
              if (i + t.len <= s.len && vk_str_starts(vk_str_sub(s, i, s.len), t)) { vkt_put_str(r); i += t.len; }
              else { vkt_put(vk_str_at(s, i)); i++; }
            }
            return vkt_built(start);
          }"""),
      Map.entry("vkt_repeat", """
          vk_string vkt_repeat(vk_string s, int n) {
            int start = vkt_top;
            for (int i = 0; i < n && !vkt_na && s.len > 0; i++) { vkt_put_str(s); }
            return vkt_built(start);
          }"""),
      // s.split(c) as one view: the separator in the mode's high bits (see StringCalls)
      Map.entry("vkt_parts", "vk_string vkt_parts(vk_string s, int c) { return vk_string(s.src, s.start, s.len, s.mode | (c << 2)); }"),
      // the length of s.split(c): no separator gives {s}; trailing empty strings are removed
      Map.entry("vkt_split_n", """
          int vkt_split_n(vk_string p) {
            vk_string s = vk_string(p.src, p.start, p.len, p.mode & 3);
            uint c = uint(p.mode >> 2);
            int n = 0;
            int last = 0;
            int begin = 0;
            bool found = false;
            for (int i = 0; i <= s.len; i++) {
              if (i == s.len || vk_str_at(s, i) == c) {
                found = found || i < s.len;
                n++;
                if (i > begin) { last = n; }
                begin = i + 1;
              }
            }
            return found ? last : 1;
          }"""),
      Map.entry("vkt_split_at", """
          vk_string vkt_split_at(vk_string p, int k) {
            vk_string s = vk_string(p.src, p.start, p.len, p.mode & 3);
            uint c = uint(p.mode >> 2);
            int begin = 0;
            int n = 0;
            for (int i = 0; i <= s.len; i++) {
              if (i == s.len || vk_str_at(s, i) == c) {
                if (n == k) { return vk_str_sub(s, begin, i); }
                n++;
                begin = i + 1;
              }
            }
            return vk_str_empty();
          }"""),
      // Integer.parseInt / Long.parseLong (radix 10) of an ASCII string, as Java computes them; vkt_bad where Java throws
      Map.entry("vkt_parse", """
          int64_t vkt_parse(vk_string s, int64_t maxv) {
            vkt_bad = false;
            int len = s.len;
            if (len == 0) { vkt_bad = true; return 0l; }
            int i = 0;
            bool neg = false;
            int64_t limit = -maxv;
            uint f = vk_str_at(s, 0);
            if (f < 48u) {
              if (f == 45u) { neg = true; limit = -maxv - 1l; }
              else if (f != 43u) { vkt_bad = true; return 0l; }
              if (len == 1) { vkt_bad = true; return 0l; }
              i = 1;
            }
            int64_t multmin = -(maxv / 10l);
            int64_t r = 0l;
            while (i < len) {
              uint c = vk_str_at(s, i);
              i++;
              if (c - 48u >= 10u || vkt_lcmp(r, multmin) < 0) { vkt_bad = true; return 0l; }
              int64_t d = int64_t(c - 48u);
              r = r * 10l;
              if (vkt_lcmp(r, limit + d) < 0) { vkt_bad = true; return 0l; }
              r = r - d;
            }
            return neg ? r : -r;
          }"""));

  static final Map<String, List<String>> NEEDS = Map.ofEntries(
      Map.entry("vkt_ascii", List.of()),
      Map.entry("vkt_put", List.of("vkt_back")),
      Map.entry("vkt_char_ascii", List.of("vkt_back")),
      Map.entry("vkt_put_str", List.of("vkt_put")),
      Map.entry("vkt_put_int", List.of("vkt_put")),
      Map.entry("vkt_put_long", List.of("vkt_put")),
      Map.entry("vkt_put_char", List.of("vkt_put")),
      Map.entry("vkt_sb_new", List.of("vkt_back")),
      Map.entry("vkt_sb_open", List.of("vkt_put_str")),
      Map.entry("vkt_strip", List.of("vkt_ws", "vkt_ascii")),
      Map.entry("vkt_replace_c", List.of("vkt_ascii", "vkt_put_char", "vkt_built")),
      Map.entry("vkt_replace_s", List.of("vkt_ascii", "vkt_put_str", "vkt_built")),
      Map.entry("vkt_repeat", List.of("vkt_put_str", "vkt_built")),
      Map.entry("vkt_parse", List.of("vkt_lcmp")));
}
