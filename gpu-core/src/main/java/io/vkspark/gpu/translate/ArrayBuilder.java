package io.vkspark.gpu.translate;

import java.util.ArrayList;
import java.util.List;
import org.objectweb.asm.Type;

/**
 * A local array being created ({@code newarray} of a constant size): its elements as the constant
 * stores that follow set them. It becomes a {@link ConstTable} when first read or stored in a local;
 * a store after that, or of a value that is not a constant, is refused.
 */
final class ArrayBuilder {
  final Type component;
  private final List<Expr.Const> values = new ArrayList<>();
  private ConstTable table;

  ArrayBuilder(Type component, int size) {
    this.component = component;
    for (int i = 0; i < size; i++) {
      values.add(Expr.zero(JType.of(component)));
    }
  }

  /** Whether element {@code i} may still be set to {@code c}. */
  boolean set(int i, Expr.Const c) {
    if (table != null || i < 0 || i >= values.size()) {
      return false;
    }
    values.set(i, switch (component.getSort()) { // as bastore, castore, sastore narrow
      case Type.BOOLEAN -> Expr.i((Integer) c.value() & 1);
      case Type.BYTE -> Expr.i((byte) (int) (Integer) c.value());
      case Type.CHAR -> Expr.i((char) (int) (Integer) c.value());
      case Type.SHORT -> Expr.i((short) (int) (Integer) c.value());
      default -> c;
    });
    return true;
  }

  /** The finished table (made once, through {@code unit}); null when too large (see {@link Unit#table}). */
  ConstTable table(Unit unit) {
    if (table == null) {
      table = unit.table(JType.of(component), values);
    }
    return table;
  }
}
