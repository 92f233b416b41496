package io.vkspark.spark.agg;

import io.vkspark.spark.shim.Scala;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.ArithOp;
import io.vkspark.gpu.column.reduce.DeviceExpr;
import io.vkspark.gpu.column.reduce.KeyRange;
import io.vkspark.gpu.column.SqlType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntFunction;
import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.CaseWhen;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.EvalMode$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Floor;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.In;
import org.apache.spark.sql.catalyst.expressions.InSet;
import org.apache.spark.sql.catalyst.expressions.IsNaN;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.LessThan;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Multiply;
import org.apache.spark.sql.catalyst.expressions.NaNvl;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.Pmod;
import org.apache.spark.sql.catalyst.expressions.Remainder;
import org.apache.spark.sql.catalyst.expressions.Subtract;
import org.apache.spark.sql.catalyst.expressions.UnaryMinus;
import org.apache.spark.sql.catalyst.expressions.UnaryPositive;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.Tuple2;

/**
 * Catalyst expressions as {@link DeviceExpr}s, for a fused aggregate's arguments that are computed
 * per row over GPU UDF results ({@code sum(CASE WHEN isnan(x) THEN 0D ELSE x END)}): then the GPU
 * computes them in its reduction and no row comes back. Translates only what the device reproduces
 * exactly (see {@link DeviceExpr}): deterministic expressions of int, bigint, float, double and
 * boolean built from columns on the device, literals, {@code isnan}, {@code IS [NOT] NULL},
 * {@code NOT}/{@code AND}/{@code OR}, {@code IF}/{@code CASE WHEN}, {@code coalesce}, {@code nanvl},
 * comparisons, {@code +}, {@code -}, {@code *} (integers only where they wrap, not in ANSI mode; no
 * float arithmetic: a device that flushes float32 subnormals, as the H200 does, would differ from
 * Java), negation (floats too: a sign flip), casts (narrowing ones only in legacy mode, or where the
 * value cannot overflow; float to double exact), {@code %} and {@code pmod} by a non-zero integer
 * literal, and {@code floor} of a double (also what a grouping key is computed with, {@link #key}). So {@code sum(f(x))} of a float UDF, which Spark computes as a double sum of the
 * widened floats, is reduced on the GPU, as are {@code sum(-f(x))} and {@code max(coalesce(f(x), 0F))};
 * {@code sum(f(x) * 2F)} folds on the host. Anything else, a column of the GPU node's child
 * included (it is not on the device), is not translatable.
 */
public final class DeviceExprs {
  private DeviceExprs() {}

  /**
   * {@code e} as a device expression, empty when any part of it is not translatable.
   *
   * @param columns the device expression of each {@link BoundReference} ordinal, null for a column not on the device
   */
  static Optional<DeviceExpr> translate(Expression e, IntFunction<DeviceExpr> columns) {
    if (!e.deterministic()) {
      return Optional.empty();
    }
    try {
      return Optional.ofNullable(of(e, columns));
    } catch (GpuException ill) {
      return Optional.empty(); // a tree gpu-core refuses (should the analyzer ever leave mixed operand types)
    }
  }

  /**
   * {@code bound}, a grouping key computed per row from the column with ordinal {@code source}
   * alone, as a device expression over {@code keySource}; empty when not translatable. Narrowing
   * integer casts are taken in ANSI mode too where the value cannot overflow
   * ({@code CAST(id % 16 AS INT)}).
   */
  static Optional<DeviceExpr> key(Expression bound, int source, DeviceExpr.KeySource keySource) {
    return translate(bound, o -> o == source ? keySource : null);
  }

  /** The device type of a Spark type, null for others. */
  static SqlType type(DataType t) {
    return t.equals(DataTypes.IntegerType) ? SqlType.INT : t.equals(DataTypes.LongType) ? SqlType.BIGINT
        : t.equals(DataTypes.FloatType) ? SqlType.FLOAT : t.equals(DataTypes.DoubleType) ? SqlType.DOUBLE
        : t.equals(DataTypes.BooleanType) ? SqlType.BOOLEAN : null;
  }

  private static boolean legacy(Object evalMode) {
    return EvalMode$.MODULE$.LEGACY().equals(evalMode);
  }

  private static boolean integral(SqlType t) {
    return t == SqlType.INT || t == SqlType.BIGINT;
  }

  /**
   * The device type of a column or literal of Spark type {@code t}: {@link #type}, and a date as its
   * epoch day (an int) and a timestamp as its microseconds (a bigint), which only take part in
   * comparisons with their own kind (Spark's analyzer types both sides alike), where the integer
   * order is theirs. Null for others.
   */
  static SqlType valueType(DataType t) {
    SqlType out = type(t);
    return out != null ? out : t.equals(DataTypes.DateType) ? SqlType.INT
        : t.equals(DataTypes.TimestampType) ? SqlType.BIGINT : null;
  }

  /** Most values of an {@code IN} list translated (one comparison each). */
  static final int MAX_IN_VALUES = 64;

  /** The translation, null when not translatable. */
  private static DeviceExpr of(Expression e, IntFunction<DeviceExpr> columns) {
    if (e instanceof BoundReference b) {
      return valueType(b.dataType()) == null ? null : columns.apply(b.ordinal()); // a date or timestamp: its column's
    }
    if (e instanceof Literal l) {
      SqlType lt = valueType(l.dataType());
      return lt == null ? null : new DeviceExpr.Literal(lt, l.value());
    }
    SqlType t = type(e.dataType());
    if (t == null) {
      return null;
    }
    if (e instanceof In in) {
      return in(in.value(), Scala.list(in.list()), columns);
    }
    if (e instanceof InSet in) {
      SqlType vt = valueType(in.child().dataType());
      if (vt == null || vt == SqlType.FLOAT || vt == SqlType.DOUBLE) {
        return null; // a hash set of doubles: -0.0 and 0.0 are two values there
      }
      List<Expression> values = new ArrayList<>();
      scala.collection.Iterator<Object> it = in.hset().iterator();
      while (it.hasNext()) {
        values.add(Literal.create(it.next(), in.child().dataType()));
      }
      return in(in.child(), values, columns);
    }
    if (e instanceof IsNaN n) {
      DeviceExpr c = of(n.child(), columns);
      return c == null ? null : new DeviceExpr.IsNaN(c);
    }
    if (e instanceof IsNull n) {
      DeviceExpr c = of(n.child(), columns); // a child of vkspark's types only
      return c == null ? null : new DeviceExpr.IsNull(c, false);
    }
    if (e instanceof IsNotNull n) {
      DeviceExpr c = of(n.child(), columns); // a child of vkspark's types only
      return c == null ? null : new DeviceExpr.IsNull(c, true);
    }
    if (e instanceof Not n) {
      DeviceExpr c = of(n.child(), columns);
      return c == null ? null : new DeviceExpr.Not(c);
    }
    if (e instanceof And a) {
      return logic(false, a.left(), a.right(), columns);
    }
    if (e instanceof Or o) {
      return logic(true, o.left(), o.right(), columns);
    }
    if (e instanceof If f) {
      DeviceExpr c = of(f.predicate(), columns);
      DeviceExpr x = of(f.trueValue(), columns);
      DeviceExpr y = of(f.falseValue(), columns);
      return c == null || x == null || y == null ? null : new DeviceExpr.If(c, x, y);
    }
    if (e instanceof CaseWhen w) {
      DeviceExpr acc = w.elseValue().isDefined() ? of(w.elseValue().get(), columns) : DeviceExpr.Literal.nullOf(t);
      List<Tuple2<Expression, Expression>> branches = Scala.list(w.branches());
      for (int i = branches.size() - 1; i >= 0 && acc != null; i--) {
        DeviceExpr c = of(branches.get(i)._1(), columns);
        DeviceExpr v = of(branches.get(i)._2(), columns);
        acc = c == null || v == null ? null : new DeviceExpr.If(c, v, acc);
      }
      return acc;
    }
    if (e instanceof Coalesce c) {
      List<DeviceExpr> values = new ArrayList<>();
      for (Expression x : Scala.list(c.children())) {
        DeviceExpr d = of(x, columns);
        if (d == null) {
          return null;
        }
        values.add(d);
      }
      return values.isEmpty() ? null : new DeviceExpr.Coalesce(values);
    }
    if (e instanceof NaNvl n) {
      DeviceExpr x = of(n.left(), columns);
      DeviceExpr y = of(n.right(), columns);
      return x == null || y == null ? null : new DeviceExpr.NaNvl(x, y);
    }
    if (e instanceof BinaryComparison c) {
      DeviceExpr.CompareOp op = c instanceof EqualTo ? DeviceExpr.CompareOp.EQ
          : c instanceof EqualNullSafe ? DeviceExpr.CompareOp.EQ_NULL_SAFE : c instanceof LessThan ? DeviceExpr.CompareOp.LT
          : c instanceof LessThanOrEqual ? DeviceExpr.CompareOp.LE : c instanceof GreaterThan ? DeviceExpr.CompareOp.GT
          : c instanceof GreaterThanOrEqual ? DeviceExpr.CompareOp.GE : null;
      DeviceExpr x = op == null ? null : of(c.left(), columns);
      DeviceExpr y = x == null ? null : of(c.right(), columns);
      return y == null ? null : new DeviceExpr.Compare(op, x, y);
    }
    if (e instanceof Add a) {
      return arithmetic(ArithOp.ADD, t, a.evalMode(), a.left(), a.right(), columns);
    }
    if (e instanceof Subtract s) {
      return arithmetic(ArithOp.SUBTRACT, t, s.evalMode(), s.left(), s.right(), columns);
    }
    if (e instanceof Multiply m) {
      return arithmetic(ArithOp.MULTIPLY, t, m.evalMode(), m.left(), m.right(), columns);
    }
    if (e instanceof UnaryMinus m) {
      if (integral(t) && m.failOnError()) {
        return null; // ANSI integral: must fail on -MIN_VALUE (a float is negated by its sign bit, exact everywhere)
      }
      DeviceExpr c = of(m.child(), columns);
      return c == null ? null : new DeviceExpr.Negate(c);
    }
    if (e instanceof UnaryPositive p) {
      return of(p.child(), columns);
    }
    if (e instanceof Cast c) {
      SqlType from = type(c.child().dataType());
      if (from == null || (from == SqlType.DOUBLE && t == SqlType.FLOAT)) {
        return null;
      }
      DeviceExpr x = of(c.child(), columns);
      if (x == null || (!legacy(c.evalMode()) && !castNeverFails(from, t) && !fitsWithoutFailing(x, t))) {
        return null;
      }
      return new DeviceExpr.Cast(x, t);
    }
    if (e instanceof Remainder r) {
      return remainder(r.left(), r.right(), false, t, columns);
    }
    if (e instanceof Pmod p) {
      return remainder(p.left(), p.right(), true, t, columns);
    }
    if (e instanceof Floor f) {
      SqlType from = type(f.child().dataType());
      DeviceExpr x = from == SqlType.DOUBLE || from == SqlType.BIGINT ? of(f.child(), columns) : null;
      // Spark's floor of a double: (long) Math.floor(x); of a bigint: the value itself
      return x == null ? null : from == SqlType.BIGINT ? x : new DeviceExpr.Cast(new DeviceExpr.Floor(x), SqlType.BIGINT);
    }
    return null;
  }

  /**
   * Casts that cannot fail nor give null in ANSI or TRY mode and mean the same as in legacy mode:
   * widening ones, and between numbers and booleans.
   */
  private static boolean castNeverFails(SqlType from, SqlType to) {
    return from == to || from == SqlType.BOOLEAN || to == SqlType.BOOLEAN
        || (from == SqlType.INT && to != SqlType.BOOLEAN) || (from == SqlType.BIGINT && to != SqlType.INT)
        || (from == SqlType.FLOAT && to == SqlType.DOUBLE);
  }

  /**
   * An integral narrowing cast of {@code x} that cannot overflow, in any mode: {@code x}'s values,
   * whatever its key source holds, fit {@code to} ({@code CAST(id % 16 AS INT)}). Only for
   * expressions over a grouping key's source.
   */
  private static boolean fitsWithoutFailing(DeviceExpr x, SqlType to) {
    if (to != SqlType.INT) {
      return false;
    }
    try {
      KeyRange r = KeyRange.of(x, KeyRange.full(source(x)));
      return !r.floating() && (r.empty() || (r.lo() >= Integer.MIN_VALUE && r.hi() <= Integer.MAX_VALUE));
    } catch (GpuException | IllegalArgumentException notAKey) {
      return false; // over call results, or a node without bounds
    }
  }

  /** The key source's type of {@code x}; throws IllegalArgumentException when it has none. */
  private static SqlType source(DeviceExpr x) {
    if (x instanceof DeviceExpr.KeySource k) {
      return k.type();
    }
    for (DeviceExpr c : x.children()) {
      try {
        return source(c);
      } catch (IllegalArgumentException none) {
        // the next child
      }
    }
    throw new IllegalArgumentException("no key source in " + x);
  }

  /**
   * {@code left % right} (or {@code pmod}) by a non-zero integral literal: never fails nor gives
   * null, in any mode; anything else is not translatable.
   */
  private static DeviceExpr remainder(Expression left, Expression right, boolean positive, SqlType t,
                                      IntFunction<DeviceExpr> columns) {
    if (!integral(t) || !(right instanceof Literal l) || !(l.value() instanceof Number n) || n.longValue() == 0
        || !t.equals(type(left.dataType()))) {
      return null;
    }
    DeviceExpr x = of(left, columns);
    return x == null ? null : new DeviceExpr.Remainder(x, n.longValue(), positive);
  }

  /**
   * {@code value IN (list)} of literals as comparisons joined by {@code OR}: true where one equals
   * (Spark's equality: NaN equals NaN, {@code -0.0} equals {@code 0.0}), else null where the value or
   * a listed value is null, else false; as Spark's {@code In}. Null past {@link #MAX_IN_VALUES}.
   */
  private static DeviceExpr in(Expression value, List<Expression> list, IntFunction<DeviceExpr> columns) {
    if (list.isEmpty() || list.size() > MAX_IN_VALUES || !list.stream().allMatch(x -> x instanceof Literal)) {
      return null;
    }
    DeviceExpr v = of(value, columns);
    DeviceExpr out = null;
    for (Expression x : list) {
      DeviceExpr c = v == null ? null : of(x, columns);
      if (c == null) {
        return null;
      }
      DeviceExpr eq = new DeviceExpr.Compare(DeviceExpr.CompareOp.EQ, v, c);
      out = out == null ? eq : new DeviceExpr.Logic(true, out, eq);
    }
    return out;
  }

  private static DeviceExpr logic(boolean or, Expression l, Expression r, IntFunction<DeviceExpr> columns) {
    DeviceExpr x = of(l, columns);
    DeviceExpr y = x == null ? null : of(r, columns);
    return y == null ? null : new DeviceExpr.Logic(or, x, y);
  }

  private static DeviceExpr arithmetic(ArithOp op, SqlType t, Object evalMode, Expression l, Expression r,
                                       IntFunction<DeviceExpr> columns) {
    if (t == SqlType.FLOAT || t == SqlType.BOOLEAN || (integral(t) && !legacy(evalMode))) {
      return null; // float: may flush subnormals on a GPU; ANSI/TRY integral: must fail or give null on overflow
    }
    DeviceExpr x = of(l, columns);
    DeviceExpr y = x == null ? null : of(r, columns);
    return y == null ? null : new DeviceExpr.Arithmetic(op, x, y);
  }
}
