package io.vkspark.gpu.translate;

import java.util.ArrayList;
import java.util.List;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;

/**
 * The instruction that ends a block: a return (a null box returned is a row {@code call()}
 * computes), a jump, a conditional jump (with Java's NaN rule for floating comparisons) or a
 * switch, as IR over the blocks' flags ({@link ControlFlow.Exits}).
 */
final class Branches {
  private final MethodTranslator t;

  Branches(MethodTranslator t) {
    this.t = t;
  }

  void terminate(AbstractInsnNode insn, ControlFlow.Exits exits) {
    int op = insn.getOpcode();
    if (op >= Opcodes.IRETURN && op <= Opcodes.RETURN) {
      if (op == Opcodes.RETURN) {
        throw t.refuse("returns no value");
      }
      Val v = t.force(t.stack.pop());
      Expr value;
      if (op == Opcodes.ARETURN && t.returns == JType.S && v instanceof Val.Obj s
          && (s.type() instanceof ObjType.Str || s.alwaysNull())) {
        if (t.nullOut != null) { // a helper: the string and its null flag
          t.emit(new Stmt.Assign(t.nullOut, s.isNull()));
          t.emit(new Stmt.Return(s.type() instanceof ObjType.Str ? s.value() : Expr.zero(JType.S)));
        } else {
          t.emit(new Stmt.Return(StringCalls.result(t, s))); // a null string: a null result, on the device
        }
        return;
      }
      if (op == Opcodes.ARETURN) {
        if (!(v instanceof Val.Obj o) || o.type().sqlType() == null) {
          throw t.refuse("returns an object that is not a box of a primitive, a date or a timestamp");
        }
        if (t.erasedResult && !o.alwaysNull() && !o.type().equals(t.resultBox)) {
          throw t.refuse("returns a " + o.type().className() + " where the result is a " + t.resultBox.className());
        }
        if (t.nullOut != null) {
          t.emit(new Stmt.Assign(t.nullOut, o.isNull())); // a helper returns a box's null flag
        } else if (!o.neverNull()) {
          t.throwIf(o.isNull()); // a null result: call() gives it
        }
        value = o.value();
      } else {
        value = ((Val.Prim) v).e();
      }
      t.emit(new Stmt.Return(Expr.convert(value, t.returns)));
      return;
    }
    if (insn instanceof JumpInsnNode j) {
      if (op == Opcodes.GOTO) {
        int target = exits.target(j.label);
        t.storeStackFor(target);
        t.emit(exits.go(target));
        return;
      }
      if (op == Opcodes.JSR) {
        throw t.refuse("jsr (a subroutine)");
      }
      Expr c = t.temp(JType.Z, condition(j));
      int target = exits.target(j.label);
      t.storeStackFor(target); // both successors start with the same stack
      t.noteTables(exits.fallthrough());
      t.emit(new Stmt.If(c, List.of(exits.go(target)), List.of(exits.go(exits.fallthrough()))));
      return;
    }
    Expr key = ((Val.Prim) t.force(t.stack.pop())).e();
    List<Stmt.Case> cases = new ArrayList<>();
    List<Integer> keys = new ArrayList<>();
    List<LabelNode> labels;
    LabelNode dflt;
    if (insn instanceof TableSwitchInsnNode ts) {
      for (int i = 0; i < ts.labels.size(); i++) {
        keys.add(ts.min + i);
      }
      labels = ts.labels;
      dflt = ts.dflt;
    } else {
      LookupSwitchInsnNode l = (LookupSwitchInsnNode) insn;
      keys.addAll(l.keys);
      labels = l.labels;
      dflt = l.dflt;
    }
    for (int i = 0; i < keys.size(); i++) {
      cases.add(new Stmt.Case(keys.get(i), List.of(exits.go(exits.target(labels.get(i))))));
    }
    t.storeStackFor(exits.target(dflt));
    for (LabelNode l : labels) {
      t.noteTables(exits.target(l));
    }
    t.emit(new Stmt.Switch(key, cases, List.of(exits.go(exits.target(dflt)))));
  }

  /** The condition under which a conditional jump is taken. */
  private Expr condition(JumpInsnNode j) {
    int op = j.getOpcode();
    switch (op) {
      case Opcodes.IFNULL, Opcodes.IFNONNULL -> {
        Val v = t.stack.pop();
        Expr isNull = v instanceof Val.Known ? Expr.FALSE : v instanceof Val.Obj o ? o.isNull() : null;
        if (isNull == null) {
          throw t.refuse("a null check of something other than a boxed argument or value");
        }
        return op == Opcodes.IFNULL ? isNull : Expr.not(isNull);
      }
      case Opcodes.IF_ACMPEQ, Opcodes.IF_ACMPNE -> {
        Val b = t.stack.pop();
        Val a = t.stack.pop();
        if (a instanceof Val.Known x && b instanceof Val.Known y) { // objects known now: the same on every row
          return Expr.bool((x.value() == y.value()) == (op == Opcodes.IF_ACMPEQ));
        }
        if (!(a instanceof Val.Obj x && b instanceof Val.Obj y && x.type() == Temporal.DAY_OF_WEEK && y.type() == x.type())) {
          throw t.refuse("compares object references (==)");
        }
        // enum constants: the same reference when the same value (or both null)
        Expr same = Expr.bin(Expr.BinOp.LOR, Expr.bin(Expr.BinOp.LAND, x.isNull(), y.isNull()),
            Expr.bin(Expr.BinOp.LAND, Expr.not(Expr.bin(Expr.BinOp.LOR, x.isNull(), y.isNull())),
                Expr.bin(Expr.BinOp.EQ, x.value(), y.value())));
        return op == Opcodes.IF_ACMPEQ ? same : Expr.not(same);
      }
      case Opcodes.IFEQ, Opcodes.IFNE, Opcodes.IFLT, Opcodes.IFGE, Opcodes.IFGT, Opcodes.IFLE -> {
        Val v = t.stack.pop();
        String rel = relation(op - Opcodes.IFEQ);
        if (v instanceof Val.Cmp c) {
          return compare(c, rel);
        }
        return Expr.bin(Expr.BinOp.of(rel), ((Val.Prim) v).e(), Expr.i(0));
      }
      default -> {
        Expr b = ((Val.Prim) t.pop()).e();
        Expr a = ((Val.Prim) t.pop()).e();
        return Expr.bin(Expr.BinOp.of(relation(op - Opcodes.IF_ICMPEQ)), a, b);
      }
    }
  }

  private static String relation(int i) {
    return new String[] {"==", "!=", "<", ">=", ">", "<="}[i];
  }

  /**
   * {@code cmp(a, b) rel 0} with Java's NaN rule: {@code dcmpl} gives -1 for an unordered pair,
   * {@code dcmpg} 1; GLSL's ordered comparisons are false for NaN, so the relation is negated where
   * Java's answer for NaN is true.
   */
  private Expr compare(Val.Cmp c, String rel) {
    Expr a = c.a();
    Expr b = c.b();
    if (c.type() == JType.J) {
      return Expr.bin(Expr.BinOp.of(rel), t.helper(JType.I, "vkt_lcmp", a, b), Expr.i(0));
    }
    if (c.type() == JType.I) {
      return Expr.bin(Expr.BinOp.of(rel), a, b);
    }
    int n = c.nanResult();
    return switch (rel) {
      case "==" -> Expr.bin(Expr.BinOp.EQ, a, b);
      case "!=" -> Expr.not(Expr.bin(Expr.BinOp.EQ, a, b));
      case "<" -> n < 0 ? Expr.not(Expr.bin(Expr.BinOp.GE, a, b)) : Expr.bin(Expr.BinOp.LT, a, b);
      case ">=" -> n < 0 ? Expr.bin(Expr.BinOp.GE, a, b) : Expr.not(Expr.bin(Expr.BinOp.LT, a, b));
      case ">" -> n > 0 ? Expr.not(Expr.bin(Expr.BinOp.LE, a, b)) : Expr.bin(Expr.BinOp.GT, a, b);
      default -> n > 0 ? Expr.bin(Expr.BinOp.LE, a, b) : Expr.not(Expr.bin(Expr.BinOp.GT, a, b));
    };
  }

}
