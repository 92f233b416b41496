// vkspark string helpers: pasted into a kernel by StringGlsl, section by section, after the
// generated source readers (vk_s_raw, vk_s_end, vk_s_binary) and, for a kernel with row status or a
// string or binary result, the generated buffers. Semantics: docs/GLSL-SEMANTICS.md, "Strings".
// A vk_string is a view: bytes [start, start + len) of source src (an argument's index; -1 the
// empty string; -2 null), read through mode (0 as they are, 1 ASCII lower case, 2 ASCII upper case).
// Loops here are bounded by the lengths of the views (a row's bytes); the kernel counts rows a
// driver's loop limit cut short, as for a body's own loops.
//@section helpers
uint vk_ascii_lower(uint b) { return b - 65u < 26u ? b + 32u : b; }
uint vk_ascii_upper(uint b) { return b - 97u < 26u ? b - 32u : b; }
vk_string vk_str_empty() { return vk_string(-1, 0, 0, 0); }
vk_string vk_str_null() { return vk_string(-2, 0, 0, 0); }
bool vk_str_is_null(vk_string s) { return s.src == -2; }
int vk_str_len(vk_string s) { return s.len; }
uint vk_s_map(uint b, int mode) { return mode == 1 ? vk_ascii_lower(b) : mode == 2 ? vk_ascii_upper(b) : b; }
uint vk_str_at(vk_string s, int i) {
  if (i < 0 || i >= s.len || s.src < 0) { return 0u; }
  return vk_s_map(vk_s_raw(s.src, s.start + i), s.mode);
}
bool vk_str_is_ascii(vk_string s) {
  if (s.len <= 0) { return true; }
  uint p = uint(s.start);
  uint e = uint(s.start + s.len);
  for (uint w = p >> 2u; w <= (e - 1u) >> 2u; w++) { // a word at a time: the high bit of each byte of the view
    uint m = 2155905152u;
    if (w == p >> 2u) { m &= 0xFFFFFFFFu << ((p & 3u) << 3u); }
    if (w == (e - 1u) >> 2u && (e & 3u) != 0u) { m &= (1u << ((e & 3u) << 3u)) - 1u; }
    if ((vk_s_word(s.src, w) & m) != 0u) { return false; }
  }
  return true;
}
int vk_str_utf16_len(vk_string s) {
  int n = 0;
  for (int i = 0; i < s.len; i++) {
    uint b = vk_s_raw(s.src, s.start + i);
    n += (b & 192u) == 128u ? 0 : b >= 240u ? 2 : 1;
  }
  return n;
}
bool vk_s_region(vk_string a, int at, vk_string b) {
  for (int i = 0; i < b.len; i++) {
    if (vk_str_at(a, at + i) != vk_str_at(b, i)) { return false; }
  }
  return true;
}
bool vk_str_eq(vk_string a, vk_string b) { return a.len == b.len && vk_s_region(a, 0, b); }
bool vk_str_eq_ignore_case(vk_string a, vk_string b) {
  if (a.len != b.len) { return false; }
  for (int i = 0; i < a.len; i++) {
    if (vk_ascii_lower(vk_str_at(a, i)) != vk_ascii_lower(vk_str_at(b, i))) { return false; }
  }
  return true;
}
int vk_str_cmp(vk_string a, vk_string b) {
  int n = min(a.len, b.len);
  for (int i = 0; i < n; i++) {
    int d = int(vk_str_at(a, i)) - int(vk_str_at(b, i));
    if (d != 0) { return d; }
  }
  return a.len - b.len;
}
int vk_str_find(vk_string s, uint c, int from) {
  for (int i = max(from, 0); i < s.len; i++) {
    if (vk_str_at(s, i) == c) { return i; }
  }
  return -1;
}
int vk_str_rfind(vk_string s, uint c, int from) {
  for (int i = min(from, s.len - 1); i >= 0; i--) {
    if (vk_str_at(s, i) == c) { return i; }
  }
  return -1;
}
int vk_str_find_str(vk_string s, vk_string t, int from) {
  if (from >= s.len) { return t.len == 0 ? s.len : -1; }
  int i = max(from, 0);
  for (; i + t.len <= s.len; i++) {
    if (vk_s_region(s, i, t)) { return i; }
  }
  return -1;
}
int vk_str_rfind_str(vk_string s, vk_string t, int from) {
  int i = min(from, s.len - t.len);
  for (; i >= 0; i--) {
    if (vk_s_region(s, i, t)) { return i; }
  }
  return -1;
}
bool vk_str_starts(vk_string s, vk_string p) { return p.len <= s.len && vk_s_region(s, 0, p); }
bool vk_str_ends(vk_string s, vk_string p) { return p.len <= s.len && vk_s_region(s, s.len - p.len, p); }
bool vk_str_contains(vk_string s, vk_string t) { return vk_str_find_str(s, t, 0) >= 0; }
vk_string vk_str_sub(vk_string s, int begin, int end) {
  int b = clamp(begin, 0, s.len);
  int e = clamp(end, b, s.len);
  return vk_string(s.src, s.start + b, e - b, s.mode);
}
vk_string vk_str_trim(vk_string s) {
  int b = 0;
  int e = s.len;
  while (b < e && vk_s_raw(s.src, s.start + b) <= 32u) { b++; }
  while (e > b && vk_s_raw(s.src, s.start + e - 1) <= 32u) { e--; }
  return vk_string(s.src, s.start + b, e - b, s.mode);
}
vk_string vk_str_lower(vk_string s) { return vk_string(s.src, s.start, s.len, 1); }
vk_string vk_str_upper(vk_string s) { return vk_string(s.src, s.start, s.len, 2); }
int vk_str_hash(vk_string s) {
  // Java's String.hashCode: over UTF-16 code units, decoded here from well-formed UTF-8
  int h = 0;
  int i = 0;
  while (i < s.len) {
    uint b = vk_str_at(s, i);
    uint cp = b;
    int n = b < 128u ? 1 : b < 224u ? 2 : b < 240u ? 3 : 4;
    if (n > 1) {
      cp = b & (n == 2 ? 31u : n == 3 ? 15u : 7u);
      for (int k = 1; k < n; k++) { cp = (cp << 6u) | (vk_str_at(s, i + k) & 63u); }
    }
    if (cp >= 65536u) {
      h = 31 * h + int(55232u + (cp >> 10u)); // high surrogate: 0xD800 + ((cp - 0x10000) >> 10)
      h = 31 * h + int(56320u + (cp & 1023u)); // low surrogate
    } else {
      h = 31 * h + int(cp);
    }
    i += n;
  }
  return h;
}
//@section status
// The row's status: 0 the kernel's result, 1 null, 2 call() (the body's vk_to_cpu), 3 call() (not
// ASCII), 4 call() (a string result that is not well-formed UTF-8), 5 call() (a write past the bytes
// the row measured, or a row longer than vkspark stages). The first cause stands.
uint vk_o_state = 0u;
// a string or binary result's pass (StringGlsl): 0 measures, 1 writes, and runs only rows phase 0 did not flag
uint vk_o_phase = 0u;
void vk_o_flag(uint cause) { if (vk_o_state == 0u) { vk_o_state = cause; } }
void vk_to_cpu() { vk_o_flag(2u); }
bool vk_str_require_ascii(vk_string s) {
  if (vk_o_phase != 0u || vk_str_is_ascii(s)) { return true; } // in phase 1 every call returned true in phase 0
  vk_o_flag(3u);
  return false;
}
void vk_o_report(uint row, uint cause) {
  atomicAdd(vk_o_status[1u + cause], 1u);
  uint i = atomicAdd(vk_o_status[1], 1u);
  if (2u * i + 1u < uint(vk_o_flagged.length())) {
    vk_o_flagged[2u * i] = row;
    vk_o_flagged[2u * i + 1u] = cause;
  }
}
//@section state
// Phase 0 measures (vk_o_at counts the row's bytes), phase 1 writes them at [vk_o_start, vk_o_end),
// which the scan of phase 0's lengths gave. Bytes are gathered a word at a time; a word the row
// shares with a neighbour is written with atomics on its own bytes only.
uint vk_o_at = 0u;
uint vk_o_start = 0u;
uint vk_o_end = 0u;
bool vk_o_fits = true;
bool vk_o_over = false;
uint vk_o_acc = 0u;
int vk_o_utf = 0;
//@section writer
int vk_out_len() { return int(vk_o_at - vk_o_start); }
void vk_o_flush(uint w) {
  uint lo = max(vk_o_start, w << 2u) - (w << 2u);
  uint hi = min(vk_o_end, (w << 2u) + 4u) - (w << 2u);
  if (lo == 0u && hi == 4u) {
    vk_o_data[w] = vk_o_acc;
  } else if (hi > lo) {
    uint mask = (hi == 4u ? 0xFFFFFFFFu : (1u << (hi << 3u)) - 1u) & ~((1u << (lo << 3u)) - 1u);
    atomicAnd(vk_o_data[w], ~mask);
    atomicOr(vk_o_data[w], vk_o_acc & mask);
  }
  vk_o_acc = 0u;
}
void vk_o_put(uint b) {
  b &= 255u;
  uint p = vk_o_at;
  vk_o_at = p + 1u;
  if (vk_o_phase == 0u) {
    vk_o_utf = vk_o_step(vk_o_utf, b);
    return;
  }
  if (p >= vk_o_end || !vk_o_fits) {
    vk_o_over = vk_o_over || p >= vk_o_end;
    return;
  }
  vk_o_acc |= b << ((p & 3u) << 3u);
  if ((p & 3u) == 3u || p + 1u == vk_o_end) { vk_o_flush(p >> 2u); }
}
void vk_out_byte(uint b) { vk_o_put(b); }
void vk_out_str(vk_string s) {
  if (s.len <= 0) { return; }
  if (vk_o_phase == 0u) {
    vk_o_view(s);
    vk_o_at += uint(s.len);
    return;
  }
  for (int i = 0; i < s.len; i++) { vk_o_put(vk_str_at(s, i)); }
}
void vk_out_int(int v) {
  uint m = v < 0 ? uint(-(v + 1)) + 1u : uint(v);
  if (v < 0) { vk_o_put(45u); }
  uint d = 1u;
  while (m / d >= 10u) { d *= 10u; }
  for (; d > 0u; d /= 10u) { vk_o_put(48u + (m / d) % 10u); }
}
//@section long
void vk_out_long(int64_t v) {
  uint64_t m = v < 0l ? uint64_t(-(v + 1l)) + 1ul : uint64_t(v);
  if (v < 0l) { vk_o_put(45u); }
  uint64_t d = 1ul;
  while (m / d >= 10ul) { d *= 10ul; }
  for (; d > 0ul; d /= 10ul) { vk_o_put(48u + uint((m / d) % 10ul)); }
}
//@section utf8
// A string result must be well-formed UTF-8 (Unicode Table 3-7), as every String call() returns is
// once Spark encodes it: bytes the body writes run through this state machine in phase 0
// (DecodedStrings.step on the host); a view of a string argument is well-formed when it starts and
// ends on a character boundary (the argument's whole row is, as staged).
int vk_o_step(int st, uint b) {
  if (st < 0) { return -1; }
  if (st == 0) {
    return b < 128u ? 0 : b < 194u ? -1 : b < 224u ? 1 : b == 224u ? 4 : b == 237u ? 5 : b < 240u ? 2
        : b == 240u ? 6 : b < 244u ? 3 : b == 244u ? 7 : -1;
  }
  if (st <= 3) { return (b & 192u) == 128u ? st - 1 : -1; }
  if (st == 4) { return b >= 160u && b <= 191u ? 1 : -1; }
  if (st == 5) { return b >= 128u && b <= 159u ? 1 : -1; }
  if (st == 6) { return b >= 144u && b <= 191u ? 2 : -1; }
  return b >= 128u && b <= 143u ? 2 : -1;
}
void vk_o_view(vk_string s) {
  if (vk_o_utf != 0 || vk_s_binary(s.src)) {
    for (int i = 0; i < s.len; i++) { vk_o_utf = vk_o_step(vk_o_utf, vk_str_at(s, i)); }
    return;
  }
  if ((vk_s_raw(s.src, s.start) & 192u) == 128u) { vk_o_utf = -1; }
  int end = s.start + s.len;
  if (end < vk_s_end(s.src) && (vk_s_raw(s.src, end) & 192u) == 128u) { vk_o_utf = -1; }
}
//@section bytes
// A binary result is any bytes: nothing to check.
int vk_o_step(int st, uint b) { return st; }
void vk_o_view(vk_string s) { }
