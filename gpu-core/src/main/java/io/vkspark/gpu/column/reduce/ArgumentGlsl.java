package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction.Aggregate;
import io.vkspark.gpu.column.reduce.ColumnReduction.Function;
import java.util.ArrayList;
import java.util.List;

/**
 * How a reduction shader reads an aggregate's argument in row {@code vk_row} (in range when
 * {@code vk_in}): a call's result straight from its buffer, or a {@link DeviceExpr} computed per
 * row by {@link DeviceExprGlsl}. Both passes that read rows use it, so a row counts the same way
 * grouped or not.
 *
 * @param prologue lines computing it (an expression: its value and null flag into {@code vk_xv}, {@code vk_xz})
 * @param ok whether the row counts
 * @param load its value
 */
record ArgumentGlsl(List<String> prologue, String ok, String load) {
  /** Whether an argument is more than a call's result (computed per row by {@link DeviceExprGlsl}). */
  static boolean computed(Aggregate a) {
    return a.argument() != null && !(a.argument() instanceof DeviceExpr.Call);
  }

  /** Reads {@code a}'s argument as an int64 ({@code whole}) or a double, its lines indented by {@code indent}. */
  static ArgumentGlsl of(Aggregate a, List<SqlType> types, boolean whole, String indent) {
    String t = whole ? "int64_t" : "double";
    if (a.argument() == null) {
      return new ArgumentGlsl(List.of(), "vk_in", "0");
    }
    if (!computed(a)) {
      int c = a.call();
      return new ArgumentGlsl(List.of(), "vk_in && (((vk_nulls >> " + c + "u) & 1u) == 0u || ((vk_n" + c
          + "[vk_row >> 5u] >> (vk_row & 31u)) & 1u) != 0u)", widen(t, types.get(c), "vk_v" + c + "[vk_row]"));
    }
    List<String> prologue = new ArrayList<>();
    prologue.add(indent + "bool vk_xz = true;");
    prologue.add(indent + t + " vk_xv = " + (whole ? "int64_t(0)" : "0.0lf") + ";");
    prologue.add(indent + "if (vk_in) {");
    DeviceExprGlsl g = new DeviceExprGlsl(types, prologue, indent + "  ", 0);
    int k = g.emit(a.argument());
    prologue.add(indent + "  vk_xz = vk_z" + k + ";");
    if (a.function() != Function.COUNT) {
      prologue.add(indent + "  vk_xv = " + widen(t, a.argument().type(types), "vk_e" + k) + ";");
    }
    prologue.add(indent + "}");
    return new ArgumentGlsl(prologue, "!vk_xz", "vk_xv");
  }

  /** {@code x} of type {@code from} as the accumulator type {@code t}: a float widened exactly ({@code vk_f2d}). */
  private static String widen(String t, SqlType from, String x) {
    return from == SqlType.FLOAT && t.equals("double") ? "vk_f2d(" + x + ")" : t + "(" + x + ")";
  }
}
