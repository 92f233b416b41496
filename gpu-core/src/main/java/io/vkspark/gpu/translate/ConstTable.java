package io.vkspark.gpu.translate;

import java.lang.reflect.Array;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.objectweb.asm.Type;

/**
 * A constant table: a primitive array whose contents are known when translating, declared once as
 * a GLSL {@code const} array and read with Java's bounds (an index outside it throws, so the row is
 * recomputed). Made from a {@code static final} array field or a field of the UDF object (read by
 * reflection when the UDF is translated: a later change to the array's contents is not seen, which
 * is the translator's contract for every field it reads), or from a local array whose elements are
 * all constants when it is created ({@code int[] t = {1, 10, 100}}) and never written after.
 *
 * @param elem the element type as the JVM reads it ({@code int} for bytes, shorts, chars, booleans)
 * @param values the elements, each a constant of {@code elem}
 */
record ConstTable(String name, JType elem, List<Expr.Const> values) {
  /** Most elements of one table, and of every table of a translation (they take local memory per row). */
  static final int MAX_ELEMENTS = 1024;

  ConstTable {
    values = List.copyOf(values);
  }

  int length() {
    return values.size();
  }

  /** Bytes of device memory the table takes. */
  int bytes() {
    return values.size() * (elem == JType.J || elem == JType.D ? 8 : 4);
  }

  /** The elements of primitive array {@code array} (of element type {@code component}) as constants. */
  static List<Expr.Const> elements(Object array, Type component) {
    List<Expr.Const> out = new ArrayList<>();
    for (int i = 0; i < Array.getLength(array); i++) {
      out.add(Constants.of(Array.get(array, i), component));
    }
    return out;
  }

  /**
   * The GLSL declaration: {@code const int vkt_c0[3] = int[](1, 10, 100);}. Floats and doubles are
   * stored as their bits ({@code uint}, {@code uvec2}): exact, and a NaN or an infinity is a
   * constant expression that way.
   */
  String declaration() {
    String type = switch (elem) {
      case F -> "uint";
      case D -> "uvec2";
      default -> elem.glsl;
    };
    StringBuilder s = new StringBuilder("const ").append(type).append(' ').append(name).append('[')
        .append(values.size()).append("] = ").append(type).append("[](");
    for (int i = 0; i < values.size(); i++) {
      Expr.Const c = values.get(i);
      String v = switch (elem) {
        case F -> Integer.toUnsignedString(Float.floatToRawIntBits((Float) c.value())) + "u";
        case D -> {
          long bits = Double.doubleToRawLongBits((Double) c.value());
          yield "uvec2(" + Integer.toUnsignedString((int) bits) + "u, " + Integer.toUnsignedString((int) (bits >>> 32)) + "u)";
        }
        default -> GlslWriter.literal(c);
      };
      s.append(i == 0 ? "" : ", ").append(v);
    }
    return s.append(");").toString();
  }

  /** Element {@code index} (in bounds) as a value of {@link #elem}. */
  Expr read(Expr index) {
    Expr raw = new Expr.Index(elem, name, index); // the stored element: bits for F and D
    return switch (elem) {
      case F -> Expr.call(JType.F, "uintBitsToFloat", raw);
      case D -> Expr.call(JType.D, "packDouble2x32", raw);
      default -> raw;
    };
  }

  /** Whether {@code o} holds the same elements (its name aside). */
  boolean sameValues(ConstTable o) {
    return elem == o.elem && Objects.equals(values, o.values);
  }
}
