package io.vkspark.gpu.translate;

import org.objectweb.asm.Type;

/**
 * The reference types a translated method may hold, each kept on the device as one primitive value
 * plus a null flag ({@link Val.Obj}). New value types plug in here: a record for the type, its
 * {@link #of} mapping from the JVM class, its SQL type in {@link JType#sqlType}, and its methods in
 * a call family of {@link LibraryCalls}.
 */
sealed interface ObjType {
  /** The GLSL type of the value. */
  JType repr();

  /** The JVM class, for messages: {@code java.lang.Double}. */
  String className();

  /** A box of a primitive ({@code Double} holds a {@code double}). */
  record Box(Type prim) implements ObjType {
    @Override
    public JType repr() {
      return JType.of(prim);
    }

    @Override
    public String className() {
      return JType.boxOf(prim);
    }
  }

  /** A {@code java.lang.String}: a view of bytes ({@link StringCalls}). */
  record Str() implements ObjType {
    @Override
    public JType repr() {
      return JType.S;
    }

    @Override
    public String className() {
      return "java.lang.String";
    }
  }

  /** A {@code java.lang.StringBuilder}: the number of one of the row's builders ({@link StringCalls}). */
  record Builder() implements ObjType {
    @Override
    public JType repr() {
      return JType.I;
    }

    @Override
    public String className() {
      return "java.lang.StringBuilder";
    }
  }

  /**
   * The {@code String[]} of {@code s.split(",")}: the string split and its separator as one view
   * ({@link StringCalls}); only indexed or measured.
   */
  record Parts() implements ObjType {
    @Override
    public JType repr() {
      return JType.S;
    }

    @Override
    public String className() {
      return "java.lang.String[]";
    }
  }

  /** The modelled type of JVM class {@code internalName}, or null. */
  static ObjType of(String internalName) {
    if (internalName.equals("java/lang/String")) {
      return new Str();
    }
    if (internalName.equals("java/lang/StringBuilder")) {
      return new Builder();
    }
    Type prim = JType.unboxed(internalName);
    return prim == null ? null : new Box(prim);
  }

  /** The modelled type of JVM type {@code t}, or null (primitives, arrays, other classes). */
  static ObjType of(Type t) {
    return t.getSort() == Type.OBJECT ? of(t.getInternalName()) : null;
  }
}
