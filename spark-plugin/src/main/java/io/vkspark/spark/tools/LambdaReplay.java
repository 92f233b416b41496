package io.vkspark.spark.tools;

import java.lang.invoke.CallSite;
import java.lang.invoke.LambdaMetafactory;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;
import org.objectweb.asm.Handle;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;

/**
 * Makes the object a lambda's {@code invokedynamic} makes, without running the method that holds it:
 * the same LambdaMetafactory call over the same bootstrap arguments, in the creating class, with
 * {@code captured} as its captured values. The object is what a query would hold (its
 * {@code writeReplace} gives the same {@code SerializedLambda}), so {@link UdfCheck} asks the
 * translator exactly as planning does; the lambda's own method never runs.
 */
final class LambdaReplay {
  private LambdaReplay() {}

  /** The lambda of {@code indy}, created in {@code caller}, capturing {@code captured}. */
  static Object replay(Class<?> caller, InvokeDynamicInsnNode indy, List<Object> captured) throws Throwable {
    MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(caller, MethodHandles.lookup());
    ClassLoader loader = caller.getClassLoader();
    MethodType type = MethodType.fromMethodDescriptorString(indy.desc, loader);
    List<Object> args = new ArrayList<>();
    for (Object a : indy.bsmArgs) {
      // a method type, or (altMetafactory) a marker interface such as scalac 2.12's scala.Serializable
      args.add(a instanceof Type t ? t.getSort() == Type.METHOD ? MethodType.fromMethodDescriptorString(t.getDescriptor(), loader)
          : Class.forName(t.getClassName(), false, loader) : a instanceof Handle h ? handle(lookup, caller, h) : a);
    }
    CallSite site = indy.bsm.getName().equals("altMetafactory")
        ? LambdaMetafactory.altMetafactory(lookup, indy.name, type, args.toArray())
        : LambdaMetafactory.metafactory(lookup, indy.name, type, (MethodType) args.get(0), (MethodHandle) args.get(1),
            (MethodType) args.get(2));
    return site.getTarget().invokeWithArguments(captured);
  }

  private static MethodHandle handle(MethodHandles.Lookup lookup, Class<?> caller, Handle h) throws ReflectiveOperationException {
    ClassLoader loader = caller.getClassLoader();
    Class<?> owner = Class.forName(Type.getObjectType(h.getOwner()).getClassName(), false, loader);
    MethodType mt = MethodType.fromMethodDescriptorString(h.getDesc(), loader);
    return switch (h.getTag()) {
      case Opcodes.H_INVOKESTATIC -> lookup.findStatic(owner, h.getName(), mt);
      case Opcodes.H_INVOKEVIRTUAL, Opcodes.H_INVOKEINTERFACE -> lookup.findVirtual(owner, h.getName(), mt);
      case Opcodes.H_INVOKESPECIAL -> lookup.findSpecial(owner, h.getName(), mt, caller);
      case Opcodes.H_NEWINVOKESPECIAL -> lookup.findConstructor(owner, mt);
      default -> throw new IllegalArgumentException("a method handle of kind " + h.getTag() + " (" + h + ")");
    };
  }

  /** A value of each captured type a lambda may be made with here: 0 for a primitive or a box; null for anything else. */
  static Object zero(Type t) {
    return switch (t.getSort()) {
      case Type.BOOLEAN -> false;
      case Type.CHAR -> (char) 0;
      case Type.BYTE -> (byte) 0;
      case Type.SHORT -> (short) 0;
      case Type.INT -> 0;
      case Type.LONG -> 0L;
      case Type.FLOAT -> 0f;
      case Type.DOUBLE -> 0d;
      default -> switch (t.getInternalName()) {
        case "java/lang/Boolean" -> Boolean.FALSE;
        case "java/lang/Character" -> (char) 0;
        case "java/lang/Byte" -> (byte) 0;
        case "java/lang/Short" -> (short) 0;
        case "java/lang/Integer" -> 0;
        case "java/lang/Long" -> 0L;
        case "java/lang/Float" -> 0f;
        case "java/lang/Double" -> 0d;
        default -> null;
      };
    };
  }
}
