package io.vkspark.gpu.translate;

import java.util.List;

/**
 * The one place where the translator's IR becomes GLSL text. Nothing reads the text back: the
 * translation is complete before it is written. Every floating-point declaration is {@code precise}
 * (no driver may fuse a multiply and an add that Java rounds twice); every compound operand is
 * parenthesized.
 */
final class GlslWriter {
  private final StringBuilder out = new StringBuilder();

  private GlslWriter() {}

  /** The GLSL function of {@code fn}. */
  static String function(Fn fn) {
    GlslWriter w = new GlslWriter();
    w.out.append(fn.returns().glsl).append(' ').append(fn.name()).append('(');
    for (int i = 0; i < fn.params().size(); i++) {
      Var p = fn.params().get(i);
      w.out.append(i == 0 ? "" : ", ").append(p.kind() == Var.Kind.OUT ? "out " : "").append(p.type().glsl).append(' ')
          .append(p.name());
    }
    w.out.append(") {\n");
    w.block(fn.body(), "  ");
    w.out.append("}\n");
    return w.out.toString();
  }

  /** One statement as GLSL, without indentation or newline (a kernel body). */
  static String statement(Stmt s) {
    GlslWriter w = new GlslWriter();
    w.stmt(s, "");
    return w.out.toString().strip();
  }

  /** {@code e} as a GLSL expression. */
  static String expr(Expr e) {
    return expr(e, true);
  }

  private void block(List<Stmt> body, String indent) {
    for (Stmt s : body) {
      stmt(s, indent);
    }
  }

  private void stmt(Stmt s, String indent) {
    if (s instanceof Stmt.Declare d) {
      Var v = d.var();
      out.append(indent).append(v.type().floating() ? "precise " : "").append(v.type().glsl).append(' ').append(v.name())
          .append(" = ").append(expr(d.init())).append(";\n");
    } else if (s instanceof Stmt.Assign a) {
      out.append(indent).append(a.var().name()).append(" = ").append(expr(a.value())).append(";\n");
    } else if (s instanceof Stmt.If i) {
      out.append(indent).append("if (").append(expr(i.cond())).append(") {\n");
      block(i.then(), indent + "  ");
      if (!i.otherwise().isEmpty()) {
        out.append(indent).append("} else {\n");
        block(i.otherwise(), indent + "  ");
      }
      out.append(indent).append("}\n");
    } else if (s instanceof Stmt.While w) {
      out.append(indent).append("while (").append(expr(w.cond())).append(") {\n");
      block(w.body(), indent + "  ");
      out.append(indent).append("}\n");
    } else if (s instanceof Stmt.Switch sw) {
      out.append(indent).append("switch (").append(expr(sw.key())).append(") {\n");
      for (Stmt.Case c : sw.cases()) {
        out.append(indent).append("  case ").append(literal(Expr.i(c.label()))).append(":\n");
        block(c.body(), indent + "    ");
        out.append(indent).append("    break;\n");
      }
      out.append(indent).append("  default:\n");
      block(sw.otherwise(), indent + "    ");
      out.append(indent).append("    break;\n");
      out.append(indent).append("}\n");
    } else if (s instanceof Stmt.Return r) {
      out.append(indent).append("return ").append(expr(r.value())).append(";\n");
    } else if (s instanceof Stmt.Throw t) {
      out.append(indent).append("jthrow(); return ").append(expr(t.zero())).append(";\n");
    } else {
      throw new IllegalStateException(String.valueOf(s));
    }
  }

  private static String expr(Expr e, boolean top) {
    if (e instanceof Expr.Const c) {
      return literal(c);
    }
    if (e instanceof Expr.Ref r) {
      return r.var().name();
    }
    if (e instanceof Expr.Call c) {
      StringBuilder s = new StringBuilder(c.function()).append('(');
      for (int i = 0; i < c.args().size(); i++) {
        s.append(i == 0 ? "" : ", ").append(expr(c.args().get(i), true));
      }
      return s.append(')').toString();
    }
    if (e instanceof Expr.Convert c) {
      return c.type().glsl + "(" + expr(c.a(), true) + ")";
    }
    if (e instanceof Expr.Index x) {
      return x.array() + "[" + expr(x.index(), true) + "]";
    }
    if (e instanceof Expr.One o) {
      return o.type() == JType.F ? "float(" + ONE + ")" : ONE;
    }
    String s;
    if (e instanceof Expr.Unary u) {
      s = u.op().glsl + expr(u.a(), false);
    } else if (e instanceof Expr.Binary b) {
      s = expr(b.a(), false) + " " + b.op().glsl + " " + expr(b.b(), false);
    } else if (e instanceof Expr.Select x) {
      s = expr(x.cond(), false) + " ? " + expr(x.a(), false) + " : " + expr(x.b(), false);
    } else {
      throw new IllegalStateException(String.valueOf(e));
    }
    return top ? s : "(" + s + ")";
  }

  /** See {@link Expr.One}. */
  static final String ONE = "double(min(vk_rows, 1u))";

  /** A constant as GLSL: negative ones parenthesized, NaN and infinities from their bits. */
  static String literal(Expr.Const c) {
    Object v = c.value();
    return switch (c.type()) {
      case I -> intLiteral((Integer) v);
      case J -> longLiteral((Long) v);
      case F -> floatLiteral((Float) v);
      case D -> doubleLiteral((Double) v);
      case Z -> String.valueOf(v);
      case S -> StringPool.EMPTY;
    };
  }

  static String intLiteral(int v) {
    return v == Integer.MIN_VALUE ? "(-2147483647 - 1)" : v < 0 ? "(" + v + ")" : String.valueOf(v);
  }

  static String longLiteral(long v) {
    return v == Long.MIN_VALUE ? "(-9223372036854775807l - 1l)" : v < 0 ? "(" + v + "l)" : v + "l";
  }

  static String floatLiteral(float v) {
    if (Float.isNaN(v) || Float.isInfinite(v)) {
      return "uintBitsToFloat(" + Integer.toUnsignedString(Float.floatToRawIntBits(v)) + "u)";
    }
    String s = Float.toString(v) + "f";
    return v < 0 || (v == 0 && 1 / v < 0) ? "(" + s + ")" : s;
  }

  static String doubleLiteral(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      long bits = Double.doubleToRawLongBits(v);
      return "packDouble2x32(uvec2(" + Integer.toUnsignedString((int) bits) + "u, "
          + Integer.toUnsignedString((int) (bits >>> 32)) + "u))";
    }
    String s = Double.toString(v) + "LF";
    return v < 0 || (v == 0 && 1 / v < 0) ? "(" + s + ")" : s;
  }
}
