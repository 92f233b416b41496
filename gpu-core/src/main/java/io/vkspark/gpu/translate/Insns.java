package io.vkspark.gpu.translate;

import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.IntInsnNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;

/** Instructions as a refusal names them: {@code invokestatic java/lang/System.nanoTime()J}. */
final class Insns {
  private Insns() {}

  static String describe(AbstractInsnNode insn) {
    int op = insn.getOpcode();
    String name = op >= 0 && op < OPCODES.length ? OPCODES[op] : "?";
    if (insn instanceof MethodInsnNode m) {
      return name + " " + m.owner + "." + m.name + m.desc;
    }
    if (insn instanceof FieldInsnNode f) {
      return name + " " + f.owner + "." + f.name + " " + f.desc;
    }
    if (insn instanceof TypeInsnNode t) {
      return name + " " + t.desc;
    }
    if (insn instanceof LdcInsnNode l) {
      return name + " " + (l.cst instanceof String s ? "\"" + s + "\"" : l.cst instanceof Type t ? t.getClassName() : l.cst);
    }
    if (insn instanceof VarInsnNode v) {
      return name + " " + v.var;
    }
    if (insn instanceof IntInsnNode i) {
      return name + " " + i.operand;
    }
    return name;
  }

  private static final String[] OPCODES = opcodes();

  private static String[] opcodes() {
    String[] names = new String[202];
    java.util.Arrays.fill(names, "?");
    for (java.lang.reflect.Field f : org.objectweb.asm.Opcodes.class.getFields()) {
      try {
        if (f.getType() == int.class && f.getName().equals(f.getName().toUpperCase(java.util.Locale.ROOT))
            && !f.getName().startsWith("ACC_") && !f.getName().startsWith("V") && !f.getName().startsWith("T_")
            && !f.getName().startsWith("H_") && !f.getName().startsWith("F_") && !f.getName().startsWith("ASM")
            && !f.getName().startsWith("SOURCE") && !f.getName().equals("TOP") && !f.getName().equals("INTEGER")
            && !f.getName().equals("FLOAT") && !f.getName().equals("DOUBLE") && !f.getName().equals("LONG")
            && !f.getName().equals("NULL") && !f.getName().equals("UNINITIALIZED_THIS")) {
          int v = f.getInt(null);
          if (v >= 0 && v < names.length && names[v].equals("?")) {
            names[v] = f.getName().toLowerCase(java.util.Locale.ROOT);
          }
        }
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(e);
      }
    }
    return names;
  }
}
