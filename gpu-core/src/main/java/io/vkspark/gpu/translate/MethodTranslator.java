package io.vkspark.gpu.translate;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.IincInsnNode;
import org.objectweb.asm.tree.InsnNode;
import org.objectweb.asm.tree.IntInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;
import org.objectweb.asm.tree.analysis.BasicValue;
import org.objectweb.asm.tree.analysis.Frame;

/**
 * One Java method as one GLSL function. Every value the method computes becomes an immutable
 * temporary ({@code precise} when it is a float or double, so that no driver fuses a multiply and an
 * add that Java rounds twice), locals become variables, and the control flow is laid out by
 * {@link ControlFlow}: each basic block runs when its flag is set, in an order where every block
 * follows those that can reach it, and each loop is a {@code while} over its blocks. Operations
 * whose GLSL meaning differs from Java's go through the Java-semantics helpers ({@code jdiv},
 * {@code jint}, ...) or the translator's own ({@code vkt_*}); rows where Java throws (or returns
 * null) call {@code jthrow()} and return at once.
 */
final class MethodTranslator {
  private final Unit unit;
  private final Unit.Method method;
  private final MethodNode m;
  private final String fn;
  private final Frame<BasicValue>[] frames;
  private final Map<Integer, Type> boxSlots;
  private final JType returns;
  private final Type returnType;
  /** Variables to declare at the top of the function: name to declaration. */
  private final Map<String, String> vars = new LinkedHashMap<>();
  private final Deque<Val> stack = new ArrayDeque<>();
  private StringBuilder out;
  private int temps;
  private int line = -1;
  private AbstractInsnNode at;
  boolean mayThrow;
  private ControlFlow cfg;

  MethodTranslator(Unit unit, Unit.Method method, String fn) {
    this.unit = unit;
    this.method = method;
    this.m = method.node();
    this.fn = fn;
    this.frames = method.frames();
    this.boxSlots = method.boxSlots();
    this.returnType = Type.getReturnType(m.desc);
    this.returns = returnType.getSort() == Type.OBJECT ? JType.of(JType.unboxed(returnType.getInternalName()))
        : JType.of(returnType);
  }

  /** The function's GLSL text. */
  String translate() {
    ControlFlow cfg = ControlFlow.of(m, (at, what) -> unit.refuse(method, at, what), this::lineOf);
    this.cfg = cfg;
    StringBuilder body = new StringBuilder();
    cfg.emit(body, this::block);
    String copies = entryCopies(); // declares the parameters' variables
    StringBuilder f = new StringBuilder();
    f.append(returns.glsl).append(' ').append(fn).append('(').append(String.join(", ", parameters())).append(") {\n");
    vars.values().forEach(d -> f.append("  ").append(d).append('\n'));
    for (int b : cfg.blocks()) {
      f.append("  bool f").append(b).append(" = ").append(b == 0 ? "true" : "false").append(";\n");
    }
    f.append(copies);
    f.append(body);
    f.append("  return ").append(returns.zero).append(";\n}\n");
    return f.toString();
  }

  /** Parameters as GLSL: one per JVM argument (a box's null flag is false on the GPU, see {@link #entryCopies}). */
  private List<String> parameters() {
    List<String> p = new ArrayList<>();
    Type[] args = Type.getArgumentTypes(m.desc);
    for (int i = 0; i < args.length; i++) {
      if (method.constants().containsKey(i)) {
        continue; // a captured value: a constant, not a parameter
      }
      p.add(glslOfArg(args[i]) + " p" + i);
    }
    return p;
  }

  private static String glslOfArg(Type t) {
    JType j = t.getSort() == Type.OBJECT ? JType.of(JType.unboxed(t.getInternalName())) : JType.of(t);
    return j.glsl;
  }

  /** Parameters (and captured constants) into their local variables. */
  private String entryCopies() {
    StringBuilder s = new StringBuilder();
    Type[] args = Type.getArgumentTypes(m.desc);
    int slot = (m.access & Opcodes.ACC_STATIC) != 0 ? 0 : 1;
    for (int i = 0; i < args.length; i++) {
      Type t = args[i];
      boolean captured = method.constants().containsKey(i);
      Object c = method.constants().get(i);
      if (t.getSort() == Type.OBJECT) {
        Type prim = JType.unboxed(t.getInternalName());
        if (prim == null) {
          throw unit.refuse(method, -1, "argument " + (i + 1) + " is a " + t.getClassName()
              + " (only primitives and their boxes translate)");
        }
        String v = boxVar(slot, prim);
        if (vars.containsKey(v)) {
          s.append("  ").append(v).append(" = ").append(captured ? (c == null ? JType.of(prim).zero : literal(c, prim)) : "p" + i)
              .append(";\n  l").append(slot).append("n = ").append(captured && c == null).append(";\n");
        }
      } else {
        JType j = JType.of(t);
        String v = "l" + slot + j.name();
        if (vars.containsKey(v)) {
          s.append("  ").append(v).append(" = ").append(captured ? literal(c, t) : "p" + i).append(";\n");
        }
      }
      slot += t.getSize();
    }
    return s.toString();
  }

  private String boxVar(int slot, Type prim) {
    JType j = JType.of(prim);
    declare("l" + slot + "n", "bool l" + slot + "n = false;");
    return declare("l" + slot + "b" + j.name(), qual(j) + j.glsl + " l" + slot + "b" + j.name() + " = " + j.zero + ";");
  }

  private String declare(String name, String decl) {
    vars.putIfAbsent(name, decl);
    return name;
  }

  private static String qual(JType t) {
    return t.floating() ? "precise " : "";
  }

  private int lineOf(AbstractInsnNode insn) {
    for (AbstractInsnNode i = insn; i != null; i = i.getPrevious()) {
      if (i instanceof org.objectweb.asm.tree.LineNumberNode l) {
        return l.line;
      }
    }
    return -1;
  }

  // ---- one basic block ----------------------------------------------------------------------

  /** Appends the code of the block of instructions {@code [from, to]} and its exits (see {@link ControlFlow}). */
  private void block(StringBuilder sb, ControlFlow.Block b, ControlFlow.Exits exits, String indent) {
    out = sb;
    indentNow = indent;
    stack.clear();
    Frame<BasicValue> entry = frames[b.first()];
    for (int i = 0; i < entry.getStackSize(); i++) {
      stack.push(stackVar(i, entry.getStack(i)));
    }
    // a block that ends in athrow only builds an exception: the row throws
    AbstractInsnNode last = m.instructions.get(b.last());
    if (last.getOpcode() == Opcodes.ATHROW) {
      line = lineOf(last);
      emitThrow(indent);
      return;
    }
    for (int i = b.first(); i <= b.last(); i++) {
      AbstractInsnNode insn = m.instructions.get(i);
      if (insn.getOpcode() < 0) {
        if (insn instanceof org.objectweb.asm.tree.LineNumberNode l) {
          line = l.line;
        }
        continue;
      }
      at = insn;
      if (i == b.last() && isTerminator(insn)) {
        terminate(insn, exits, indent);
        return;
      }
      step(insn, indent);
    }
    // falls through into the next block
    storeStackFor(exits.fallthrough(), indent);
    out.append(indent).append(exits.go(exits.fallthrough())).append('\n');
  }

  private static boolean isTerminator(AbstractInsnNode insn) {
    int op = insn.getOpcode();
    return insn instanceof JumpInsnNode || insn instanceof TableSwitchInsnNode || insn instanceof LookupSwitchInsnNode
        || (op >= Opcodes.IRETURN && op <= Opcodes.RETURN);
  }

  private Val stackVar(int depth, BasicValue v) {
    Type t = v.getType();
    if (t == null) {
      throw refuse("a value of unknown type on the stack across a branch");
    }
    if (t.getSort() == Type.OBJECT) {
      Type prim = JType.unboxed(t.getInternalName());
      if (t.getInternalName().equals("null")) {
        prim = Type.INT_TYPE;
      } else if (prim == null) {
        throw refuse("a " + t.getClassName() + " on the stack across a branch");
      }
      JType j = JType.of(prim);
      String n = declare("s" + depth + "n", "bool s" + depth + "n = false;");
      String name = declare("s" + depth + "b" + j.name(), qual(j) + j.glsl + " s" + depth + "b" + j.name() + " = " + j.zero + ";");
      return Val.boxed(prim, name, n);
    }
    JType j = JType.of(t);
    if (j == null) {
      throw refuse("a " + t + " on the stack across a branch");
    }
    String name = declare("s" + depth + j.name(), qual(j) + j.glsl + " s" + depth + j.name() + " = " + j.zero + ";");
    return Val.of(j, name);
  }

  /** Stores what is left on the stack into the entry variables of block {@code target}. */
  private void storeStackFor(int target, String indent) {
    if (stack.isEmpty()) {
      return;
    }
    Frame<BasicValue> entry = frames[cfg.first(target)];
    List<Val> vals = new ArrayList<>(stack);
    java.util.Collections.reverse(vals); // bottom first
    List<String> assigns = new ArrayList<>();
    for (int i = 0; i < vals.size(); i++) {
      Val from = force(vals.get(i));
      Val to = stackVar(i, entry.getStack(i));
      if (to.isBox()) {
        if (from.isThis()) {
          throw refuse("the UDF object on the stack across a branch");
        }
        boolean isNull = "true".equals(from.nul());
        assigns.add(to.v() + " = " + (isNull ? to.type().zero : convert(from, to.type())) + ";");
        assigns.add(to.nul() + " = " + (from.nul() == null ? "false" : from.nul()) + ";");
      } else if (!to.v().equals(from.v())) {
        assigns.add(to.v() + " = " + from.v() + ";");
      }
    }
    // every value is an operand (temporary, literal or variable): copy through fresh temporaries
    // first when a variable is both read and written
    List<String> pre = new ArrayList<>();
    List<String> post = new ArrayList<>();
    for (String a : assigns) {
      int eq = a.indexOf(" = ");
      String lhs = a.substring(0, eq);
      String rhs = a.substring(eq + 3, a.length() - 1);
      if (rhs.matches("s\\d+.*")) {
        String t = "t" + (temps++);
        pre.add(typeOfVar(lhs) + " " + t + " = " + rhs + ";");
        post.add(lhs + " = " + t + ";");
      } else {
        post.add(a);
      }
    }
    for (String s : pre) {
      out.append(indent).append(s).append('\n');
    }
    for (String s : post) {
      out.append(indent).append(s).append('\n');
    }
  }

  private String typeOfVar(String name) {
    String decl = vars.get(name);
    return decl.substring(0, decl.indexOf(' ' + name + ' ')).replace("precise ", "");
  }

  private void terminate(AbstractInsnNode insn, ControlFlow.Exits exits, String indent) {
    int op = insn.getOpcode();
    if (op >= Opcodes.IRETURN && op <= Opcodes.RETURN) {
      if (op == Opcodes.RETURN) {
        throw refuse("returns no value");
      }
      Val v = force(stack.pop());
      if (op == Opcodes.ARETURN) {
        if (v.isThis() || !v.isBox()) {
          throw refuse("returns an object that is not a box of a primitive");
        }
        if (!"false".equals(v.nul())) {
          out.append(indent).append("if (").append(v.nul()).append(") { jthrow(); return ").append(returns.zero)
              .append("; } // null result: call() gives it\n");
          mayThrow = true;
        }
      }
      out.append(indent).append("return ").append(convert(v, returns)).append(";\n");
      return;
    }
    if (insn instanceof JumpInsnNode j) {
      if (op == Opcodes.GOTO) {
        int target = exits.target(j.label);
        storeStackFor(target, indent);
        out.append(indent).append(exits.go(target)).append('\n');
        return;
      }
      if (op == Opcodes.JSR) {
        throw refuse("jsr (a subroutine)");
      }
      String c = "t" + (temps++);
      out.append(indent).append("bool ").append(c).append(" = ").append(condition(j)).append(";\n");
      int target = exits.target(j.label);
      int next = exits.fallthrough();
      storeStackFor(target, indent); // both successors start with the same stack
      out.append(indent).append("if (").append(c).append(") { ").append(exits.go(target)).append(" } else { ")
          .append(exits.go(next)).append(" }\n");
      return;
    }
    Val key = force(stack.pop());
    storeStackFor(exits.target(insn instanceof TableSwitchInsnNode t ? t.dflt : ((LookupSwitchInsnNode) insn).dflt), indent);
    out.append(indent).append("switch (").append(key.v()).append(") {\n");
    if (insn instanceof TableSwitchInsnNode t) {
      for (int i = 0; i < t.labels.size(); i++) {
        out.append(indent).append("  case ").append(intLiteral(t.min + i)).append(": ")
            .append(exits.go(exits.target(t.labels.get(i)))).append(" break;\n");
      }
      out.append(indent).append("  default: ").append(exits.go(exits.target(t.dflt))).append(" break;\n");
    } else {
      LookupSwitchInsnNode l = (LookupSwitchInsnNode) insn;
      for (int i = 0; i < l.keys.size(); i++) {
        out.append(indent).append("  case ").append(intLiteral(l.keys.get(i))).append(": ")
            .append(exits.go(exits.target(l.labels.get(i)))).append(" break;\n");
      }
      out.append(indent).append("  default: ").append(exits.go(exits.target(l.dflt))).append(" break;\n");
    }
    out.append(indent).append("}\n");
  }

  /** The GLSL condition under which a conditional jump is taken. */
  private String condition(JumpInsnNode j) {
    int op = j.getOpcode();
    switch (op) {
      case Opcodes.IFNULL, Opcodes.IFNONNULL -> {
        Val v = stack.pop();
        String nul = v.isThis() ? "false" : v.isBox() ? v.nul() : null;
        if (nul == null) {
          throw refuse("a null check of something other than a boxed argument or value");
        }
        return op == Opcodes.IFNULL ? nul : "!" + nul;
      }
      case Opcodes.IF_ACMPEQ, Opcodes.IF_ACMPNE -> throw refuse("compares object references (==)");
      case Opcodes.IFEQ, Opcodes.IFNE, Opcodes.IFLT, Opcodes.IFGE, Opcodes.IFGT, Opcodes.IFLE -> {
        Val v = stack.pop();
        String rel = switch (op) {
          case Opcodes.IFEQ -> "==";
          case Opcodes.IFNE -> "!=";
          case Opcodes.IFLT -> "<";
          case Opcodes.IFGE -> ">=";
          case Opcodes.IFGT -> ">";
          default -> "<=";
        };
        if (v.cmp() != null) {
          return compare(v.cmp(), rel);
        }
        return "(" + v.v() + " " + rel + " 0)";
      }
      default -> {
        Val b = force(stack.pop());
        Val a = force(stack.pop());
        String rel = switch (op) {
          case Opcodes.IF_ICMPEQ -> "==";
          case Opcodes.IF_ICMPNE -> "!=";
          case Opcodes.IF_ICMPLT -> "<";
          case Opcodes.IF_ICMPGE -> ">=";
          case Opcodes.IF_ICMPGT -> ">";
          default -> "<=";
        };
        return "(" + a.v() + " " + rel + " " + b.v() + ")";
      }
    }
  }

  /**
   * {@code cmp(a, b) rel 0} with Java's NaN rule: {@code dcmpl} gives -1 for an unordered pair,
   * {@code dcmpg} 1; GLSL's ordered comparisons are false for NaN, so the relation is negated where
   * Java's answer for NaN is true.
   */
  private String compare(Val.Cmp c, String rel) {
    String a = c.a();
    String b = c.b();
    if (c.type() == JType.J) {
      return "(" + unit.helper("vkt_lcmp") + "(" + a + ", " + b + ") " + rel + " 0)";
    }
    if (c.type() == JType.I) {
      return "(" + a + " " + rel + " " + b + ")";
    }
    int n = c.nanResult();
    return switch (rel) {
      case "==" -> "(" + a + " == " + b + ")";
      case "!=" -> "!(" + a + " == " + b + ")";
      case "<" -> n < 0 ? "!(" + a + " >= " + b + ")" : "(" + a + " < " + b + ")";
      case ">=" -> n < 0 ? "(" + a + " >= " + b + ")" : "!(" + a + " < " + b + ")";
      case ">" -> n > 0 ? "!(" + a + " <= " + b + ")" : "(" + a + " > " + b + ")";
      default -> n > 0 ? "(" + a + " <= " + b + ")" : "!(" + a + " > " + b + ")";
    };
  }

  /** A pending comparison as an int temporary (-1, 0, 1); other values as they are. */
  private Val force(Val v) {
    if (v.cmp() == null) {
      return v;
    }
    Val.Cmp c = v.cmp();
    if (c.type() == JType.J) {
      return temp(JType.I, unit.helper("vkt_lcmp") + "(" + c.a() + ", " + c.b() + ")");
    }
    String nan = c.type().floating() ? String.valueOf(c.nanResult()) : "0";
    return temp(JType.I, "(" + c.a() + " > " + c.b() + " ? 1 : " + c.a() + " < " + c.b() + " ? -1 : "
        + c.a() + " == " + c.b() + " ? 0 : " + nan + ")");
  }

  private Val temp(JType t, String expr) {
    String name = "t" + (temps++);
    out.append(indentNow).append(qual(t)).append(t.glsl).append(' ').append(name).append(" = ").append(expr).append(";\n");
    return Val.of(t, name);
  }

  private String indentNow = "    ";

  private void stmt(String s) {
    out.append(indentNow).append(s).append('\n');
  }

  private void emitThrow(String indent) {
    out.append(indent).append("jthrow(); return ").append(returns.zero).append(";\n");
    mayThrow = true;
  }

  /** The row throws when {@code cond} holds. */
  private void throwIf(String cond) {
    stmt("if (" + cond + ") { jthrow(); return " + returns.zero + "; }");
    mayThrow = true;
  }

  Untranslatable refuse(String what) {
    return unit.refuse(method, line, what + describeAt());
  }

  private String describeAt() {
    return at == null ? "" : " [" + Insns.describe(at) + "]";
  }

  // ---- instructions -------------------------------------------------------------------------

  private Val pop() {
    return force(stack.pop());
  }

  private void push(Val v) {
    stack.push(v);
  }

  private void step(AbstractInsnNode insn, String indent) {
    indentNow = indent;
    int op = insn.getOpcode();
    switch (op) {
      case Opcodes.NOP -> { }
      case Opcodes.ACONST_NULL -> push(Val.boxed(Type.INT_TYPE, "0", "true"));
      case Opcodes.ICONST_M1, Opcodes.ICONST_0, Opcodes.ICONST_1, Opcodes.ICONST_2, Opcodes.ICONST_3, Opcodes.ICONST_4,
           Opcodes.ICONST_5 -> push(Val.of(JType.I, intLiteral(op - Opcodes.ICONST_0)));
      case Opcodes.LCONST_0, Opcodes.LCONST_1 -> push(Val.of(JType.J, longLiteral(op - Opcodes.LCONST_0)));
      case Opcodes.FCONST_0, Opcodes.FCONST_1, Opcodes.FCONST_2 -> push(Val.of(JType.F, floatLiteral(op - Opcodes.FCONST_0)));
      case Opcodes.DCONST_0, Opcodes.DCONST_1 -> push(Val.of(JType.D, doubleLiteral(op - Opcodes.DCONST_0)));
      case Opcodes.BIPUSH, Opcodes.SIPUSH -> push(Val.of(JType.I, intLiteral(((IntInsnNode) insn).operand)));
      case Opcodes.LDC -> ldc(((LdcInsnNode) insn).cst);
      case Opcodes.ILOAD, Opcodes.LLOAD, Opcodes.FLOAD, Opcodes.DLOAD -> {
        JType t = JType.values()[op - Opcodes.ILOAD];
        int slot = ((VarInsnNode) insn).var;
        push(temp(t, localVar(slot, t)));
      }
      case Opcodes.ALOAD -> aload(((VarInsnNode) insn).var);
      case Opcodes.ISTORE, Opcodes.LSTORE, Opcodes.FSTORE, Opcodes.DSTORE -> {
        JType t = JType.values()[op - Opcodes.ISTORE];
        Val v = pop();
        stmt(localVar(((VarInsnNode) insn).var, t) + " = " + v.v() + ";");
      }
      case Opcodes.ASTORE -> astore(((VarInsnNode) insn).var, pop());
      case Opcodes.IINC -> {
        IincInsnNode i = (IincInsnNode) insn;
        String v = localVar(i.var, JType.I);
        stmt(v + " = " + v + " + " + intLiteral(i.incr) + ";");
      }
      case Opcodes.POP -> stack.pop();
      case Opcodes.POP2 -> {
        if (stack.pop().size() == 1) {
          stack.pop();
        }
      }
      case Opcodes.DUP -> push(stack.peek());
      case Opcodes.DUP_X1 -> {
        Val a = stack.pop();
        Val b = stack.pop();
        push(a);
        push(b);
        push(a);
      }
      case Opcodes.DUP_X2 -> {
        Val a = stack.pop();
        Val b = stack.pop();
        if (b.size() == 2) {
          push(a);
          push(b);
          push(a);
        } else {
          Val c = stack.pop();
          push(a);
          push(c);
          push(b);
          push(a);
        }
      }
      case Opcodes.DUP2 -> {
        Val a = stack.pop();
        if (a.size() == 2) {
          push(a);
          push(a);
        } else {
          Val b = stack.pop();
          push(b);
          push(a);
          push(b);
          push(a);
        }
      }
      case Opcodes.DUP2_X1, Opcodes.DUP2_X2 -> throw refuse("an unusual stack shuffle");
      case Opcodes.SWAP -> {
        Val a = stack.pop();
        Val b = stack.pop();
        push(a);
        push(b);
      }
      case Opcodes.IADD, Opcodes.LADD, Opcodes.FADD, Opcodes.DADD -> binary(op - Opcodes.IADD, "+");
      case Opcodes.ISUB, Opcodes.LSUB, Opcodes.FSUB, Opcodes.DSUB -> binary(op - Opcodes.ISUB, "-");
      case Opcodes.IMUL, Opcodes.LMUL, Opcodes.FMUL, Opcodes.DMUL -> binary(op - Opcodes.IMUL, "*");
      case Opcodes.IDIV, Opcodes.LDIV -> integerDivision(op == Opcodes.IDIV ? JType.I : JType.J, "jdiv");
      case Opcodes.IREM, Opcodes.LREM -> integerDivision(op == Opcodes.IREM ? JType.I : JType.J, "jrem");
      case Opcodes.FDIV -> {
        Val b = pop();
        Val a = pop();
        push(temp(JType.F, unit.helper("vkt_fdiv") + "(" + a.v() + ", " + b.v() + ")"));
      }
      case Opcodes.DDIV -> {
        Val b = pop();
        Val a = pop();
        push(temp(JType.D, unit.helper("vkt_ddiv") + "(" + a.v() + ", " + b.v() + ")"));
      }
      case Opcodes.FREM, Opcodes.DREM -> throw refuse("floating-point % (no exact device version yet)");
      case Opcodes.INEG, Opcodes.LNEG, Opcodes.FNEG, Opcodes.DNEG -> {
        Val a = pop();
        push(temp(a.type(), "-" + a.v()));
      }
      case Opcodes.ISHL, Opcodes.LSHL -> shift("jshl", op == Opcodes.ISHL ? JType.I : JType.J);
      case Opcodes.ISHR, Opcodes.LSHR -> shift("jshr", op == Opcodes.ISHR ? JType.I : JType.J);
      case Opcodes.IUSHR, Opcodes.LUSHR -> shift("jushr", op == Opcodes.IUSHR ? JType.I : JType.J);
      case Opcodes.IAND, Opcodes.LAND -> binary(op == Opcodes.IAND ? 0 : 1, "&");
      case Opcodes.IOR, Opcodes.LOR -> binary(op == Opcodes.IOR ? 0 : 1, "|");
      case Opcodes.IXOR, Opcodes.LXOR -> binary(op == Opcodes.IXOR ? 0 : 1, "^");
      case Opcodes.I2L -> convertTop(JType.J, "int64_t(%s)");
      // conversions that round are multiplied by a 1.0 the compiler cannot see: lavapipe folded
      // (int) (float) x into x, losing Java's rounding (Helpers.ONE)
      case Opcodes.I2F -> convertTop(JType.F, "float(%s) * float(" + Helpers.ONE + ")");
      case Opcodes.I2D -> convertTop(JType.D, "double(%s)");
      case Opcodes.L2I -> convertTop(JType.I, "int(%s)");
      case Opcodes.L2F -> convertTop(JType.F, "float(%s) * float(" + Helpers.ONE + ")");
      case Opcodes.L2D -> convertTop(JType.D, "double(%s) * " + Helpers.ONE);
      case Opcodes.F2I, Opcodes.D2I -> convertTop(JType.I, "jint(%s)");
      case Opcodes.F2L, Opcodes.D2L -> convertTop(JType.J, "jlong(%s)");
      case Opcodes.F2D -> convertTop(JType.D, "double(%s)");
      case Opcodes.D2F -> convertTop(JType.F, "float(%s) * float(" + Helpers.ONE + ")");
      case Opcodes.I2B -> convertTop(JType.I, "((%s << 24) >> 24)");
      case Opcodes.I2S -> convertTop(JType.I, "((%s << 16) >> 16)");
      case Opcodes.I2C -> convertTop(JType.I, "(%s & 65535)");
      case Opcodes.LCMP -> {
        Val b = pop();
        Val a = pop();
        push(Val.compare(new Val.Cmp(JType.J, a.v(), b.v(), 0)));
      }
      case Opcodes.FCMPL, Opcodes.FCMPG, Opcodes.DCMPL, Opcodes.DCMPG -> {
        Val b = pop();
        Val a = pop();
        push(Val.compare(new Val.Cmp(a.type(), a.v(), b.v(),
            op == Opcodes.FCMPL || op == Opcodes.DCMPL ? -1 : 1)));
      }
      case Opcodes.GETSTATIC -> getstatic((FieldInsnNode) insn);
      case Opcodes.GETFIELD -> getfield((FieldInsnNode) insn);
      case Opcodes.PUTSTATIC, Opcodes.PUTFIELD -> throw refuse("writes a field (a UDF must not keep state)");
      case Opcodes.INVOKESTATIC, Opcodes.INVOKEVIRTUAL, Opcodes.INVOKESPECIAL, Opcodes.INVOKEINTERFACE ->
          invoke((MethodInsnNode) insn);
      case Opcodes.INVOKEDYNAMIC -> throw refuse("invokedynamic (string concatenation or a lambda)");
      case Opcodes.NEW -> throw refuse("allocates an object (new " + Type.getObjectType(((TypeInsnNode) insn).desc)
          .getClassName() + ")");
      case Opcodes.NEWARRAY, Opcodes.ANEWARRAY, Opcodes.MULTIANEWARRAY -> throw refuse("allocates an array");
      case Opcodes.CHECKCAST -> {
        Val v = stack.peek();
        Type target = Type.getObjectType(((TypeInsnNode) insn).desc);
        Type prim = JType.unboxed(target.getInternalName());
        if (v.isBox() && "true".equals(v.nul()) && prim != null) {
          stack.pop();
          push(Val.boxed(prim, JType.of(prim).zero, "true"));
        } else if (!(v.isBox() && (prim != null && prim.equals(v.box()) || target.getInternalName().equals("java/lang/Object")
            || target.getInternalName().equals("java/lang/Number")))) {
          throw refuse("casts to " + target.getClassName());
        }
      }
      case Opcodes.MONITORENTER, Opcodes.MONITOREXIT -> throw refuse("synchronized");
      default -> {
        if (op >= Opcodes.IALOAD && op <= Opcodes.SALOAD || op >= Opcodes.IASTORE && op <= Opcodes.SASTORE
            || op == Opcodes.ARRAYLENGTH) {
          throw refuse("uses an array");
        }
        throw refuse("an instruction the translator does not handle");
      }
    }
  }

  private String localVar(int slot, JType t) {
    return declare("l" + slot + t.name(), qual(t) + t.glsl + " l" + slot + t.name() + " = " + t.zero + ";");
  }

  private void aload(int slot) {
    if (slot == 0 && (m.access & Opcodes.ACC_STATIC) == 0) {
      push(Val.self());
      return;
    }
    Type box = boxSlots.get(slot);
    if (box == null) {
      throw refuse("reads a local that holds an object other than a box of a primitive");
    }
    String v = boxVar(slot, box);
    JType j = JType.of(box);
    Val value = temp(j, v);
    String n = "t" + (temps++);
    stmt("bool " + n + " = l" + slot + "n;");
    push(Val.boxed(box, value.v(), n));
  }

  private void astore(int slot, Val v) {
    Type box = boxSlots.get(slot);
    if (box == null || v.isThis() || !v.isBox()) {
      throw refuse("stores an object other than a box of a primitive in a local");
    }
    String var = boxVar(slot, box);
    boolean isNull = "true".equals(v.nul());
    stmt(var + " = " + (isNull ? JType.of(box).zero : convert(v, JType.of(box))) + ";");
    stmt("l" + slot + "n = " + v.nul() + ";");
  }

  private void ldc(Object c) {
    if (c instanceof Integer i) {
      push(Val.of(JType.I, intLiteral(i)));
    } else if (c instanceof Long l) {
      push(Val.of(JType.J, longLiteral(l)));
    } else if (c instanceof Float f) {
      push(Val.of(JType.F, floatLiteral(f)));
    } else if (c instanceof Double d) {
      push(Val.of(JType.D, doubleLiteral(d)));
    } else if (c instanceof String) {
      throw refuse("uses a string");
    } else {
      throw refuse("loads a constant of type " + c.getClass().getSimpleName());
    }
  }

  private void binary(int typeIndex, String operator) {
    JType t = JType.values()[typeIndex];
    Val b = pop();
    Val a = pop();
    push(temp(t, a.v() + " " + operator + " " + b.v()));
  }

  private void integerDivision(JType t, String helper) {
    Val b = pop();
    Val a = pop();
    throwIf(b.v() + " == " + t.zero); // ArithmeticException: / by zero
    push(temp(t, helper + "(" + a.v() + ", " + b.v() + ")"));
  }

  private void shift(String helper, JType t) {
    Val n = pop();
    Val a = pop();
    push(temp(t, helper + "(" + a.v() + ", " + n.v() + ")"));
  }

  private void convertTop(JType to, String format) {
    Val a = pop();
    push(temp(to, String.format(format, a.v())));
  }

  /** {@code v} (a primitive, or a box's primitive) as a GLSL operand of type {@code to}. */
  private static String convert(Val v, JType to) {
    if (v.type() == to) {
      return v.v();
    }
    return to.glsl + "(" + v.v() + ")";
  }

  private void getstatic(FieldInsnNode f) {
    Field field = unit.field(method, line, f.owner, f.name);
    if (!Modifier.isFinal(field.getModifiers())) {
      throw refuse("reads a static field that is not final (mutable state)");
    }
    pushConstant(field, null, f);
  }

  private void getfield(FieldInsnNode f) {
    Val owner = stack.pop();
    if (!owner.isThis() || unit.receiver(method) == null) {
      throw refuse("reads a field of an object other than the UDF itself");
    }
    pushConstant(unit.field(method, line, f.owner, f.name), unit.receiver(method), f);
  }

  /** A field's value, read now: the translation holds it as a constant. */
  private void pushConstant(Field field, Object receiver, FieldInsnNode f) {
    Object value;
    try {
      field.setAccessible(true);
      value = field.get(receiver);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw refuse("reads field " + f.name + ", which cannot be read (" + e + ")");
    }
    Type t = Type.getType(f.desc);
    if (t.getSort() == Type.OBJECT) {
      Type prim = JType.unboxed(t.getInternalName());
      if (prim == null) {
        throw refuse("reads field " + f.name + " of type " + t.getClassName());
      }
      push(value == null ? Val.boxed(prim, JType.of(prim).zero, "true") : Val.boxed(prim, literal(value, prim), "false"));
      return;
    }
    JType j = JType.of(t);
    if (j == null) {
      throw refuse("reads field " + f.name + " of type " + t.getClassName());
    }
    push(Val.of(j, literal(value, t)));
  }

  private void invoke(MethodInsnNode call) {
    Type[] args = Type.getArgumentTypes(call.desc);
    Val[] vals = new Val[args.length];
    for (int i = args.length - 1; i >= 0; i--) {
      vals[i] = pop();
    }
    Val receiver = call.getOpcode() == Opcodes.INVOKESTATIC ? null : stack.pop();
    Type ret = Type.getReturnType(call.desc);
    // boxes: valueOf and xxxValue
    Type ownerPrim = JType.unboxed(call.owner);
    if (ownerPrim != null && call.getOpcode() == Opcodes.INVOKESTATIC && call.name.equals("valueOf") && args.length == 1
        && args[0].equals(ownerPrim)) {
      push(Val.boxed(ownerPrim, vals[0].v(), "false"));
      return;
    }
    if (receiver != null && receiver.isBox() && call.name.endsWith("Value") && args.length == 0 && JType.of(ret) != null) {
      if (!"false".equals(receiver.nul())) {
        throwIf(receiver.nul()); // NullPointerException
      }
      Type from = receiver.box();
      push(temp(JType.of(ret), primitiveConversion(receiver.v(), from, ret)));
      return;
    }
    if (receiver != null && receiver.isBox()) {
      throw refuse("calls " + call.name + " on a boxed value");
    }
    // the UDF's own methods: static helpers, or instance methods on this
    if (call.owner.equals(method.owner().name) && (receiver == null || receiver.isThis())) {
      Unit.Called c = unit.call(method, line, call);
      StringBuilder a = new StringBuilder();
      for (int i = 0; i < vals.length; i++) {
        if (vals[i].isBox() || vals[i].isThis()) {
          throw refuse("passes an object to " + call.name + " (helpers take and return primitives)");
        }
        a.append(i == 0 ? "" : ", ").append(vals[i].v());
      }
      Val r = temp(c.returns(), c.function() + "(" + a + ")");
      if (c.mayThrow()) {
        stmt("if (vkj_thrown) { return " + returns.zero + "; }");
        mayThrow = true;
      }
      push(r);
      return;
    }
    if (receiver != null) {
      throw refuse("calls " + Type.getObjectType(call.owner).getClassName() + "." + call.name + " on an object");
    }
    for (Val v : vals) {
      if (v.isBox() || v.isThis()) {
        throw refuse("passes an object to " + Type.getObjectType(call.owner).getClassName() + "." + call.name);
      }
    }
    LibraryCalls.Result r = LibraryCalls.translate(call, vals, new LibraryCalls.Emitter() {
      @Override
      public Val temp(JType t, String expr) {
        return MethodTranslator.this.temp(t, expr);
      }

      @Override
      public void throwIf(String cond) {
        MethodTranslator.this.throwIf(cond);
      }

      @Override
      public String helper(String name) {
        return unit.helper(name);
      }

      @Override
      public void approximate(String call) {
        unit.approximate(call);
      }
    });
    if (r == null) {
      throw refuse("calls " + Type.getObjectType(call.owner).getClassName() + "." + call.name + call.desc
          + ", which has no device version");
    }
    push(r.value());
  }

  /** Java's conversion from primitive {@code from} to {@code to} (as {@code Double.intValue()} does). */
  private static String primitiveConversion(String v, Type from, Type to) {
    JType f = JType.of(from);
    JType t = JType.of(to);
    if (f == t) {
      return switch (to.getSort()) {
        case Type.BYTE -> from.getSort() == Type.BYTE ? v : "((" + v + " << 24) >> 24)";
        case Type.SHORT -> from.getSort() == Type.SHORT || from.getSort() == Type.BYTE ? v : "((" + v + " << 16) >> 16)";
        default -> v;
      };
    }
    if (f.floating() && !t.floating()) {
      String r = t == JType.I ? "jint(" + v + ")" : "jlong(" + v + ")";
      return to.getSort() == Type.BYTE ? "((" + r + " << 24) >> 24)" : to.getSort() == Type.SHORT ? "((" + r + " << 16) >> 16)" : r;
    }
    String r = t.glsl + "(" + v + ")";
    return to.getSort() == Type.BYTE ? "((" + r + " << 24) >> 24)" : to.getSort() == Type.SHORT ? "((" + r + " << 16) >> 16)" : r;
  }

  // ---- literals -----------------------------------------------------------------------------

  static String intLiteral(int v) {
    return v == Integer.MIN_VALUE ? "(-2147483647 - 1)" : v < 0 ? "(" + v + ")" : String.valueOf(v);
  }

  static String longLiteral(long v) {
    return v == Long.MIN_VALUE ? "(-9223372036854775807l - 1l)" : v < 0 ? "(" + v + "l)" : v + "l";
  }

  static String floatLiteral(float v) {
    if (Float.isNaN(v) || Float.isInfinite(v)) {
      return "uintBitsToFloat(" + Integer.toUnsignedString(Float.floatToRawIntBits(v)) + "u)";
    }
    String s = Float.toString(v) + "f";
    return v < 0 || (v == 0 && 1 / v < 0) ? "(" + s + ")" : s;
  }

  static String doubleLiteral(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      long bits = Double.doubleToRawLongBits(v);
      return "packDouble2x32(uvec2(" + Integer.toUnsignedString((int) bits) + "u, " + Integer.toUnsignedString((int) (bits >>> 32))
          + "u))";
    }
    String s = Double.toString(v) + "LF";
    return v < 0 || (v == 0 && 1 / v < 0) ? "(" + s + ")" : s;
  }

  /** A constant of primitive type {@code t} (a box or a primitive wrapper of a value read now). */
  static String literal(Object c, Type t) {
    return switch (t.getSort()) {
      case Type.BOOLEAN -> c instanceof Boolean b ? (b ? "1" : "0") : intLiteral(((Number) c).intValue());
      case Type.CHAR -> intLiteral((Character) c);
      case Type.BYTE, Type.SHORT, Type.INT -> intLiteral(((Number) c).intValue());
      case Type.LONG -> longLiteral(((Number) c).longValue());
      case Type.FLOAT -> floatLiteral(((Number) c).floatValue());
      case Type.DOUBLE -> doubleLiteral(((Number) c).doubleValue());
      default -> throw new IllegalArgumentException(String.valueOf(t));
    };
  }
}
