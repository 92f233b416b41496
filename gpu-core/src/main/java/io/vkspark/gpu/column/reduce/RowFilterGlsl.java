package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.SqlType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A reduction's row filter in its shaders ({@link ColumnReduction#filtered}): the input columns it
 * reads, bound after the calls the aggregates read (each its values, then its validity, which the
 * host writes only when the column has nulls among the rows dispatched: a bit per input in the
 * params' {@code vk_fnulls}), and the lines that compute {@code vk_pass}, whether row {@code vk_row}
 * is kept: the filter is true, not false nor null ({@link DeviceExprGlsl}, Spark's semantics). Both
 * passes that read rows use it, so a row is kept the same way grouped or not. {@link #NONE} keeps
 * every row and binds nothing.
 */
final class RowFilterGlsl {
  static final RowFilterGlsl NONE = new RowFilterGlsl(null, new int[0], new SqlType[0]);

  /** The filter; null for {@link #NONE}. */
  private final DeviceExpr expr;
  /** The input columns it reads, ascending, and each one's type as the runner takes it. */
  private final int[] inputs;
  private final SqlType[] types;

  private RowFilterGlsl(DeviceExpr expr, int[] inputs, SqlType[] types) {
    this.expr = expr;
    this.inputs = inputs;
    this.types = types;
  }

  /** The input columns read, ascending. */
  int[] inputs() {
    return inputs;
  }

  /** Each input's type, in {@link #inputs} order. */
  SqlType[] types() {
    return types;
  }

  /** The filter {@code e} (null: {@link #NONE}); an input read as two types is refused. */
  static RowFilterGlsl of(DeviceExpr e) {
    if (e == null) {
      return NONE;
    }
    int[] inputs = DeviceExpr.inputs(e).stream().mapToInt(Integer::intValue).toArray();
    SqlType[] types = new SqlType[inputs.length];
    collect(e, inputs, types);
    return new RowFilterGlsl(e, inputs, types);
  }

  private static void collect(DeviceExpr e, int[] inputs, SqlType[] types) {
    if (e instanceof DeviceExpr.Input in) {
      int j = Arrays.binarySearch(inputs, in.column());
      if (types[j] != null && types[j] != in.sourceType()) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "row filter " + e + " reads input " + in.column() + " as "
            + types[j].sqlName() + " and as " + in.sourceType().sqlName() + ".", "read each input column as its one type.");
      }
      types[j] = in.sourceType();
    }
    e.children().forEach(c -> collect(c, inputs, types));
  }

  boolean on() {
    return expr != null;
  }

  /** Declares each input's values and validity from binding {@code b} on; returns the next binding. */
  int bind(List<String> l, int b) {
    for (int j = 0; j < inputs.length; j++) {
      l.add("layout(std430, set = 0, binding = " + b++ + ") readonly buffer VkF" + j + " { " + types[j].bufferElement()
          + " vk_f" + j + "[]; };");
      l.add("layout(std430, set = 0, binding = " + b++ + ") readonly buffer VkFn" + j + " { uint vk_fn" + j + "[]; };");
    }
    return b;
  }

  /** Whether the filter computes with floats or doubles (the shader then needs the expression helpers). */
  boolean floating() {
    return on() && ReductionGlsl.floating(expr, List.of());
  }

  /** Whether the filter takes a remainder (the shader then needs the integer helpers). */
  boolean remainder() {
    return on() && GroupKey.remainder(expr);
  }

  /** Lines declaring {@code bool vk_pass}: row {@code vk_row} is in range ({@code vk_in}) and the filter keeps it. */
  List<String> pass(String indent) {
    List<String> l = new ArrayList<>();
    if (!on()) {
      l.add(indent + "bool vk_pass = vk_in;");
      return l;
    }
    l.add(indent + "bool vk_pass = false;");
    l.add(indent + "if (vk_in) {");
    DeviceExprGlsl g = new DeviceExprGlsl(List.of(), l, indent + "  ", 2000).filterInputs(inputs);
    int k = g.emit(expr);
    l.add(indent + "  vk_pass = !vk_z" + k + " && vk_e" + k + ";");
    l.add(indent + "}");
    return l;
  }
}
