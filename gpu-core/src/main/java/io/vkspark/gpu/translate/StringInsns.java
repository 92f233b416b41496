package io.vkspark.gpu.translate;

import java.lang.reflect.Field;
import java.util.Iterator;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.VarInsnNode;

/**
 * The instructions that make or use strings, read before {@link Instructions} sees them: string
 * constants ({@code ldc}, {@code String} fields of the UDF and {@code static final} ones, read now),
 * concatenation ({@code invokedynamic makeConcatWithConstants}), {@code new StringBuilder} and its
 * constructor, calls of the string families ({@link StringCalls}, {@link StringBuilders}), and the
 * {@code String[]} of a {@code split}, which may be stored in a local, indexed ({@code aaload}) and
 * measured ({@code arraylength}) only.
 */
final class StringInsns {
  private StringInsns() {}

  /** Whether {@code insn} was read here (else {@link Instructions} reads it). */
  static boolean step(MethodTranslator t, AbstractInsnNode insn) {
    boolean before = t.unit.strings.used();
    boolean read = read(t, insn);
    if (!before && t.unit.strings.used()) {
      t.unit.strings.firstUse = t.method.source() + (t.line > 0 ? " line " + t.line : "") + ": uses a string ["
          + Insns.describe(insn) + "]";
    }
    return read;
  }

  private static boolean read(MethodTranslator t, AbstractInsnNode insn) {
    int op = insn.getOpcode();
    switch (op) {
      case Opcodes.LDC -> {
        if (((LdcInsnNode) insn).cst instanceof String s) {
          t.push(new StringCalls(t).constant(s));
          return true;
        }
      }
      case Opcodes.INVOKEDYNAMIC -> {
        InvokeDynamicInsnNode indy = (InvokeDynamicInsnNode) insn;
        if (StringBuilders.isConcat(indy)) {
          new StringBuilders(new StringCalls(t)).concat(indy);
          return true;
        }
      }
      case Opcodes.NEW -> {
        if (((TypeInsnNode) insn).desc.equals("java/lang/StringBuilder")) {
          t.push(new StringBuilders(new StringCalls(t)).newBuilder());
          return true;
        }
      }
      case Opcodes.INVOKESTATIC, Opcodes.INVOKEVIRTUAL, Opcodes.INVOKESPECIAL, Opcodes.INVOKEINTERFACE -> {
        return invoke(t, (MethodInsnNode) insn);
      }
      case Opcodes.AALOAD -> {
        Iterator<Val> it = t.stack.iterator();
        it.next();
        if (parts(it.next())) {
          Expr k = t.popPrim();
          t.push(new StringCalls(t).piece((Val.Obj) t.stack.pop(), k));
          return true;
        }
      }
      case Opcodes.ARRAYLENGTH -> {
        if (parts(t.stack.peek())) {
          t.push(new StringCalls(t).count((Val.Obj) t.stack.pop()));
          return true;
        }
      }
      case Opcodes.ASTORE -> {
        if (parts(t.stack.peek())) {
          Val.Obj v = (Val.Obj) t.stack.pop();
          Val.Obj local = partsLocal(t, ((VarInsnNode) insn).var);
          t.emit(new Stmt.Assign(((Expr.Ref) local.value()).var(), v.alwaysNull() ? Expr.zero(JType.S) : v.value()));
          t.emit(new Stmt.Assign(((Expr.Ref) local.isNull()).var(), v.isNull()));
          return true;
        }
      }
      case Opcodes.ALOAD -> {
        int slot = ((VarInsnNode) insn).var;
        var frame = t.method.frames()[t.m.instructions.indexOf(insn)];
        Type type = frame == null || slot >= frame.getLocals() ? null : frame.getLocal(slot).getType();
        if (type != null && type.getDescriptor().equals("[Ljava/lang/String;")) {
          Val.Obj local = partsLocal(t, slot);
          t.push(new Val.Obj(local.type(), t.temp(JType.S, local.value()), t.temp(JType.Z, local.isNull())));
          return true;
        }
      }
      case Opcodes.ANEWARRAY -> { // the varargs of String.format: name the call, not the array
        for (AbstractInsnNode n = insn.getNext(); n != null; n = n.getNext()) {
          if (n instanceof MethodInsnNode call) {
            if (call.owner.equals(StringCalls.STRING) && (call.name.equals("format") || call.name.equals("formatted"))) {
              throw t.refuse("String." + call.name + " (formatting stays on the CPU)");
            }
            if (call.desc.contains("[Ljava/lang/Object;")) {
              break;
            }
          }
        }
      }
      case Opcodes.GETSTATIC, Opcodes.GETFIELD -> {
        FieldInsnNode f = (FieldInsnNode) insn;
        if (f.owner.equals(ScalaStrings.OPS) && f.name.equals("MODULE$")) {
          t.push(new Val.Module(f.owner));
          return true;
        }
        if (f.desc.equals("Ljava/lang/String;")) {
          t.push(field(t, f));
          return true;
        }
      }
      default -> { }
    }
    return false;
  }

  private static boolean parts(Val v) {
    return v instanceof Val.Obj o && o.type() instanceof ObjType.Parts;
  }

  /** The variables of local {@code slot} holding a split's parts (a view, as a string local's). */
  private static Val.Obj partsLocal(MethodTranslator t, int slot) {
    Var n = t.declare("l" + slot + "n", JType.Z, Var.Kind.LOCAL);
    Var v = t.declare("l" + slot + "bS", JType.S, Var.Kind.LOCAL);
    return new Val.Obj(new ObjType.Parts(), v.ref(), n.ref());
  }

  private static boolean invoke(MethodTranslator t, MethodInsnNode call) {
    Type[] types = Type.getArgumentTypes(call.desc);
    Val[] args = new Val[types.length];
    Iterator<Val> it = t.stack.iterator();
    for (int i = types.length - 1; i >= 0; i--) {
      args[i] = it.next();
    }
    Val receiver = call.getOpcode() == Opcodes.INVOKESTATIC ? null : it.next();
    boolean builder = call.owner.equals("java/lang/StringBuilder") && call.name.equals("<init>");
    boolean strings = StringCalls.owns(call, receiver, args);
    boolean scala = ScalaStrings.owns(call);
    if (!builder && !strings && !scala && !StringBuilders.owns(call)) {
      return false;
    }
    for (int i = types.length - 1; i >= 0; i--) {
      args[i] = t.pop();
    }
    if (receiver != null) {
      t.stack.pop();
    }
    StringCalls c = new StringCalls(t);
    StringBuilders b = new StringBuilders(c);
    if (builder) {
      if (!(receiver instanceof Val.Obj o) || !(o.type() instanceof ObjType.Builder)) {
        throw t.refuse("constructs a StringBuilder the translator does not model");
      }
      b.init(o, call.desc, args); // void: the builder made by new stays on the stack
      return true;
    }
    Val v = scala ? ScalaStrings.invoke(c, call, args) : strings ? c.invoke(call, receiver, args) : b.invoke(call, receiver, args);
    if (Type.getReturnType(call.desc).getSort() != Type.VOID) {
      t.push(v);
    }
    return true;
  }

  /** A {@code String} field read now (an instance field of the UDF object, or a {@code static final} one). */
  private static Val field(MethodTranslator t, FieldInsnNode f) {
    Object receiver = null;
    if (f.getOpcode() == Opcodes.GETFIELD) {
      if (!(t.stack.pop() instanceof Val.Known k)) {
        throw t.refuse("reads a field of an object not known when translating");
      }
      receiver = k.value();
    }
    Field field = t.unit.field(t.method, t.line, f.owner, f.name, receiver);
    if (f.getOpcode() == Opcodes.GETSTATIC && !Unit.fixedStatic(field)) {
      throw t.refuse("reads a static field that is not final (mutable state)");
    }
    Object value;
    try {
      field.setAccessible(true);
      value = field.get(receiver);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw t.refuse("reads field " + f.name + ", which cannot be read (" + e + ")");
    }
    if (value == null) {
      return new Val.Obj(new ObjType.Str(), Expr.zero(JType.S), Expr.TRUE);
    }
    return new StringCalls(t).constant((String) value);
  }
}
