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

  /**
   * Whether {@code m} may return null (or Scala's {@code None}) when no argument is null: some path
   * from the entry, with every object argument non-null and the null checks of known non-null
   * values (the arguments, new objects, boxes) decided, returns a value not known to be non-null
   * ({@code null}, {@code None}, a helper's result: a Scala bridge returns its closure's
   * {@code Option}). What decides between the strict kernel (a null result makes its batch
   * {@code call()}'s) and the null-aware one (null results on the device); both give Java's rows.
   * A path too long to follow (loops past the budget) keeps the strict kernel.
   */
  static boolean mayReturnNull(String owner, MethodNode m) {
    NonNulls interp = new NonNulls();
    Frame<V> f = new Frame<>(m.maxLocals, m.maxStack);
    int slot = 0;
    if ((m.access & Opcodes.ACC_STATIC) == 0) {
      f.setLocal(slot++, new V(false, BasicValue.REFERENCE_VALUE, true));
    }
    for (Type t : Type.getArgumentTypes(m.desc)) {
      f.setLocal(slot, t.getSort() == Type.OBJECT ? new V(false, BasicValue.REFERENCE_VALUE, true) : interp.newValue(t));
      if (t.getSize() == 2) {
        f.setLocal(slot + 1, interp.newValue(null));
      }
      slot += t.getSize();
    }
    while (slot < m.maxLocals) {
      f.setLocal(slot++, interp.newValue(null));
    }
    try {
      return returnsNull(m.instructions, 0, f, interp, new int[] {BUDGET});
    } catch (AnalyzerException | RuntimeException | StackOverflowError e) {
      return false; // not followed: the strict kernel, whose null results call() computes
    }
  }

  /** Whether some path from instruction {@code i} in state {@code f} returns null or None. */
  private static boolean returnsNull(InsnList insns, int i, Frame<V> f, NonNulls interp, int[] budget)
      throws AnalyzerException {
    while (true) {
      if (--budget[0] < 0 || i >= insns.size()) {
        throw new AnalyzerException(null, "budget");
      }
      AbstractInsnNode insn = insns.get(i);
      int op = insn.getOpcode();
      if (op < 0) {
        i++;
        continue;
      }
      if (op == Opcodes.ARETURN) {
        return !f.getStack(f.getStackSize() - 1).nonNull(); // null, None, or not known (a helper's result)
      }
      if (op >= Opcodes.IRETURN && op <= Opcodes.RETURN || op == Opcodes.ATHROW) {
        return false;
      }
      V top = f.getStackSize() > 0 ? f.getStack(f.getStackSize() - 1) : null;
      Frame<V> next = new Frame<>(f);
      next.execute(insn, interp);
      if (insn instanceof JumpInsnNode j) {
        int target = insns.indexOf(j.label);
        boolean known = (op == Opcodes.IFNULL || op == Opcodes.IFNONNULL) && (top.isNull() || top.nonNull());
        if (op == Opcodes.GOTO || known) {
          i = op == Opcodes.GOTO || (op == Opcodes.IFNULL) == top.isNull() ? target : i + 1;
          f = next;
          continue;
        }
        return returnsNull(insns, target, new Frame<>(next), interp, budget) || returnsNull(insns, i + 1, next, interp, budget);
      }
      if (insn instanceof TableSwitchInsnNode || insn instanceof LookupSwitchInsnNode) {
        List<LabelNode> targets = new ArrayList<>(insn instanceof TableSwitchInsnNode t ? t.labels
            : ((LookupSwitchInsnNode) insn).labels);
        targets.add(insn instanceof TableSwitchInsnNode t ? t.dflt : ((LookupSwitchInsnNode) insn).dflt);
        for (LabelNode l : targets) {
          if (returnsNull(insns, insns.indexOf(l), new Frame<>(next), interp, budget)) {
            return true;
          }
        }
        return false;
      }
      f = next;
      i++;
    }
  }

  /** {@link Nulls} that also knows non-null values: new objects, boxes, {@code Some}, casts of them; {@code None} is null. */
  private static final class NonNulls extends Nulls {
    @Override
    public V newOperation(AbstractInsnNode insn) throws AnalyzerException {
      if (insn.getOpcode() == Opcodes.GETSTATIC && ((org.objectweb.asm.tree.FieldInsnNode) insn).owner.equals("scala/None$")) {
        return new V(true, BasicValue.REFERENCE_VALUE);
      }
      V v = super.newOperation(insn);
      return insn.getOpcode() == Opcodes.NEW || insn.getOpcode() == Opcodes.LDC ? new V(false, v.basic(), true) : v;
    }

    @Override
    public V unaryOperation(AbstractInsnNode insn, V value) throws AnalyzerException {
      V v = super.unaryOperation(insn, value);
      return insn.getOpcode() == Opcodes.CHECKCAST ? new V(value.isNull(), v.basic(), value.nonNull()) : v;
    }

    @Override
    public V naryOperation(AbstractInsnNode insn, List<? extends V> values) throws AnalyzerException {
      V v = super.naryOperation(insn, values);
      if (insn instanceof MethodInsnNode c && insn.getOpcode() == Opcodes.INVOKESTATIC
          && (c.name.equals("valueOf") && c.owner.startsWith("java/lang/") || c.name.startsWith("boxTo")
          || c.owner.equals("scala/Some") || c.owner.equals("scala/Option") && c.name.equals("apply") && values.get(0).nonNull())) {
        return new V(false, v.basic(), true);
      }
      return v;
    }
  }

  /** The kinds of value followed: the null argument (or a null constant), a value known not null, or anything else. */
  record V(boolean isNull, BasicValue basic, boolean nonNull) implements org.objectweb.asm.tree.analysis.Value {
    V(boolean isNull, BasicValue basic) {
      this(isNull, basic, false);
    }

    @Override
    public int getSize() {
      return basic == null ? 1 : basic.getSize();
    }
  }

  private static class Nulls extends Interpreter<V> {
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
