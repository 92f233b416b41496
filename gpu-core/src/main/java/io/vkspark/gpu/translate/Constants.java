package io.vkspark.gpu.translate;

import org.objectweb.asm.Type;

/** Values read when translating (fields, captured arguments) as IR constants. */
final class Constants {
  private Constants() {}

  /** {@code c} (a primitive's wrapper) as a constant of primitive type {@code t}. */
  static Expr.Const of(Object c, Type t) {
    return switch (t.getSort()) {
      case Type.BOOLEAN -> Expr.i(c instanceof Boolean b ? (b ? 1 : 0) : ((Number) c).intValue());
      case Type.CHAR -> Expr.i(c instanceof Character ch ? ch : ((Number) c).intValue());
      case Type.BYTE, Type.SHORT, Type.INT -> Expr.i(((Number) c).intValue());
      case Type.LONG -> Expr.j(((Number) c).longValue());
      case Type.FLOAT -> Expr.f(((Number) c).floatValue());
      case Type.DOUBLE -> Expr.d(((Number) c).doubleValue());
      default -> throw new IllegalArgumentException(String.valueOf(t));
    };
  }

  /** A non-null reference {@code c} of modelled type {@code o} as the constant of its value. */
  static Expr.Const of(Object c, ObjType o) {
    if (o instanceof ObjType.Box b) {
      return of(c, b.prim());
    }
    if (c instanceof java.time.LocalDate d && d.toEpochDay() == (int) d.toEpochDay()) {
      return Expr.i((int) d.toEpochDay());
    }
    if (c instanceof java.time.DayOfWeek w) {
      return Expr.i(w.getValue());
    }
    if (c instanceof java.time.Instant i) {
      try {
        return Expr.j(Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1000));
      } catch (ArithmeticException e) {
        return null;
      }
    }
    return null; // a java.sql.Timestamp is mutable, a date out of range has no device value
  }

  /** A constant reference of type {@code o} ({@code null} included); null when it has no device value. */
  static Val.Obj obj(Object c, ObjType o) {
    if (c == null) {
      return new Val.Obj(o, Expr.zero(o.repr()), Expr.TRUE);
    }
    Expr.Const v = of(c, o);
    return v == null ? null : new Val.Obj(o, v, Expr.FALSE);
  }
}
