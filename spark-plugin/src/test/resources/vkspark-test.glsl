// GLSL-only GPU UDFs of the test session (spark.vkspark.glsl): no Java behind them.
/* types are SQL type names */
int glsl_file_mix(int i, int j) {
  return i * 3 - j;   // wraps like Java's int
}

bigint glsl_file_widen(int i, bigint l) { return int64_t(i) + l; }

// a string result (issue 32): trimmed, ASCII letters upper-cased, other bytes kept
string glsl_file_trim(string s) { return vk_str_upper(vk_str_trim(s)); }
