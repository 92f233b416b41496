package io.vkspark.gpu.translate;

import java.util.ArrayList;
import java.util.List;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * Method calls: boxing and unboxing, the UDF's own helper methods (translated once each, as GLSL
 * functions, by {@link Unit#call}), and the library methods with device versions
 * ({@link LibraryCalls}).
 */
final class Invocations {
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
    Type ret = Type.getReturnType(call.desc);
    String owner = Type.getObjectType(call.owner).getClassName();
    // boxes: valueOf and xxxValue
    Type ownerPrim = JType.unboxed(call.owner);
    if (ownerPrim != null && receiver == null && call.name.equals("valueOf") && args.length == 1
        && args[0].equals(ownerPrim)) {
      t.push(new Val.Obj(new ObjType.Box(ownerPrim), prim(vals[0]), Expr.FALSE));
      return;
    }
    if (receiver instanceof Val.Obj o && o.type() instanceof ObjType.Box box && call.name.endsWith("Value")
        && args.length == 0 && JType.of(ret) != null) {
      if (!o.neverNull()) {
        t.throwIf(o.isNull()); // NullPointerException
      }
      t.push(t.temp(JType.of(ret), Conversions.primitive(o.value(), box.prim(), ret)));
      return;
    }
    if (receiver instanceof Val.Obj) {
      throw t.refuse("calls " + call.name + " on a boxed value");
    }
    // the UDF's own methods: static helpers, or instance methods on this
    if (call.owner.equals(t.method.owner().name) && (receiver == null || receiver instanceof Val.Self)) {
      Unit.Called c = t.unit.call(t.method, t.line, call);
      List<Expr> a = new ArrayList<>();
      for (Val v : vals) {
        if (!(v instanceof Val.Prim p)) {
          throw t.refuse("passes an object to " + call.name + " (helpers take and return primitives)");
        }
        a.add(p.e());
      }
      Expr r = t.temp(c.returns(), new Expr.Call(c.returns(), c.function(), a));
      if (c.mayThrow()) {
        t.emit(Stmt.when(Var.THROWN.ref(), new Stmt.Return(Expr.zero(t.returns))));
        t.mayThrow = true;
      }
      t.push(r);
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

  private Expr prim(Val v) {
    if (!(v instanceof Val.Prim p)) {
      throw t.refuse("passes an object where a primitive is expected");
    }
    return p.e();
  }
}
