package io.vkspark.gpu.translate;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.JumpInsnNode;
import org.objectweb.asm.tree.LineNumberNode;
import org.objectweb.asm.tree.LookupSwitchInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TableSwitchInsnNode;
import org.objectweb.asm.tree.analysis.BasicValue;
import org.objectweb.asm.tree.analysis.Frame;

/**
 * One Java method as one IR function ({@link Fn}). Every value the method computes becomes an
 * immutable temporary, locals become variables, and the control flow is laid out by
 * {@link ControlFlow}: each basic block runs when its flag is set, in an order where every block
 * follows those that can reach it, and each loop is a {@code while} over its blocks. The
 * instructions of a block are read by {@link Instructions} (and calls by {@link Invocations});
 * operations whose GLSL meaning differs from Java's go through the Java-semantics helpers
 * ({@code jdiv}, {@code jint}, ...) or the translator's own ({@link Helpers}); rows where Java
 * throws (or returns null) call {@code jthrow()} and return at once.
 */
final class MethodTranslator implements LibraryCalls.Code {
  final Unit unit;
  final Unit.Method method;
  final MethodNode m;
  private final String fn;
  private final Frame<BasicValue>[] frames;
  /** The method's return type as the IR keeps it (a box's primitive). */
  final JType returns;
  /** Variables declared at the top of the function, by name. */
  private final Map<String, Var> vars = new LinkedHashMap<>();
  final Deque<Val> stack = new ArrayDeque<>();
  private final Instructions instructions = new Instructions(this);
  private final Branches branches = new Branches(this);
  private List<Stmt> out = new ArrayList<>();
  private int temps;
  int line = -1;
  AbstractInsnNode at;
  boolean mayThrow;
  private ControlFlow cfg;
  /** Constant tables on the stack across a branch, by (first instruction of the block entered, depth). */
  private final Map<List<Integer>, ConstTable> stackTables = new java.util.HashMap<>();
  /** Whether a box parameter comes with its null flag ({@code p1n}); else it is never null. */
  private final boolean boxNulls;
  /**
   * A helper's {@code out} parameter for the null flag of the box it returns; null for the main
   * function (whose null result is a row {@code call()} computes) or a primitive result.
   */
  final Var nullOut;

  /** The box the method returns: its descriptor's, or the real one of an erased {@code Object} ({@link Results}); null for a primitive. */
  final ObjType resultBox;
  /** Whether the descriptor says only {@code Object} and {@link #resultBox} is inferred or registered. */
  final boolean erasedResult;

  MethodTranslator(Unit unit, Unit.Method method, String fn, boolean boxNulls) {
    this(unit, method, fn, boxNulls, null);
  }

  MethodTranslator(Unit unit, Unit.Method method, String fn, boolean boxNulls, ObjType erasedResult) {
    this.boxNulls = boxNulls;
    this.unit = unit;
    this.method = method;
    this.m = method.node();
    this.fn = fn;
    this.frames = method.frames();
    Type rt = Type.getReturnType(m.desc);
    this.resultBox = erasedResult != null ? erasedResult : ObjType.of(rt);
    this.erasedResult = erasedResult != null;
    this.nullOut = boxNulls && resultBox != null ? new Var("rn", JType.Z, Var.Kind.OUT) : null;
    this.returns = resultBox != null ? resultBox.repr() : JType.of(rt);
  }

  /** The function. */
  Fn translate() {
    cfg = ControlFlow.of(m, (at, what) -> unit.refuse(method, at, what), MethodTranslator::lineOf);
    List<Stmt> body = cfg.code(this::block);
    List<Stmt> copies = entryCopies(); // declares the parameters' variables
    List<Stmt> all = new ArrayList<>();
    for (Var v : vars.values()) {
      all.add(new Stmt.Declare(v, Expr.zero(v.type())));
    }
    for (int b : cfg.blocks()) {
      all.add(new Stmt.Declare(ControlFlow.flag(b), Expr.bool(b == 0)));
    }
    all.addAll(copies);
    all.addAll(body);
    all.add(new Stmt.Return(Expr.zero(returns)));
    return new Fn(fn, returns, parameters(), all);
  }

  /** Parameters: one per JVM argument that is not a captured constant (a box's null flag is false on the GPU). */
  private List<Var> parameters() {
    List<Var> p = new ArrayList<>();
    Type[] args = Type.getArgumentTypes(m.desc);
    for (int i = 0; i < args.length; i++) {
      if (!method.constants().containsKey(i)) {
        ObjType o = method.argType(i);
        p.add(new Var("p" + i, o != null ? o.repr() : JType.of(args[i]), Var.Kind.PARAM));
        if (boxNulls && o != null) {
          p.add(new Var("p" + i + "n", JType.Z, Var.Kind.PARAM));
        }
      }
    }
    if (nullOut != null) {
      p.add(nullOut);
    }
    return p;
  }

  /** Parameters (and captured constants) into the local variables the body uses. */
  private List<Stmt> entryCopies() {
    List<Stmt> s = new ArrayList<>();
    Type[] args = Type.getArgumentTypes(m.desc);
    int slot = (m.access & Opcodes.ACC_STATIC) != 0 ? 0 : 1;
    for (int i = 0; i < args.length; i++) {
      Type t = args[i];
      boolean captured = method.constants().containsKey(i);
      Object c = method.constants().get(i);
      if (captured && t.getSort() == Type.OBJECT && method.argType(i) == null && KnownObjects.knowable(c)) {
        slot += t.getSize(); // a known object (KnownObjects): no variable
        continue;
      }
      if (t.getSort() == Type.OBJECT) {
        ObjType o = method.argType(i);
        if (o == null) {
          throw unit.refuse(method, -1, "argument " + (i + 1) + " is a " + t.getClassName()
              + " (only primitives and their boxes translate)");
        }
        Val.Obj local = localObj(slot, o); // declared even when unread: a box argument is always copied
        s.add(new Stmt.Assign(var(local.value()), captured ? (c == null ? Expr.zero(o.repr()) : Constants.of(c, o))
            : param(i, o.repr())));
        s.add(new Stmt.Assign(var(local.isNull()), !captured && boxNulls ? new Var("p" + i + "n", JType.Z, Var.Kind.PARAM).ref()
            : Expr.bool(captured && c == null)));
      } else {
        JType j = JType.of(t);
        String v = "l" + slot + j.name();
        if (vars.containsKey(v)) {
          s.add(new Stmt.Assign(vars.get(v), captured ? Constants.of(c, t) : param(i, j)));
        }
      }
      slot += t.getSize();
    }
    return s;
  }

  private static Expr param(int i, JType t) {
    return new Var("p" + i, t, Var.Kind.PARAM).ref();
  }

  /** The variable {@code name}, declared at the top of the function (with its zero) on first use. */
  Var declare(String name, JType type, Var.Kind kind) {
    return vars.computeIfAbsent(name, n -> new Var(n, type, kind));
  }

  /** Local slot {@code slot} holding a {@code t}. */
  Var local(int slot, JType t) {
    return declare("l" + slot + t.name(), t, Var.Kind.LOCAL);
  }

  /** Local slot {@code slot} holding a reference of type {@code o}: its value and null flag. */
  Val.Obj localObj(int slot, ObjType o) {
    Var n = declare("l" + slot + "n", JType.Z, Var.Kind.LOCAL);
    Var v = declare("l" + slot + "b" + o.repr().name(), o.repr(), Var.Kind.LOCAL);
    return new Val.Obj(o, v.ref(), n.ref());
  }

  static int lineOf(AbstractInsnNode insn) {
    for (AbstractInsnNode i = insn; i != null; i = i.getPrevious()) {
      if (i instanceof LineNumberNode l) {
        return l.line;
      }
    }
    return -1;
  }

  // ---- one basic block ----------------------------------------------------------------------

  /** The code of block {@code b} and its exits (see {@link ControlFlow}). */
  private List<Stmt> block(ControlFlow.Block b, ControlFlow.Exits exits) {
    out = new ArrayList<>();
    stack.clear();
    Frame<BasicValue> entry = frames[b.first()];
    for (int i = 0; i < entry.getStackSize(); i++) {
      ConstTable table = stackTables.get(List.of(b.first(), i));
      stack.push(table != null ? new Val.Table(table) : stackVar(i, entry.getStack(i)));
    }
    // a block that ends in athrow only builds an exception: the row throws
    AbstractInsnNode last = m.instructions.get(b.last());
    if (last.getOpcode() == Opcodes.ATHROW) {
      line = lineOf(last);
      emit(new Stmt.Throw(Expr.zero(returns)));
      mayThrow = true;
      return out;
    }
    for (int i = b.first(); i <= b.last(); i++) {
      AbstractInsnNode insn = m.instructions.get(i);
      if (insn.getOpcode() < 0) {
        if (insn instanceof LineNumberNode l) {
          line = l.line;
        }
        continue;
      }
      at = insn;
      if (i == b.last() && isTerminator(insn)) {
        branches.terminate(insn, exits);
        return out;
      }
      instructions.step(insn);
    }
    // falls through into the next block
    storeStackFor(exits.fallthrough());
    emit(exits.go(exits.fallthrough()));
    return out;
  }

  private static boolean isTerminator(AbstractInsnNode insn) {
    int op = insn.getOpcode();
    return insn instanceof JumpInsnNode || insn instanceof TableSwitchInsnNode || insn instanceof LookupSwitchInsnNode
        || (op >= Opcodes.IRETURN && op <= Opcodes.RETURN);
  }

  /** The variables of stack slot {@code depth} holding a {@code v} across a branch. */
  private Val stackVar(int depth, BasicValue v) {
    Type t = v.getType();
    if (t == null) {
      throw refuse("a value of unknown type on the stack across a branch");
    }
    if (t.getSort() == Type.OBJECT && ScalaCalls.MODULES.contains(t.getInternalName())) {
      return new Val.Module(t.getInternalName()); // a Scala object: the same value on every path
    }
    if (t.getSort() == Type.OBJECT) {
      ObjType o = t.getInternalName().equals("null") ? new ObjType.Box(Type.INT_TYPE)
          : Results.OPTION.contains(t.getInternalName()) && erasedResult ? resultBox // an Option of the result's box
          : ObjType.of(t);
      if (o == null) {
        throw refuse("a " + t.getClassName() + " on the stack across a branch");
      }
      Var n = declare("s" + depth + "n", JType.Z, Var.Kind.STACK);
      Var x = declare("s" + depth + "b" + o.repr().name(), o.repr(), Var.Kind.STACK);
      return new Val.Obj(o, x.ref(), n.ref());
    }
    JType j = JType.of(t);
    if (j == null) {
      throw refuse("a " + t + " on the stack across a branch");
    }
    return Val.of(declare("s" + depth + j.name(), j, Var.Kind.STACK).ref());
  }

  /** Notes the constant tables left on the stack for block {@code target} (a second successor of a branch). */
  void noteTables(int target) {
    List<Val> vals = new ArrayList<>(stack);
    Collections.reverse(vals);
    for (int i = 0; i < vals.size(); i++) {
      if (vals.get(i) instanceof Val.Table table) {
        ConstTable before = stackTables.putIfAbsent(List.of(cfg.first(target), i), table.table());
        if (before != null && !before.equals(table.table())) {
          throw refuse("two different arrays on the stack across a branch");
        }
      }
    }
  }

  /** Stores what is left on the stack into the entry variables of block {@code target}. */
  void storeStackFor(int target) {
    if (stack.isEmpty()) {
      return;
    }
    Frame<BasicValue> entry = frames[cfg.first(target)];
    List<Val> vals = new ArrayList<>(stack);
    Collections.reverse(vals); // bottom first
    List<Stmt.Assign> assigns = new ArrayList<>();
    for (int i = 0; i < vals.size(); i++) {
      Val from = force(vals.get(i));
      if (from instanceof Val.Table table) { // a constant: the same table on every path, no variable
        ConstTable before = stackTables.putIfAbsent(List.of(cfg.first(target), i), table.table());
        if (before != null && !before.equals(table.table())) {
          throw refuse("two different arrays on the stack across a branch");
        }
        continue;
      }
      Val to = stackVar(i, entry.getStack(i));
      if (to instanceof Val.Module) {
        continue;
      }
      if (to instanceof Val.Obj box) {
        if (!(from instanceof Val.Obj f)) {
          throw refuse("the UDF object on the stack across a branch");
        }
        if (!f.alwaysNull() && !f.type().equals(box.type())) {
          throw refuse("a " + f.type().className() + " where a " + box.type().className() + " is on the stack across a branch");
        }
        assigns.add(new Stmt.Assign(var(box.value()), f.alwaysNull() ? Expr.zero(box.type().repr())
            : Expr.convert(f.value(), box.type().repr())));
        assigns.add(new Stmt.Assign(var(box.isNull()), f.isNull()));
      } else {
        Expr e = ((Val.Prim) from).e();
        Var v = var(((Val.Prim) to).e());
        if (!(e instanceof Expr.Ref r && r.var().equals(v))) {
          assigns.add(new Stmt.Assign(v, e));
        }
      }
    }
    // a value read from a stack variable is copied through a temporary first: the assignments
    // may write that variable before they read it
    List<Stmt> post = new ArrayList<>();
    for (Stmt.Assign a : assigns) {
      if (Expr.reads(a.value(), Var.Kind.STACK)) {
        post.add(new Stmt.Assign(a.var(), temp(a.var().type(), a.value())));
      } else {
        post.add(a);
      }
    }
    out.addAll(post);
  }

  private static Var var(Expr e) {
    return ((Expr.Ref) e).var();
  }

  /** A pending comparison as an int temporary (-1, 0, 1); other values as they are. */
  Val force(Val v) {
    if (!(v instanceof Val.Cmp c)) {
      return v;
    }
    if (c.type() == JType.J) {
      return Val.of(temp(JType.I, helper(JType.I, "vkt_lcmp", c.a(), c.b())));
    }
    Expr nan = Expr.i(c.type().floating() ? c.nanResult() : 0);
    Expr a = c.a();
    Expr b = c.b();
    return Val.of(temp(JType.I, Expr.select(Expr.bin(Expr.BinOp.GT, a, b), Expr.i(1),
        Expr.select(Expr.bin(Expr.BinOp.LT, a, b), Expr.i(-1), Expr.select(Expr.bin(Expr.BinOp.EQ, a, b), Expr.i(0), nan)))));
  }

  // ---- the code being built (LibraryCalls.Code) ---------------------------------------------

  @Override
  public Expr temp(JType t, Expr e) {
    Var v = new Var("t" + (temps++), t, Var.Kind.TEMP);
    emit(new Stmt.Declare(v, e));
    return v.ref();
  }

  void emit(Stmt s) {
    out.add(s);
  }

  /** The row throws when {@code cond} holds. */
  @Override
  public void throwIf(Expr cond) {
    emit(Stmt.when(cond, new Stmt.Throw(Expr.zero(returns))));
    mayThrow = true;
  }

  @Override
  public Expr helper(JType t, String name, Expr... args) {
    return Expr.call(t, unit.helper(name), args);
  }

  @Override
  public void approximate(String call) {
    unit.approximate(call);
  }

  @Override
  public Untranslatable refuse(String what) {
    return unit.refuse(method, line, what + (at == null ? "" : " [" + Insns.describe(at) + "]"));
  }

  /** The top of the stack, a pending comparison made an int. */
  Val pop() {
    return force(stack.pop());
  }

  /** The top of the stack as a primitive operand. */
  Expr popPrim() {
    Val v = pop();
    if (!(v instanceof Val.Prim p)) {
      throw refuse(v instanceof Val.Text ? "uses a string" : "uses an object as a primitive");
    }
    return p.e();
  }

  void push(Val v) {
    stack.push(v);
  }

  void push(Expr e) {
    stack.push(Val.of(e));
  }
}
