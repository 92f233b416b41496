package io.vkspark.gpu.translate;

import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * Objects known when translating ({@link Val.Known}) in a method's locals, and the method a call
 * on one of them runs. A closure's captured case class ({@code fee.rate}) and a Scala
 * {@code object} ({@code RetailPricing.price(cost)}, through its trait's forwarder and default
 * method) are such objects: their classes are the user's, so their methods translate as helpers
 * for that very object, and the virtual call is resolved now on the object's own class.
 */
final class KnownObjects {
  private final MethodTranslator t;
  /** Local slots holding a known object, each slot always the same one; null until first used. */
  private Map<Integer, Object> slots;

  KnownObjects(MethodTranslator t) {
    this.t = t;
  }

  /** The slots, first those of {@code t}'s constant arguments that are known objects (a closure's captured values). */
  private Map<Integer, Object> slots() {
    if (slots == null) {
      slots = new HashMap<>();
      Type[] args = Type.getArgumentTypes(t.m.desc);
      t.method.constants().forEach((i, c) -> {
        if (args[i].getSort() == Type.OBJECT && ObjType.of(args[i]) == null && knowable(c)) {
          slots.put(Results.slot(t.m, i), c);
        }
      });
    }
    return slots;
  }

  /**
   * Whether {@code o} may be a known object: not null, not an array, of a class whose methods
   * translate as helpers (not the JDK's, Scala's or Spark's, which have no device versions).
   */
  static boolean knowable(Object o) {
    return o != null && !o.getClass().isArray() && Invocations.isHelper(Type.getInternalName(o.getClass()));
  }

  /** {@code value}, read now, as a known object; refused as {@code what} when it cannot be one. */
  static Val.Known of(MethodTranslator t, Object value, String what) {
    if (!knowable(value)) {
      throw t.refuse(what + (value == null ? " (null)" : " (objects of the JDK, Scala or Spark do not translate)"));
    }
    return new Val.Known(value);
  }

  /** Whether {@code o} is an instance of {@code type}. */
  static boolean isInstance(MethodTranslator t, Object o, Type type) {
    try {
      return Class.forName(type.getClassName(), false, o.getClass().getClassLoader()).isInstance(o);
    } catch (ClassNotFoundException | LinkageError e) {
      throw t.refuse("casts to " + type.getClassName() + ", which does not load");
    }
  }

  /** {@code aload} of a known object from {@code slot}; false when the slot holds none. */
  boolean aload(int slot) {
    Object o = slots().get(slot);
    if (o == null) {
      return false;
    }
    t.push(new Val.Known(o));
    return true;
  }

  /** {@code astore} of a known object into {@code slot}; false when {@code v} is not one. */
  boolean astore(int slot, Val v) {
    if (!(v instanceof Val.Known k)) {
      return false;
    }
    Object before = slots().putIfAbsent(slot, k.value());
    if (before != null && before != k.value()) {
      throw t.refuse("stores two different objects in one local variable");
    }
    return true;
  }

  /**
   * The object that getter {@code target} returns for {@code self} ({@code aload 0; getfield;
   * areturn}, a case class's accessor, or {@code getstatic; areturn}, a Scala object's {@code val}),
   * read now as a known object: a nested case class ({@code tier.fee.rate}) is known as its holder
   * is. Refused for any other method returning an object.
   */
  static Val.Known getter(MethodTranslator t, MethodInsnNode target, Object self) {
    MethodNode m = t.unit.method(t.unit.classNode(target.owner), target.name, target.desc, Map.of(), self).node();
    java.util.List<org.objectweb.asm.tree.AbstractInsnNode> code = new java.util.ArrayList<>();
    m.instructions.forEach(i -> {
      if (i.getOpcode() >= 0) {
        code.add(i);
      }
    });
    boolean instance = code.size() == 3 && code.get(0).getOpcode() == Opcodes.ALOAD
        && ((org.objectweb.asm.tree.VarInsnNode) code.get(0)).var == 0 && code.get(1).getOpcode() == Opcodes.GETFIELD;
    boolean statik = code.size() == 2 && code.get(0).getOpcode() == Opcodes.GETSTATIC;
    String what = "calls " + Type.getObjectType(target.owner).getClassName() + "." + target.name + ", which returns a "
        + Type.getReturnType(target.desc).getClassName();
    if (!(instance || statik) || code.get(code.size() - 1).getOpcode() != Opcodes.ARETURN) {
      throw t.refuse(what + " (of the methods returning an object, only getters translate)");
    }
    org.objectweb.asm.tree.FieldInsnNode f = (org.objectweb.asm.tree.FieldInsnNode) code.get(code.size() - 2);
    java.lang.reflect.Field field = t.unit.field(t.method, t.line, f.owner, f.name, instance ? self : null);
    if (statik && !Unit.fixedStatic(field)) {
      throw t.refuse(what + ", a static field that is not final (mutable state)");
    }
    try {
      field.setAccessible(true);
      return of(t, field.get(instance ? self : null), what);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw t.refuse(what + ", which cannot be read (" + e + ")");
    }
  }

  /**
   * The method {@code call} runs on {@code receiver}: for {@code invokespecial}, the one of the
   * call's own class; otherwise the most specific one of the receiver's class, its superclasses,
   * then a default method of its interfaces (a Scala trait's). Returned as a call of that class.
   */
  static MethodInsnNode target(Unit unit, MethodInsnNode call, Object receiver) {
    if (call.getOpcode() == Opcodes.INVOKESPECIAL) {
      return call;
    }
    Deque<Class<?>> interfaces = new ArrayDeque<>();
    for (Class<?> k = receiver.getClass(); k != null; k = k.getSuperclass()) {
      if (declares(unit, k, call, !k.getName().replace('.', '/').equals(call.owner))) {
        return at(k, call);
      }
      interfaces.addAll(java.util.Arrays.asList(k.getInterfaces()));
    }
    while (!interfaces.isEmpty()) {
      Class<?> i = interfaces.poll();
      if (declares(unit, i, call, true)) {
        return at(i, call);
      }
      interfaces.addAll(java.util.Arrays.asList(i.getInterfaces()));
    }
    return call; // abstract everywhere: Unit.method refuses it
  }

  /** Whether class {@code k} declares {@code call}'s method with a body (not private unless {@code k} is the call's class). */
  private static boolean declares(Unit unit, Class<?> k, MethodInsnNode call, boolean skipPrivate) {
    if (!Invocations.isHelper(Type.getInternalName(k))) {
      return false;
    }
    ClassNode n = unit.classNode(Type.getInternalName(k));
    for (MethodNode m : n.methods) {
      if (m.name.equals(call.name) && m.desc.equals(call.desc) && (m.access & (Opcodes.ACC_ABSTRACT | Opcodes.ACC_STATIC)) == 0
          && !(skipPrivate && Modifier.isPrivate(m.access))) {
        return true;
      }
    }
    return false;
  }

  private static MethodInsnNode at(Class<?> k, MethodInsnNode call) {
    return new MethodInsnNode(call.getOpcode(), Type.getInternalName(k), call.name, call.desc, k.isInterface());
  }
}
