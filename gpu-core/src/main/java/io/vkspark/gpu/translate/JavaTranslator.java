package io.vkspark.gpu.translate;

import java.lang.reflect.Method;

/**
 * Translates the JVM bytecode of a Java UDF's {@code call()} (or of a static method) into a GLSL
 * kernel with Java's exact results. STUB: the implementation lands in the next commit.
 */
public final class JavaTranslator {
  private JavaTranslator() {}

  /**
   * The translation of {@code udf}: an object of a class with one non-bridge public method named
   * {@code call} taking 1 to 22 arguments (Spark's {@code UDF1 .. UDF22}), or a serializable Java
   * lambda or method reference (its {@code writeReplace} names the implementation method; captured
   * values become constants). Final fields of the object and {@code static final} fields are read
   * now, as constants. Cached per class, method and captured values.
   */
  public static Translation translate(Object udf) {
    throw new UnsupportedOperationException("stub");
  }

  /** The translation of a static method (primitive or boxed arguments and result). */
  public static Translation translate(Method staticMethod) {
    throw new UnsupportedOperationException("stub");
  }
}
