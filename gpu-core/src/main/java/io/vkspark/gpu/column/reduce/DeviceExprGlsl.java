package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.column.reduce.DeviceExpr.Arithmetic;
import io.vkspark.gpu.column.reduce.DeviceExpr.Call;
import io.vkspark.gpu.column.reduce.DeviceExpr.Cast;
import io.vkspark.gpu.column.reduce.DeviceExpr.Coalesce;
import io.vkspark.gpu.column.reduce.DeviceExpr.Compare;
import io.vkspark.gpu.column.reduce.DeviceExpr.Floor;
import io.vkspark.gpu.column.reduce.DeviceExpr.If;
import io.vkspark.gpu.column.reduce.DeviceExpr.IsNaN;
import io.vkspark.gpu.column.reduce.DeviceExpr.IsNull;
import io.vkspark.gpu.column.reduce.DeviceExpr.KeySource;
import io.vkspark.gpu.column.reduce.DeviceExpr.Literal;
import io.vkspark.gpu.column.reduce.DeviceExpr.Logic;
import io.vkspark.gpu.column.reduce.DeviceExpr.NaNvl;
import io.vkspark.gpu.column.reduce.DeviceExpr.Negate;
import io.vkspark.gpu.column.reduce.DeviceExpr.Not;
import io.vkspark.gpu.column.reduce.DeviceExpr.Remainder;
import io.vkspark.gpu.column.SqlType;
import java.util.Arrays;
import java.util.List;

/**
 * GLSL for a {@link DeviceExpr}: statements that compute, for the row {@code vk_row} (which must
 * be in range), each node's value {@code vk_eK} and null flag {@code vk_zK}. Every node is total
 * (no operation can fail or is undefined), so both sides of a condition are computed. NaN is
 * recognised on the bits ({@code vk_isnan}, {@code vk_isnanf}), never by a float comparison a
 * driver could assume away; double arithmetic is {@code precise} (no fused multiply-add). Floats
 * are widened from their bits ({@code vk_f2d}) and negated by flipping the sign bit, never by a
 * float operation, so a device that flushes 32-bit subnormals (the H200) still gets Java's values.
 */
final class DeviceExprGlsl {
  /** The helpers the statements call (need 64-bit floats and integers): paste before {@code main}. */
  static final List<String> HELPERS = List.of(
      "bool vk_isnanf(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }",
      // Spark's SQLOrderingUtil.compareDoubles: -0.0 == 0.0, NaN == NaN, NaN above everything
      "int vk_cmp(double x, double y) { bool a = vk_isnan(x); bool b = vk_isnan(y);"
          + " return a ? (b ? 0 : 1) : b ? -1 : x == y ? 0 : x < y ? -1 : 1; }",
      // Java's (int) and (long) of a double: NaN is 0, out of range saturates, else toward zero
      "int vk_d2i(double x) { return vk_isnan(x) ? 0 : x >= 2147483647.0lf ? 2147483647"
          + " : x <= -2147483648.0lf ? int(0x80000000u) : int(x); }",
      "int64_t vk_d2l(double x) { return vk_isnan(x) ? int64_t(0) : x >= " + doubleBits(0x1p63)
          + " ? int64_t(0x7fffffffffffffffUL) : x <= " + doubleBits(-0x1p63) + " ? int64_t(0x8000000000000000UL)"
          + " : int64_t(x); }");

  /**
   * Java's {@code %} and Spark's {@code pmod} of integers by a non-zero divisor, on unsigned
   * magnitudes (GLSL leaves {@code %} of negative operands undefined; unsigned {@code %} is
   * defined); need 64-bit integers only.
   */
  static final List<String> INTEGER_HELPERS = List.of(
      "int64_t vk_rem64(int64_t x, int64_t c) { uint64_t ax = x < int64_t(0) ? uint64_t(0) - uint64_t(x) : uint64_t(x);"
          + " uint64_t ac = c < int64_t(0) ? uint64_t(0) - uint64_t(c) : uint64_t(c); int64_t r = int64_t(ax % ac);"
          + " return x < int64_t(0) ? -r : r; }",
      "int vk_rem32(int x, int c) { uint ax = x < 0 ? 0u - uint(x) : uint(x); uint ac = c < 0 ? 0u - uint(c) : uint(c);"
          + " int r = int(ax % ac); return x < 0 ? -r : r; }",
      "int64_t vk_pmod64(int64_t x, int64_t c) { int64_t r = vk_rem64(x, c); return r < int64_t(0) ? vk_rem64(r + c, c) : r; }",
      "int vk_pmod32(int x, int c) { int r = vk_rem32(x, c); return r < 0 ? vk_rem32(r + c, c) : r; }");

  private final List<SqlType> callTypes;
  private final List<String> out;
  /** A grouped key's source value and null flag ({@link KeySource}); null where no key is read. */
  private String keyValue;
  private String keyNull;
  /** A row filter's input columns ({@link DeviceExpr.Input}), bound as {@code vk_fJ} in this order; null where none is read. */
  private int[] filterInputs;
  private final String indent;
  private int next;

  /**
   * @param first the number of the first node (distinct per expression of one shader)
   */
  DeviceExprGlsl(List<SqlType> callTypes, List<String> out, String indent, int first) {
    this.callTypes = callTypes;
    this.out = out;
    this.indent = indent;
    this.next = first;
  }

  /** Reads {@link KeySource} as {@code value}, null where {@code isNull} holds (GLSL expressions over {@code vk_row}). */
  DeviceExprGlsl keySource(String value, String isNull) {
    this.keyValue = value;
    this.keyNull = isNull;
    return this;
  }

  /** Reads {@link DeviceExpr.Input} column {@code inputs[j]} from {@code vk_fJ}, null where {@code vk_fnJ} says so. */
  DeviceExprGlsl filterInputs(int[] inputs) {
    this.filterInputs = inputs;
    return this;
  }

  /** The next free node number. */
  int next() {
    return next;
  }

  /** Emits {@code e}; returns its node number K ({@code vk_eK}, {@code vk_zK}). */
  int emit(DeviceExpr e) {
    SqlType t = e.type(callTypes);
    String v;
    String z;
    if (e instanceof Call c) {
      int i = c.call();
      z = "((vk_nulls >> " + i + "u) & 1u) != 0u && ((vk_n" + i + "[vk_row >> 5u] >> (vk_row & 31u)) & 1u) == 0u";
      v = "vk_v" + i + "[vk_row]";
    } else if (e instanceof KeySource k) {
      if (keyValue == null) {
        throw new IllegalArgumentException("a key source outside a grouped key: " + e);
      }
      z = keyNull;
      v = keyValue;
    } else if (e instanceof DeviceExpr.Input in) {
      int j = filterInputs == null ? -1 : Arrays.binarySearch(filterInputs, in.column());
      if (j < 0) {
        throw new IllegalArgumentException("an input column outside a row filter: " + e);
      }
      z = "((vk_fnulls >> " + j + "u) & 1u) != 0u && ((vk_fn" + j + "[vk_row >> 5u] >> (vk_row & 31u)) & 1u) == 0u";
      v = in.sourceType() == SqlType.BOOLEAN ? "((vk_f" + j + "[vk_row >> 5u] >> (vk_row & 31u)) & 1u) != 0u"
          : "vk_f" + j + "[vk_row]";
    } else if (e instanceof Remainder m) {
      int a = emit(m.child());
      boolean wide = t == SqlType.BIGINT;
      String c = wide ? literal(SqlType.BIGINT, m.divisor()) : literal(SqlType.INT, (int) m.divisor());
      z = "vk_z" + a;
      v = (m.positive() ? "vk_pmod" : "vk_rem") + (wide ? "64" : "32") + "(vk_e" + a + ", " + c + ")";
    } else if (e instanceof Floor f) {
      int a = emit(f.child());
      z = "vk_z" + a;
      v = "floor(vk_e" + a + ")";
    } else if (e instanceof Literal l) {
      z = l.value() == null ? "true" : "false";
      v = literal(l.type(), l.value());
    } else if (e instanceof IsNaN n) {
      int a = emit(n.child());
      z = "false";
      v = "!vk_z" + a + " && " + (n.child().type(callTypes) == SqlType.FLOAT ? "vk_isnanf" : "vk_isnan")
          + "(vk_e" + a + ")";
    } else if (e instanceof IsNull n) {
      int a = emit(n.child());
      z = "false";
      v = (n.negated() ? "!" : "") + "vk_z" + a;
    } else if (e instanceof Not n) {
      int a = emit(n.child());
      z = "vk_z" + a;
      v = "!vk_e" + a;
    } else if (e instanceof Logic g) {
      int a = emit(g.left());
      int b = emit(g.right());
      // the deciding value (false for AND, true for OR) on either side wins over null
      String da = "(!vk_z" + a + " && " + (g.or() ? "" : "!") + "vk_e" + a + ")";
      String db = "(!vk_z" + b + " && " + (g.or() ? "" : "!") + "vk_e" + b + ")";
      z = "!(" + da + " || " + db + ") && (vk_z" + a + " || vk_z" + b + ")";
      v = g.or() ? da + " || " + db : "!vk_z" + a + " && vk_e" + a + " && !vk_z" + b + " && vk_e" + b;
    } else if (e instanceof If f) {
      int c = emit(f.condition());
      int a = emit(f.then());
      int b = emit(f.otherwise());
      String cond = "(!vk_z" + c + " && vk_e" + c + ")";
      z = cond + " ? vk_z" + a + " : vk_z" + b;
      v = cond + " ? vk_e" + a + " : vk_e" + b;
    } else if (e instanceof Coalesce c) {
      int[] k = c.values().stream().mapToInt(this::emit).toArray();
      int me = next++;
      line("bool vk_z" + me + " = vk_z" + k[0] + ";");
      line(t.glsl() + " vk_e" + me + " = vk_e" + k[0] + ";");
      for (int i = 1; i < k.length; i++) {
        line("if (vk_z" + me + ") { vk_z" + me + " = vk_z" + k[i] + "; vk_e" + me + " = vk_e" + k[i] + "; }");
      }
      return me;
    } else if (e instanceof NaNvl n) {
      int a = emit(n.left());
      int b = emit(n.right());
      String nan = (t == SqlType.FLOAT ? "vk_isnanf" : "vk_isnan") + "(vk_e" + a + ")";
      z = "vk_z" + a + " || (" + nan + " && vk_z" + b + ")";
      v = nan + " ? vk_e" + b + " : vk_e" + a;
    } else if (e instanceof Compare c) {
      int a = emit(c.left());
      int b = emit(c.right());
      SqlType ot = c.left().type(callTypes);
      String cmp = switch (ot) {
        case FLOAT -> "vk_cmp(vk_f2d(vk_e" + a + "), vk_f2d(vk_e" + b + "))";
        case DOUBLE -> "vk_cmp(vk_e" + a + ", vk_e" + b + ")";
        case BOOLEAN -> "(int(vk_e" + a + ") - int(vk_e" + b + "))";
        default -> "(vk_e" + a + " == vk_e" + b + " ? 0 : vk_e" + a + " < vk_e" + b + " ? -1 : 1)";
      };
      String test = switch (c.op()) {
        case EQ, EQ_NULL_SAFE -> cmp + " == 0";
        case LT -> cmp + " < 0";
        case LE -> cmp + " <= 0";
        case GT -> cmp + " > 0";
        case GE -> cmp + " >= 0";
      };
      if (c.op() == DeviceExpr.CompareOp.EQ_NULL_SAFE) {
        z = "false";
        v = "(vk_z" + a + " && vk_z" + b + ") || (!vk_z" + a + " && !vk_z" + b + " && " + test + ")";
      } else {
        z = "vk_z" + a + " || vk_z" + b;
        v = test;
      }
    } else if (e instanceof Arithmetic r) {
      int a = emit(r.left());
      int b = emit(r.right());
      String op = switch (r.op()) {
        case ADD -> " + ";
        case SUBTRACT -> " - ";
        case MULTIPLY -> " * ";
      };
      z = "vk_z" + a + " || vk_z" + b;
      v = "vk_e" + a + op + "vk_e" + b; // GLSL integers wrap, as Java's
    } else if (e instanceof Negate n) {
      int a = emit(n.child());
      z = "vk_z" + a;
      // a float's sign bit flipped: exact on a device that flushes subnormal float operands
      v = t == SqlType.FLOAT ? "uintBitsToFloat(floatBitsToUint(vk_e" + a + ") ^ 0x80000000u)" : "-vk_e" + a;
    } else if (e instanceof Cast c) {
      int a = emit(c.child());
      z = "vk_z" + a;
      v = cast("vk_e" + a, c.child().type(callTypes), c.to());
    } else {
      throw new IllegalArgumentException("unknown node " + e);
    }
    int me = next++;
    line("bool vk_z" + me + " = " + z + ";");
    line((t == SqlType.DOUBLE ? "precise " : "") + t.glsl() + " vk_e" + me + " = " + v + ";");
    return me;
  }

  private void line(String s) {
    out.add(indent + s);
  }

  /** GLSL for {@code x} of type {@code from} cast to {@code to}, Spark's non-ANSI semantics. */
  static String cast(String x, SqlType from, SqlType to) {
    if (from == to) {
      return x;
    }
    if (from == SqlType.FLOAT) { // exact widening (from the bits: subnormals too, see ReductionGlsl.ORDER), then the double's rule
      return to == SqlType.DOUBLE ? "vk_f2d(" + x + ")" : cast("vk_f2d(" + x + ")", SqlType.DOUBLE, to);
    }
    return switch (to) {
      case BOOLEAN -> from == SqlType.DOUBLE ? "(vk_isnan(" + x + ") || " + x + " != 0.0lf)"
          : from == SqlType.BIGINT ? x + " != int64_t(0)" : x + " != 0";
      case INT -> from == SqlType.BOOLEAN ? "(" + x + " ? 1 : 0)" : from == SqlType.DOUBLE ? "vk_d2i(" + x + ")"
          : "int(" + x + ")"; // bigint: the low 32 bits
      case BIGINT -> from == SqlType.BOOLEAN ? "(" + x + " ? int64_t(1) : int64_t(0))"
          : from == SqlType.DOUBLE ? "vk_d2l(" + x + ")" : "int64_t(" + x + ")";
      case FLOAT -> from == SqlType.BOOLEAN ? "(" + x + " ? 1.0 : 0.0)" : "float(" + x + ")";
      case DOUBLE -> from == SqlType.BOOLEAN ? "(" + x + " ? 1.0lf : 0.0lf)" : "double(" + x + ")";
      default -> throw new IllegalArgumentException("cast to " + to);
    };
  }

  /** The exact GLSL constant ({@code value} null: the type's zero, the value of a null). */
  static String literal(SqlType type, Object value) {
    return switch (type) {
      case INT -> "int(0x" + Integer.toHexString(value == null ? 0 : (Integer) value) + "u)";
      case BIGINT -> "int64_t(0x" + Long.toHexString(value == null ? 0L : (Long) value) + "UL)";
      case FLOAT -> "uintBitsToFloat(0x" + Integer.toHexString(Float.floatToRawIntBits(value == null ? 0f : (Float) value)) + "u)";
      case DOUBLE -> doubleBits(value == null ? 0.0 : (Double) value);
      case BOOLEAN -> Boolean.TRUE.equals(value) ? "true" : "false";
      default -> throw new IllegalArgumentException("literal of " + type);
    };
  }

  private static String doubleBits(double d) {
    long bits = Double.doubleToRawLongBits(d);
    return "packDouble2x32(uvec2(0x" + Integer.toHexString((int) bits) + "u, 0x" + Integer.toHexString((int) (bits >>> 32))
        + "u))";
  }
}
