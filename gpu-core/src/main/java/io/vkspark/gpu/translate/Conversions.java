package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import org.objectweb.asm.Type;

/** Java's conversions between primitive types, as IR. */
final class Conversions {
  private Conversions() {}

  /** {@code (a << bits) >> bits}: the low {@code 32 - bits} bits of int {@code a}, sign-extended ({@code (byte)}, {@code (short)}). */
  static Expr signExtend(Expr a, int bits) {
    return Expr.bin(BinOp.SHR, Expr.bin(BinOp.SHL, a, Expr.i(bits)), Expr.i(bits));
  }

  /** Java's conversion of {@code v} from primitive {@code from} to {@code to} (as {@code Double.intValue()} does). */
  static Expr primitive(Expr v, Type from, Type to) {
    JType f = JType.of(from);
    JType t = JType.of(to);
    Expr r;
    if (f == t) {
      boolean narrower = switch (to.getSort()) {
        case Type.BYTE -> from.getSort() != Type.BYTE;
        case Type.SHORT -> from.getSort() != Type.SHORT && from.getSort() != Type.BYTE;
        default -> false;
      };
      if (!narrower) {
        return v;
      }
      r = v;
    } else if (f.floating() && !t.floating()) {
      r = Expr.call(t, t == JType.I ? "jint" : "jlong", v);
    } else {
      r = new Expr.Convert(t, v);
    }
    return to.getSort() == Type.BYTE ? signExtend(r, 24) : to.getSort() == Type.SHORT ? signExtend(r, 16) : r;
  }
}
