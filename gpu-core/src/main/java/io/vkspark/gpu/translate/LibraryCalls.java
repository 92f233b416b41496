package io.vkspark.gpu.translate;

import org.objectweb.asm.tree.MethodInsnNode;

/**
 * The JDK methods a translated UDF may call, each with its device version. Exact where Java's
 * result is exact: {@code abs}, {@code min}/{@code max} (Java's NaN and -0.0 rules), {@code sqrt},
 * {@code floor}, {@code ceil}, {@code rint}, {@code signum}, the {@code *Exact} family (the row
 * throws where Java throws), {@code floorDiv}/{@code floorMod}, bit conversions and the NaN/infinity
 * tests. The elementary functions ({@code exp}, {@code log}, {@code pow}, {@code sin}, ...) are
 * vkspark's double-precision ones, within 1 ulp of {@code StrictMath} ({@code log10} 2 ulp);
 * {@code Math.fma} is one rounding where the device's {@code fma} is fused (NVIDIA), two on
 * lavapipe. {@code Math} and {@code StrictMath} translate alike.
 */
final class LibraryCalls {
  /** What the translator gives a library call to write code with. */
  interface Emitter {
    Val temp(JType t, String expr);

    void throwIf(String cond);

    String helper(String name);

    /** Notes that {@code call} is not bit-exact on the device. */
    void approximate(String call);
  }

  record Result(Val value) {}

  private LibraryCalls() {}

  private static final java.util.Set<String> ELEMENTARY = java.util.Set.of("exp", "log", "log10", "pow", "sin", "cos",
      "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "expm1", "log1p");

  /** The call's value, or null when it has no device version. */
  static Result translate(MethodInsnNode call, Val[] a, Emitter e) {
    String owner = call.owner;
    String name = call.name;
    String desc = call.desc;
    if (owner.equals("java/lang/Math") || owner.equals("java/lang/StrictMath")) {
      return math(name, desc, a, e);
    }
    if (owner.equals("java/lang/Double")) {
      return switch (name + desc) {
        case "isNaN(D)Z" -> bool(e, e.helper("vkt_isnan") + "(" + a[0].v() + ")");
        case "isInfinite(D)Z" -> bool(e, e.helper("vkt_isinf") + "(" + a[0].v() + ")");
        case "isFinite(D)Z" -> bool(e, "!" + e.helper("vkt_isnan") + "(" + a[0].v() + ") && !" + e.helper("vkt_isinf")
            + "(" + a[0].v() + ")");
        case "doubleToRawLongBits(D)J" -> new Result(e.temp(JType.J, e.helper("vkt_dbits") + "(" + a[0].v() + ")"));
        case "doubleToLongBits(D)J" -> new Result(e.temp(JType.J, e.helper("vkt_isnan") + "(" + a[0].v()
            + ") ? 9221120237041090560l : " + e.helper("vkt_dbits") + "(" + a[0].v() + ")"));
        case "longBitsToDouble(J)D" -> new Result(e.temp(JType.D, e.helper("vkt_bitsd") + "(" + a[0].v() + ")"));
        case "compare(DD)I" -> new Result(e.temp(JType.I, e.helper("vkt_dcompare") + "(" + a[0].v() + ", " + a[1].v() + ")"));
        case "sum(DD)D" -> new Result(e.temp(JType.D, a[0].v() + " + " + a[1].v()));
        case "max(DD)D" -> new Result(e.temp(JType.D, "jmax(" + a[0].v() + ", " + a[1].v() + ")"));
        case "min(DD)D" -> new Result(e.temp(JType.D, "jmin(" + a[0].v() + ", " + a[1].v() + ")"));
        default -> null;
      };
    }
    if (owner.equals("java/lang/Float")) {
      return switch (name + desc) {
        case "isNaN(F)Z" -> bool(e, e.helper("vkt_isnanf") + "(" + a[0].v() + ")");
        case "isInfinite(F)Z" -> bool(e, e.helper("vkt_isinff") + "(" + a[0].v() + ")");
        case "isFinite(F)Z" -> bool(e, "!" + e.helper("vkt_isnanf") + "(" + a[0].v() + ") && !" + e.helper("vkt_isinff")
            + "(" + a[0].v() + ")");
        case "floatToRawIntBits(F)I" -> new Result(e.temp(JType.I, "floatBitsToInt(" + a[0].v() + ")"));
        case "floatToIntBits(F)I" -> new Result(e.temp(JType.I, e.helper("vkt_isnanf") + "(" + a[0].v()
            + ") ? 2143289344 : floatBitsToInt(" + a[0].v() + ")"));
        case "intBitsToFloat(I)F" -> new Result(e.temp(JType.F, "intBitsToFloat(" + a[0].v() + ")"));
        case "max(FF)F" -> new Result(e.temp(JType.F, "jmax(" + a[0].v() + ", " + a[1].v() + ")"));
        case "min(FF)F" -> new Result(e.temp(JType.F, "jmin(" + a[0].v() + ", " + a[1].v() + ")"));
        default -> null;
      };
    }
    if (owner.equals("java/lang/Integer") || owner.equals("java/lang/Long")) {
      boolean l = owner.equals("java/lang/Long");
      JType t = l ? JType.J : JType.I;
      return switch (name) {
        case "max", "min" -> a.length == 2 && desc.startsWith(l ? "(JJ)" : "(II)")
            ? minMax(e, t, name, a[0].v(), a[1].v()) : null;
        case "sum" -> a.length == 2 ? new Result(e.temp(t, a[0].v() + " + " + a[1].v())) : null;
        case "signum" -> a.length == 1 ? new Result(e.temp(JType.I, cmp(e, t, a[0].v(), ">", t.zero) + " ? 1 : "
            + cmp(e, t, a[0].v(), "<", t.zero) + " ? -1 : 0")) : null;
        case "compare" -> a.length == 2 ? new Result(e.temp(JType.I, cmp(e, t, a[0].v(), "<", a[1].v()) + " ? -1 : "
            + cmp(e, t, a[0].v(), ">", a[1].v()) + " ? 1 : 0")) : null;
        default -> null;
      };
    }
    return null;
  }

  /** {@code a rel b} for ints, or for longs through {@code vkt_lcmp} (see {@link Helpers}). */
  static String cmp(Emitter e, JType t, String a, String rel, String b) {
    return t == JType.J ? "(" + e.helper("vkt_lcmp") + "(" + a + ", " + b + ") " + rel + " 0)" : "(" + a + " " + rel + " " + b + ")";
  }

  private static Result minMax(Emitter e, JType t, String name, String a, String b) {
    if (t != JType.J) {
      return new Result(e.temp(t, "j" + name + "(" + a + ", " + b + ")"));
    }
    return new Result(e.temp(t, cmp(e, t, a, name.equals("max") ? ">=" : "<=", b) + " ? " + a + " : " + b));
  }

  private static Result approximate(Emitter e, String call, Result r) {
    e.approximate(call);
    return r;
  }

  private static Result bool(Emitter e, String cond) {
    return new Result(e.temp(JType.I, "(" + cond + ") ? 1 : 0"));
  }

  private static Result math(String name, String desc, Val[] a, Emitter e) {
    String x = a.length > 0 ? a[0].v() : null;
    String y = a.length > 1 ? a[1].v() : null;
    if (ELEMENTARY.contains(name) && (desc.equals("(D)D") || desc.equals("(DD)D"))) {
      e.approximate("Math." + name);
      return new Result(e.temp(JType.D, name + "(" + x + (y == null ? "" : ", " + y) + ")"));
    }
    return switch (name + desc) {
      case "sqrt(D)D" -> new Result(e.temp(JType.D, "sqrt(" + x + ")"));
      case "abs(D)D", "abs(F)F" -> new Result(e.temp(a[0].type(), "abs(" + x + ")"));
      case "abs(I)I", "abs(J)J" -> new Result(e.temp(a[0].type(), cmp(e, a[0].type(), x, "<", a[0].type().zero) + " ? -" + x
          + " : " + x));
      case "max(DD)D", "max(FF)F", "max(II)I", "max(JJ)J", "min(DD)D", "min(FF)F", "min(II)I", "min(JJ)J" ->
          minMax(e, a[0].type(), name, x, y);
      case "floor(D)D" -> new Result(e.temp(JType.D, e.helper("vkt_floor") + "(" + x + ")"));
      case "ceil(D)D" -> new Result(e.temp(JType.D, e.helper("vkt_ceil") + "(" + x + ")"));
      case "rint(D)D" -> new Result(e.temp(JType.D, e.helper("vkt_rint") + "(" + x + ")"));
      case "signum(D)D" -> new Result(e.temp(JType.D, "(" + x + " > 0.0LF ? 1.0LF : " + x + " < 0.0LF ? -1.0LF : " + x + ")"));
      // from the bits: a device that flushes float subnormals compares them as 0 (Java's signum is +-1)
      case "signum(F)F" -> new Result(e.temp(JType.F, "(" + e.helper("vkt_isnanf") + "(" + x + ") || (floatBitsToUint(" + x
          + ") & 0x7fffffffu) == 0u) ? " + x + " : (floatBitsToUint(" + x + ") & 0x80000000u) != 0u ? -1.0f : 1.0f"));
      case "toRadians(D)D" -> new Result(e.temp(JType.D, x + " * 0.017453292519943295LF"));
      case "toDegrees(D)D" -> new Result(e.temp(JType.D, x + " * 57.29577951308232LF"));
      case "fma(DDD)D" -> approximate(e, "Math.fma", new Result(e.temp(JType.D, "fma(" + x + ", " + y + ", " + a[2].v() + ")")));
      case "addExact(II)I", "addExact(JJ)J" -> {
        JType t = a[0].type();
        Val r = e.temp(t, x + " + " + y);
        Val bits = e.temp(t, "(" + x + " ^ " + r.v() + ") & (" + y + " ^ " + r.v() + ")");
        e.throwIf(cmp(e, t, bits.v(), "<", t.zero));
        yield new Result(r);
      }
      case "subtractExact(II)I", "subtractExact(JJ)J" -> {
        JType t = a[0].type();
        Val r = e.temp(t, x + " - " + y);
        Val bits = e.temp(t, "(" + x + " ^ " + y + ") & (" + x + " ^ " + r.v() + ")");
        e.throwIf(cmp(e, t, bits.v(), "<", t.zero));
        yield new Result(r);
      }
      case "multiplyExact(II)I" -> {
        Val wide = e.temp(JType.J, "int64_t(" + x + ") * int64_t(" + y + ")");
        e.throwIf(wide.v() + " != int64_t(int(" + wide.v() + "))");
        yield new Result(e.temp(JType.I, "int(" + wide.v() + ")"));
      }
      case "multiplyExact(JJ)J", "multiplyExact(JI)J" -> {
        if (a[1].type() == JType.I) {
          y = e.temp(JType.J, "int64_t(" + y + ")").v();
        }
        Val r = e.temp(JType.J, x + " * " + y);
        // Java's own test: the high words, then the quotient check (divisor non-zero), and MIN * -1
        Val ax = e.temp(JType.J, cmp(e, JType.J, x, "<", "0l") + " ? -" + x + " : " + x);
        Val ay = e.temp(JType.J, cmp(e, JType.J, y, "<", "0l") + " ? -" + y + " : " + y);
        e.throwIf("(uint64_t(" + ax.v() + " | " + ay.v() + ") >> 31 != 0ul) && ((" + y + " != 0l && jdiv(" + r.v() + ", " + y
            + ") != " + x + ") || (" + x + " == (-9223372036854775807l - 1l) && " + y + " == -1l))");
        yield new Result(r);
      }
      case "negateExact(I)I", "negateExact(J)J" -> {
        String min = a[0].type() == JType.I ? "(-2147483647 - 1)" : "(-9223372036854775807l - 1l)";
        e.throwIf(x + " == " + min);
        yield new Result(e.temp(a[0].type(), "-" + x));
      }
      case "toIntExact(J)I" -> {
        e.throwIf(x + " != int64_t(int(" + x + "))");
        yield new Result(e.temp(JType.I, "int(" + x + ")"));
      }
      case "floorDiv(II)I", "floorDiv(JJ)J", "floorDiv(JI)J" -> {
        JType t = a[0].type();
        if (a[1].type() != t) {
          y = e.temp(t, "int64_t(" + y + ")").v();
        }
        e.throwIf(y + " == " + t.zero);
        Val q = e.temp(t, "jdiv(" + x + ", " + y + ")");
        Val sign = e.temp(t, x + " ^ " + y);
        yield new Result(e.temp(t, "(" + cmp(e, t, sign.v(), "<", t.zero) + " && " + q.v() + " * " + y
            + " != " + x + ") ? " + q.v() + " - " + (t == JType.I ? "1" : "1l") + " : " + q.v()));
      }
      case "floorMod(II)I", "floorMod(JJ)J", "floorMod(JI)I" -> {
        JType t = a[0].type();
        if (a[1].type() != t) {
          y = e.temp(t, "int64_t(" + y + ")").v();
        }
        e.throwIf(y + " == " + t.zero);
        Val r = e.temp(t, "jrem(" + x + ", " + y + ")");
        Val sign = e.temp(t, r.v() + " ^ " + y);
        Val m = e.temp(t, "(" + cmp(e, t, sign.v(), "<", t.zero) + " && " + r.v() + " != " + t.zero + ") ? " + r.v() + " + "
            + y + " : " + r.v());
        yield new Result(desc.endsWith(")I") && t == JType.J ? e.temp(JType.I, "int(" + m.v() + ")") : m);
      }
      default -> null;
    };
  }
}
