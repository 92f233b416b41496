package io.vkspark.gpu.translate;

import java.util.ArrayList;
import java.util.List;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.InsnList;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.analysis.AnalyzerException;
import org.objectweb.asm.tree.analysis.BasicInterpreter;
import org.objectweb.asm.tree.analysis.BasicValue;
import org.objectweb.asm.tree.analysis.Frame;
import org.objectweb.asm.tree.analysis.Interpreter;

/**
 * Whether a method returns null whenever one boxed argument is null, whatever the others: then a
 * row with a null there may get a null result without running the kernel, as for every GPU UDF.
 * Proved by following every path from the entry with that argument null, deciding each null check
 * of it (or of a null constant) and failing on any path that returns something else, throws,
 * or dereferences the null (a {@code NullPointerException} in Java: the row must run {@code call()}).
 */
final class NullStrictness {
  private static final int BUDGET = 20_000;

  private NullStrictness() {}

  /** Per argument of {@code m} (after {@code skip} captured ones): strict or not; primitives are strict. */
  static List<Boolean> of(String owner, MethodNode m, int skip) {
    Type[] args = Type.getArgumentTypes(m.desc);
    List<Boolean> out = new ArrayList<>();
    for (int i = skip; i < args.length; i++) {
      out.add(args[i].getSort() != Type.OBJECT || strict(owner, m, i));
    }
    return out;
  }

  /** The kinds of value followed: the null argument (or a null constant), or anything else. */
  record V(boolean isNull, BasicValue basic) implements org.objectweb.asm.tree.analysis.Value {
    @Override
    public int getSize() {
      return basic == null ? 1 : basic.getSize();
    }
  }

  private static final class Nulls extends Interpreter<V> {
    private final BasicInterpreter basic = new BasicInterpreter();

    Nulls() {
      super(Opcodes.ASM9);
    }

    private static V other(BasicValue b) {
      return b == null ? null : new V(false, b);
    }

    @Override
    public V newValue(Type type) {
      return other(basic.newValue(type));
    }

    @Override
    public V newOperation(AbstractInsnNode insn) throws AnalyzerException {
      return insn.getOpcode() == Opcodes.ACONST_NULL ? new V(true, BasicValue.REFERENCE_VALUE) : other(basic.newOperation(insn));
    }

    @Override
    public V copyOperation(AbstractInsnNode insn, V value) {
      return value;
    }

    @Override
    public V unaryOperation(AbstractInsnNode insn, V value) throws AnalyzerException {
      return other(basic.unaryOperation(insn, value.basic()));
    }

    @Override
    public V binaryOperation(AbstractInsnNode insn, V a, V b) throws AnalyzerException {
      return other(basic.binaryOperation(insn, a.basic(), b.basic()));
    }

    @Override
    public V ternaryOperation(AbstractInsnNode insn, V a, V b, V c) throws AnalyzerException {
      return other(basic.ternaryOperation(insn, a.basic(), b.basic(), c.basic()));
    }

    @Override
    public V naryOperation(AbstractInsnNode insn, List<? extends V> values) throws AnalyzerException {
      return other(basic.naryOperation(insn, values.stream().map(V::basic).toList()));
    }

    @Override
    public void returnOperation(AbstractInsnNode insn, V value, V expected) {}

    @Override
    public V merge(V a, V b) {
      return a;
    }
  }

  private static boolean strict(String owner, MethodNode m, int arg) {
    Nulls interp = new Nulls();
    Frame<V> f = new Frame<>(m.maxLocals, m.maxStack);
    int slot = 0;
    if ((m.access & Opcodes.ACC_STATIC) == 0) {
      f.setLocal(slot++, interp.newValue(Type.getObjectType(owner)));
    }
    Type[] args = Type.getArgumentTypes(m.desc);
    for (int i = 0; i < args.length; i++) {
      f.setLocal(slot, i == arg ? new V(true, BasicValue.REFERENCE_VALUE) : interp.newValue(args[i]));
      if (args[i].getSize() == 2) {
        f.setLocal(slot + 1, interp.newValue(null));
      }
      slot += args[i].getSize();
    }
    while (slot < m.maxLocals) {
      f.setLocal(slot++, interp.newValue(null));
    }
    int[] budget = {BUDGET};
    try {
      return follow(m.instructions, 0, f, interp, budget);
    } catch (AnalyzerException | RuntimeException | StackOverflowError e) {
      return false; // not proved (a method with thousands of nested branches overflowed the stack): not strict
    }
  }

  /** Whether every path from instruction {@code i} in state {@code f} returns null. */
  private static boolean follow(InsnList insns, int i, Frame<V> f, Nulls interp, int[] budget) throws AnalyzerException {
    while (true) {
      if (--budget[0] < 0 || i >= insns.size()) {
        return false;
      }
      AbstractInsnNode insn = insns.get(i);
      int op = insn.getOpcode();
      if (op < 0) {
        i++;
        continue;
      }
      switch (op) {
        case Opcodes.ARETURN -> {
          return f.getStack(f.getStackSize() - 1).isNull();
        }
        case Opcodes.IRETURN, Opcodes.LRETURN, Opcodes.FRETURN, Opcodes.DRETURN, Opcodes.RETURN, Opcodes.ATHROW -> {
          return false;
        }
        case Opcodes.IFNULL, Opcodes.IFNONNULL -> {
          V v = f.getStack(f.getStackSize() - 1);
          Frame<V> next = new Frame<>(f);
          next.execute(insn, interp);
          int target = insns.indexOf(((JumpInsnNode) insn).label);
          if (v.isNull()) {
            return follow(insns, op == Opcodes.IFNULL ? target : i + 1, next, interp, budget);
          }
          return follow(insns, target, new Frame<>(next), interp, budget) && follow(insns, i + 1, next, interp, budget);
        }
        case Opcodes.GETFIELD, Opcodes.ARRAYLENGTH, Opcodes.MONITORENTER -> {
          if (f.getStack(f.getStackSize() - 1).isNull()) {
            return false; // NullPointerException
          }
        }
        case Opcodes.INVOKEVIRTUAL, Opcodes.INVOKEINTERFACE, Opcodes.INVOKESPECIAL -> {
          int n = Type.getArgumentTypes(((MethodInsnNode) insn).desc).length;
          if (f.getStack(f.getStackSize() - 1 - n).isNull()) {
            return false;
          }
        }
        default -> { }
      }
      Frame<V> next = new Frame<>(f);
      next.execute(insn, interp);
      if (insn instanceof JumpInsnNode j) {
        int target = insns.indexOf(j.label);
        if (op == Opcodes.GOTO) {
          i = target;
          f = next;
          continue;
        }
        return follow(insns, target, new Frame<>(next), interp, budget) && follow(insns, i + 1, next, interp, budget);
      }
      if (insn instanceof TableSwitchInsnNode || insn instanceof LookupSwitchInsnNode) {
        List<LabelNode> targets = new ArrayList<>(insn instanceof TableSwitchInsnNode t ? t.labels
            : ((LookupSwitchInsnNode) insn).labels);
        targets.add(insn instanceof TableSwitchInsnNode t ? t.dflt : ((LookupSwitchInsnNode) insn).dflt);
        for (LabelNode l : targets) {
          if (!follow(insns, insns.indexOf(l), new Frame<>(next), interp, budget)) {
            return false;
          }
        }
        return true;
      }
      f = next;
      i++;
    }
  }
}
