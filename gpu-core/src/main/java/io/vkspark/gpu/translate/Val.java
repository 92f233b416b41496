package io.vkspark.gpu.translate;

import org.objectweb.asm.Type;

/**
 * One value on the translator's symbolic JVM stack: a GLSL operand (a temporary, a variable or a
 * literal; never an expression with operations, so that evaluation order and stores cannot change
 * it), or a box ({@code Double}, ...) as its primitive operand plus a GLSL {@code bool} that is true
 * when the reference is null, or the UDF object itself ({@code this}), or a pending comparison
 * ({@code lcmp}, {@code dcmpg}, ...) that the next branch reads directly.
 *
 * @param type the computational type of the operand (for a box, of its primitive)
 * @param box for a box, its primitive type ({@code double} for {@code Double}); null otherwise
 * @param nul for a box, when it is null (a GLSL bool operand)
 */
record Val(JType type, String v, Type box, String nul, boolean isThis, Cmp cmp) {

  /** A comparison of {@code a} and {@code b}: -1, 0 or 1, and {@code nanResult} when unordered. */
  record Cmp(JType type, String a, String b, int nanResult) {}

  static Val of(JType type, String v) {
    return new Val(type, v, null, null, false, null);
  }

  static Val boxed(Type box, String v, String nul) {
    return new Val(JType.of(box), v, box, nul, false, null);
  }

  static Val self() {
    return new Val(null, "this", null, "false", true, null);
  }

  static Val compare(Cmp cmp) {
    return new Val(JType.I, null, null, null, false, cmp);
  }

  boolean isBox() {
    return box != null;
  }

  /** Stack slots the value takes on the JVM: 2 for a long or double. */
  int size() {
    return box == null && !isThis && (type == JType.J || type == JType.D) ? 2 : 1;
  }
}
