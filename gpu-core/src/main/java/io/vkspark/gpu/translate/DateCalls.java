package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * Methods of the {@link Temporal} values, with Java's results (proleptic Gregorian calendar, no time
 * zone): {@code LocalDate}'s {@code toEpochDay}, {@code getYear}, {@code getMonthValue},
 * {@code getDayOfMonth}, {@code getDayOfYear}, {@code getDayOfWeek}, {@code isLeapYear},
 * {@code lengthOfMonth}, {@code lengthOfYear}, {@code plusDays}, {@code minusDays},
 * {@code plusWeeks}, comparisons, {@code equals}, {@code hashCode}, {@code LocalDate.of},
 * {@code ofEpochDay}; {@code Instant}'s {@code toEpochMilli}, {@code getEpochSecond},
 * {@code getNano}, comparisons, {@code plusSeconds}/{@code Millis}, {@code minusSeconds}/{@code Millis};
 * {@code Timestamp}'s {@code getTime}, {@code getNanos}, {@code before}, {@code after},
 * comparisons, {@code toInstant} (a timestamp before 1900 throws: recomputed, see {@link Temporal});
 * {@code DayOfWeek}'s {@code getValue}, {@code ordinal}, {@code ==}, {@code equals}. A result a
 * date column cannot hold (days outside {@code int}) or an overflow makes the row throw.
 */
final class DateCalls {
  private DateCalls() {}

  private static final long MICROS = 1_000_000L;

  /** The call's value, or null when it is not one of these. */
  static Val translate(MethodInsnNode call, Val receiver, Val[] args, MethodTranslator t) {
    String m = call.name + call.desc;
    if (receiver == null) {
      return switch (call.owner + "." + m) {
        case "java/time/LocalDate.ofEpochDay(J)Ljava/time/LocalDate;" -> date(t, prim(args[0], t));
        case "java/time/LocalDate.of(III)Ljava/time/LocalDate;" -> of(t, prim(args[0], t), prim(args[1], t), prim(args[2], t));
        default -> null;
      };
    }
    if (!(receiver instanceof Val.Obj o) || !(o.type() instanceof Temporal kind)) {
      return null;
    }
    Boxes.nonNull(o, t); // NullPointerException
    Expr v = o.value();
    if (kind == Temporal.TIMESTAMP) {
      t.throwIf(LibraryCalls.cmp(t, v, BinOp.LT, Expr.j(Temporal.TIMESTAMP_EXACT_FROM))); // Spark rebased it: call()
    }
    Val.Obj other = args.length == 1 && args[0] instanceof Val.Obj a ? a : null;
    if (m.startsWith("equals(")) {
      return Val.of(t.temp(JType.I, Expr.toInt(other == null || other.type() != kind ? Expr.FALSE
          : Expr.bin(BinOp.LAND, Expr.not(other.isNull()), Expr.bin(BinOp.EQ, v, other.value())))));
    }
    if (other != null && other.type() == kind) {
      Boxes.nonNull(other, t);
      if (kind == Temporal.TIMESTAMP) {
        t.throwIf(LibraryCalls.cmp(t, other.value(), BinOp.LT, Expr.j(Temporal.TIMESTAMP_EXACT_FROM)));
      }
      Expr w = other.value();
      Expr r = switch (call.name) {
        case "isBefore", "before" -> Expr.toInt(LibraryCalls.cmp(t, v, BinOp.LT, w));
        case "isAfter", "after" -> Expr.toInt(LibraryCalls.cmp(t, v, BinOp.GT, w));
        case "isEqual" -> Expr.toInt(Expr.bin(BinOp.EQ, v, w));
        case "compareTo" -> compare(kind, v, w, t);
        default -> null;
      };
      return r == null ? null : Val.of(t.temp(JType.I, r));
    }
    return switch (kind) {
      case LOCAL_DATE -> localDate(m, v, args, t);
      case INSTANT -> instant(m, v, args, t);
      case TIMESTAMP -> switch (m) {
        case "getTime()J" -> Val.of(t.temp(JType.J, floorDiv(v, 1000, t)));
        case "getNanos()I" -> Val.of(t.temp(JType.I, Expr.bin(BinOp.MUL, new Expr.Convert(JType.I, floorMod(v, MICROS, t)),
            Expr.i(1000))));
        case "toInstant()Ljava/time/Instant;" -> new Val.Obj(Temporal.INSTANT, v, Expr.FALSE);
        default -> null;
      };
      case DAY_OF_WEEK -> switch (m) {
        case "getValue()I" -> Val.of(v);
        case "ordinal()I" -> Val.of(t.temp(JType.I, Expr.bin(BinOp.SUB, v, Expr.i(1))));
        default -> null;
      };
    };
  }

  private static Expr compare(Temporal kind, Expr v, Expr w, MethodTranslator t) {
    return switch (kind) {
      case LOCAL_DATE -> t.helper(JType.I, "vkt_date_cmp", v, w); // year, then month, then day differences
      case INSTANT -> { // Long.compare of the seconds, then the difference of the nanoseconds
        Expr s = t.temp(JType.I, t.helper(JType.I, "vkt_lcmp", floorDiv(v, MICROS, t), floorDiv(w, MICROS, t)));
        Expr nanos = Expr.bin(BinOp.MUL, new Expr.Convert(JType.I, Expr.bin(BinOp.SUB, floorMod(v, MICROS, t),
            floorMod(w, MICROS, t))), Expr.i(1000));
        yield Expr.select(Expr.bin(BinOp.NE, s, Expr.i(0)), s, nanos);
      }
      case DAY_OF_WEEK -> Expr.bin(BinOp.SUB, v, w); // Enum.compareTo: ordinal difference
      default -> t.helper(JType.I, "vkt_lcmp", v, w);
    };
  }

  private static Val localDate(String m, Expr d, Val[] args, MethodTranslator t) {
    return switch (m) {
      case "toEpochDay()J" -> Val.of(t.temp(JType.J, new Expr.Convert(JType.J, d)));
      case "getYear()I" -> Val.of(t.temp(JType.I, field(d, "x", t)));
      case "getMonthValue()I" -> Val.of(t.temp(JType.I, field(d, "y", t)));
      case "getDayOfMonth()I" -> Val.of(t.temp(JType.I, field(d, "z", t)));
      case "getDayOfYear()I" -> Val.of(t.temp(JType.I, Expr.bin(BinOp.ADD, Expr.bin(BinOp.SUB, d,
          new Expr.Convert(JType.I, t.helper(JType.J, "vkt_days", field(d, "x", t), Expr.i(1), Expr.i(1)))), Expr.i(1))));
      case "isLeapYear()Z" -> Val.of(t.temp(JType.I, Expr.toInt(t.helper(JType.Z, "vkt_leap", field(d, "x", t)))));
      case "lengthOfMonth()I" -> Val.of(t.temp(JType.I, t.helper(JType.I, "vkt_month_length", field(d, "x", t), field(d, "y", t))));
      case "lengthOfYear()I" -> Val.of(t.temp(JType.I, Expr.select(t.helper(JType.Z, "vkt_leap", field(d, "x", t)), Expr.i(366),
          Expr.i(365))));
      case "getDayOfWeek()Ljava/time/DayOfWeek;" -> { // Math.floorMod(toEpochDay() + 3, 7) + 1
        Expr x = t.temp(JType.J, Expr.bin(BinOp.ADD, new Expr.Convert(JType.J, d), Expr.j(3)));
        yield new Val.Obj(Temporal.DAY_OF_WEEK, t.temp(JType.I, Expr.bin(BinOp.ADD, new Expr.Convert(JType.I, floorMod(x, 7, t)),
            Expr.i(1))), Expr.FALSE);
      }
      case "plusDays(J)Ljava/time/LocalDate;" -> date(t, add(new Expr.Convert(JType.J, d), prim(args[0], t), t));
      case "minusDays(J)Ljava/time/LocalDate;" -> date(t, subtract(new Expr.Convert(JType.J, d), prim(args[0], t), t));
      case "plusWeeks(J)Ljava/time/LocalDate;" -> {
        Expr n = prim(args[0], t);
        t.throwIf(Expr.bin(BinOp.NE, Expr.call(JType.J, "jdiv", Expr.bin(BinOp.MUL, n, Expr.j(7)), Expr.j(7)), n));
        yield date(t, add(new Expr.Convert(JType.J, d), t.temp(JType.J, Expr.bin(BinOp.MUL, n, Expr.j(7))), t));
      }
      case "hashCode()I" -> { // (year & 0xFFFFF800) ^ ((year << 11) + (month << 6) + day)
        Expr y = field(d, "x", t);
        yield Val.of(t.temp(JType.I, Expr.bin(BinOp.XOR, Expr.bin(BinOp.AND, y, Expr.i(0xFFFFF800)), Expr.bin(BinOp.ADD,
            Expr.bin(BinOp.ADD, Expr.call(JType.I, "jshl", y, Expr.i(11)), Expr.call(JType.I, "jshl", field(d, "y", t), Expr.i(6))),
            field(d, "z", t)))));
      }
      default -> null;
    };
  }

  private static Val instant(String m, Expr us, Val[] args, MethodTranslator t) {
    return switch (m) {
      case "toEpochMilli()J" -> Val.of(t.temp(JType.J, floorDiv(us, 1000, t)));
      case "getEpochSecond()J" -> Val.of(t.temp(JType.J, floorDiv(us, MICROS, t)));
      case "getNano()I" -> Val.of(t.temp(JType.I, Expr.bin(BinOp.MUL, new Expr.Convert(JType.I, floorMod(us, MICROS, t)),
          Expr.i(1000))));
      case "plusSeconds(J)Ljava/time/Instant;" -> instant(add(us, scaled(prim(args[0], t), MICROS, t), t));
      case "minusSeconds(J)Ljava/time/Instant;" -> instant(subtract(us, scaled(prim(args[0], t), MICROS, t), t));
      case "plusMillis(J)Ljava/time/Instant;" -> instant(add(us, scaled(prim(args[0], t), 1000, t), t));
      case "minusMillis(J)Ljava/time/Instant;" -> instant(subtract(us, scaled(prim(args[0], t), 1000, t), t));
      case "hashCode()I" -> { // ((int) (seconds ^ (seconds >>> 32))) + 51 * nanos
        Expr s = t.temp(JType.J, floorDiv(us, MICROS, t));
        yield Val.of(t.temp(JType.I, Expr.bin(BinOp.ADD, Boxes.longHash(s), Expr.bin(BinOp.MUL, Expr.i(51),
            Expr.bin(BinOp.MUL, new Expr.Convert(JType.I, floorMod(us, MICROS, t)), Expr.i(1000))))));
      }
      default -> null;
    };
  }

  private static Val instant(Expr micros) {
    return new Val.Obj(Temporal.INSTANT, micros, Expr.FALSE);
  }

  /** {@code n * scale}; the row throws where it leaves a long of microseconds. */
  private static Expr scaled(Expr n, long scale, MethodTranslator t) {
    Expr r = t.temp(JType.J, Expr.bin(BinOp.MUL, n, Expr.j(scale)));
    t.throwIf(Expr.bin(BinOp.NE, Expr.call(JType.J, "jdiv", r, Expr.j(scale)), n));
    return r;
  }

  /** {@code a + b} of longs; the row throws on overflow (as {@code Math.addExact}). */
  private static Expr add(Expr a, Expr b, MethodTranslator t) {
    Expr r = t.temp(JType.J, Expr.bin(BinOp.ADD, a, b));
    t.throwIf(LibraryCalls.cmp(t, Expr.bin(BinOp.AND, Expr.bin(BinOp.XOR, a, r), Expr.bin(BinOp.XOR, b, r)), BinOp.LT, Expr.j(0)));
    return r;
  }

  private static Expr subtract(Expr a, Expr b, MethodTranslator t) {
    Expr r = t.temp(JType.J, Expr.bin(BinOp.SUB, a, b));
    t.throwIf(LibraryCalls.cmp(t, Expr.bin(BinOp.AND, Expr.bin(BinOp.XOR, a, b), Expr.bin(BinOp.XOR, a, r)), BinOp.LT, Expr.j(0)));
    return r;
  }

  /** A date of {@code days} (a long); the row throws where a date column cannot hold it (outside {@code int}). */
  private static Val date(MethodTranslator t, Expr days) {
    Expr d = days.type() == JType.J ? days : new Expr.Convert(JType.J, days);
    t.throwIf(Expr.bin(BinOp.NE, d, new Expr.Convert(JType.J, new Expr.Convert(JType.I, d))));
    return new Val.Obj(Temporal.LOCAL_DATE, t.temp(JType.I, new Expr.Convert(JType.I, d)), Expr.FALSE);
  }

  /** {@code LocalDate.of(y, m, d)}: the row throws for an invalid date (DateTimeException). */
  private static Val of(MethodTranslator t, Expr y, Expr m, Expr d) {
    t.throwIf(Expr.bin(BinOp.LOR, Expr.bin(BinOp.LOR, Expr.bin(BinOp.LT, y, Expr.i(-999_999_999)),
        Expr.bin(BinOp.GT, y, Expr.i(999_999_999))), Expr.bin(BinOp.LOR, Expr.bin(BinOp.LT, m, Expr.i(1)),
        Expr.bin(BinOp.GT, m, Expr.i(12)))));
    t.throwIf(Expr.bin(BinOp.LOR, Expr.bin(BinOp.LT, d, Expr.i(1)),
        Expr.bin(BinOp.GT, d, t.helper(JType.I, "vkt_month_length", y, m))));
    return date(t, t.temp(JType.J, t.helper(JType.J, "vkt_days", y, m, d)));
  }

  /** Year ({@code x}), month ({@code y}) or day ({@code z}) of epoch day {@code d}. */
  private static Expr field(Expr d, String c, MethodTranslator t) {
    return t.helper(JType.I, switch (c) {
      case "x" -> "vkt_year";
      case "y" -> "vkt_month";
      default -> "vkt_day";
    }, d);
  }

  private static Expr floorDiv(Expr v, long by, MethodTranslator t) {
    return t.temp(JType.J, t.helper(JType.J, "vkt_lfloordiv", v, Expr.j(by)));
  }

  private static Expr floorMod(Expr v, long by, MethodTranslator t) {
    return t.temp(JType.J, Expr.bin(BinOp.SUB, v, Expr.bin(BinOp.MUL, floorDiv(v, by, t), Expr.j(by))));
  }

  private static Expr prim(Val v, MethodTranslator t) {
    if (!(v instanceof Val.Prim p)) {
      throw t.refuse("passes an object where a primitive is expected");
    }
    return p.e();
  }

  static boolean isDate(Type t) {
    return t.getSort() == Type.OBJECT && Temporal.of(t.getInternalName()) != null;
  }
}
