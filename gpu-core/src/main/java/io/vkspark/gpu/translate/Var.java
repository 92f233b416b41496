package io.vkspark.gpu.translate;

/**
 * A GLSL variable of a translated function. Its kind says where it is declared: parameters in the
 * signature, temporaries where they are computed ({@link Stmt.Declare}), locals, stack slots and
 * block flags at the top of the function, globals by the kernel around it.
 */
record Var(String name, JType type, Kind kind) {
  enum Kind {
    /** A parameter of the function ({@code p0 ..}). */
    PARAM,
    /** An {@code out} parameter of the function: a helper's null result flag ({@code rn}). */
    OUT,
    /** An immutable temporary ({@code t0 ..}): every value the method computes. */
    TEMP,
    /** A JVM local variable slot ({@code l3D}, a box's {@code l1bD} and null flag {@code l1n}). */
    LOCAL,
    /** A JVM operand-stack slot live across a branch ({@code s0I}, {@code s0bD}, {@code s0n}). */
    STACK,
    /** A basic block's flag ({@code f3}, see {@link ControlFlow}). */
    FLAG,
    /** Declared by the kernel around the functions ({@code vkj_thrown}). */
    GLOBAL
  }

  /** Set by {@code jthrow()}: the row throws. */
  static final Var THROWN = new Var("vkj_thrown", JType.Z, Kind.GLOBAL);

  Expr.Ref ref() {
    return new Expr.Ref(this);
  }
}
