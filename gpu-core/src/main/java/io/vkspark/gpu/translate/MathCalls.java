package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import java.util.Random;

/**
 * More JDK methods with device versions that give Java's bits: {@code Math.round}, {@code cbrt},
 * {@code hypot}, {@code copySign}, {@code absExact}; {@code Float.compare}; the bit counts and
 * rotations of {@code Integer} and {@code Long}; the static {@code hashCode}s; {@code Boolean}'s
 * {@code compare} and logical operators.
 *
 * <p>{@code Math.cbrt} and {@code Math.hypot} are specified within 1 ulp; on Java 17 they are
 * {@code StrictMath}'s fdlibm results, which the device computes exactly ({@link MathHelpers}).
 * A JVM whose {@code Math.cbrt} is an intrinsic with other bits (JDK 24 and later on x86) is noticed
 * here, by comparing it with {@code StrictMath} on a fixed sample, and the call is then marked
 * approximate (verified within the UDF's tolerance) rather than claimed exact.
 */
final class MathCalls {
  private MathCalls() {}

  /** Whether this JVM's {@code Math.cbrt} and {@code Math.hypot} are {@code StrictMath}'s, bit for bit. */
  static final boolean CBRT_IS_STRICT = sameAsStrict(true);
  static final boolean HYPOT_IS_STRICT = sameAsStrict(false);

  private static boolean sameAsStrict(boolean cbrt) {
    Random r = new Random(31);
    for (int i = 0; i < 20_000; i++) {
      double x = (r.nextDouble() - 0.5) * Math.pow(2, r.nextInt(64) - 32);
      double y = Double.longBitsToDouble(r.nextLong());
      boolean same = cbrt ? Double.doubleToRawLongBits(Math.cbrt(x)) == Double.doubleToRawLongBits(StrictMath.cbrt(x))
          && Double.doubleToRawLongBits(Math.cbrt(y)) == Double.doubleToRawLongBits(StrictMath.cbrt(y))
          : Double.doubleToRawLongBits(Math.hypot(x, y)) == Double.doubleToRawLongBits(StrictMath.hypot(x, y))
          && Double.doubleToRawLongBits(Math.hypot(x, x * 0.75)) == Double.doubleToRawLongBits(StrictMath.hypot(x, x * 0.75));
      if (!same) {
        return false;
      }
    }
    return true;
  }

  /** The call's value (a temporary), or null when it has no device version here. */
  static Expr translate(String owner, String name, String desc, Expr[] a, LibraryCalls.Code e) {
    Expr x = a.length > 0 ? a[0] : null;
    Expr y = a.length > 1 ? a[1] : null;
    boolean strict = owner.equals("java/lang/StrictMath");
    if (owner.equals("java/lang/Math") || strict) {
      return switch (name + desc) {
        case "round(D)J" -> e.temp(JType.J, e.helper(JType.J, "vkt_round", x));
        case "round(F)I" -> e.temp(JType.I, e.helper(JType.I, "vkt_roundf", x));
        case "cbrt(D)D" -> {
          if (!strict && !CBRT_IS_STRICT) {
            e.approximate("Math.cbrt");
          }
          yield e.temp(JType.D, e.helper(JType.D, "vkt_cbrt", x));
        }
        case "hypot(DD)D" -> {
          if (!strict && !HYPOT_IS_STRICT) {
            e.approximate("Math.hypot");
          }
          yield e.temp(JType.D, e.helper(JType.D, "vkt_hypot", x, y));
        }
        // Math.copySign takes the sign bit as it is; StrictMath's treats a NaN sign as positive
        case "copySign(DD)D" -> e.temp(JType.D, e.helper(JType.D, "vkt_bitsd", Expr.bin(BinOp.OR,
            Expr.bin(BinOp.AND, e.helper(JType.J, "vkt_dbits", x), Expr.j(Long.MAX_VALUE)),
            Expr.bin(BinOp.AND, e.helper(JType.J, "vkt_dbits", strict ? Expr.select(e.helper(JType.Z, "vkt_isnan", y),
                Expr.d(1), y) : y), Expr.j(Long.MIN_VALUE)))));
        case "copySign(FF)F" -> e.temp(JType.F, Expr.call(JType.F, "intBitsToFloat", Expr.bin(BinOp.OR,
            Expr.bin(BinOp.AND, LibraryCalls.floatBits(x), Expr.i(Integer.MAX_VALUE)),
            Expr.bin(BinOp.AND, LibraryCalls.floatBits(strict ? Expr.select(e.helper(JType.Z, "vkt_isnanf", y), Expr.f(1), y)
                : y), Expr.i(Integer.MIN_VALUE)))));
        case "absExact(I)I", "absExact(J)J" -> {
          e.throwIf(Expr.bin(BinOp.EQ, x, x.type() == JType.I ? Expr.i(Integer.MIN_VALUE) : Expr.j(Long.MIN_VALUE)));
          yield e.temp(x.type(), Expr.select(LibraryCalls.cmp(e, x, BinOp.LT, Expr.zero(x.type())), LibraryCalls.neg(x), x));
        }
        default -> null;
      };
    }
    return switch (owner + "." + name + desc) {
      case "java/lang/Float.compare(FF)I" -> e.temp(JType.I, e.helper(JType.I, "vkt_dcompare", new Expr.Convert(JType.D, x),
          new Expr.Convert(JType.D, y)));
      case "java/lang/Integer.bitCount(I)I" -> e.temp(JType.I, Expr.call(JType.I, "bitCount", x));
      case "java/lang/Long.bitCount(J)I" -> e.temp(JType.I, Expr.bin(BinOp.ADD, Expr.call(JType.I, "bitCount", low(x)),
          Expr.call(JType.I, "bitCount", high(x))));
      case "java/lang/Integer.numberOfLeadingZeros(I)I" -> e.temp(JType.I, Expr.select(Expr.bin(BinOp.EQ, x, Expr.i(0)),
          Expr.i(32), Expr.bin(BinOp.SUB, Expr.i(31), msb(x))));
      case "java/lang/Integer.numberOfTrailingZeros(I)I" -> e.temp(JType.I, Expr.select(Expr.bin(BinOp.EQ, x, Expr.i(0)),
          Expr.i(32), Expr.call(JType.I, "findLSB", x)));
      case "java/lang/Long.numberOfLeadingZeros(J)I" -> {
        Expr hi = e.temp(JType.I, high(x));
        Expr lo = e.temp(JType.I, low(x));
        yield e.temp(JType.I, Expr.select(Expr.bin(BinOp.NE, hi, Expr.i(0)), Expr.bin(BinOp.SUB, Expr.i(31), msb(hi)),
            Expr.select(Expr.bin(BinOp.NE, lo, Expr.i(0)), Expr.bin(BinOp.SUB, Expr.i(63), msb(lo)), Expr.i(64))));
      }
      case "java/lang/Long.numberOfTrailingZeros(J)I" -> {
        Expr hi = e.temp(JType.I, high(x));
        Expr lo = e.temp(JType.I, low(x));
        yield e.temp(JType.I, Expr.select(Expr.bin(BinOp.NE, lo, Expr.i(0)), Expr.call(JType.I, "findLSB", lo),
            Expr.select(Expr.bin(BinOp.NE, hi, Expr.i(0)), Expr.bin(BinOp.ADD, Expr.i(32), Expr.call(JType.I, "findLSB", hi)),
                Expr.i(64))));
      }
      case "java/lang/Integer.highestOneBit(I)I" -> e.temp(JType.I, Expr.select(Expr.bin(BinOp.EQ, x, Expr.i(0)), Expr.i(0),
          Expr.bin(BinOp.SHL, Expr.i(1), msb(x))));
      case "java/lang/Integer.lowestOneBit(I)I", "java/lang/Long.lowestOneBit(J)J" -> e.temp(x.type(),
          Expr.bin(BinOp.AND, x, LibraryCalls.neg(x)));
      case "java/lang/Integer.rotateLeft(II)I", "java/lang/Long.rotateLeft(JI)J" -> e.temp(x.type(), Expr.bin(BinOp.OR,
          Expr.call(x.type(), "jshl", x, y), Expr.call(x.type(), "jushr", x, LibraryCalls.neg(y))));
      case "java/lang/Integer.rotateRight(II)I", "java/lang/Long.rotateRight(JI)J" -> e.temp(x.type(), Expr.bin(BinOp.OR,
          Expr.call(x.type(), "jushr", x, y), Expr.call(x.type(), "jshl", x, LibraryCalls.neg(y))));
      case "java/lang/Integer.hashCode(I)I", "java/lang/Short.hashCode(S)I", "java/lang/Byte.hashCode(B)I" -> x;
      case "java/lang/Long.hashCode(J)I" -> e.temp(JType.I, Boxes.longHash(x));
      case "java/lang/Double.hashCode(D)I" -> e.temp(JType.I, Boxes.longHash(Boxes.doubleToLongBits(e, x)));
      case "java/lang/Float.hashCode(F)I" -> e.temp(JType.I, Boxes.floatToIntBits(e, x));
      case "java/lang/Boolean.hashCode(Z)I" -> e.temp(JType.I, Expr.select(Expr.bin(BinOp.NE, x, Expr.i(0)), Expr.i(1231),
          Expr.i(1237)));
      case "java/lang/Boolean.compare(ZZ)I" -> e.temp(JType.I, Expr.select(Expr.bin(BinOp.EQ, x, y), Expr.i(0),
          Expr.select(Expr.bin(BinOp.NE, x, Expr.i(0)), Expr.i(1), Expr.i(-1))));
      case "java/lang/Boolean.logicalAnd(ZZ)Z" -> e.temp(JType.I, Expr.bin(BinOp.AND, x, y));
      case "java/lang/Boolean.logicalOr(ZZ)Z" -> e.temp(JType.I, Expr.bin(BinOp.OR, x, y));
      case "java/lang/Boolean.logicalXor(ZZ)Z" -> e.temp(JType.I, Expr.bin(BinOp.XOR, x, y));
      default -> null;
    };
  }

  /** The low 32 bits of a long, as an int. */
  static Expr low(Expr x) {
    return new Expr.Convert(JType.I, x);
  }

  /** The high 32 bits of a long, as an int. */
  static Expr high(Expr x) {
    return new Expr.Convert(JType.I, Expr.bin(BinOp.SHR, x, Expr.j(32)));
  }

  /** The index of the highest set bit of int {@code x} read as unsigned (0 to 31). */
  private static Expr msb(Expr x) {
    return Expr.call(JType.I, "findMSB", Expr.call(JType.I, "uint", x));
  }
}
