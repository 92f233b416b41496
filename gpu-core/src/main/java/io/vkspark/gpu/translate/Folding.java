package io.vkspark.gpu.translate;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Set;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * Instructions and library calls of constants computed now, by the JVM: {@code Math.cbrt(3.0)} becomes Java's own
 * result, exact by construction, and no driver spends minutes folding a loop-heavy device function
 * of a constant (lavapipe took over ten minutes on {@code StrictMath.sin} of a constant). A call
 * that throws is left to the device (the row throws there too).
 */
final class Folding {
  private Folding() {}

  /**
   * Instruction {@code op} (arithmetic, bitwise, shift, negation, conversion) of constants as
   * Java computes it, or null: not such an instruction, an operand that is not a constant, or an
   * integer division by zero (the row throws on the device).
   */
  static Expr.Const instruction(int op, Expr.Const a, Expr.Const b) {
    Object x = a.value();
    Object y = b == null ? null : b.value();
    try {
      return switch (op) {
        case Opcodes.IADD -> Expr.i((Integer) x + (Integer) y);
        case Opcodes.ISUB -> Expr.i((Integer) x - (Integer) y);
        case Opcodes.IMUL -> Expr.i((Integer) x * (Integer) y);
        case Opcodes.IDIV -> Expr.i((Integer) x / (Integer) y);
        case Opcodes.IREM -> Expr.i((Integer) x % (Integer) y);
        case Opcodes.IAND -> Expr.i((Integer) x & (Integer) y);
        case Opcodes.IOR -> Expr.i((Integer) x | (Integer) y);
        case Opcodes.IXOR -> Expr.i((Integer) x ^ (Integer) y);
        case Opcodes.ISHL -> Expr.i((Integer) x << (Integer) y);
        case Opcodes.ISHR -> Expr.i((Integer) x >> (Integer) y);
        case Opcodes.IUSHR -> Expr.i((Integer) x >>> (Integer) y);
        case Opcodes.LADD -> Expr.j((Long) x + (Long) y);
        case Opcodes.LSUB -> Expr.j((Long) x - (Long) y);
        case Opcodes.LMUL -> Expr.j((Long) x * (Long) y);
        case Opcodes.LDIV -> Expr.j((Long) x / (Long) y);
        case Opcodes.LREM -> Expr.j((Long) x % (Long) y);
        case Opcodes.LAND -> Expr.j((Long) x & (Long) y);
        case Opcodes.LOR -> Expr.j((Long) x | (Long) y);
        case Opcodes.LXOR -> Expr.j((Long) x ^ (Long) y);
        case Opcodes.LSHL -> Expr.j((Long) x << (Integer) y);
        case Opcodes.LSHR -> Expr.j((Long) x >> (Integer) y);
        case Opcodes.LUSHR -> Expr.j((Long) x >>> (Integer) y);
        case Opcodes.FADD -> Expr.f((Float) x + (Float) y);
        case Opcodes.FSUB -> Expr.f((Float) x - (Float) y);
        case Opcodes.FMUL -> Expr.f((Float) x * (Float) y);
        case Opcodes.FDIV -> Expr.f((Float) x / (Float) y);
        case Opcodes.FREM -> Expr.f((Float) x % (Float) y);
        case Opcodes.DADD -> Expr.d((Double) x + (Double) y);
        case Opcodes.DSUB -> Expr.d((Double) x - (Double) y);
        case Opcodes.DMUL -> Expr.d((Double) x * (Double) y);
        case Opcodes.DDIV -> Expr.d((Double) x / (Double) y);
        case Opcodes.DREM -> Expr.d((Double) x % (Double) y);
        case Opcodes.INEG -> Expr.i(-(Integer) x);
        case Opcodes.LNEG -> Expr.j(-(Long) x);
        case Opcodes.FNEG -> Expr.f(-(Float) x);
        case Opcodes.DNEG -> Expr.d(-(Double) x);
        case Opcodes.I2L -> Expr.j((long) (int) (Integer) x);
        case Opcodes.I2F -> Expr.f((float) (int) (Integer) x);
        case Opcodes.I2D -> Expr.d((double) (int) (Integer) x);
        case Opcodes.L2I -> Expr.i((int) (long) (Long) x);
        case Opcodes.L2F -> Expr.f((float) (long) (Long) x);
        case Opcodes.L2D -> Expr.d((double) (long) (Long) x);
        case Opcodes.F2I -> Expr.i((int) (float) (Float) x);
        case Opcodes.F2L -> Expr.j((long) (float) (Float) x);
        case Opcodes.F2D -> Expr.d((double) (float) (Float) x);
        case Opcodes.D2I -> Expr.i((int) (double) (Double) x);
        case Opcodes.D2L -> Expr.j((long) (double) (Double) x);
        case Opcodes.D2F -> Expr.f((float) (double) (Double) x);
        case Opcodes.I2B -> Expr.i((byte) (int) (Integer) x);
        case Opcodes.I2C -> Expr.i((char) (int) (Integer) x);
        case Opcodes.I2S -> Expr.i((short) (int) (Integer) x);
        default -> null;
      };
    } catch (ArithmeticException e) {
      return null; // / by zero: the device's version throws for the row
    }
  }

  /** Whether {@code op} takes two operands in {@link #instruction}. */
  static boolean binary(int op) {
    return op >= Opcodes.IADD && op <= Opcodes.DREM || op >= Opcodes.ISHL && op <= Opcodes.LXOR;
  }

  /** Whether {@code op} takes one operand in {@link #instruction}. */
  static boolean unary(int op) {
    return op >= Opcodes.INEG && op <= Opcodes.DNEG || op >= Opcodes.I2L && op <= Opcodes.I2S;
  }

  /** Classes whose static methods over primitives are pure functions. */
  private static final Set<String> PURE = Set.of("java/lang/Math", "java/lang/StrictMath", "java/lang/Double",
      "java/lang/Float", "java/lang/Integer", "java/lang/Long", "java/lang/Boolean", "java/lang/Short", "java/lang/Byte");

  /** The call's value as a constant, or null when it is not a pure call of constants. */
  static Expr.Const fold(String owner, String name, String desc, Expr[] a) {
    Type[] params = Type.getArgumentTypes(desc);
    Type ret = Type.getReturnType(desc);
    if (!PURE.contains(owner) || params.length == 0 || params.length != a.length || JType.of(ret) == null) {
      return null;
    }
    Object[] args = new Object[a.length];
    Class<?>[] types = new Class<?>[a.length];
    for (int i = 0; i < a.length; i++) {
      if (!(a[i] instanceof Expr.Const c) || (types[i] = primitive(params[i])) == null) {
        return null;
      }
      args[i] = value(c, params[i]);
    }
    try {
      Method m = Class.forName(Type.getObjectType(owner).getClassName()).getMethod(name, types);
      if (!Modifier.isStatic(m.getModifiers())) {
        return null;
      }
      return Constants.of(m.invoke(null, args), ret);
    } catch (InvocationTargetException e) {
      return null; // it throws: the device's version throws for the row too
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  private static Class<?> primitive(Type t) {
    return switch (t.getSort()) {
      case Type.BOOLEAN -> boolean.class;
      case Type.BYTE -> byte.class;
      case Type.SHORT -> short.class;
      case Type.CHAR -> char.class;
      case Type.INT -> int.class;
      case Type.LONG -> long.class;
      case Type.FLOAT -> float.class;
      case Type.DOUBLE -> double.class;
      default -> null;
    };
  }

  /** Constant {@code c} as an argument of primitive type {@code t}. */
  private static Object value(Expr.Const c, Type t) {
    Object v = c.value();
    return switch (t.getSort()) {
      case Type.BOOLEAN -> ((Integer) v) != 0;
      case Type.BYTE -> (byte) (int) (Integer) v;
      case Type.SHORT -> (short) (int) (Integer) v;
      case Type.CHAR -> (char) (int) (Integer) v;
      default -> v;
    };
  }
}
