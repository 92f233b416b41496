package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * The key of a grouped reduction ({@link ColumnReduction#grouped}), computed on the device: an
 * expression over one source value per row, a runner input column or a call's result. The source
 * as it is ({@code GROUP BY bucket}), or {@code id % 16}, {@code pmod(id, 16)}, {@code (id + 3) * 2},
 * {@code CAST(id % 16 AS INT)}, {@code CAST(floor(s * 0.1D) AS BIGINT)}, {@code f(x) % 8}: the shader
 * computes it per row ({@link DeviceExprGlsl}, with the {@link DeviceExpr.KeySource} read from the
 * source's buffer), so a key that is an expression needs no host column and no row on the host.
 *
 * <p>Its range per batch: when the expression alone bounds it within the slots ({@link #staticRange}:
 * a remainder by a literal), no value is read at all; otherwise the runner reads the source input's
 * values on the host and bounds the expression over their range ({@link KeyRange}), as for a plain
 * column. A call's result cannot be read there, so a key over a call reduces only when the
 * expression bounds it.
 *
 * <p>The key is null exactly where the source is: the expression's nodes keep a value non-null
 * ({@link #check}).
 *
 * @param input the runner input column the key is computed from, -1 when it is a call's result
 * @param call the call whose result the key is computed from, -1 when it is an input column
 * @param sourceType the source's type: the input's as the runner takes it, or the call's result
 * @param expr the key over {@link DeviceExpr.KeySource} of {@code sourceType}: int, bigint or date
 *     (a date only as the source itself)
 */
public record GroupKey(int input, int call, SqlType sourceType, DeviceExpr expr) implements Serializable {
  public GroupKey {
    Objects.requireNonNull(sourceType, "sourceType");
    Objects.requireNonNull(expr, "expr");
    if ((input < 0) == (call < 0)) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a grouping key read from input " + input + " and call " + call + ".",
          "compute the key from one runner input column or one call's result.");
    }
  }

  /** The key that is input column {@code input} itself, of {@code type} (int, bigint or date). */
  public static GroupKey column(int input, SqlType type) {
    return new GroupKey(input, -1, type, new DeviceExpr.KeySource(type));
  }

  /** The key {@code expr} computed from input column {@code input} of {@code sourceType}. */
  public static GroupKey ofInput(int input, SqlType sourceType, DeviceExpr expr) {
    return new GroupKey(input, -1, sourceType, expr);
  }

  /** The key {@code expr} computed from the result of call {@code call}, of {@code resultType}. */
  public static GroupKey ofCall(int call, SqlType resultType, DeviceExpr expr) {
    return new GroupKey(-1, call, resultType, expr);
  }

  /** Whether the key is the source itself. */
  public boolean plain() {
    return expr instanceof DeviceExpr.KeySource;
  }

  /** The key's type: int, bigint, or date for a plain date source. */
  public SqlType type() {
    return expr.type(List.of());
  }

  /**
   * Checks the key: the expression reads only its source (of {@link #sourceType}), has the nodes
   * that keep a non-null value non-null, and gives an int, bigint or (plain) date.
   *
   * @throws GpuException INVALID_ARGUMENT naming what is wrong
   */
  void check() {
    checkNodes(expr);
    SqlType t;
    try {
      t = type();
    } catch (GpuException e) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "grouping key " + expr + ": " + e.getMessage(),
          "group by an int or bigint expression of its one source.");
    }
    if (!ColumnReduction.groupable(t) || (t == SqlType.DATE && !plain())) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "grouping key " + expr + " is a " + t.sqlName() + ".",
          "group by an int, bigint or date value.");
    }
  }

  private void checkNodes(DeviceExpr e) {
    boolean ok = e instanceof DeviceExpr.KeySource k ? k.type() == sourceType
        : e instanceof DeviceExpr.Literal l ? l.value() != null
        : e instanceof DeviceExpr.Remainder || e instanceof DeviceExpr.Floor || e instanceof DeviceExpr.Arithmetic
            || e instanceof DeviceExpr.Negate || e instanceof DeviceExpr.Cast;
    if (!ok) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "grouping key " + expr + " has " + e + ".",
          "compute keys from their one source of " + sourceType.sqlName() + " with %, pmod, +, -, * by non-null"
              + " literals, negation, floor and casts.");
    }
    e.children().forEach(this::checkNodes);
  }

  /** Whether any node of the key computes with floats or doubles (the shader then needs their helpers). */
  boolean floating() {
    return floating(expr);
  }

  private static boolean floating(DeviceExpr e) {
    SqlType t = e.type(List.of());
    return t == SqlType.FLOAT || t == SqlType.DOUBLE || e.children().stream().anyMatch(GroupKey::floating);
  }

  /** Whether the key takes a remainder (the shader then needs {@link DeviceExprGlsl#INTEGER_HELPERS}). */
  boolean remainder() {
    return remainder(expr);
  }

  static boolean remainder(DeviceExpr e) {
    return e instanceof DeviceExpr.Remainder || e.children().stream().anyMatch(GroupKey::remainder);
  }

  /** The key's range whatever the source holds, when the expression bounds it (e.g. {@code x % 16}). */
  public KeyRange staticRange() {
    return KeyRange.of(expr, KeyRange.full(sourceType));
  }

  /** The key's range when the source's values lie in {@code source}. */
  public KeyRange range(KeyRange source) {
    return KeyRange.of(expr, source);
  }

  @Override
  public String toString() {
    return expr + " of " + (input >= 0 ? "input " + input : "call " + call);
  }
}
