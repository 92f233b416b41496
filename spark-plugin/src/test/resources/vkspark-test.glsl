// GLSL-only GPU UDFs of the test session (spark.vkspark.glsl): no Java behind them.
/* types are SQL type names */
int glsl_file_mix(int i, int j) {
  return i * 3 - j;   // wraps like Java's int
}

bigint glsl_file_widen(int i, bigint l) { return int64_t(i) + l; }
