package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.ArithOp;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * A per-row expression over kernel results that a {@link ColumnReduction} computes on the device
 * before it aggregates, so that an aggregate of, say, {@code CASE WHEN isnan(x) THEN 0 ELSE x END}
 * over a UDF result {@code x} needs no row on the host. Each node has Spark SQL's (non-ANSI)
 * semantics exactly, nulls included (three-valued {@code AND}/{@code OR}, {@code isnan(null)} is
 * false, comparisons order NaN above everything and equal to itself, {@code -0.0 = 0.0}); integer
 * arithmetic wraps. Only operations whose GPU result is bit-exact on every device are offered: no
 * division, no remainder but by a non-zero integer literal ({@link Remainder}, computed on unsigned
 * magnitudes), no transcendental, and no 32-bit float {@code +}, {@code -}, {@code *} or
 * double-to-float cast: those match Java only where the device keeps float32 subnormals and rounds
 * to nearest, and the H200 flushes them (no {@code shaderDenormPreserveFloat32}; see
 * docs/GLSL-SEMANTICS.md, "Expressions computed in the reduction"). Floats take part as values
 * (selected by {@code IF}, {@code coalesce}, {@code nanvl}), negated by their sign bit, and widened
 * to double from their bits for comparisons, casts and every aggregate, so that a float result is
 * summed exactly as Spark sums it: {@code (double) f} added in double.
 *
 * <p>Types are the {@link SqlType}s {@code INT}, {@code BIGINT}, {@code FLOAT}, {@code DOUBLE} and
 * {@code BOOLEAN}; operands of one node have one type (as Spark's analyzer makes them). {@link
 * #type} checks a tree against the runner's call result types. Immutable, serializable, and its
 * {@code toString} identifies it (a part of the reduction's cache key).
 */
public sealed interface DeviceExpr extends Serializable {
  /** The value types an expression may have. */
  Set<SqlType> TYPES = Set.of(SqlType.INT, SqlType.BIGINT, SqlType.FLOAT, SqlType.DOUBLE, SqlType.BOOLEAN);

  /** The direct operands, in order. */
  List<DeviceExpr> children();

  /**
   * The expression's type over calls whose results have {@code callTypes}.
   *
   * @throws GpuException INVALID_ARGUMENT for a call that does not exist or whose result is not
   *     int, bigint, float or double, or operands of a type the node does not take
   */
  SqlType type(List<SqlType> callTypes);

  /** The calls the expression reads, ascending. */
  default Set<Integer> calls() {
    Set<Integer> out = new TreeSet<>();
    collectCalls(this, out);
    return out;
  }

  private static void collectCalls(DeviceExpr e, Set<Integer> out) {
    if (e instanceof Call c) {
      out.add(c.call());
    }
    e.children().forEach(x -> collectCalls(x, out));
  }

  /** Comparison operators: Spark's {@code =}, {@code <=>}, {@code <}, {@code <=}, {@code >}, {@code >=}. */
  enum CompareOp { EQ, EQ_NULL_SAFE, LT, LE, GT, GE }

  /** The result of call {@code call} (its index in the runner's calls); null where the kernel's result is. */
  record Call(int call) implements DeviceExpr {
    public Call {
      if (call < 0) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "an expression reads call " + call + ".",
            "name a call of the runner by its index (0 or more).");
      }
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of();
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      if (call >= callTypes.size()) {
        throw GpuException.of(Code.INVALID_ARGUMENT, this + " reads call " + call + " of " + callTypes.size() + ".",
            "name a call of the runner.");
      }
      SqlType t = callTypes.get(call);
      if (!ColumnReduction.reducible(t)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, this + " reads a " + t.sqlName() + " result.",
            "reduce int, bigint, float or double results on the device; others on the host.");
      }
      return t;
    }
  }

  /**
   * A constant: {@code value} an Integer, Long, Float, Double or Boolean as {@code type} says, or
   * null for SQL NULL of that type.
   */
  record Literal(SqlType type, Object value) implements DeviceExpr {
    public Literal {
      Objects.requireNonNull(type, "type");
      Class<?> want = switch (type) {
        case INT -> Integer.class;
        case BIGINT -> Long.class;
        case FLOAT -> Float.class;
        case DOUBLE -> Double.class;
        case BOOLEAN -> Boolean.class;
        default -> null;
      };
      if (want == null || (value != null && value.getClass() != want)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "a " + type.sqlName() + " literal of "
            + (value == null ? "null" : value.getClass().getSimpleName() + " " + value) + ".",
            "pass an Integer, Long, Float, Double or Boolean of the literal's type, or null.");
      }
    }

    /** SQL NULL of {@code type}. */
    public static Literal nullOf(SqlType type) {
      return new Literal(type, null);
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of();
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      return type;
    }
  }

  /** {@code isnan(child)}: a float or double; false for null (never null itself). */
  record IsNaN(DeviceExpr child) implements DeviceExpr {
    public IsNaN {
      Objects.requireNonNull(child, "child");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(child);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      SqlType t = child.type(callTypes);
      if (t != SqlType.FLOAT && t != SqlType.DOUBLE) {
        throw wrong(this, "a float or double", t);
      }
      return SqlType.BOOLEAN;
    }
  }

  /** {@code child IS NULL} ({@code negated}: {@code IS NOT NULL}); never null. */
  record IsNull(DeviceExpr child, boolean negated) implements DeviceExpr {
    public IsNull {
      Objects.requireNonNull(child, "child");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(child);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      child.type(callTypes);
      return SqlType.BOOLEAN;
    }
  }

  /** {@code NOT child}: null for null. */
  record Not(DeviceExpr child) implements DeviceExpr {
    public Not {
      Objects.requireNonNull(child, "child");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(child);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      return same(this, SqlType.BOOLEAN, callTypes, child);
    }
  }

  /** {@code left AND right} ({@code or}: {@code OR}), three-valued as in SQL. */
  record Logic(boolean or, DeviceExpr left, DeviceExpr right) implements DeviceExpr {
    public Logic {
      Objects.requireNonNull(left, "left");
      Objects.requireNonNull(right, "right");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(left, right);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      return same(this, SqlType.BOOLEAN, callTypes, left, right);
    }
  }

  /** {@code IF(condition, then, otherwise)}: {@code otherwise} where the condition is false or null. */
  record If(DeviceExpr condition, DeviceExpr then, DeviceExpr otherwise) implements DeviceExpr {
    public If {
      Objects.requireNonNull(condition, "condition");
      Objects.requireNonNull(then, "then");
      Objects.requireNonNull(otherwise, "otherwise");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(condition, then, otherwise);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      same(this, SqlType.BOOLEAN, callTypes, condition);
      return same(this, null, callTypes, then, otherwise);
    }
  }

  /** {@code coalesce(children...)}: the first non-null, null when all are. */
  record Coalesce(List<DeviceExpr> values) implements DeviceExpr {
    public Coalesce {
      values = List.copyOf(values);
      if (values.isEmpty()) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "coalesce of nothing.", "pass one or more values.");
      }
    }

    @Override
    public List<DeviceExpr> children() {
      return values;
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      return same(this, null, callTypes, values.toArray(DeviceExpr[]::new));
    }
  }

  /** {@code nanvl(left, right)}: null when left is, {@code right} when left is NaN, else left. */
  record NaNvl(DeviceExpr left, DeviceExpr right) implements DeviceExpr {
    public NaNvl {
      Objects.requireNonNull(left, "left");
      Objects.requireNonNull(right, "right");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(left, right);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      SqlType t = same(this, null, callTypes, left, right);
      if (t != SqlType.FLOAT && t != SqlType.DOUBLE) {
        throw wrong(this, "floats or doubles", t);
      }
      return t;
    }
  }

  /**
   * A comparison of two values of one type in Spark's order (NaN above everything and equal to
   * NaN, {@code -0.0 = 0.0}, {@code false < true}); null when an operand is, except {@code <=>}.
   */
  record Compare(CompareOp op, DeviceExpr left, DeviceExpr right) implements DeviceExpr {
    public Compare {
      Objects.requireNonNull(op, "op");
      Objects.requireNonNull(left, "left");
      Objects.requireNonNull(right, "right");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(left, right);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      same(this, null, callTypes, left, right);
      return SqlType.BOOLEAN;
    }
  }

  /** {@code left op right} of two int, bigint or double values (wrapping integers); null when an operand is. */
  record Arithmetic(ArithOp op, DeviceExpr left, DeviceExpr right) implements DeviceExpr {
    public Arithmetic {
      Objects.requireNonNull(op, "op");
      Objects.requireNonNull(left, "left");
      Objects.requireNonNull(right, "right");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(left, right);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      SqlType t = same(this, null, callTypes, left, right);
      if (t != SqlType.INT && t != SqlType.BIGINT && t != SqlType.DOUBLE) {
        throw wrong(this, "int, bigint or double operands (32-bit float arithmetic may flush subnormals on a GPU)", t);
      }
      return t;
    }
  }

  /**
   * {@code -child} of an int, bigint (wrapping: {@code -MIN = MIN}), float or double (the sign
   * flipped, NaN and zeros included, as Java's); null for null.
   */
  record Negate(DeviceExpr child) implements DeviceExpr {
    public Negate {
      Objects.requireNonNull(child, "child");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(child);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      SqlType t = child.type(callTypes);
      if (t == SqlType.BOOLEAN) {
        throw wrong(this, "an int, bigint, float or double", t);
      }
      return t;
    }
  }

  /**
   * {@code CAST(child AS to)} as Spark's non-ANSI cast: integer narrowing keeps the low bits,
   * float/double to integer truncates toward zero, saturates and maps NaN to 0, numbers to boolean
   * are {@code != 0} (NaN: true), booleans to numbers 1 and 0. Double to float is not offered.
   */
  record Cast(DeviceExpr child, SqlType to) implements DeviceExpr {
    public Cast {
      Objects.requireNonNull(child, "child");
      Objects.requireNonNull(to, "to");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(child);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      SqlType from = child.type(callTypes);
      if (!TYPES.contains(to) || (from == SqlType.DOUBLE && to == SqlType.FLOAT)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, this + " casts " + from.sqlName() + " to " + to.sqlName() + ".",
            "cast between int, bigint, float, double and boolean on the device (not double to float).");
      }
      return to;
    }
  }

  /**
   * Runner input column {@code column} as it is on the device, for a reduction's row filter
   * ({@link ColumnReduction#filtered}): of {@code sourceType} int, bigint, float, double, boolean, date
   * (read as its epoch day, an int) or timestamp (its microseconds, a bigint); null where the input is.
   * A date or timestamp takes part only in comparisons with values of its own kind (as Spark's
   * analyzer types them), where the integer order is the date's and the timestamp's.
   */
  record Input(int column, SqlType sourceType) implements DeviceExpr {
    /** The input types a filter reads. */
    public static final Set<SqlType> SOURCES = Set.of(SqlType.INT, SqlType.BIGINT, SqlType.FLOAT, SqlType.DOUBLE,
        SqlType.BOOLEAN, SqlType.DATE, SqlType.TIMESTAMP);

    public Input {
      Objects.requireNonNull(sourceType, "sourceType");
      if (column < 0 || !SOURCES.contains(sourceType)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "a filter reads input " + column + " of type " + sourceType.sqlName() + ".",
            "read a runner input column (0 or more) of type int, bigint, float, double, boolean, date or timestamp.");
      }
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of();
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      return sourceType == SqlType.DATE ? SqlType.INT : sourceType == SqlType.TIMESTAMP ? SqlType.BIGINT : sourceType;
    }
  }

  /** The input columns {@code e} reads ({@link Input}), ascending. */
  static Set<Integer> inputs(DeviceExpr e) {
    Set<Integer> out = new TreeSet<>();
    collectInputs(e, out);
    return out;
  }

  private static void collectInputs(DeviceExpr e, Set<Integer> out) {
    if (e instanceof Input i) {
      out.add(i.column());
    }
    e.children().forEach(x -> collectInputs(x, out));
  }

  /**
   * The value a grouped reduction's key is computed from ({@link GroupKey}): a runner input column
   * or a call's result, of an int, bigint, float, double or date (a date as its epoch day, only as
   * the key itself); null where that value is.
   */
  record KeySource(SqlType type) implements DeviceExpr {
    public KeySource {
      Objects.requireNonNull(type, "type");
      if (!(TYPES.contains(type) || type == SqlType.DATE) || type == SqlType.BOOLEAN) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "a grouping key computed from a " + type.sqlName() + " value.",
            "group by int, bigint, float, double or date values (or expressions over them) on the device.");
      }
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of();
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      return type;
    }
  }

  /**
   * {@code child % divisor} with Java's (and Spark's) semantics, the sign of the dividend
   * ({@code MIN % -1 = 0}), or with {@code positive} Spark's {@code pmod(child, divisor)}
   * ({@code r = child % divisor; r < 0 ? (r + divisor) % divisor : r}, wrapping as Spark's does);
   * an int or bigint child, a non-zero literal divisor of the child's type (so it never fails, in
   * any mode, and is exact on every device: it is computed on unsigned magnitudes, where GLSL
   * leaves a signed {@code %} of negative operands undefined); null for null.
   */
  record Remainder(DeviceExpr child, long divisor, boolean positive) implements DeviceExpr {
    public Remainder {
      Objects.requireNonNull(child, "child");
      if (divisor == 0) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "a remainder by the literal 0.",
            "leave a division by zero to Spark (null or an error, as its mode says).");
      }
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(child);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      SqlType t = child.type(callTypes);
      if (t != SqlType.INT && t != SqlType.BIGINT) {
        throw wrong(this, "an int or bigint", t);
      }
      if (t == SqlType.INT && (divisor < Integer.MIN_VALUE || divisor > Integer.MAX_VALUE)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, this + " divides an int by " + divisor + ", not an int.",
            "cast operands to one type first, as Spark's analyzer does.");
      }
      return t;
    }
  }

  /**
   * {@code floor(child)} of a double, as a double (exact: an integral value, NaN and infinities
   * as they are); Spark's {@code floor} of a double is {@code CAST(Floor(x) AS BIGINT)}. Null for null.
   */
  record Floor(DeviceExpr child) implements DeviceExpr {
    public Floor {
      Objects.requireNonNull(child, "child");
    }

    @Override
    public List<DeviceExpr> children() {
      return List.of(child);
    }

    @Override
    public SqlType type(List<SqlType> callTypes) {
      return same(this, SqlType.DOUBLE, callTypes, child);
    }
  }

  /** The one type of {@code operands} ({@code want} when not null), else INVALID_ARGUMENT naming {@code node}. */
  private static SqlType same(DeviceExpr node, SqlType want, List<SqlType> callTypes, DeviceExpr... operands) {
    SqlType t = want;
    for (DeviceExpr o : operands) {
      SqlType u = o.type(callTypes);
      if (t == null) {
        t = u;
      } else if (u != t) {
        throw wrong(node, t.sqlName() + " operands", u);
      }
    }
    return t;
  }

  private static GpuException wrong(DeviceExpr node, String want, SqlType got) {
    return GpuException.of(Code.INVALID_ARGUMENT, node + " takes " + want + ", not " + got.sqlName() + ".",
        "cast operands to one supported type first, as Spark's analyzer does.");
  }
}
