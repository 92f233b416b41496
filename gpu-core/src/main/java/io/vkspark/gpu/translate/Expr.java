package io.vkspark.gpu.translate;

import java.util.List;

/**
 * A typed expression of the translator's IR: what a value is computed from, never GLSL text. Built
 * by the bytecode readers ({@link MethodTranslator}, {@link LibraryCalls}, ...) and turned into
 * GLSL by {@link GlslWriter} only, so that no step reads back what another wrote. Every operand of
 * an operation is itself an {@code Expr}; the translator keeps them small (a temporary, a variable
 * or a constant, see {@link Val}) so that evaluation order stays Java's.
 */
sealed interface Expr {
  /** The GLSL type of the value. */
  JType type();

  /** A constant: an {@link Integer} (I), {@link Long} (J), {@link Float} (F), {@link Double} (D) or {@link Boolean} (Z). */
  record Const(JType type, Object value) implements Expr {
    public Const {
      boolean ok = switch (type) {
        case I -> value instanceof Integer;
        case J -> value instanceof Long;
        case F -> value instanceof Float;
        case D -> value instanceof Double;
        case Z -> value instanceof Boolean;
        case S -> "".equals(value); // the empty string (StringPool makes the others)
      };
      if (!ok) {
        throw new IllegalArgumentException(type + " constant " + value);
      }
    }

    boolean isTrue() {
      return Boolean.TRUE.equals(value);
    }

    boolean isFalse() {
      return Boolean.FALSE.equals(value);
    }
  }

  /** The value of a variable (a parameter, local, temporary, flag or global). */
  record Ref(Var var) implements Expr {
    @Override
    public JType type() {
      return var.type();
    }
  }

  /** The operators of {@link Unary}. */
  enum UnOp {
    NEG("-"), NOT("!"), INV("~");

    final String glsl;

    UnOp(String glsl) {
      this.glsl = glsl;
    }
  }

  record Unary(JType type, UnOp op, Expr a) implements Expr {}

  /** The operators of {@link Binary}: GLSL's, with GLSL's meaning (the translator picks the ones equal to Java's). */
  enum BinOp {
    ADD("+"), SUB("-"), MUL("*"), DIV("/"), AND("&"), OR("|"), XOR("^"), SHL("<<"), SHR(">>"),
    EQ("=="), NE("!="), LT("<"), LE("<="), GT(">"), GE(">="), LAND("&&"), LOR("||");

    final String glsl;

    BinOp(String glsl) {
      this.glsl = glsl;
    }

    /** Whether the result is a {@code bool}. */
    boolean relational() {
      return ordinal() >= EQ.ordinal();
    }

    /** The comparison for a JVM branch's relation ({@code ==}, {@code <}, ...). */
    static BinOp of(String rel) {
      for (BinOp b : values()) {
        if (b.glsl.equals(rel) && b.relational()) {
          return b;
        }
      }
      throw new IllegalArgumentException(rel);
    }
  }

  record Binary(JType type, BinOp op, Expr a, Expr b) implements Expr {}

  /** A call of a GLSL function: a built-in, a Java-semantics helper, a translator helper or a translated method. */
  record Call(JType type, String function, List<Expr> args) implements Expr {
    public Call {
      args = List.copyOf(args);
    }
  }

  /** A GLSL constructor conversion: {@code int64_t(x)}, {@code double(x)}, ... */
  record Convert(JType type, Expr a) implements Expr {}

  /** {@code cond ? a : b}. */
  record Select(JType type, Expr cond, Expr a, Expr b) implements Expr {}

  /**
   * Element {@code index} of a constant array declared among the translation's functions, as it is
   * stored ({@link ConstTable#read} makes the value of it).
   */
  record Index(JType type, String array, Expr index) implements Expr {}

  /**
   * A 1 (of type F or D) that the compiler cannot fold: {@code double(min(vk_rows, 1u))}. A rounding
   * conversion multiplied by it keeps Java's rounding where a driver would fold a round trip
   * (lavapipe folded {@code (int) (float) x} into {@code x}); a divisor multiplied by it is never
   * replaced by a multiplication with its rounded reciprocal.
   */
  record One(JType type) implements Expr {}

  // ---- factories ----------------------------------------------------------------------------

  static Const i(int v) {
    return new Const(JType.I, v);
  }

  static Const j(long v) {
    return new Const(JType.J, v);
  }

  static Const f(float v) {
    return new Const(JType.F, v);
  }

  static Const d(double v) {
    return new Const(JType.D, v);
  }

  static Const bool(boolean v) {
    return new Const(JType.Z, v);
  }

  Const TRUE = new Const(JType.Z, true);
  Const FALSE = new Const(JType.Z, false);

  /** The zero of {@code t}. */
  static Const zero(JType t) {
    return switch (t) {
      case I -> i(0);
      case J -> j(0);
      case F -> f(0);
      case D -> d(0);
      case Z -> FALSE;
      case S -> new Const(JType.S, "");
    };
  }

  /** The constant {@code v} of type {@code t}. */
  static Const of(JType t, long v) {
    return switch (t) {
      case I -> i((int) v);
      case J -> j(v);
      case F -> f(v);
      case D -> d(v);
      case Z -> bool(v != 0);
      case S -> throw new IllegalArgumentException("string constant " + v);
    };
  }

  static Expr call(JType t, String fn, Expr... args) {
    return new Call(t, fn, List.of(args));
  }

  static Expr bin(BinOp op, Expr a, Expr b) {
    return new Binary(op.relational() ? JType.Z : a.type(), op, a, b);
  }

  static Expr not(Expr a) {
    return new Unary(JType.Z, UnOp.NOT, a);
  }

  static Expr select(Expr cond, Expr a, Expr b) {
    return new Select(a.type(), cond, a, b);
  }

  /** {@code a} as type {@code t}: itself when it has that type. */
  static Expr convert(Expr a, JType t) {
    return a.type() == t ? a : new Convert(t, a);
  }

  /** A Z condition as a Java boolean ({@code int} 1 or 0). */
  static Expr toInt(Expr cond) {
    return select(cond, i(1), i(0));
  }

  /** Whether {@code e} reads a variable of kind {@code kind} anywhere. */
  static boolean reads(Expr e, Var.Kind kind) {
    if (e instanceof Ref r) {
      return r.var().kind() == kind;
    }
    if (e instanceof Unary u) {
      return reads(u.a(), kind);
    }
    if (e instanceof Binary b) {
      return reads(b.a(), kind) || reads(b.b(), kind);
    }
    if (e instanceof Call c) {
      return c.args().stream().anyMatch(a -> reads(a, kind));
    }
    if (e instanceof Convert c) {
      return reads(c.a(), kind);
    }
    if (e instanceof Select s) {
      return reads(s.cond(), kind) || reads(s.a(), kind) || reads(s.b(), kind);
    }
    return e instanceof Index x && reads(x.index(), kind);
  }
}
