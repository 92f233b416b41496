package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import org.objectweb.asm.Type;

/**
 * Scala's {@code ==} on boxed values, {@code scala.runtime.BoxesRunTime.equals(Object, Object)}
 * and the forms scalac calls when it knows the operands are numbers ({@code equalsNumNum},
 * {@code equalsNumObject}, {@code equalsNumChar}, {@code equalsCharObject}, {@code equals2}), as
 * scala-library 2.13 computes them: both null is equal, one null is not;
 * two numbers (or a number and a {@code Character}) compare as the wider of their kinds, Byte,
 * Short, Char and Int as {@code int}, then {@code long}, {@code float}, {@code double}
 * ({@code 1 == 1L}, {@code 1 == 1.0}: true; NaN never equals NaN; {@code 0.0 == -0.0});
 * a {@code Boolean} equals only a {@code Boolean} of the same value.
 *
 * <p>{@code equals} alone first asks whether the two are one object, which the device cannot see.
 * It matters only for two NaNs of one box class, equal when they are the same {@code Double}: such
 * a row is handed to {@code call()}.
 */
final class ScalaEquality {
  private ScalaEquality() {}

  /** The {@code BoxesRunTime} methods computed here, by name: whether each first compares references. */
  static final java.util.Map<String, Boolean> METHODS = java.util.Map.of("equals", true, "equals2", false,
      "equalsNumNum", false, "equalsNumObject", false, "equalsNumChar", false, "equalsCharObject", false);

  /**
   * {@code BoxesRunTime.<method>(a, b)} as a Java boolean (int 1 or 0); null for another method
   * or values other than boxes.
   */
  static Val of(String method, Val x, Val y, MethodTranslator t) {
    Boolean identity = METHODS.get(method);
    if (identity == null) {
      return null;
    }
    if (!(x instanceof Val.Obj a && a.type() instanceof ObjType.Box ba)
        || !(y instanceof Val.Obj b && b.type() instanceof ObjType.Box bb)) {
      return null;
    }
    boolean boolA = ba.prim().getSort() == Type.BOOLEAN;
    boolean boolB = bb.prim().getSort() == Type.BOOLEAN;
    Expr same;
    if (boolA || boolB) {
      same = boolA && boolB ? Expr.bin(BinOp.EQ, a.value(), b.value()) : Expr.FALSE;
    } else {
      Type wide = rank(ba.prim()) >= rank(bb.prim()) ? kind(ba.prim()) : kind(bb.prim());
      Expr va = widen(a.value(), ba.prim(), wide, t);
      Expr vb = widen(b.value(), bb.prim(), wide, t);
      same = Expr.bin(BinOp.EQ, va, vb);
      if (identity && ba.equals(bb) && JType.of(wide).floating()) { // two NaNs: equal when one object, which the device cannot see
        String isNaN = wide.getSort() == Type.DOUBLE ? "vkt_isnan" : "vkt_isnanf";
        t.throwIf(Expr.bin(BinOp.LAND, Expr.not(Expr.bin(BinOp.LOR, a.isNull(), b.isNull())),
            Expr.bin(BinOp.LAND, t.helper(JType.Z, isNaN, va), t.helper(JType.Z, isNaN, vb))));
      }
    }
    Expr bothNull = Expr.bin(BinOp.LAND, a.isNull(), b.isNull());
    Expr neither = Expr.not(Expr.bin(BinOp.LOR, a.isNull(), b.isNull()));
    return Val.of(t.temp(JType.I, Expr.toInt(Expr.bin(BinOp.LOR, bothNull, Expr.bin(BinOp.LAND, neither, same)))));
  }

  /** BoxesRunTime's type code: Byte, Short, Char and Int 3, Long 4, Float 5, Double 6. */
  private static int rank(Type prim) {
    return switch (prim.getSort()) {
      case Type.LONG -> 4;
      case Type.FLOAT -> 5;
      case Type.DOUBLE -> 6;
      default -> 3;
    };
  }

  private static Type kind(Type prim) {
    return rank(prim) == 3 ? Type.INT_TYPE : prim;
  }

  /**
   * {@code v} (a {@code from}) as a {@code to}, with Java's rounding: a conversion that rounds is
   * multiplied by a 1 the compiler cannot see ({@link Expr.One}), as {@code Instructions} does.
   */
  private static Expr widen(Expr v, Type from, Type to, MethodTranslator t) {
    JType f = JType.of(from);
    JType j = JType.of(to);
    if (f == j) {
      return v;
    }
    boolean rounds = j == JType.F || j == JType.D && f == JType.J;
    Expr c = new Expr.Convert(j, v);
    return t.temp(j, rounds ? Expr.bin(BinOp.MUL, c, new Expr.One(j)) : c);
  }
}
