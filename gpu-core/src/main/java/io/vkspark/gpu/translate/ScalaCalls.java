package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import java.util.Map;
import java.util.Set;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * What scalac 2.12 and 2.13 emit for a numeric closure, with Scala's semantics:
 * <ul>
 *   <li>{@code scala.runtime.BoxesRunTime}: {@code unboxToDouble} .. (a null box unboxes to 0,
 *       not a throw), {@code boxToDouble} .. and {@code equals}, Scala's {@code ==} on boxes
 *       ({@link ScalaEquality});</li>
 *   <li>{@code scala.math.package$.MODULE$}: {@code math.sqrt}, {@code pow}, {@code abs},
 *       {@code max}, {@code round} (a {@code Long} for a {@code Double}), ... as the
 *       {@code java.lang.Math} method of the same name and signature ({@code signum} of an
 *       {@code Int} or {@code Long} as {@code Integer}/{@code Long.signum});</li>
 *   <li>{@code scala.Predef$}: the value-class wrappers ({@code doubleWrapper}, ...: the value
 *       itself), the box conversions ({@code Double2double} throws for null, as it does in Scala),
 *       {@code require} and {@code assert} (the row throws when false);</li>
 *   <li>{@code RichDouble}, {@code RichFloat}, {@code RichInt}, {@code RichLong}: {@code x.abs},
 *       {@code x.max(y)}, {@code x.round}, {@code x.signum}, {@code x.isNaN}, ... as
 *       {@code $extension} methods of their modules or on a {@code new RichLong(x)};</li>
 *   <li>{@code Option}: {@code new Some(box)} and {@code Option.apply} are the box, {@code None}
 *       is null (a null result); {@code isEmpty}, {@code isDefined}, {@code nonEmpty},
 *       {@code get}.</li>
 * </ul>
 * A {@code MatchError} is thrown in a block of its own, which the translator reads as a throwing
 * row (recomputed with {@code call()}).
 */
final class ScalaCalls {
  private ScalaCalls() {}

  /** Scala objects whose {@code MODULE$} the translator knows. */
  static final Set<String> MODULES = Set.of("scala/math/package$", "scala/Predef$", "scala/runtime/RichDouble$",
      "scala/runtime/RichFloat$", "scala/runtime/RichInt$", "scala/runtime/RichLong$", "scala/Option$", "scala/Some$");

  /** Classes a translated closure may construct: {@code new Some(x)}, {@code new RichLong(x)}. */
  static final Set<String> CONSTRUCTED = Set.of("scala/Some", "scala/runtime/RichDouble", "scala/runtime/RichFloat",
      "scala/runtime/RichInt", "scala/runtime/RichLong");

  /** Rich-wrapper methods as the {@code java.lang} method that computes them (then converted to the wrapper's result type). */
  private static final Map<String, String> RICH = Map.ofEntries(Map.entry("abs", "java/lang/Math.abs"),
      Map.entry("max", "java/lang/Math.max"), Map.entry("min", "java/lang/Math.min"),
      Map.entry("round", "java/lang/Math.round"), Map.entry("floor", "java/lang/Math.floor"),
      Map.entry("ceil", "java/lang/Math.ceil"), Map.entry("signum", "signum"), Map.entry("sign", "signum"),
      Map.entry("toRadians", "java/lang/Math.toRadians"), Map.entry("toDegrees", "java/lang/Math.toDegrees"),
      Map.entry("isNaN", "isNaN"), Map.entry("isInfinity", "isInfinite"));

  /** The call's value ({@link Val.Void} for a void one), or null when it is not one of these. */
  static Val translate(MethodInsnNode call, Val receiver, Val[] args, MethodTranslator t) {
    if (call.owner.equals("scala/runtime/BoxesRunTime")) {
      return boxes(call, args, t);
    }
    if (receiver instanceof Val.Uninit u && call.name.equals("<init>")) {
      return construct(u, args, t);
    }
    if (receiver instanceof Val.Module m) {
      return module(m.owner(), call, args, t);
    }
    if (call.owner.startsWith("scala/runtime/Rich") && receiver instanceof Val.Prim p && args.length <= 1) {
      return rich(call.name, call.desc, p.e(), args.length == 0 ? null : prim(args[0], t), t);
    }
    if (Results.OPTION.contains(call.owner) && receiver instanceof Val.Obj o) {
      return switch (call.name + call.desc) {
        case "isEmpty()Z" -> Val.of(t.temp(JType.I, Expr.toInt(o.isNull())));
        case "isDefined()Z", "nonEmpty()Z" -> Val.of(t.temp(JType.I, Expr.toInt(Expr.not(o.isNull()))));
        case "get()Ljava/lang/Object;", "value()Ljava/lang/Object;" -> {
          Boxes.nonNull(o, t); // NoSuchElementException
          yield new Val.Obj(o.type(), o.value(), Expr.FALSE);
        }
        default -> null;
      };
    }
    return null;
  }

  private static Val boxes(MethodInsnNode call, Val[] args, MethodTranslator t) {
    Type ret = Type.getReturnType(call.desc);
    if (call.name.startsWith("unboxTo") && args.length == 1 && args[0] instanceof Val.Obj o) {
      if (!o.alwaysNull() && !(o.type() instanceof ObjType.Box b && b.prim().equals(ret))) {
        throw t.refuse("unboxes a " + o.type().className() + " as a " + ret.getClassName());
      }
      JType j = JType.of(ret);
      return o.neverNull() ? Val.of(o.value()) : Val.of(t.temp(j, Expr.select(o.isNull(), Expr.zero(j), Expr.convert(o.value(), j))));
    }
    if (ScalaEquality.METHODS.containsKey(call.name) && args.length == 2) {
      return ScalaEquality.of(call.name, args[0], args[1], t); // == on boxed values
    }
    ObjType box = ObjType.of(ret);
    if (call.name.startsWith("boxTo") && args.length == 1 && box != null) {
      return new Val.Obj(box, prim(args[0], t), Expr.FALSE);
    }
    return null;
  }

  /** The constructor of {@code u}: every copy of it on the stack becomes the value it makes. */
  private static Val construct(Val.Uninit u, Val[] args, MethodTranslator t) {
    Val made;
    if (u.owner.equals("scala/Some") && args.length == 1 && args[0] instanceof Val.Obj o) {
      made = o; // Some(box): the box; Some(null) is a null result, as Spark reads it
    } else if (u.owner.startsWith("scala/runtime/Rich") && args.length == 1 && args[0] instanceof Val.Prim p) {
      made = p; // a value class around the value
    } else {
      throw t.refuse("constructs a " + Type.getObjectType(u.owner).getClassName() + " the translator does not model");
    }
    java.util.List<Val> vals = new java.util.ArrayList<>(t.stack);
    t.stack.clear();
    for (int i = vals.size() - 1; i >= 0; i--) {
      t.stack.push(vals.get(i) == u ? made : vals.get(i));
    }
    return new Val.Void();
  }

  private static Val module(String owner, MethodInsnNode call, Val[] args, MethodTranslator t) {
    String m = call.name + call.desc;
    switch (owner) {
      case "scala/math/package$" -> {
        Expr[] a = prims(args, t);
        return switch (m) {
          case "signum(I)I" -> lib("java/lang/Integer", "signum", "(I)I", a, t);
          case "signum(J)J" -> Val.of(t.temp(JType.J, new Expr.Convert(JType.J, prim(lib("java/lang/Long", "signum", "(J)I", a, t), t))));
          default -> lib("java/lang/Math", call.name, call.desc, a, t);
        };
      }
      case "scala/Predef$" -> {
        if (call.name.endsWith("Wrapper") && args.length == 1 && args[0] instanceof Val.Prim p) {
          return p; // doubleWrapper(x): the value of a RichDouble
        }
        if ((m.equals("require(Z)V") || m.equals("assert(Z)V")) && args[0] instanceof Val.Prim p) {
          t.throwIf(Expr.bin(BinOp.EQ, p.e(), Expr.i(0))); // IllegalArgumentException, AssertionError
          return new Val.Void();
        }
        Type ret = Type.getReturnType(call.desc);
        if (args.length == 1 && args[0] instanceof Val.Obj o && JType.of(ret) != null && o.type() instanceof ObjType.Box b) {
          Boxes.nonNull(o, t); // Double2double(null) throws
          return Val.of(t.temp(JType.of(ret), Conversions.primitive(o.value(), b.prim(), ret)));
        }
        if (args.length == 1 && args[0] instanceof Val.Prim p && ObjType.of(ret) != null) {
          return new Val.Obj(ObjType.of(ret), p.e(), Expr.FALSE); // double2Double(x)
        }
        return null;
      }
      case "scala/Option$", "scala/Some$" -> {
        return m.startsWith("apply(") && args.length == 1 && args[0] instanceof Val.Obj o ? o : null;
      }
      default -> {
        String ext = "$extension";
        if (!call.name.endsWith(ext) || args.length < 1 || args.length > 2) {
          return null;
        }
        String name = call.name.substring(0, call.name.length() - ext.length());
        Type[] types = Type.getArgumentTypes(call.desc);
        String desc = "(" + types[0].getDescriptor() + (types.length > 1 ? types[1].getDescriptor() : "") + ")"
            + Type.getReturnType(call.desc).getDescriptor();
        return rich(name, desc, prim(args[0], t), args.length > 1 ? prim(args[1], t) : null, t);
      }
    }
  }

  /** {@code self.name(other)} of a Rich wrapper, {@code desc} as if static over the receiver. */
  private static Val rich(String name, String desc, Expr self, Expr other, MethodTranslator t) {
    String target = RICH.get(name);
    if (target == null) {
      return null;
    }
    Type ret = Type.getReturnType(desc);
    String d = self.type() == JType.D ? "D" : self.type() == JType.F ? "F" : self.type() == JType.J ? "J" : "I";
    Expr[] a = other == null ? new Expr[] {self} : new Expr[] {self, Expr.convert(other, self.type())};
    Val v = switch (target) {
      case "signum" -> self.type().floating() ? lib("java/lang/Math", "signum", "(" + d + ")" + d, a, t)
          : lib(self.type() == JType.J ? "java/lang/Long" : "java/lang/Integer", "signum", "(" + d + ")I", a, t);
      case "isNaN", "isInfinite" -> self.type().floating() ? lib(d.equals("D") ? "java/lang/Double" : "java/lang/Float", target,
          "(" + d + ")Z", a, t) : Val.of(Expr.i(0));
      default -> {
        String m = target.substring(target.indexOf('.') + 1);
        if (m.equals("round") && !self.type().floating()) {
          yield Val.of(self); // RichLong.round, RichInt.round: the value
        }
        String r = m.equals("round") ? (d.equals("D") ? "J" : "I") : d;
        yield lib("java/lang/Math", m, "(" + d + (other == null ? "" : d) + ")" + r, a, t);
      }
    };
    if (v == null || JType.of(ret) == null) {
      return null;
    }
    Expr e = prim(v, t);
    return Val.of(e.type() == JType.of(ret) ? e : t.temp(JType.of(ret), Conversions.primitive(e, typeOf(e.type()), ret)));
  }

  private static Type typeOf(JType j) {
    return switch (j) {
      case J -> Type.LONG_TYPE;
      case F -> Type.FLOAT_TYPE;
      case D -> Type.DOUBLE_TYPE;
      default -> Type.INT_TYPE;
    };
  }

  private static Val lib(String owner, String name, String desc, Expr[] a, MethodTranslator t) {
    Expr r = LibraryCalls.translate(new MethodInsnNode(Opcodes.INVOKESTATIC, owner, name, desc, false), a, t);
    return r == null ? null : Val.of(r);
  }

  private static Expr[] prims(Val[] args, MethodTranslator t) {
    Expr[] a = new Expr[args.length];
    for (int i = 0; i < args.length; i++) {
      a[i] = prim(args[i], t);
    }
    return a;
  }

  private static Expr prim(Val v, MethodTranslator t) {
    if (!(v instanceof Val.Prim p)) {
      throw t.refuse("passes an object where a primitive is expected");
    }
    return p.e();
  }
}
