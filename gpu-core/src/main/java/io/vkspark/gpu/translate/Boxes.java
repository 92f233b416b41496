package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * Methods of the boxes ({@code Integer}, {@code Double}, ...) and of {@code java.util.Objects} over
 * them, with Java's results: {@code valueOf}, {@code xxxValue}, {@code equals} (false for another
 * box type or null; {@code Double.equals} compares {@code doubleToLongBits}, so NaN equals NaN and
 * {@code 0.0} does not equal {@code -0.0}), {@code compareTo}, {@code hashCode}, {@code isNaN},
 * {@code isInfinite}; {@code Objects.equals}, {@code isNull}, {@code nonNull},
 * {@code requireNonNull} (the row throws for a null), {@code requireNonNullElse},
 * {@code hashCode}. A method called on a null box throws ({@code NullPointerException}), so its
 * row is recomputed.
 */
final class Boxes {
  private Boxes() {}

  /** The call's value, or null when it is not a box method this class knows. */
  static Val translate(MethodInsnNode call, Val receiver, Val[] args, LibraryCalls.Code e) {
    Type[] types = Type.getArgumentTypes(call.desc);
    Type ret = Type.getReturnType(call.desc);
    Type ownerPrim = JType.unboxed(call.owner);
    if (receiver == null) {
      if (ownerPrim != null && call.name.equals("valueOf") && types.length == 1 && types[0].equals(ownerPrim)) {
        return new Val.Obj(new ObjType.Box(ownerPrim), prim(args[0], e), Expr.FALSE);
      }
      return call.owner.equals("java/util/Objects") ? objects(call.name + call.desc, args, e) : null;
    }
    if (!(receiver instanceof Val.Obj o) || !(o.type() instanceof ObjType.Box box)) {
      return null;
    }
    String m = call.name + call.desc;
    if (call.name.endsWith("Value") && types.length == 0 && JType.of(ret) != null) {
      nonNull(o, e); // NullPointerException
      return Val.of(e.temp(JType.of(ret), Conversions.primitive(o.value(), box.prim(), ret)));
    }
    return switch (m) {
      case "equals(Ljava/lang/Object;)Z" -> {
        nonNull(o, e);
        yield Val.of(e.temp(JType.I, Expr.toInt(equal(o, args[0], e))));
      }
      case "hashCode()I" -> {
        nonNull(o, e);
        yield Val.of(e.temp(JType.I, hash(box, o.value(), e)));
      }
      case "isNaN()Z", "isInfinite()Z" -> {
        nonNull(o, e);
        JType t = box.repr();
        if (!t.floating()) {
          yield null;
        }
        String h = (call.name.equals("isNaN") ? "vkt_isnan" : "vkt_isinf") + (t == JType.F ? "f" : "");
        yield Val.of(e.temp(JType.I, Expr.toInt(e.helper(JType.Z, h, o.value()))));
      }
      default -> {
        if (call.name.equals("compareTo") && types.length == 1 && args[0] instanceof Val.Obj other
            && other.type().equals(box)) {
          nonNull(o, e);
          nonNull(other, e);
          yield Val.of(compare(box, o.value(), other.value(), e));
        }
        yield null;
      }
    };
  }

  private static Val objects(String m, Val[] args, LibraryCalls.Code e) {
    return switch (m) {
      case "equals(Ljava/lang/Object;Ljava/lang/Object;)Z" -> {
        Val.Obj a = obj(args[0], e);
        Val.Obj b = obj(args[1], e);
        // (a == b) || (a != null && a.equals(b)): two nulls are equal, a null and a box are not
        yield Val.of(e.temp(JType.I, Expr.toInt(Expr.select(a.isNull(), b.isNull(),
            Expr.bin(BinOp.LAND, Expr.not(b.isNull()), equal(a, b, e))))));
      }
      case "isNull(Ljava/lang/Object;)Z" -> Val.of(e.temp(JType.I, Expr.toInt(obj(args[0], e).isNull())));
      case "nonNull(Ljava/lang/Object;)Z" -> Val.of(e.temp(JType.I, Expr.toInt(Expr.not(obj(args[0], e).isNull()))));
      case "requireNonNull(Ljava/lang/Object;)Ljava/lang/Object;",
           "requireNonNull(Ljava/lang/Object;Ljava/lang/String;)Ljava/lang/Object;" -> {
        Val.Obj a = obj(args[0], e);
        nonNull(a, e); // NullPointerException
        yield new Val.Obj(a.type(), a.value(), Expr.FALSE);
      }
      case "requireNonNullElse(Ljava/lang/Object;Ljava/lang/Object;)Ljava/lang/Object;" -> {
        Val.Obj a = obj(args[0], e);
        Val.Obj b = obj(args[1], e);
        if (!a.type().equals(b.type())) {
          throw e.refuse("Objects.requireNonNullElse of a " + a.type().className() + " and a " + b.type().className());
        }
        e.throwIf(Expr.bin(BinOp.LAND, a.isNull(), b.isNull())); // NullPointerException
        yield new Val.Obj(a.type(), e.temp(a.type().repr(), Expr.select(a.isNull(), b.value(), a.value())), Expr.FALSE);
      }
      case "hashCode(Ljava/lang/Object;)I" -> {
        Val.Obj a = obj(args[0], e);
        if (!(a.type() instanceof ObjType.Box box)) {
          yield null;
        }
        yield Val.of(e.temp(JType.I, Expr.select(a.isNull(), Expr.i(0), hash(box, a.value(), e))));
      }
      default -> null;
    };
  }

  private static Val.Obj obj(Val v, LibraryCalls.Code e) {
    if (!(v instanceof Val.Obj o)) {
      throw e.refuse("passes " + (v instanceof Val.Text ? "a string" : "an object the translator does not model")
          + " to java.util.Objects");
    }
    return o;
  }

  private static Expr prim(Val v, LibraryCalls.Code e) {
    if (!(v instanceof Val.Prim p)) {
      throw e.refuse("passes an object where a primitive is expected");
    }
    return p.e();
  }

  /** The row throws when {@code o} is null ({@code NullPointerException}). */
  static void nonNull(Val.Obj o, LibraryCalls.Code e) {
    if (!o.neverNull()) {
      e.throwIf(o.isNull());
    }
  }

  /** Whether non-null box {@code a} equals {@code b} (null, or another type of box: false). */
  private static Expr equal(Val.Obj a, Val b, LibraryCalls.Code e) {
    if (!(b instanceof Val.Obj o) || !o.type().equals(a.type())) {
      if (b instanceof Val.Obj o && o.alwaysNull()) {
        return Expr.FALSE;
      }
      if (b instanceof Val.Obj || b instanceof Val.Known) {
        return Expr.FALSE; // another class: never equal
      }
      throw e.refuse("compares a " + a.type().className() + " with a value the translator does not model");
    }
    Expr same;
    if (a.type() instanceof ObjType.Box box && box.repr() == JType.D) {
      same = Expr.bin(BinOp.EQ, doubleToLongBits(e, a.value()), doubleToLongBits(e, o.value()));
    } else if (a.type() instanceof ObjType.Box box && box.repr() == JType.F) {
      same = Expr.bin(BinOp.EQ, floatToIntBits(e, a.value()), floatToIntBits(e, o.value()));
    } else {
      same = Expr.bin(BinOp.EQ, a.value(), o.value());
    }
    return Expr.bin(BinOp.LAND, Expr.not(o.isNull()), same);
  }

  /** {@code compareTo} of two non-null boxes of type {@code box}. */
  private static Expr compare(ObjType.Box box, Expr a, Expr b, LibraryCalls.Code e) {
    return switch (box.repr()) {
      case D -> e.temp(JType.I, e.helper(JType.I, "vkt_dcompare", a, b));
      case F -> e.temp(JType.I, e.helper(JType.I, "vkt_dcompare", new Expr.Convert(JType.D, a), new Expr.Convert(JType.D, b)));
      default -> box.prim().getSort() == Type.BOOLEAN
          ? e.temp(JType.I, Expr.select(Expr.bin(BinOp.EQ, a, b), Expr.i(0), Expr.select(Expr.bin(BinOp.NE, a, Expr.i(0)),
              Expr.i(1), Expr.i(-1))))
          : box.prim().getSort() == Type.BYTE || box.prim().getSort() == Type.SHORT
          ? e.temp(JType.I, Expr.bin(BinOp.SUB, a, b)) // Byte.compare, Short.compare: x - y
          : e.temp(JType.I, Expr.select(LibraryCalls.cmp(e, a, BinOp.LT, b), Expr.i(-1),
              Expr.select(LibraryCalls.cmp(e, a, BinOp.GT, b), Expr.i(1), Expr.i(0))));
    };
  }

  /** {@code hashCode()} of a box of type {@code box} holding {@code v}. */
  private static Expr hash(ObjType.Box box, Expr v, LibraryCalls.Code e) {
    return switch (box.repr()) {
      case J -> longHash(v);
      case D -> longHash(doubleToLongBits(e, v));
      case F -> floatToIntBits(e, v);
      default -> box.prim().getSort() == Type.BOOLEAN ? Expr.select(Expr.bin(BinOp.NE, v, Expr.i(0)), Expr.i(1231),
          Expr.i(1237)) : v;
    };
  }

  /** {@code (int) (v ^ (v >>> 32))}. */
  static Expr longHash(Expr v) {
    return Expr.bin(BinOp.XOR, MathCalls.low(v), MathCalls.high(v));
  }

  /** {@code Double.doubleToLongBits}: NaN as the canonical NaN. */
  static Expr doubleToLongBits(LibraryCalls.Code e, Expr x) {
    return e.temp(JType.J, Expr.select(e.helper(JType.Z, "vkt_isnan", x), Expr.j(0x7ff8000000000000L),
        e.helper(JType.J, "vkt_dbits", x)));
  }

  /** {@code Float.floatToIntBits}: NaN as the canonical NaN. */
  static Expr floatToIntBits(LibraryCalls.Code e, Expr x) {
    return e.temp(JType.I, Expr.select(e.helper(JType.Z, "vkt_isnanf", x), Expr.i(0x7fc00000),
        LibraryCalls.floatBits(x)));
  }
}
