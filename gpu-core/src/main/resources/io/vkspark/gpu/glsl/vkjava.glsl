// ---------------------------------------------------------------------------------------------
// vkjava.glsl: Java semantics for the operations where GLSL differs (see docs/GLSL-SEMANTICS.md).
// Pasted into a UDF's shader only when its body calls one of these; the int64 and double
// overloads only when the UDF already uses those types (so a kernel needs no new capability).
//
//   jrem(a, b)   Java a % b: sign of the dividend; b == 0 gives 0 (Java throws ArithmeticException)
//   jdiv(a, b)   Java a / b: truncates; b == 0 gives 0 (Java throws); MIN / -1 gives MIN
//   jmin, jmax   Java Math.min/max: NaN if either is NaN, -0.0 < 0.0
//   jint(x)      Java (int) x:  NaN gives 0, saturates at Integer.MIN_VALUE/MAX_VALUE
//   jlong(x)     Java (long) x: NaN gives 0, saturates at Long.MIN_VALUE/MAX_VALUE
//   (jint and jlong of int and int64_t are Java's exact casts: wrap to 32 bits, widen)
//   jshl, jshr, jushr   Java <<, >>, >>>: the count is masked to 5 bits (int) or 6 bits (long)
//
// Everything is computed with operations whose SPIR-V meaning is defined for every operand
// (OpSDiv only with a divisor that is neither 0 nor -1; NaN tested on the bits, so drivers that
// assume no NaN cannot fold the test away).
// ---------------------------------------------------------------------------------------------
//@section int
int jdiv(int a, int b) { return b == 0 ? 0 : b == -1 ? -a : a / b; }
int jrem(int a, int b) { return (b == 0 || b == -1) ? 0 : a - (a / b) * b; }
int jmin(int a, int b) { return min(a, b); }
int jmax(int a, int b) { return max(a, b); }
int jshl(int a, int n) { return a << (n & 31); }
int jshr(int a, int n) { return a >> (n & 31); }
int jushr(int a, int n) { return int(uint(a) >> uint(n & 31)); }
bool vkj_isnan(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
// Java's order of non-NaN floats as an int (-0.0 below 0.0), compared without float arithmetic: a
// device that flushes subnormals to zero would otherwise see 1.4E-45 == 0.0
int vkj_order(float x) { int i = floatBitsToInt(x); return i < 0 ? i ^ 0x7fffffff : i; }
float jmin(float a, float b) {
  if (vkj_isnan(a)) { return a; }
  if (vkj_isnan(b)) { return b; }
  return vkj_order(a) <= vkj_order(b) ? a : b;
}
float jmax(float a, float b) {
  if (vkj_isnan(a)) { return a; }
  if (vkj_isnan(b)) { return b; }
  return vkj_order(a) >= vkj_order(b) ? a : b;
}
// jint/jlong of an integer: exact overloads, or GLSL would convert the argument to float first
int jint(int x) { return x; }
int jint(float x) {
  if (vkj_isnan(x)) { return 0; }
  if (x >= 2147483648.0) { return 2147483647; }
  if (x <= -2147483648.0) { return -2147483647 - 1; }
  return int(x);
}
//@section int64
int64_t jdiv(int64_t a, int64_t b) { return b == 0l ? 0l : b == -1l ? -a : a / b; }
int64_t jrem(int64_t a, int64_t b) { return (b == 0l || b == -1l) ? 0l : a - (a / b) * b; }
int64_t jmin(int64_t a, int64_t b) { return min(a, b); }
int64_t jmax(int64_t a, int64_t b) { return max(a, b); }
int64_t jshl(int64_t a, int n) { return a << (n & 63); }
int64_t jshr(int64_t a, int n) { return a >> (n & 63); }
int64_t jushr(int64_t a, int n) { return int64_t(uint64_t(a) >> uint(n & 63)); }
int64_t jshl(int64_t a, int64_t n) { return jshl(a, int(n & 63l)); }
int64_t jshr(int64_t a, int64_t n) { return jshr(a, int(n & 63l)); }
int64_t jushr(int64_t a, int64_t n) { return jushr(a, int(n & 63l)); }
// Java's int << long is an int shift: without these, GLSL would widen a and shift by up to 63
int jshl(int a, int64_t n) { return jshl(a, int(n & 31l)); }
int jshr(int a, int64_t n) { return jshr(a, int(n & 31l)); }
int jushr(int a, int64_t n) { return jushr(a, int(n & 31l)); }
int jint(int64_t x) { return int(x); }
int64_t jlong(int x) { return int64_t(x); }
int64_t jlong(int64_t x) { return x; }
int64_t jlong(float x) {
  if (vkj_isnan(x)) { return 0l; }
  if (x >= 9223372036854775808.0) { return 9223372036854775807l; }
  if (x <= -9223372036854775808.0) { return -9223372036854775807l - 1l; }
  return int64_t(x);
}
//@section double
bool vkj_isnan(double x) {
  uvec2 w = unpackDouble2x32(x);
  return (w.y & 0x7fffffffu) > 0x7ff00000u || ((w.y & 0x7fffffffu) == 0x7ff00000u && w.x != 0u);
}
double jmin(double a, double b) {
  if (vkj_isnan(a)) { return a; }
  if (vkj_isnan(b)) { return b; }
  if (a == 0.0lf && b == 0.0lf) { return unpackDouble2x32(a).y >= 0x80000000u ? a : b; }
  return a <= b ? a : b;
}
double jmax(double a, double b) {
  if (vkj_isnan(a)) { return a; }
  if (vkj_isnan(b)) { return b; }
  if (a == 0.0lf && b == 0.0lf) { return unpackDouble2x32(a).y >= 0x80000000u ? b : a; }
  return a >= b ? a : b;
}
int jint(double x) {
  if (vkj_isnan(x)) { return 0; }
  if (x >= 2147483648.0lf) { return 2147483647; }
  if (x <= -2147483648.0lf) { return -2147483647 - 1; }
  return int(x);
}
//@section int64+double
int64_t jlong(double x) {
  if (vkj_isnan(x)) { return 0l; }
  if (x >= 9223372036854775808.0lf) { return 9223372036854775807l; }
  if (x <= -9223372036854775808.0lf) { return -9223372036854775807l - 1l; }
  return int64_t(x);
}
