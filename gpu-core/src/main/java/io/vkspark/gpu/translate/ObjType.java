package io.vkspark.gpu.translate;

import org.objectweb.asm.Type;

/**
 * The reference types a translated method may hold, each kept on the device as one primitive value
 * plus a null flag ({@link Val.Obj}). New value types plug in here: a record for the type, its
 * {@link #of} mapping from the JVM class, its SQL type in {@link JType#sqlType}, and its methods in
 * a call family of {@link LibraryCalls}.
 */
sealed interface ObjType permits ObjType.Box, Temporal, ObjType.Str, ObjType.Builder, ObjType.Parts {
  /** The GLSL type of the value. */
  JType repr();

  /** The JVM class, for messages: {@code java.lang.Double}. */
  String className();

  /** The SQL type of a UDF argument or result of this type. */
  io.vkspark.gpu.column.SqlType sqlType();

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

    @Override
    public io.vkspark.gpu.column.SqlType sqlType() {
      return JType.sqlType(prim);
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

    @Override
    public io.vkspark.gpu.column.SqlType sqlType() {
      return io.vkspark.gpu.column.SqlType.STRING;
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

    @Override
    public io.vkspark.gpu.column.SqlType sqlType() {
      return null;
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

    @Override
    public io.vkspark.gpu.column.SqlType sqlType() {
      return null;
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
    return prim != null ? new Box(prim) : Temporal.of(internalName);
  }

  /** The box that holds a value of SQL type {@code t} in a Java UDF's signature, or null. */
  static ObjType forSql(io.vkspark.gpu.column.SqlType t) {
    Type prim = switch (t) {
      case INT -> Type.INT_TYPE;
      case BIGINT -> Type.LONG_TYPE;
      case FLOAT -> Type.FLOAT_TYPE;
      case DOUBLE -> Type.DOUBLE_TYPE;
      case BOOLEAN -> Type.BOOLEAN_TYPE;
      case SMALLINT -> Type.SHORT_TYPE;
      case TINYINT -> Type.BYTE_TYPE;
      case DATE -> null;
      case TIMESTAMP -> null;
      default -> null;
    };
    if (t == io.vkspark.gpu.column.SqlType.STRING) {
      return new Str();
    }
    if (t == io.vkspark.gpu.column.SqlType.DATE) {
      return Temporal.LOCAL_DATE;
    }
    if (t == io.vkspark.gpu.column.SqlType.TIMESTAMP) {
      return Temporal.INSTANT;
    }
    return prim == null ? null : new Box(prim);
  }

  /** The modelled type of JVM type {@code t}, or null (primitives, arrays, other classes). */
  static ObjType of(Type t) {
    return t.getSort() == Type.OBJECT ? of(t.getInternalName()) : null;
  }
}
