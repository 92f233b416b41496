package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import java.lang.reflect.Field;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.IincInsnNode;
import org.objectweb.asm.tree.IntInsnNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;

/**
 * The instructions of a block other than its terminator, each read into IR on the translator's
 * symbolic stack: constants, locals, arithmetic with Java's rules, conversions, fields read as
 * constants. Calls go to {@link Invocations}, arrays to {@link ConstTable}.
 */
final class Instructions {
  private final MethodTranslator t;
  private final Invocations invocations;
  private final Arrays arrays;
  private final KnownObjects known;

  Instructions(MethodTranslator t) {
    this.t = t;
    this.invocations = new Invocations(t);
    this.arrays = new Arrays(t);
    this.known = new KnownObjects(t);
  }

  void step(AbstractInsnNode insn) {
    if (StringInsns.step(t, insn)) { // strings, string builders and split arrays (StringCalls)
      return;
    }
    int op = insn.getOpcode();
    if (fold(op)) {
      return;
    }
    switch (op) {
      case Opcodes.NOP -> { }
      case Opcodes.ACONST_NULL -> t.push(new Val.Obj(new ObjType.Box(Type.INT_TYPE), Expr.i(0), Expr.TRUE));
      case Opcodes.ICONST_M1, Opcodes.ICONST_0, Opcodes.ICONST_1, Opcodes.ICONST_2, Opcodes.ICONST_3, Opcodes.ICONST_4,
           Opcodes.ICONST_5 -> t.push(Expr.i(op - Opcodes.ICONST_0));
      case Opcodes.LCONST_0, Opcodes.LCONST_1 -> t.push(Expr.j(op - Opcodes.LCONST_0));
      case Opcodes.FCONST_0, Opcodes.FCONST_1, Opcodes.FCONST_2 -> t.push(Expr.f(op - Opcodes.FCONST_0));
      case Opcodes.DCONST_0, Opcodes.DCONST_1 -> t.push(Expr.d(op - Opcodes.DCONST_0));
      case Opcodes.BIPUSH, Opcodes.SIPUSH -> t.push(Expr.i(((IntInsnNode) insn).operand));
      case Opcodes.LDC -> ldc(((LdcInsnNode) insn).cst);
      case Opcodes.ILOAD, Opcodes.LLOAD, Opcodes.FLOAD, Opcodes.DLOAD -> {
        JType j = JType.values()[op - Opcodes.ILOAD];
        t.push(t.temp(j, t.local(((VarInsnNode) insn).var, j).ref()));
      }
      case Opcodes.ALOAD -> aload(((VarInsnNode) insn).var);
      case Opcodes.ISTORE, Opcodes.LSTORE, Opcodes.FSTORE, Opcodes.DSTORE -> {
        JType j = JType.values()[op - Opcodes.ISTORE];
        Expr v = t.popPrim();
        t.emit(new Stmt.Assign(t.local(((VarInsnNode) insn).var, j), v));
      }
      case Opcodes.ASTORE -> astore(((VarInsnNode) insn).var, t.pop());
      case Opcodes.IINC -> {
        IincInsnNode i = (IincInsnNode) insn;
        Var v = t.local(i.var, JType.I);
        t.emit(new Stmt.Assign(v, Expr.bin(BinOp.ADD, v.ref(), Expr.i(i.incr))));
      }
      case Opcodes.POP -> t.stack.pop();
      case Opcodes.POP2 -> {
        if (t.stack.pop().size() == 1) {
          t.stack.pop();
        }
      }
      case Opcodes.DUP -> t.push(t.stack.peek());
      case Opcodes.DUP_X1 -> {
        Val a = t.stack.pop();
        Val b = t.stack.pop();
        push(a, b, a);
      }
      case Opcodes.DUP_X2 -> {
        Val a = t.stack.pop();
        Val b = t.stack.pop();
        if (b.size() == 2) {
          push(a, b, a);
        } else {
          Val c = t.stack.pop();
          push(a, c, b, a);
        }
      }
      case Opcodes.DUP2 -> {
        Val a = t.stack.pop();
        if (a.size() == 2) {
          push(a, a);
        } else {
          Val b = t.stack.pop();
          push(b, a, b, a);
        }
      }
      case Opcodes.DUP2_X1, Opcodes.DUP2_X2 -> throw t.refuse("an unusual stack shuffle");
      case Opcodes.SWAP -> {
        Val a = t.stack.pop();
        Val b = t.stack.pop();
        push(a, b);
      }
      case Opcodes.IADD, Opcodes.LADD, Opcodes.FADD, Opcodes.DADD -> binary(BinOp.ADD);
      case Opcodes.ISUB, Opcodes.LSUB, Opcodes.FSUB, Opcodes.DSUB -> binary(BinOp.SUB);
      case Opcodes.IMUL, Opcodes.LMUL, Opcodes.FMUL, Opcodes.DMUL -> binary(BinOp.MUL);
      case Opcodes.IDIV, Opcodes.LDIV -> integerDivision(op == Opcodes.IDIV ? JType.I : JType.J, "jdiv");
      case Opcodes.IREM, Opcodes.LREM -> integerDivision(op == Opcodes.IREM ? JType.I : JType.J, "jrem");
      case Opcodes.FDIV -> helper2(JType.F, "vkt_fdiv");
      case Opcodes.DDIV -> helper2(JType.D, "vkt_ddiv");
      case Opcodes.DREM -> {
        Expr b = t.popPrim();
        Expr a = t.popPrim();
        if (a instanceof Expr.Const x && b instanceof Expr.Const y) {
          t.push(Expr.d((Double) x.value() % (Double) y.value())); // Java's own, now
        } else {
          t.push(t.temp(JType.D, t.helper(JType.D, "vkt_fmod", a, b))); // exact: IEEE fmod, as Java's %
        }
      }
      case Opcodes.FREM -> { // the remainder of the widened floats is exact, so a float
        Expr b = t.popPrim();
        Expr a = t.popPrim();
        if (a instanceof Expr.Const x && b instanceof Expr.Const y) {
          t.push(Expr.f((Float) x.value() % (Float) y.value()));
          return;
        }
        t.push(t.temp(JType.F, new Expr.Convert(JType.F, t.helper(JType.D, "vkt_fmod", new Expr.Convert(JType.D, a),
            new Expr.Convert(JType.D, b)))));
      }
      case Opcodes.INEG, Opcodes.LNEG, Opcodes.FNEG, Opcodes.DNEG -> {
        Expr a = t.popPrim();
        t.push(t.temp(a.type(), new Expr.Unary(a.type(), Expr.UnOp.NEG, a)));
      }
      case Opcodes.ISHL, Opcodes.LSHL -> shift("jshl", op == Opcodes.ISHL ? JType.I : JType.J);
      case Opcodes.ISHR, Opcodes.LSHR -> shift("jshr", op == Opcodes.ISHR ? JType.I : JType.J);
      case Opcodes.IUSHR, Opcodes.LUSHR -> shift("jushr", op == Opcodes.IUSHR ? JType.I : JType.J);
      case Opcodes.IAND, Opcodes.LAND -> binary(BinOp.AND);
      case Opcodes.IOR, Opcodes.LOR -> binary(BinOp.OR);
      case Opcodes.IXOR, Opcodes.LXOR -> binary(BinOp.XOR);
      case Opcodes.I2L -> convert(new Expr.Convert(JType.J, t.popPrim()));
      // conversions that round are multiplied by a 1.0 the compiler cannot see: lavapipe folded
      // (int) (float) x into x, losing Java's rounding (Expr.One)
      case Opcodes.I2F, Opcodes.L2F, Opcodes.D2F -> convert(Expr.bin(BinOp.MUL, new Expr.Convert(JType.F, t.popPrim()),
          new Expr.One(JType.F)));
      case Opcodes.I2D, Opcodes.F2D -> convert(new Expr.Convert(JType.D, t.popPrim()));
      case Opcodes.L2I -> convert(new Expr.Convert(JType.I, t.popPrim()));
      case Opcodes.L2D -> convert(Expr.bin(BinOp.MUL, new Expr.Convert(JType.D, t.popPrim()), new Expr.One(JType.D)));
      case Opcodes.F2I, Opcodes.D2I -> convert(Expr.call(JType.I, "jint", t.popPrim()));
      case Opcodes.F2L, Opcodes.D2L -> convert(Expr.call(JType.J, "jlong", t.popPrim()));
      case Opcodes.I2B -> convert(Conversions.signExtend(t.popPrim(), 24));
      case Opcodes.I2S -> convert(Conversions.signExtend(t.popPrim(), 16));
      case Opcodes.I2C -> convert(Expr.bin(BinOp.AND, t.popPrim(), Expr.i(65535)));
      case Opcodes.LCMP -> {
        Expr b = t.popPrim();
        Expr a = t.popPrim();
        t.push(new Val.Cmp(JType.J, a, b, 0));
      }
      case Opcodes.FCMPL, Opcodes.FCMPG, Opcodes.DCMPL, Opcodes.DCMPG -> {
        Expr b = t.popPrim();
        Expr a = t.popPrim();
        t.push(new Val.Cmp(a.type(), a, b, op == Opcodes.FCMPL || op == Opcodes.DCMPL ? -1 : 1));
      }
      case Opcodes.GETSTATIC -> getstatic((FieldInsnNode) insn);
      case Opcodes.GETFIELD -> getfield((FieldInsnNode) insn);
      case Opcodes.PUTSTATIC, Opcodes.PUTFIELD -> throw t.refuse("writes a field (a UDF must not keep state)");
      case Opcodes.INVOKESTATIC, Opcodes.INVOKEVIRTUAL, Opcodes.INVOKESPECIAL, Opcodes.INVOKEINTERFACE ->
          invocations.invoke((MethodInsnNode) insn);
      case Opcodes.INVOKEDYNAMIC -> throw t.refuse("invokedynamic (string concatenation or a lambda)");
      case Opcodes.NEW -> {
        String type = ((TypeInsnNode) insn).desc;
        if (!ScalaCalls.CONSTRUCTED.contains(type)) {
          throw t.refuse("allocates an object (new " + Type.getObjectType(type).getClassName() + ")");
        }
        t.push(new Val.Uninit(type)); // new Some(x), new RichLong(x): the value its constructor takes
      }
      case Opcodes.NEWARRAY -> arrays.newarray((IntInsnNode) insn);
      case Opcodes.ANEWARRAY, Opcodes.MULTIANEWARRAY -> throw t.refuse("allocates an array of objects or arrays");
      case Opcodes.IALOAD, Opcodes.LALOAD, Opcodes.FALOAD, Opcodes.DALOAD, Opcodes.BALOAD, Opcodes.CALOAD,
           Opcodes.SALOAD -> arrays.load();
      case Opcodes.IASTORE, Opcodes.LASTORE, Opcodes.FASTORE, Opcodes.DASTORE, Opcodes.BASTORE, Opcodes.CASTORE,
           Opcodes.SASTORE -> arrays.store();
      case Opcodes.ARRAYLENGTH -> arrays.length();
      case Opcodes.CHECKCAST -> checkcast(Type.getObjectType(((TypeInsnNode) insn).desc));
      case Opcodes.MONITORENTER, Opcodes.MONITOREXIT -> throw t.refuse("synchronized");
      default -> throw t.refuse("an instruction the translator does not handle");
    }
  }

  /** Folds instruction {@code op} of constants on the stack into a constant (see {@link Folding}). */
  private boolean fold(int op) {
    boolean two = Folding.binary(op);
    if (!two && !Folding.unary(op)) {
      return false;
    }
    Val top = t.stack.peek();
    if (!(top instanceof Val.Prim p && p.e() instanceof Expr.Const b)) {
      return false;
    }
    Expr.Const a = null;
    if (two) {
      Val top2 = t.stack.size() > 1 ? new java.util.ArrayList<>(t.stack).get(1) : null;
      if (!(top2 instanceof Val.Prim p2 && p2.e() instanceof Expr.Const c)) {
        return false;
      }
      a = c;
    }
    Expr.Const r = two ? Folding.instruction(op, a, b) : Folding.instruction(op, b, null);
    if (r == null) {
      return false;
    }
    t.stack.pop();
    if (two) {
      t.stack.pop();
    }
    t.push(r);
    return true;
  }

  private void push(Val... vals) {
    for (Val v : vals) {
      t.push(v);
    }
  }

  private void checkcast(Type target) {
    Val v = t.stack.peek();
    if (v instanceof Val.Known k) { // known now: the cast holds on every row, or on none
      if (!KnownObjects.isInstance(t, k.value(), target)) {
        throw t.refuse("casts a " + k.value().getClass().getName() + " to " + target.getClassName() + " (it always throws)");
      }
      return;
    }
    ObjType to = ObjType.of(target);
    if (v instanceof Val.Obj o && o.alwaysNull() && to != null) {
      t.stack.pop();
      t.push(Constants.obj(null, to));
    } else if (!(v instanceof Val.Obj o && (o.type().equals(to) || target.getInternalName().equals("java/lang/Object")
        || o.type() instanceof ObjType.Box && target.getInternalName().equals("java/lang/Number")))) {
      throw t.refuse("casts to " + target.getClassName());
    }
  }

  private void aload(int slot) {
    if (slot == 0 && (t.m.access & Opcodes.ACC_STATIC) == 0 && t.method.self() != null) {
      t.push(new Val.Known(t.method.self()));
      return;
    }
    ObjType o = t.method.objSlots().get(slot);
    if (o == null) {
      if (arrays.aload(slot) || known.aload(slot)) {
        return;
      }
      throw t.refuse("reads a local that holds an object other than a box of a primitive");
    }
    Val.Obj local = t.localObj(slot, o);
    Expr value = t.temp(o.repr(), local.value());
    Expr isNull = t.temp(JType.Z, local.isNull());
    t.push(new Val.Obj(o, value, isNull));
  }

  private void astore(int slot, Val v) {
    if (arrays.astore(slot, v) || known.astore(slot, v)) {
      return;
    }
    ObjType o = t.method.objSlots().get(slot);
    if (o == null || !(v instanceof Val.Obj from)) {
      throw t.refuse(v instanceof Val.Text ? "uses a string" : "stores an object other than a box of a primitive in a local");
    }
    Val.Obj local = t.localObj(slot, o);
    t.emit(new Stmt.Assign(((Expr.Ref) local.value()).var(), from.alwaysNull() ? Expr.zero(o.repr())
        : Expr.convert(from.value(), o.repr())));
    t.emit(new Stmt.Assign(((Expr.Ref) local.isNull()).var(), from.isNull()));
  }

  private void ldc(Object c) {
    if (c instanceof Integer i) {
      t.push(Expr.i(i));
    } else if (c instanceof Long l) {
      t.push(Expr.j(l));
    } else if (c instanceof Float f) {
      t.push(Expr.f(f));
    } else if (c instanceof Double d) {
      t.push(Expr.d(d));
    } else if (c instanceof String s) {
      t.push(new Val.Text(s)); // refused where it is used, unless as an exception message
    } else {
      throw t.refuse("loads a constant of type " + c.getClass().getSimpleName());
    }
  }

  private void binary(BinOp op) {
    Expr b = t.popPrim();
    Expr a = t.popPrim();
    if (op == BinOp.SUB && a.type().floating() && isZero(b, -1)) { // x - -0.0 is x + 0.0, for every x
      op = BinOp.ADD;
      b = Expr.of(b.type(), 0);
    }
    // lavapipe folds x * 0.0 into 0.0 (NaN * 0.0 is NaN, -1.0 * 0.0 is -0.0), x + 0.0 into x (-0.0 + 0.0 is 0.0)
    // and 0.0 - x into -x (0.0 - 0.0 is 0.0): a driver may ignore the sign of a zero, Java may not
    if ((op == BinOp.MUL || op == BinOp.ADD || op == BinOp.SUB) && a.type().floating()) {
      a = opaqueZero(a);
      b = op == BinOp.SUB ? b : opaqueZero(b); // x - 0.0 is x, for every x
    }
    t.push(t.temp(a.type(), Expr.bin(op, a, b)));
  }

  /** A constant +0.0 as {@code 1.0 - 1.0} that the compiler cannot see through (see {@link Expr.One}); others as they are. */
  private static Expr opaqueZero(Expr e) {
    if (isZero(e, 1)) {
      return Expr.bin(BinOp.SUB, new Expr.One(e.type()), Expr.of(e.type(), 1));
    }
    return e;
  }

  /** Whether {@code e} is the constant 0.0 of sign {@code sign} (1: +0.0, -1: -0.0). */
  private static boolean isZero(Expr e, int sign) {
    return e instanceof Expr.Const c && c.type().floating() && ((Number) c.value()).doubleValue() == 0
        && Math.signum(1 / ((Number) c.value()).doubleValue()) == sign;
  }

  private void helper2(JType type, String helper) {
    Expr b = t.popPrim();
    Expr a = t.popPrim();
    t.push(t.temp(type, t.helper(type, helper, a, b)));
  }

  private void integerDivision(JType type, String helper) {
    Expr b = t.popPrim();
    Expr a = t.popPrim();
    t.throwIf(Expr.bin(BinOp.EQ, b, Expr.zero(type))); // ArithmeticException: / by zero
    t.push(t.temp(type, Expr.call(type, helper, a, b)));
  }

  private void shift(String helper, JType type) {
    Expr n = t.popPrim();
    Expr a = t.popPrim();
    t.push(t.temp(type, Expr.call(type, helper, a, n)));
  }

  private void convert(Expr e) {
    t.push(t.temp(e.type(), e));
  }

  private void getstatic(FieldInsnNode f) {
    if (f.name.equals("MODULE$") && ScalaCalls.MODULES.contains(f.owner)) {
      t.push(new Val.Module(f.owner));
      return;
    }
    if (f.name.equals("MODULE$") && f.owner.equals("scala/None$")) {
      t.push(new Val.Obj(new ObjType.Box(Type.INT_TYPE), Expr.i(0), Expr.TRUE)); // None: a null result
      return;
    }
    Field field = t.unit.field(t.method, t.line, f.owner, f.name, null);
    if (!Unit.fixedStatic(field)) {
      throw t.refuse("reads a static field that is not final (mutable state)");
    }
    pushConstant(field, null, f);
  }

  private void getfield(FieldInsnNode f) {
    Val owner = t.stack.pop();
    if (!(owner instanceof Val.Known k)) {
      throw t.refuse("reads a field of an object not known when translating (the UDF, a captured value, "
          + "a static final one)");
    }
    pushConstant(t.unit.field(t.method, t.line, f.owner, f.name, k.value()), k.value(), f);
  }

  /** A field's value, read now: the translation holds it as a constant. */
  private void pushConstant(Field field, Object receiver, FieldInsnNode f) {
    Object value;
    try {
      field.setAccessible(true);
      value = field.get(receiver);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw t.refuse("reads field " + f.name + ", which cannot be read (" + e + ")");
    }
    Type type = Type.getType(f.desc);
    if (type.getSort() == Type.ARRAY) {
      arrays.constant(value, type);
      return;
    }
    ObjType o = ObjType.of(type);
    if (o != null) {
      Val.Obj c = Constants.obj(value, o);
      if (c == null) {
        throw t.refuse("reads field " + f.name + ", a " + o.className() + " with no constant device value");
      }
      t.push(c);
      return;
    }
    if (JType.of(type) == null) {
      t.push(KnownObjects.of(t, value, "reads field " + f.name + " of type " + type.getClassName()));
      return;
    }
    t.push(Constants.of(value, type));
  }
}
