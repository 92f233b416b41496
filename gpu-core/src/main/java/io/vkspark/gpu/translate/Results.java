package io.vkspark.gpu.translate;

import io.vkspark.gpu.column.SqlType;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;
import org.objectweb.asm.tree.analysis.BasicValue;
import org.objectweb.asm.tree.analysis.Frame;

/**
 * The real types behind erased ones. A lambda javac compiled against a wildcard interface
 * ({@code functions.udf((Long x) -> x * x, DataTypes.LongType)}: {@code UDF1<?, ?>}) returns
 * {@code Object}; a Scala closure's {@code $anonfun$f$1$adapted} bridge takes and returns
 * {@code Object}, and one returning {@code Option[Double]} returns {@code scala.Option}. The real
 * type is the box every {@code areturn} returns (from the analysed frames, or the box put in each
 * {@code new Some(..)}), the box an {@code Object} argument is unboxed or cast to, or the SQL type
 * the caller registered the UDF with.
 */
final class Results {
  private Results() {}

  /** Types a box is also declared as: {@code Object}, {@code Number}, ... */
  private static final Set<String> ERASED = Set.of("java/lang/Object", "java/lang/Number", "java/lang/Comparable",
      "java/io/Serializable", "java/lang/constant/Constable");

  /** Scala's {@code Option}: a box (its value) or null ({@code None}). */
  static final Set<String> OPTION = Set.of("scala/Option", "scala/Some", "scala/None$");

  static boolean erasedType(Type t) {
    return t.getSort() == Type.OBJECT && (ERASED.contains(t.getInternalName()) || OPTION.contains(t.getInternalName()));
  }

  /**
   * The box {@code m} returns where its descriptor says only {@code Object} or {@code Option}; null
   * when the descriptor names a primitive or a box itself.
   *
   * @param expected the SQL type the UDF is registered with, or null
   */
  static ObjType erased(Unit.Method m, String source, SqlType expected, Unit unit) {
    Type rt = Type.getReturnType(m.node().desc);
    if (!erasedType(rt)) {
      return null;
    }
    Set<ObjType> boxes = new LinkedHashSet<>();
    boolean unknown = false;
    Frame<BasicValue>[] frames = m.frames();
    for (int i = 0; i < m.node().instructions.size(); i++) {
      AbstractInsnNode insn = m.node().instructions.get(i);
      if (insn.getOpcode() != Opcodes.ARETURN || frames[i] == null) {
        continue;
      }
      Type t = frames[i].getStack(frames[i].getStackSize() - 1).getType();
      if (t == null || t.getInternalName().equals("null") || t.getInternalName().equals("scala/None$")) {
        continue; // a null result (or None): any type
      }
      ObjType o = ObjType.of(t);
      if (o == null) {
        unknown = true;
      } else {
        boxes.add(o);
      }
    }
    if (unknown && OPTION.contains(rt.getInternalName())) {
      unknown = !someBoxes(m.owner().name, m.node(), unit, boxes, new HashSet<>());
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

  /**
   * Adds the box of each {@code new Some(box)} in {@code m} and in the static methods of its class
   * it calls; false when one is not a box made right there ({@code boxToDouble}, {@code valueOf}).
   */
  private static boolean someBoxes(String owner, MethodNode m, Unit unit, Set<ObjType> boxes, Set<String> seen) {
    if (!seen.add(m.name + m.desc)) {
      return true;
    }
    for (AbstractInsnNode insn : m.instructions) {
      if (!(insn instanceof MethodInsnNode c)) {
        continue;
      }
      if (c.owner.equals("scala/Some") && c.name.equals("<init>")) {
        AbstractInsnNode p = insn.getPrevious();
        while (p != null && p.getOpcode() < 0) {
          p = p.getPrevious();
        }
        ObjType o = p instanceof MethodInsnNode b ? ObjType.of(Type.getReturnType(b.desc)) : null;
        if (o == null) {
          return false;
        }
        boxes.add(o);
      } else if (c.getOpcode() == Opcodes.INVOKESTATIC && c.owner.equals(owner)
          && OPTION.contains(Type.getReturnType(c.desc).getInternalName())) {
        MethodNode callee = unit.classNode(owner).methods.stream().filter(x -> x.name.equals(c.name) && x.desc.equals(c.desc))
            .findFirst().orElse(null);
        if (callee == null || !someBoxes(owner, callee, unit, boxes, seen)) {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Finds the box each argument declared {@code Object} holds (from index {@code skip}): the one
   * it is unboxed to ({@code BoxesRunTime.unboxToDouble}) or cast to, else {@code expected}'s.
   */
  static void erasedArgs(Unit.Method m, String source, int skip, List<SqlType> expected) {
    Type[] args = Type.getArgumentTypes(m.node().desc);
    for (int i = skip; i < args.length; i++) {
      if (!erasedType(args[i])) {
        continue;
      }
      Set<ObjType> uses = new LinkedHashSet<>();
      int slot = slot(m.node(), i);
      for (AbstractInsnNode insn : m.node().instructions) {
        if (insn.getOpcode() != Opcodes.ALOAD || ((VarInsnNode) insn).var != slot) {
          continue;
        }
        AbstractInsnNode next = insn.getNext();
        while (next != null && next.getOpcode() < 0) {
          next = next.getNext();
        }
        if (next instanceof MethodInsnNode c && c.owner.equals("scala/runtime/BoxesRunTime") && c.name.startsWith("unboxTo")) {
          uses.add(new ObjType.Box(Type.getReturnType(c.desc))); // unboxToInt(null) is 0: the value of a null box
        } else if (next instanceof TypeInsnNode c && next.getOpcode() == Opcodes.CHECKCAST && ObjType.of(c.desc) != null) {
          uses.add(ObjType.of(c.desc));
        }
      }
      SqlType want = expected == null || expected.size() <= i - skip ? null : expected.get(i - skip);
      ObjType w = want == null ? null : ObjType.forSql(want);
      if (uses.size() == 1 && (w == null || w.equals(uses.iterator().next()))) {
        m.eraseArg(i, uses.iterator().next());
      } else if (w != null && uses.isEmpty()) {
        m.eraseArg(i, w);
      } else {
        throw new Untranslatable(source + ": argument " + (i - skip + 1) + " is a " + args[i].getClassName()
            + (uses.isEmpty() ? " whose type the translator cannot tell; give it the UDF's argument types"
                : " used as " + uses.stream().map(ObjType::className).toList()
                + (w == null ? "" : " but registered as " + want.sqlName())));
      }
    }
  }

  /** The local slot of argument {@code i} of {@code m}. */
  static int slot(MethodNode m, int i) {
    int slot = (m.access & Opcodes.ACC_STATIC) != 0 ? 0 : 1;
    Type[] args = Type.getArgumentTypes(m.desc);
    for (int k = 0; k < i; k++) {
      slot += args[k].getSize();
    }
    return slot;
  }
}
