package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import java.util.HashMap;
import java.util.Map;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.IntInsnNode;

/**
 * The array instructions of a method, over constant tables only ({@link ConstTable}): creating a
 * local array with constant elements, storing it in a local, reading an element with Java's bounds
 * and reading the length. Writing into a table, or creating an array of a size or with elements
 * that are not constants, is refused.
 */
final class Arrays {
  private final MethodTranslator t;
  /** Local slots holding a table: each slot always the same one. */
  private final Map<Integer, ConstTable> slots = new HashMap<>();

  Arrays(MethodTranslator t) {
    this.t = t;
  }

  /** {@code newarray}: a local array of a constant size, filled by the constant stores that follow. */
  void newarray(IntInsnNode insn) {
    Val size = t.pop();
    Type component = switch (insn.operand) {
      case Opcodes.T_BOOLEAN -> Type.BOOLEAN_TYPE;
      case Opcodes.T_CHAR -> Type.CHAR_TYPE;
      case Opcodes.T_BYTE -> Type.BYTE_TYPE;
      case Opcodes.T_SHORT -> Type.SHORT_TYPE;
      case Opcodes.T_INT -> Type.INT_TYPE;
      case Opcodes.T_LONG -> Type.LONG_TYPE;
      case Opcodes.T_FLOAT -> Type.FLOAT_TYPE;
      default -> Type.DOUBLE_TYPE;
    };
    if (!(size instanceof Val.Prim p && p.e() instanceof Expr.Const c) || (Integer) c.value() < 0
        || (Integer) c.value() > ConstTable.MAX_ELEMENTS) {
      throw t.refuse("allocates an array whose size is not a constant up to " + ConstTable.MAX_ELEMENTS);
    }
    t.push(new Val.NewArray(new ArrayBuilder(component, (Integer) c.value())));
  }

  /** {@code xastore}: only a constant into an array being created. */
  void store() {
    Val value = t.pop();
    Val index = t.pop();
    Val array = t.stack.pop();
    if (array instanceof Val.NewArray a && index instanceof Val.Prim i && i.e() instanceof Expr.Const ic
        && value instanceof Val.Prim v && v.e() instanceof Expr.Const vc && vc.type() == JType.of(a.builder().component)
        && a.builder().set((Integer) ic.value(), vc)) {
      return;
    }
    throw t.refuse("writes into an array (only arrays whose elements are constants when created translate)");
  }

  /** {@code xaload}: element {@code i}; the row throws where Java's index is out of bounds. */
  void load() {
    Expr i = t.popPrim();
    ConstTable table = table(t.stack.pop());
    t.throwIf(Expr.bin(BinOp.LOR, Expr.bin(BinOp.LT, i, Expr.i(0)), Expr.bin(BinOp.GE, i, Expr.i(table.length()))));
    t.push(t.temp(table.elem(), table.read(i)));
  }

  void length() {
    t.push(Expr.i(table(t.stack.pop()).length()));
  }

  /** {@code astore} of an array into {@code slot}; false when {@code v} is not one. */
  boolean astore(int slot, Val v) {
    if (!(v instanceof Val.Table) && !(v instanceof Val.NewArray)) {
      return false;
    }
    ConstTable table = table(v);
    ConstTable before = slots.putIfAbsent(slot, table);
    if (before != null && !before.equals(table)) {
      throw t.refuse("stores two different arrays in one local variable");
    }
    return true;
  }

  /** {@code aload} of an array from {@code slot}; false when the slot holds none. */
  boolean aload(int slot) {
    ConstTable table = slots.get(slot);
    if (table == null) {
      return false;
    }
    t.push(new Val.Table(table));
    return true;
  }

  /** A field's array value, read now. */
  void constant(Object array, Type type) {
    if (array == null) {
      throw t.refuse("reads a null array");
    }
    Type component = type.getElementType();
    if (type.getDimensions() != 1 || JType.of(component) == null) {
      throw t.refuse("reads an array of " + type.getClassName() + " (tables of primitives translate)");
    }
    if (java.lang.reflect.Array.getLength(array) > ConstTable.MAX_ELEMENTS) {
      throw t.refuse("reads an array of " + java.lang.reflect.Array.getLength(array) + " elements, more than the "
          + ConstTable.MAX_ELEMENTS + " a translated UDF may hold");
    }
    t.push(new Val.Table(tableOf(t.unit.table(JType.of(component), ConstTable.elements(array, component)))));
  }

  private ConstTable table(Val v) {
    if (v instanceof Val.Table tb) {
      return tb.table();
    }
    if (v instanceof Val.NewArray a) {
      return tableOf(a.builder().table(t.unit));
    }
    throw t.refuse("uses an array that is not a constant table");
  }

  private ConstTable tableOf(ConstTable table) {
    if (table == null) {
      throw t.refuse("reads constant arrays of more than " + ConstTable.MAX_ELEMENTS
          + " elements in all (each row keeps its own copy on the device)");
    }
    return table;
  }
}
