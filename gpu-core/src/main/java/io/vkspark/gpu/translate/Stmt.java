package io.vkspark.gpu.translate;

import java.util.List;

/**
 * A statement of the translator's IR, written as GLSL by {@link GlslWriter}. {@link ControlFlow}
 * lays a method's blocks out with {@link If} and {@link While} over block flags; the instructions
 * of a block become {@link Declare}s of temporaries and {@link Assign}s of locals.
 */
sealed interface Stmt {
  /** Declares {@code var} with its first value ({@code precise} when it is a float or double). */
  record Declare(Var var, Expr init) implements Stmt {}

  record Assign(Var var, Expr value) implements Stmt {}

  record If(Expr cond, List<Stmt> then, List<Stmt> otherwise) implements Stmt {
    public If {
      then = List.copyOf(then);
      otherwise = List.copyOf(otherwise);
    }
  }

  record While(Expr cond, List<Stmt> body) implements Stmt {
    public While {
      body = List.copyOf(body);
    }
  }

  /** One {@code case} of a {@link Switch}: it runs {@code body}, then breaks. */
  record Case(int label, List<Stmt> body) {
    public Case {
      body = List.copyOf(body);
    }
  }

  record Switch(Expr key, List<Case> cases, List<Stmt> otherwise) implements Stmt {
    public Switch {
      cases = List.copyOf(cases);
      otherwise = List.copyOf(otherwise);
    }
  }

  record Return(Expr value) implements Stmt {}

  /** The row throws (or returns null in Java): {@code jthrow()}, then return {@code zero}. */
  record Throw(Expr zero) implements Stmt {}

  /** {@code if (cond) { body }}. */
  static Stmt when(Expr cond, Stmt... body) {
    return new If(cond, List.of(body), List.of());
  }
}
