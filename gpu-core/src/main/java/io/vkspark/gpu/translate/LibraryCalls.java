package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
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
  /** The code being built, as a library call writes it. */
  interface Code {
    /** A temporary holding {@code e}. */
    Expr temp(JType t, Expr e);

    /** The row throws when {@code cond} holds. */
    void throwIf(Expr cond);

    /** A call of the translator's GLSL helper {@code name} ({@link Helpers}), marked as used. */
    Expr helper(JType t, String name, Expr... args);

    /** Notes that {@code call} is not bit-exact on the device. */
    void approximate(String call);

    /** The refusal of what the instruction being read does, naming it, its line and its class and method. */
    Untranslatable refuse(String what);
  }

  private LibraryCalls() {}

  private static final java.util.Set<String> ELEMENTARY = java.util.Set.of("exp", "log", "log10", "pow", "sin", "cos",
      "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "expm1", "log1p");

  /** The call's value (a temporary), or null when it has no device version. */
  static Expr translate(MethodInsnNode call, Expr[] a, Code e) {
    String owner = call.owner;
    String name = call.name;
    String desc = call.desc;
    Expr.Const folded = Folding.fold(owner, name, desc, a);
    if (folded != null) {
      return folded; // Java's own result, computed now
    }
    if (owner.equals("java/lang/Math") || owner.equals("java/lang/StrictMath")) {
      return math(owner, name, desc, a, e);
    }
    if (owner.equals("java/lang/Double")) {
      return switch (name + desc) {
        case "isNaN(D)Z" -> bool(e, e.helper(JType.Z, "vkt_isnan", a[0]));
        case "isInfinite(D)Z" -> bool(e, e.helper(JType.Z, "vkt_isinf", a[0]));
        case "isFinite(D)Z" -> bool(e, Expr.bin(BinOp.LAND, Expr.not(e.helper(JType.Z, "vkt_isnan", a[0])),
            Expr.not(e.helper(JType.Z, "vkt_isinf", a[0]))));
        case "doubleToRawLongBits(D)J" -> e.temp(JType.J, e.helper(JType.J, "vkt_dbits", a[0]));
        case "doubleToLongBits(D)J" -> e.temp(JType.J, Expr.select(e.helper(JType.Z, "vkt_isnan", a[0]),
            Expr.j(0x7ff8000000000000L), e.helper(JType.J, "vkt_dbits", a[0])));
        case "longBitsToDouble(J)D" -> e.temp(JType.D, e.helper(JType.D, "vkt_bitsd", a[0]));
        case "compare(DD)I" -> e.temp(JType.I, e.helper(JType.I, "vkt_dcompare", a[0], a[1]));
        case "sum(DD)D" -> e.temp(JType.D, Expr.bin(BinOp.ADD, a[0], a[1]));
        case "max(DD)D", "min(DD)D" -> e.temp(JType.D, Expr.call(JType.D, "j" + name, a[0], a[1]));
        default -> MathCalls.translate(owner, name, desc, a, e);
      };
    }
    if (owner.equals("java/lang/Float")) {
      return switch (name + desc) {
        case "isNaN(F)Z" -> bool(e, e.helper(JType.Z, "vkt_isnanf", a[0]));
        case "isInfinite(F)Z" -> bool(e, e.helper(JType.Z, "vkt_isinff", a[0]));
        case "isFinite(F)Z" -> bool(e, Expr.bin(BinOp.LAND, Expr.not(e.helper(JType.Z, "vkt_isnanf", a[0])),
            Expr.not(e.helper(JType.Z, "vkt_isinff", a[0]))));
        case "floatToRawIntBits(F)I" -> e.temp(JType.I, Expr.call(JType.I, "floatBitsToInt", a[0]));
        case "floatToIntBits(F)I" -> e.temp(JType.I, Expr.select(e.helper(JType.Z, "vkt_isnanf", a[0]), Expr.i(0x7fc00000),
            Expr.call(JType.I, "floatBitsToInt", a[0])));
        case "intBitsToFloat(I)F" -> e.temp(JType.F, Expr.call(JType.F, "intBitsToFloat", a[0]));
        case "max(FF)F", "min(FF)F" -> e.temp(JType.F, Expr.call(JType.F, "j" + name, a[0], a[1]));
        default -> MathCalls.translate(owner, name, desc, a, e);
      };
    }
    if (owner.equals("java/lang/Integer") || owner.equals("java/lang/Long")) {
      boolean l = owner.equals("java/lang/Long");
      JType t = l ? JType.J : JType.I;
      return switch (name) {
        case "max", "min" -> a.length == 2 && desc.startsWith(l ? "(JJ)" : "(II)") ? minMax(e, t, name, a[0], a[1]) : null;
        case "sum" -> a.length == 2 ? e.temp(t, Expr.bin(BinOp.ADD, a[0], a[1])) : null;
        case "signum" -> a.length == 1 ? e.temp(JType.I, Expr.select(cmp(e, a[0], BinOp.GT, Expr.zero(t)), Expr.i(1),
            Expr.select(cmp(e, a[0], BinOp.LT, Expr.zero(t)), Expr.i(-1), Expr.i(0)))) : null;
        case "compare" -> a.length == 2 ? e.temp(JType.I, Expr.select(cmp(e, a[0], BinOp.LT, a[1]), Expr.i(-1),
            Expr.select(cmp(e, a[0], BinOp.GT, a[1]), Expr.i(1), Expr.i(0)))) : null;
        default -> MathCalls.translate(owner, name, desc, a, e);
      };
    }
    return MathCalls.translate(owner, name, desc, a, e);
  }

  /** {@code a rel b} for ints, or for longs through {@code vkt_lcmp} (see {@link Helpers}). */
  static Expr cmp(Code e, Expr a, BinOp rel, Expr b) {
    return a.type() == JType.J ? Expr.bin(rel, e.helper(JType.I, "vkt_lcmp", a, b), Expr.i(0)) : Expr.bin(rel, a, b);
  }

  private static Expr minMax(Code e, JType t, String name, Expr a, Expr b) {
    if (t != JType.J) {
      return e.temp(t, Expr.call(t, "j" + name, a, b));
    }
    return e.temp(t, Expr.select(cmp(e, a, name.equals("max") ? BinOp.GE : BinOp.LE, b), a, b));
  }

  private static Expr bool(Code e, Expr cond) {
    return e.temp(JType.I, Expr.toInt(cond));
  }

  private static Expr math(String owner, String name, String desc, Expr[] a, Code e) {
    Expr x = a.length > 0 ? a[0] : null;
    Expr y = a.length > 1 ? a[1] : null;
    if (ELEMENTARY.contains(name) && (desc.equals("(D)D") || desc.equals("(DD)D"))) {
      e.approximate("Math." + name);
      return e.temp(JType.D, new Expr.Call(JType.D, name, java.util.Arrays.asList(a)));
    }
    return switch (name + desc) {
      case "sqrt(D)D" -> e.temp(JType.D, Expr.call(JType.D, "sqrt", x));
      case "abs(D)D", "abs(F)F" -> e.temp(x.type(), Expr.call(x.type(), "abs", x));
      case "abs(I)I", "abs(J)J" -> e.temp(x.type(), Expr.select(cmp(e, x, BinOp.LT, Expr.zero(x.type())), neg(x), x));
      case "max(DD)D", "max(FF)F", "max(II)I", "max(JJ)J", "min(DD)D", "min(FF)F", "min(II)I", "min(JJ)J" ->
          minMax(e, x.type(), name, x, y);
      case "floor(D)D" -> e.temp(JType.D, e.helper(JType.D, "vkt_floor", x));
      case "ceil(D)D" -> e.temp(JType.D, e.helper(JType.D, "vkt_ceil", x));
      case "rint(D)D" -> e.temp(JType.D, e.helper(JType.D, "vkt_rint", x));
      case "signum(D)D" -> e.temp(JType.D, Expr.select(Expr.bin(BinOp.GT, x, Expr.d(0)), Expr.d(1),
          Expr.select(Expr.bin(BinOp.LT, x, Expr.d(0)), Expr.d(-1), x)));
      // from the bits: a device that flushes float subnormals compares them as 0 (Java's signum is +-1)
      case "signum(F)F" -> e.temp(JType.F, Expr.select(Expr.bin(BinOp.LOR, e.helper(JType.Z, "vkt_isnanf", x),
              Expr.bin(BinOp.EQ, Expr.bin(BinOp.AND, floatBits(x), new Expr.Const(JType.I, 0x7fffffff)), Expr.i(0))), x,
          Expr.select(Expr.bin(BinOp.NE, Expr.bin(BinOp.AND, floatBits(x), Expr.i(0x80000000)), Expr.i(0)), Expr.f(-1),
              Expr.f(1))));
      case "toRadians(D)D" -> e.temp(JType.D, Expr.bin(BinOp.MUL, x, Expr.d(0.017453292519943295)));
      case "toDegrees(D)D" -> e.temp(JType.D, Expr.bin(BinOp.MUL, x, Expr.d(57.29577951308232)));
      case "fma(DDD)D" -> {
        e.approximate("Math.fma");
        yield e.temp(JType.D, Expr.call(JType.D, "fma", x, y, a[2]));
      }
      default -> {
        Expr r = ExactMath.translate(name + desc, a, e);
        yield r != null ? r : MathCalls.translate(owner, name, desc, a, e);
      }
    };
  }

  /** The bits of float {@code x} as an int (signed: the tests compare with int constants). */
  static Expr floatBits(Expr x) {
    return Expr.call(JType.I, "floatBitsToInt", x);
  }

  static Expr neg(Expr x) {
    return new Expr.Unary(x.type(), Expr.UnOp.NEG, x);
  }
}
