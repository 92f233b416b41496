package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;

/**
 * {@code Math}'s integer methods that throw or round toward negative infinity: the {@code *Exact}
 * family (the row throws where Java throws), {@code floorDiv} and {@code floorMod}.
 */
final class ExactMath {
  private ExactMath() {}

  private static final Expr INT_MIN = Expr.i(Integer.MIN_VALUE);
  private static final Expr LONG_MIN = Expr.j(Long.MIN_VALUE);

  /** {@code name + desc} of {@code Math}/{@code StrictMath} over {@code a}, or null. */
  static Expr translate(String method, Expr[] a, LibraryCalls.Code e) {
    Expr x = a.length > 0 ? a[0] : null;
    Expr y = a.length > 1 ? a[1] : null;
    return switch (method) {
      case "addExact(II)I", "addExact(JJ)J" -> {
        JType t = x.type();
        Expr r = e.temp(t, Expr.bin(BinOp.ADD, x, y));
        Expr bits = e.temp(t, Expr.bin(BinOp.AND, Expr.bin(BinOp.XOR, x, r), Expr.bin(BinOp.XOR, y, r)));
        e.throwIf(LibraryCalls.cmp(e, bits, BinOp.LT, Expr.zero(t)));
        yield r;
      }
      case "subtractExact(II)I", "subtractExact(JJ)J" -> {
        JType t = x.type();
        Expr r = e.temp(t, Expr.bin(BinOp.SUB, x, y));
        Expr bits = e.temp(t, Expr.bin(BinOp.AND, Expr.bin(BinOp.XOR, x, y), Expr.bin(BinOp.XOR, x, r)));
        e.throwIf(LibraryCalls.cmp(e, bits, BinOp.LT, Expr.zero(t)));
        yield r;
      }
      case "multiplyExact(II)I" -> {
        Expr wide = e.temp(JType.J, Expr.bin(BinOp.MUL, new Expr.Convert(JType.J, x), new Expr.Convert(JType.J, y)));
        e.throwIf(Expr.bin(BinOp.NE, wide, new Expr.Convert(JType.J, new Expr.Convert(JType.I, wide))));
        yield e.temp(JType.I, new Expr.Convert(JType.I, wide));
      }
      case "multiplyExact(JJ)J", "multiplyExact(JI)J" -> {
        if (y.type() == JType.I) {
          y = e.temp(JType.J, new Expr.Convert(JType.J, y));
        }
        Expr r = e.temp(JType.J, Expr.bin(BinOp.MUL, x, y));
        // Java's own test: the high words, then the quotient check (divisor non-zero), and MIN * -1
        Expr ax = e.temp(JType.J, Expr.select(LibraryCalls.cmp(e, x, BinOp.LT, Expr.j(0)), LibraryCalls.neg(x), x));
        Expr ay = e.temp(JType.J, Expr.select(LibraryCalls.cmp(e, y, BinOp.LT, Expr.j(0)), LibraryCalls.neg(y), y));
        Expr high = Expr.bin(BinOp.NE, Expr.bin(BinOp.SHR, Expr.bin(BinOp.OR, ax, ay), Expr.j(31)), Expr.j(0));
        Expr quotient = Expr.bin(BinOp.LAND, Expr.bin(BinOp.NE, y, Expr.j(0)),
            Expr.bin(BinOp.NE, Expr.call(JType.J, "jdiv", r, y), x));
        Expr minTimesMinus1 = Expr.bin(BinOp.LAND, Expr.bin(BinOp.EQ, x, LONG_MIN), Expr.bin(BinOp.EQ, y, Expr.j(-1)));
        e.throwIf(Expr.bin(BinOp.LAND, high, Expr.bin(BinOp.LOR, quotient, minTimesMinus1)));
        yield r;
      }
      case "negateExact(I)I", "negateExact(J)J" -> {
        e.throwIf(Expr.bin(BinOp.EQ, x, x.type() == JType.I ? INT_MIN : LONG_MIN));
        yield e.temp(x.type(), LibraryCalls.neg(x));
      }
      case "toIntExact(J)I" -> {
        e.throwIf(Expr.bin(BinOp.NE, x, new Expr.Convert(JType.J, new Expr.Convert(JType.I, x))));
        yield e.temp(JType.I, new Expr.Convert(JType.I, x));
      }
      case "floorDiv(II)I", "floorDiv(JJ)J", "floorDiv(JI)J" -> {
        JType t = x.type();
        if (y.type() != t) {
          y = e.temp(t, new Expr.Convert(t, y));
        }
        e.throwIf(Expr.bin(BinOp.EQ, y, Expr.zero(t)));
        Expr q = e.temp(t, Expr.call(t, "jdiv", x, y));
        Expr sign = e.temp(t, Expr.bin(BinOp.XOR, x, y));
        yield e.temp(t, Expr.select(Expr.bin(BinOp.LAND, LibraryCalls.cmp(e, sign, BinOp.LT, Expr.zero(t)),
            Expr.bin(BinOp.NE, Expr.bin(BinOp.MUL, q, y), x)), Expr.bin(BinOp.SUB, q, Expr.of(t, 1)), q));
      }
      case "floorMod(II)I", "floorMod(JJ)J", "floorMod(JI)I" -> {
        JType t = x.type();
        if (y.type() != t) {
          y = e.temp(t, new Expr.Convert(t, y));
        }
        e.throwIf(Expr.bin(BinOp.EQ, y, Expr.zero(t)));
        Expr r = e.temp(t, Expr.call(t, "jrem", x, y));
        Expr sign = e.temp(t, Expr.bin(BinOp.XOR, r, y));
        Expr m = e.temp(t, Expr.select(Expr.bin(BinOp.LAND, LibraryCalls.cmp(e, sign, BinOp.LT, Expr.zero(t)),
            Expr.bin(BinOp.NE, r, Expr.zero(t))), Expr.bin(BinOp.ADD, r, y), r));
        yield method.endsWith(")I") && t == JType.J ? e.temp(JType.I, new Expr.Convert(JType.I, m)) : m;
      }
      default -> null;
    };
  }
}
