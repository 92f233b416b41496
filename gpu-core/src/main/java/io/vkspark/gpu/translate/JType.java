package io.vkspark.gpu.translate;

import io.vkspark.gpu.column.SqlType;
import org.objectweb.asm.Type;

/**
 * The types of the translator's IR values: the JVM's computational types ({@code int}, {@code long},
 * {@code float}, {@code double}: booleans, bytes, shorts and chars are {@code int} on the JVM stack
 * and in GLSL alike) and GLSL's {@code bool} ({@link #Z}: conditions and null flags, never a Java
 * value), with the GLSL type and zero of each.
 */
enum JType {
  I("int", "0"), J("int64_t", "0l"), F("float", "0.0f"), D("double", "0.0LF"), Z("bool", "false"),
  /** A {@code java.lang.String} as a view of bytes ({@link StringCalls}): never on the JVM stack as a primitive. */
  S("vk_string", StringPool.EMPTY);

  final String glsl;
  final String zero;

  JType(String glsl, String zero) {
    this.glsl = glsl;
    this.zero = zero;
  }

  /** Whether values of this type round (float, double): their temporaries are {@code precise}. */
  boolean floating() {
    return this == F || this == D;
  }

  /** The computational type of a primitive ASM type (null for references and void). */
  static JType of(Type t) {
    return switch (t.getSort()) {
      case Type.BOOLEAN, Type.BYTE, Type.SHORT, Type.CHAR, Type.INT -> I;
      case Type.LONG -> J;
      case Type.FLOAT -> F;
      case Type.DOUBLE -> D;
      default -> null;
    };
  }

  /** The primitive a box class holds ({@code java/lang/Double} to double), or null. */
  static Type unboxed(String internalName) {
    return switch (internalName) {
      case "java/lang/Integer" -> Type.INT_TYPE;
      case "java/lang/Long" -> Type.LONG_TYPE;
      case "java/lang/Float" -> Type.FLOAT_TYPE;
      case "java/lang/Double" -> Type.DOUBLE_TYPE;
      case "java/lang/Boolean" -> Type.BOOLEAN_TYPE;
      case "java/lang/Short" -> Type.SHORT_TYPE;
      case "java/lang/Byte" -> Type.BYTE_TYPE;
      default -> null;
    };
  }

  /** The box class of primitive {@code prim}: {@code java.lang.Double} for double. */
  static String boxOf(Type prim) {
    return switch (prim.getSort()) {
      case Type.INT -> "java.lang.Integer";
      case Type.LONG -> "java.lang.Long";
      case Type.FLOAT -> "java.lang.Float";
      case Type.DOUBLE -> "java.lang.Double";
      case Type.BOOLEAN -> "java.lang.Boolean";
      case Type.SHORT -> "java.lang.Short";
      case Type.BYTE -> "java.lang.Byte";
      case Type.CHAR -> "java.lang.Character";
      default -> prim.getClassName();
    };
  }

  /** The SQL type of a primitive or boxed Java type, or null when vkspark has none for it. */
  static SqlType sqlType(Type t) {
    if (t.getSort() == Type.OBJECT && t.getInternalName().equals("java/lang/String")) {
      return SqlType.STRING;
    }
    Type p = t.getSort() == Type.OBJECT ? unboxed(t.getInternalName()) : t;
    if (p == null) {
      return null;
    }
    return switch (p.getSort()) {
      case Type.INT -> SqlType.INT;
      case Type.LONG -> SqlType.BIGINT;
      case Type.FLOAT -> SqlType.FLOAT;
      case Type.DOUBLE -> SqlType.DOUBLE;
      case Type.BOOLEAN -> SqlType.BOOLEAN;
      case Type.SHORT -> SqlType.SMALLINT;
      case Type.BYTE -> SqlType.TINYINT;
      default -> null;
    };
  }
}
