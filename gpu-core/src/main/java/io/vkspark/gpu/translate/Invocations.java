package io.vkspark.gpu.translate;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * Method calls, in this order: methods of modelled values and about them ({@link Boxes}, ...);
 * helper methods, translated once each as GLSL functions by {@link Unit#call} (static methods of
 * the UDF's own class or of other classes on its class path, and instance methods of objects known
 * when translating, {@link KnownObjects}: the UDF's own, a captured case class's, a Scala
 * {@code object}'s; primitives, boxes and known objects as arguments); then the library methods
 * over primitives with device versions ({@link LibraryCalls}).
 */
final class Invocations {
  /** Classes whose methods are never translated as helpers: only their listed methods have device versions. */
  private static final List<String> LIBRARY = List.of("java/", "javax/", "jdk/", "sun/", "com/sun/", "scala/",
      "org/apache/spark/");

  private final MethodTranslator t;

  Invocations(MethodTranslator t) {
    this.t = t;
  }

  void invoke(MethodInsnNode call) {
    Type[] args = Type.getArgumentTypes(call.desc);
    Val[] vals = new Val[args.length];
    for (int i = args.length - 1; i >= 0; i--) {
      vals[i] = t.pop();
    }
    Val receiver = call.getOpcode() == Opcodes.INVOKESTATIC ? null : t.stack.pop();
    String owner = Type.getObjectType(call.owner).getClassName();
    Val v = ObjectCalls.translate(call, receiver, vals, t);
    if (v != null) {
      if (!(v instanceof Val.Void)) {
        t.push(v);
      }
      return;
    }
    if (receiver instanceof Val.Module || receiver instanceof Val.Uninit) {
      throw t.refuse("calls " + owner + "." + call.name + call.desc + ", which has no device version");
    }
    if (receiver instanceof Val.Text || List.of(vals).stream().anyMatch(x -> x instanceof Val.Text)) {
      throw t.refuse("uses a string (" + owner + "." + call.name + ")");
    }
    if (receiver instanceof Val.Obj o) {
      throw t.refuse("calls " + call.name + " on a " + (o.type() instanceof ObjType.Box ? "boxed value" : o.type().className()));
    }
    if (receiver instanceof Val.Known k) { // the UDF object, a captured one, a Scala object: its method, resolved now
      MethodInsnNode target = KnownObjects.target(t.unit, call, k.value());
      if (!isHelper(target.owner)) {
        throw t.refuse("calls " + owner + "." + call.name + " on a " + k.value().getClass().getName()
            + ", which has no device version");
      }
      Type rt = Type.getReturnType(call.desc);
      t.push(rt.getSort() == Type.OBJECT && ObjType.of(rt) == null && vals.length == 0
          ? KnownObjects.getter(t, target, k.value()) : helper(target, k.value(), vals));
      return;
    }
    if (receiver == null && (call.owner.equals(t.method.owner().name) || isHelper(call.owner))) {
      t.push(helper(call, null, vals));
      return;
    }
    if (receiver != null) {
      throw t.refuse("calls " + owner + "." + call.name + " on an object");
    }
    Expr[] prims = new Expr[vals.length];
    for (int i = 0; i < vals.length; i++) {
      if (!(vals[i] instanceof Val.Prim p)) {
        throw t.refuse("passes an object to " + owner + "." + call.name);
      }
      prims[i] = p.e();
    }
    Expr r = LibraryCalls.translate(call, prims, t);
    if (r == null) {
      throw t.refuse("calls " + owner + "." + call.name + call.desc + ", which has no device version");
    }
    t.push(r);
  }

  /** Whether static methods of class {@code owner} translate as helpers (not the JDK's, Scala's, Spark's). */
  static boolean isHelper(String owner) {
    return LIBRARY.stream().noneMatch(owner::startsWith);
  }

  /**
   * A call of a helper method on {@code self} (null: static): primitives as they are, a box as its
   * value and its null flag, a known object as a constant of the helper translated for it.
   */
  private Val helper(MethodInsnNode call, Object self, Val[] vals) {
    Map<Integer, Object> known = new TreeMap<>();
    for (int i = 0; i < vals.length; i++) {
      if (vals[i] instanceof Val.Known k) {
        known.put(i, k.value());
      }
    }
    Unit.Called c = t.unit.call(t.method, t.line, call, self, known);
    Type[] types = Type.getArgumentTypes(call.desc);
    List<Expr> a = new ArrayList<>();
    for (int i = 0; i < vals.length; i++) {
      ObjType box = ObjType.of(types[i]);
      if (vals[i] instanceof Val.Known) {
        continue; // a constant of the helper
      }
      if (vals[i] instanceof Val.Prim p && box == null) {
        a.add(p.e());
      } else if (vals[i] instanceof Val.Obj o && box != null) {
        a.add(o.alwaysNull() ? Expr.zero(box.repr()) : Expr.convert(o.value(), box.repr()));
        a.add(o.isNull());
      } else {
        throw t.refuse("passes " + (vals[i] instanceof Val.Text ? "a string" : "an object") + " to " + call.name
            + " (helpers take primitives and their boxes)");
      }
    }
    Expr isNull = null;
    if (c.box() != null) { // its null flag comes back in an out parameter
      isNull = t.temp(JType.Z, Expr.FALSE);
      a.add(isNull);
    }
    Expr r = t.temp(c.returns(), new Expr.Call(c.returns(), c.function(), a));
    if (c.mayThrow()) {
      t.emit(Stmt.when(Var.THROWN.ref(), new Stmt.Return(Expr.zero(t.returns))));
      t.mayThrow = true;
    }
    return c.box() != null ? new Val.Obj(c.box(), r, isNull) : Val.of(r);
  }
}
