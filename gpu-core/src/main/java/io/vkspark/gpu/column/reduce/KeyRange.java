package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.column.SqlType;
import java.util.List;

/**
 * Bounds of a grouping key's values over a batch, by interval arithmetic over its expression
 * ({@link GroupKey}): the key {@code id % 16} lies in {@code [-15, 15]} whatever {@code id} holds, and
 * {@code id + 3} in {@code [min + 3, max + 3]} of the batch's {@code id}s. Integral ranges are
 * inclusive longs; a floating one (an operand of {@code floor} or a cast) is a pair of doubles and
 * whether NaN occurs. Bounds may be wider than the values (a slot without rows gives no group),
 * never narrower: where an operation may wrap, the range becomes its type's whole range.
 *
 * @param lo least integral value ({@code lo > hi}: no value, e.g. only nulls)
 * @param hi greatest integral value
 * @param dlo least floating value (floating ranges)
 * @param dhi greatest floating value
 * @param nan whether a floating value may be NaN
 * @param floating whether this is a floating range
 */
public record KeyRange(long lo, long hi, double dlo, double dhi, boolean nan, boolean floating) {
  /** Integral values in {@code [lo, hi]} ({@code lo > hi}: none). */
  public static KeyRange ofLongs(long lo, long hi) {
    return new KeyRange(lo, hi, 0, 0, false, false);
  }

  /** Floating values in {@code [lo, hi]} (none when {@code lo > hi}), NaN too when {@code nan}. */
  public static KeyRange ofDoubles(double lo, double hi, boolean nan) {
    return new KeyRange(0, -1, lo, hi, nan, true);
  }

  /** Every value of {@code t}. */
  public static KeyRange full(SqlType t) {
    return switch (t) {
      case INT, DATE -> ofLongs(Integer.MIN_VALUE, Integer.MAX_VALUE);
      case BIGINT -> ofLongs(Long.MIN_VALUE, Long.MAX_VALUE);
      default -> ofDoubles(Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, true);
    };
  }

  /** Whether no (non-null) value lies in the range. */
  public boolean empty() {
    return floating ? !(dlo <= dhi) && !nan : lo > hi;
  }

  /** Integral values the range spans ({@code hi - lo + 1}; 0 when empty), {@link Long#MAX_VALUE} when that overflows. */
  public long values() {
    if (lo > hi) {
      return 0;
    }
    long span = hi - lo;
    return span < 0 || span == Long.MAX_VALUE ? Long.MAX_VALUE : span + 1;
  }

  /** The range of {@code e}'s values when its {@link DeviceExpr.KeySource} lies in {@code source}. */
  public static KeyRange of(DeviceExpr e, KeyRange source) {
    SqlType t = e.type(List.of());
    if (e instanceof DeviceExpr.KeySource) {
      return source;
    }
    if (e instanceof DeviceExpr.Literal l) {
      return l.value() instanceof Number n && (t == SqlType.INT || t == SqlType.BIGINT) ? ofLongs(n.longValue(), n.longValue())
          : l.value() instanceof Number n ? ofDoubles(n.doubleValue(), n.doubleValue(), Double.isNaN(n.doubleValue()))
          : full(t);
    }
    if (e instanceof DeviceExpr.Remainder r) {
      return remainder(of(r.child(), source), r.divisor(), r.positive(), t);
    }
    if (e instanceof DeviceExpr.Floor f) {
      KeyRange x = of(f.child(), source);
      return ofDoubles(Math.floor(x.dlo), Math.floor(x.dhi), x.nan);
    }
    if (e instanceof DeviceExpr.Negate n) {
      KeyRange x = of(n.child(), source);
      if (x.floating) {
        return ofDoubles(-x.dhi, -x.dlo, x.nan);
      }
      if (x.empty()) {
        return x;
      }
      return x.lo == Long.MIN_VALUE ? full(t) : within(t, -x.hi, -x.lo);
    }
    if (e instanceof DeviceExpr.Arithmetic a) {
      return arithmetic(a.op(), of(a.left(), source), of(a.right(), source), t);
    }
    if (e instanceof DeviceExpr.Cast c) {
      return cast(of(c.child(), source), c.to());
    }
    return full(t);
  }

  private static KeyRange remainder(KeyRange x, long c, boolean positive, SqlType t) {
    if (x.empty()) {
      return x;
    }
    long m = c == Long.MIN_VALUE ? Long.MAX_VALUE : Math.abs(c) - 1; // |x % c| <= m
    boolean small = x.lo >= -m && x.hi <= m;
    if (!positive) {
      return small ? x : ofLongs(x.lo < 0 ? -m : 0, x.hi > 0 ? m : 0);
    }
    if (c > 0) {
      return x.lo >= 0 && x.hi <= m ? x : ofLongs(0, m);
    }
    return ofLongs(-m, m);
  }

  private static KeyRange arithmetic(DeviceExpr.ArithOp op, KeyRange a, KeyRange b, SqlType t) {
    if (a.floating) {
      double[] c = switch (op) {
        case ADD -> new double[] {a.dlo + b.dlo, a.dhi + b.dhi};
        case SUBTRACT -> new double[] {a.dlo - b.dhi, a.dhi - b.dlo};
        case MULTIPLY -> new double[] {a.dlo * b.dlo, a.dlo * b.dhi, a.dhi * b.dlo, a.dhi * b.dhi};
      };
      double lo = Double.POSITIVE_INFINITY;
      double hi = Double.NEGATIVE_INFINITY;
      for (double v : c) {
        if (Double.isNaN(v)) {
          return full(t); // inf - inf, 0 * inf: NaN somewhere in between
        }
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
      return a.empty() || b.empty() ? ofDoubles(1, 0, a.nan || b.nan) : ofDoubles(lo, hi, a.nan || b.nan);
    }
    if (a.empty() || b.empty()) {
      return ofLongs(0, -1);
    }
    try {
      return switch (op) {
        case ADD -> within(t, Math.addExact(a.lo, b.lo), Math.addExact(a.hi, b.hi));
        case SUBTRACT -> within(t, Math.subtractExact(a.lo, b.hi), Math.subtractExact(a.hi, b.lo));
        case MULTIPLY -> {
          long[] c = {Math.multiplyExact(a.lo, b.lo), Math.multiplyExact(a.lo, b.hi), Math.multiplyExact(a.hi, b.lo),
              Math.multiplyExact(a.hi, b.hi)};
          yield within(t, Math.min(Math.min(c[0], c[1]), Math.min(c[2], c[3])),
              Math.max(Math.max(c[0], c[1]), Math.max(c[2], c[3])));
        }
      };
    } catch (ArithmeticException wraps) {
      return full(t);
    }
  }

  private static KeyRange cast(KeyRange x, SqlType to) {
    boolean integral = to == SqlType.INT || to == SqlType.BIGINT;
    if (x.floating && integral) {
      if (x.empty()) {
        return ofLongs(0, -1);
      }
      // Java's (int) and (long) of a double: monotone, saturating, NaN to 0
      long lo = x.dlo <= x.dhi ? (to == SqlType.INT ? (long) (int) x.dlo : (long) x.dlo) : 0;
      long hi = x.dlo <= x.dhi ? (to == SqlType.INT ? (long) (int) x.dhi : (long) x.dhi) : 0;
      if (!(x.dlo <= x.dhi)) { // only NaN
        return ofLongs(0, 0);
      }
      return x.nan ? ofLongs(Math.min(lo, 0), Math.max(hi, 0)) : ofLongs(lo, hi);
    }
    if (!x.floating && integral) {
      return x.empty() ? x : within(to, x.lo, x.hi);
    }
    if (!x.floating && to == SqlType.DOUBLE) {
      return x.empty() ? ofDoubles(1, 0, false) : ofDoubles((double) x.lo, (double) x.hi, false);
    }
    if (x.floating && to == SqlType.DOUBLE) {
      return x; // a float widened exactly
    }
    return full(to);
  }

  /** {@code [lo, hi]} when type {@code t} holds it without wrapping, else {@code t}'s whole range. */
  private static KeyRange within(SqlType t, long lo, long hi) {
    KeyRange all = full(t);
    return lo >= all.lo && hi <= all.hi ? ofLongs(lo, hi) : all;
  }
}
