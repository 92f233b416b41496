package io.vkspark.gpu.translate;

import io.vkspark.gpu.column.SqlType;
import java.util.LinkedHashSet;
import java.util.Set;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.analysis.BasicValue;
import org.objectweb.asm.tree.analysis.Frame;

/**
 * The result type of a translated method. A lambda javac compiled against a wildcard interface
 * ({@code functions.udf((Long x) -> x * x, DataTypes.LongType)}: {@code UDF1<?, ?>}) returns
 * {@code Object}: its real type is the box every {@code areturn} returns, read from the analysed
 * frames, or the SQL type the caller registered the UDF with.
 */
final class Results {
  private Results() {}

  /** Types a box is also declared as: {@code Object}, {@code Number}, ... */
  private static final Set<String> ERASED = Set.of("java/lang/Object", "java/lang/Number", "java/lang/Comparable",
      "java/io/Serializable", "java/lang/constant/Constable");

  /**
   * The box {@code main} returns where its descriptor says only {@code Object}; null when the
   * descriptor names a primitive or a box itself.
   *
   * @param expected the SQL type the UDF is registered with, or null
   */
  static ObjType erased(Unit.Method main, String source, SqlType expected) {
    Type rt = Type.getReturnType(main.node().desc);
    if (rt.getSort() != Type.OBJECT || !ERASED.contains(rt.getInternalName())) {
      return null;
    }
    Set<ObjType> boxes = new LinkedHashSet<>();
    boolean unknown = false;
    Frame<BasicValue>[] frames = main.frames();
    for (int i = 0; i < main.node().instructions.size(); i++) {
      AbstractInsnNode insn = main.node().instructions.get(i);
      if (insn.getOpcode() != Opcodes.ARETURN || frames[i] == null) {
        continue;
      }
      Type t = frames[i].getStack(frames[i].getStackSize() - 1).getType();
      if (t == null || t.getInternalName().equals("null")) {
        continue; // a null result: any type
      }
      ObjType o = ObjType.of(t);
      if (o == null) {
        unknown = true;
      } else {
        boxes.add(o);
      }
    }
    ObjType want = expected == null ? null : ObjType.forSql(expected);
    if (expected != null && want == null) {
      throw new Untranslatable(source + ": is registered to return " + expected.sqlName() + ", which a translated UDF cannot");
    }
    if (!unknown && boxes.size() == 1) {
      ObjType found = boxes.iterator().next();
      if (want != null && !want.equals(found)) {
        throw new Untranslatable(source + ": returns a " + found.className() + " but is registered to return "
            + expected.sqlName() + " (a " + want.className() + ")");
      }
      return found;
    }
    if (want != null) {
      return want; // each areturn is checked against it (Branches)
    }
    throw new Untranslatable(source + ": returns " + rt.getClassName() + " (an erased type) and "
        + (boxes.isEmpty() && !unknown ? "only null" : "not one box type " + boxes.stream().map(ObjType::className).toList())
        + "; give the translator the UDF's registered result type");
  }
}
