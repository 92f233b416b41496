package io.vkspark.gpu.translate;

import io.vkspark.gpu.column.SqlType;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * A seeded random grammar of Java static methods whose behaviour is defined and deterministic:
 * every loop has a trip count fixed before it starts (at most 15, nested at most twice), helper
 * methods call only helpers generated before them (no recursion), and the only exceptions are
 * Java's own (integer division by zero, {@code Math.*Exact} overflow) and explicit
 * {@code throw new ArithmeticException()}. Raw-bits calls read parameters only (the bits of a NaN
 * computed by arithmetic are the platform's, not Java's). Results that are approximate on the GPU
 * (transcendental functions, float division) appear only as the final returned value, so a
 * tolerance holds.
 */
final class MethodGenerator {

  /** The Java primitive types, narrowest first within the numeric ones. */
  enum P {
    BOOLEAN("boolean", "Boolean", SqlType.BOOLEAN, -1),
    BYTE("byte", "Byte", SqlType.TINYINT, 0),
    SHORT("short", "Short", SqlType.SMALLINT, 1),
    INT("int", "Integer", SqlType.INT, 2),
    LONG("long", "Long", SqlType.BIGINT, 3),
    FLOAT("float", "Float", SqlType.FLOAT, 4),
    DOUBLE("double", "Double", SqlType.DOUBLE, 5),
    /** Dates and timestamps (not generated; fixtures only): the Java class, a day or microsecond count on the device. */
    LOCALDATE("java.time.LocalDate", "java.time.LocalDate", SqlType.DATE, -2),
    INSTANT("java.time.Instant", "java.time.Instant", SqlType.TIMESTAMP, -3),
    SQLTIMESTAMP("java.sql.Timestamp", "java.sql.Timestamp", SqlType.TIMESTAMP, -4);

    /** The primitive types, which the grammar draws from. */
    static final P[] PRIMITIVES = {BOOLEAN, BYTE, SHORT, INT, LONG, FLOAT, DOUBLE};

    final String java;
    final String box;
    final SqlType sql;
    final int rank;

    P(String java, String box, SqlType sql, int rank) {
      this.java = java;
      this.box = box;
      this.sql = sql;
      this.rank = rank;
    }

    boolean numeric() {
      return rank >= 0;
    }

    boolean integral() {
      return rank >= 0 && rank <= 3;
    }

    boolean floating() {
      return rank >= 4;
    }

    /** Whether a value of type {@code o} widens to this type (or is it). */
    boolean accepts(P o) {
      if (this == o) {
        return true;
      }
      if (this == BOOLEAN || o == BOOLEAN || rank < -1 || o.rank < -1) {
        return false;
      }
      return o.rank <= rank;
    }
  }

  /** How a method's GPU result is compared with Java's. */
  enum Tolerance {
    /** Bit for bit (NaN equals NaN). */
    EXACT,
    /** The final value is a float division: within 3 float ulp. */
    FLOAT_DIVISION,
    /** The final value is a transcendental function of double: within a few ulp. */
    TRANSCENDENTAL
  }

  /** What the grammar may use. */
  record Features(Set<String> functions, boolean explicitThrow, boolean boxed, boolean floatDivisionAnywhere,
                  boolean strictMath, boolean floatRemainder) {
    static final List<String> ALL_FUNCTIONS = List.of("abs", "min", "max", "sqrt", "floor", "ceil", "rint", "signum",
        "exp", "log", "log10", "pow", "sin", "cos", "tan", "atan", "atan2", "sinh", "cosh", "tanh", "hypot",
        "toIntExact", "addExact", "subtractExact", "multiplyExact", "negateExact", "floorDiv", "floorMod",
        "round", "cbrt", "copySign", "bitCount", "numberOfLeadingZeros", "numberOfTrailingZeros", "compare", "boxes",
        "tables", "dates",
        "isNaN", "isInfinite", "isFinite", "doubleToRawLongBits", "longBitsToDouble", "floatToRawIntBits",
        "intBitsToFloat");

    static Features defaults() {
      // floating-point % is exact on the device (vkspark.translate.floatRemainder=false leaves it out)
      return new Features(new LinkedHashSet<>(ALL_FUNCTIONS), true, true, false, true,
          !"false".equals(System.getProperty("vkspark.translate.floatRemainder")));
    }

    boolean has(String f) {
      return functions.contains(f);
    }
  }

  /** One generated top-level method: its source (with its helpers), signature and comparison. */
  record Generated(String className, String name, List<P> params, List<Boolean> boxedParams, P result,
                   boolean boxedResult, Tolerance tolerance, String source) {}

  private static final String[] TRANSCENDENTAL1 = {"exp", "log", "log10", "sin", "cos", "tan", "atan", "sinh", "cosh",
      "tanh"};
  private static final String[] TRANSCENDENTAL2 = {"pow", "atan2"};

  /** Constant tables every generated class holds (static final arrays read when translating). */
  static final String TABLES = "  static final int[] TI = {1, 10, 100, 1000, -7, Integer.MIN_VALUE, 65535, 0};\n"
      + "  static final long[] TJ = {Long.MAX_VALUE, -1L, 1L << 40, 3L, 0L, -99L, 7L, Long.MIN_VALUE};\n"
      + "  static final double[] TD = {0.5, -0.0, Double.NaN, 1e300, Double.NEGATIVE_INFINITY, 3.25, Double.MIN_VALUE, -1.5};\n";

  private final Random r;
  private final Features f;

  // per method being generated
  private final List<Helper> helpers = new ArrayList<>();
  private int names;
  private P returnType;
  private boolean returnBoxed;
  private boolean inHelper;

  private record Helper(String name, List<P> params, P result) {}

  private record Var(String name, P type, boolean assignable, boolean boxed) {}

  private static final class Scope {
    final Scope parent;
    final List<Var> vars = new ArrayList<>();

    Scope(Scope parent) {
      this.parent = parent;
    }

    List<Var> all() {
      List<Var> out = new ArrayList<>();
      for (Scope s = this; s != null; s = s.parent) {
        out.addAll(s.vars);
      }
      return out;
    }
  }

  MethodGenerator(long seed, Features features) {
    this.r = new Random(seed);
    this.f = features;
  }

  /** A class {@code pkg.cls} of {@code count} methods {@code m0 ..}, each with its own helpers. */
  List<Generated> generateClass(String cls, int count) {
    List<Generated> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      out.add(method(cls, "m" + i));
    }
    return out;
  }

  static String classSource(String pkg, String cls, List<Generated> methods) {
    StringBuilder sb = new StringBuilder("package ").append(pkg).append(";\n\npublic final class ").append(cls)
        .append(" {\n  private ").append(cls).append("() {}\n").append(TABLES);
    for (Generated g : methods) {
      sb.append('\n').append(g.source());
    }
    return sb.append("}\n").toString();
  }

  private P anyType() {
    return P.PRIMITIVES[r.nextInt(P.PRIMITIVES.length)];
  }

  private P numericType() {
    return P.values()[1 + r.nextInt(6)];
  }

  private Generated method(String cls, String name) {
    helpers.clear();
    StringBuilder sb = new StringBuilder();
    int nHelpers = r.nextInt(3) == 0 ? 0 : r.nextInt(3);
    for (int h = 0; h < nHelpers; h++) {
      names = 0;
      inHelper = true;
      String hn = name + "h" + h;
      List<P> ps = new ArrayList<>();
      int np = 1 + r.nextInt(3);
      for (int i = 0; i < np; i++) {
        ps.add(anyType());
      }
      P res = anyType();
      returnType = res;
      returnBoxed = false;
      Scope s = new Scope(null);
      StringBuilder sig = new StringBuilder("  ").append(r.nextBoolean() ? "private" : "public").append(" static ")
          .append(res.java).append(' ').append(hn).append('(');
      for (int i = 0; i < np; i++) {
        sig.append(i > 0 ? ", " : "").append(ps.get(i).java).append(" p").append(i);
        s.vars.add(new Var("p" + i, ps.get(i), true, false));
      }
      sb.append(sig).append(") {\n");
      block(sb, s, 1, 2, 0, false, 1 + r.nextInt(3));
      sb.append("    return ").append(expr(res, s, 3)).append(";\n  }\n");
      helpers.add(new Helper(hn, ps, res));
    }
    inHelper = false;
    names = 0;
    int np = 1 + r.nextInt(5);
    List<P> ps = new ArrayList<>();
    List<Boolean> boxed = new ArrayList<>();
    Scope s = new Scope(null);
    StringBuilder sig = new StringBuilder("  public static ");
    P res = anyType();
    boolean resBoxed = f.boxed() && r.nextInt(8) == 0;
    returnType = res;
    returnBoxed = resBoxed;
    sig.append(resBoxed ? res.box : res.java).append(' ').append(name).append('(');
    for (int i = 0; i < np; i++) {
      P p = f.has("dates") && r.nextInt(16) == 0 ? P.LOCALDATE : anyType();
      // boxed Integer, Long, Float, Double only, read as (+a), a.equals(..), Objects.equals: never compared by reference
      boolean b = f.boxed() && p.numeric() && p.rank >= 2 && r.nextInt(8) == 0;
      ps.add(p);
      boxed.add(b);
      sig.append(i > 0 ? ", " : "").append(b ? p.box : p.java).append(" a").append(i);
      s.vars.add(new Var("a" + i, p, !b && !p.floating() && p != P.LOCALDATE, b));
    }
    sb.append(sig).append(") {\n");
    block(sb, s, 2, 2, 0, false, 1 + r.nextInt(5));
    Tolerance tol = Tolerance.EXACT;
    String ret;
    String tr = (res == P.DOUBLE || res == P.FLOAT) && r.nextInt(4) == 0 && transcendentalAvailable() ? transcendental(s) : null;
    if (tr != null) {
      ret = tr;
      if (res == P.FLOAT) {
        ret = "(float) " + ret;
      }
      tol = Tolerance.TRANSCENDENTAL;
    } else if (res == P.FLOAT && r.nextInt(4) == 0) {
      ret = "(" + expr(P.FLOAT, s, 2) + " / " + expr(P.FLOAT, s, 2) + ")";
      tol = Tolerance.FLOAT_DIVISION;
    } else {
      ret = expr(res, s, 3);
    }
    if (resBoxed && res != P.BOOLEAN) {
      ret = "(" + res.java + ") (" + ret + ")";
    }
    sb.append("    return ").append(ret).append(";\n  }\n");
    return new Generated(cls, name, ps, boxed, res, resBoxed, tol, sb.toString());
  }

  private boolean transcendentalAvailable() {
    for (String t : TRANSCENDENTAL1) {
      if (f.has(t)) {
        return true;
      }
    }
    for (String t : TRANSCENDENTAL2) {
      if (f.has(t)) {
        return true;
      }
    }
    return false;
  }

  private String math() {
    return f.strictMath() && r.nextInt(4) == 0 ? "StrictMath." : "Math.";
  }

  private String transcendental(Scope s) {
    List<String> fs = new ArrayList<>();
    for (String t : TRANSCENDENTAL1) {
      if (f.has(t)) {
        fs.add(t);
      }
    }
    for (String t : TRANSCENDENTAL2) {
      if (f.has(t)) {
        fs.add(t);
      }
    }
    String fn = fs.get(r.nextInt(fs.size()));
    boolean two = List.of(TRANSCENDENTAL2).contains(fn);
    String x = variableExpr(P.DOUBLE, s);
    if (x == null) {
      return null;
    }
    return math() + fn + "(" + x + (two ? ", " + expr(P.DOUBLE, s, 2) : "") + ")";
  }

  /**
   * An expression that reads a parameter the method never assigns (a float, double or boxed one),
   * or null: lavapipe spent over ten minutes in {@code vkCreateComputePipelines} on
   * {@code StrictMath.sin} of a constant, and six on {@code atan2} of values its compiler could
   * work out by unrolling the loops before it (see {@code TranslatorFindingsTest}).
   */
  private String variableExpr(P t, Scope s) {
    List<Var> fixed = s.all().stream().filter(v -> !v.assignable() && v.name().startsWith("a") && v.type().numeric()).toList();
    if (fixed.isEmpty()) {
      return null;
    }
    for (int i = 0; i < 20; i++) {
      String e = expr(t, s, 2);
      for (Var v : fixed) {
        if (java.util.regex.Pattern.compile("\\b" + v.name() + "\\b").matcher(e).find()) {
          return e;
        }
      }
    }
    Var v = fixed.get(r.nextInt(fixed.size()));
    return "(" + expr(t, s, 1) + " + " + (v.boxed() ? "(+" + v.name() + ")" : v.name()) + ")";
  }

  private String fresh(String prefix) {
    return prefix + (names++);
  }

  // ---------------------------------------------------------------- statements

  private void indent(StringBuilder sb, int level) {
    sb.append("  ".repeat(level + 1));
  }

  /**
   * {@code count} statements at {@code level}; {@code depth} bounds nesting, {@code loops} the
   * loops around, {@code inLoop} whether break and continue may appear.
   */
  private void block(StringBuilder sb, Scope s, int depth, int level, int loops, boolean inLoop, int count) {
    for (int i = 0; i < count; i++) {
      statement(sb, s, depth, level, loops, inLoop);
    }
  }

  private Var assignable(Scope s) {
    List<Var> vs = s.all().stream().filter(Var::assignable).toList();
    return vs.isEmpty() ? null : vs.get(r.nextInt(vs.size()));
  }

  private void statement(StringBuilder sb, Scope s, int depth, int level, int loops, boolean inLoop) {
    int k = r.nextInt(depth > 0 ? 16 : 8);
    switch (k) {
      case 0, 1, 2 -> {
        P t = anyType();
        String v = fresh("v");
        indent(sb, level);
        sb.append(t.java).append(' ').append(v).append(" = ").append(expr(t, s, 3)).append(";\n");
        s.vars.add(new Var(v, t, true, false));
      }
      case 3, 4 -> {
        Var v = assignable(s);
        if (v == null) {
          statement(sb, s, depth, level, loops, inLoop);
          return;
        }
        indent(sb, level);
        sb.append(v.name()).append(" = ").append(expr(v.type(), s, 3)).append(";\n");
      }
      case 5, 6 -> compound(sb, s, level);
      case 7 -> {
        if (inLoop && r.nextBoolean()) {
          indent(sb, level);
          sb.append("if (").append(expr(P.BOOLEAN, s, 2)).append(") ").append(r.nextBoolean() ? "break" : "continue")
              .append(";\n");
        } else if (r.nextInt(3) > 0) {
          indent(sb, level);
          sb.append("if (").append(expr(P.BOOLEAN, s, 2)).append(") return ").append(earlyReturn(s)).append(";\n");
        } else if (f.explicitThrow() && r.nextBoolean()) {
          indent(sb, level);
          sb.append("if (").append(expr(P.BOOLEAN, s, 2)).append(") throw new ArithmeticException(\"generated\");\n");
        } else {
          compound(sb, s, level);
        }
      }
      case 8, 9 -> { // if / else
        indent(sb, level);
        sb.append("if (").append(expr(P.BOOLEAN, s, 3)).append(") {\n");
        block(sb, new Scope(s), depth - 1, level + 1, loops, inLoop, 1 + r.nextInt(3));
        indent(sb, level);
        if (r.nextBoolean()) {
          sb.append("} else {\n");
          block(sb, new Scope(s), depth - 1, level + 1, loops, inLoop, 1 + r.nextInt(3));
          indent(sb, level);
        }
        sb.append("}\n");
      }
      case 10, 11, 12 -> {
        if (loops >= (inHelper ? 1 : 2)) {
          statement(sb, s, depth, level, loops, inLoop);
          return;
        }
        loop(sb, s, depth, level, loops);
      }
      case 13, 14 -> switchStatement(sb, s, depth, level, loops, inLoop);
      default -> {
        Var v = assignable(s);
        if (v == null || !v.type().numeric()) {
          compound(sb, s, level);
          return;
        }
        indent(sb, level);
        sb.append(v.name()).append(r.nextBoolean() ? "++" : "--").append(";\n");
      }
    }
  }

  private String earlyReturn(Scope s) {
    if (returnBoxed && r.nextInt(3) == 0) {
      return "null";
    }
    String e = expr(returnType, s, 2);
    return returnBoxed && returnType != P.BOOLEAN ? "(" + returnType.java + ") (" + e + ")" : e;
  }

  private void compound(StringBuilder sb, Scope s, int level) {
    Var v = assignable(s);
    if (v == null) {
      return;
    }
    indent(sb, level);
    P t = v.type();
    if (t == P.BOOLEAN) {
      sb.append(v.name()).append(' ').append(pick("&=", "|=", "^=")).append(' ').append(expr(P.BOOLEAN, s, 2))
          .append(";\n");
    } else if (t.integral()) {
      String op = pick("+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ">>>=");
      P rhs = op.length() == 2 && "+-*/%".indexOf(op.charAt(0)) >= 0 ? numericType() : (r.nextBoolean() ? P.INT : P.LONG);
      if (op.equals("%=") && rhs.floating() && !f.floatRemainder()) {
        rhs = P.INT;
      }
      if (op.equals("/=") && rhs == P.FLOAT && !f.floatDivisionAnywhere()) {
        rhs = P.DOUBLE; // a float division would be approximate on the GPU, and feed an integer
      }
      sb.append(v.name()).append(' ').append(op).append(' ').append(expr(rhs, s, 2)).append(";\n");
    } else {
      String op = t == P.DOUBLE || f.floatDivisionAnywhere() ? pick("+=", "-=", "*=", "/=", "%=") : pick("+=", "-=", "*=", "%=");
      if (op.equals("%=") && !f.floatRemainder()) {
        op = "-=";
      }
      P rhs = t == P.FLOAT && !f.floatDivisionAnywhere() && op.equals("%=") ? P.FLOAT : numericType();
      if (t == P.FLOAT && rhs == P.DOUBLE && op.equals("%=")) {
        rhs = P.FLOAT;
      }
      sb.append(v.name()).append(' ').append(op).append(' ').append(expr(rhs, s, 2)).append(";\n");
    }
  }

  private void loop(StringBuilder sb, Scope s, int depth, int level, int loops) {
    String n = fresh("n");
    String i = fresh("i");
    int mask = loops == 0 && !inHelper ? 15 : 7;
    indent(sb, level);
    sb.append("int ").append(n).append(" = ").append(expr(P.INT, s, 2)).append(" & ").append(mask).append(";\n");
    s.vars.add(new Var(n, P.INT, false, false));
    Scope body = new Scope(s);
    int kind = r.nextInt(5);
    int count = 1 + r.nextInt(3);
    switch (kind) {
      case 0, 1 -> {
        indent(sb, level);
        sb.append("for (int ").append(i).append(" = 0; ").append(i).append(" < ").append(n).append("; ").append(i)
            .append("++) {\n");
        body.vars.add(new Var(i, P.INT, false, false));
        block(sb, body, depth - 1, level + 1, loops + 1, true, count);
      }
      case 2 -> {
        indent(sb, level);
        sb.append("for (int ").append(i).append(" = ").append(n).append("; ").append(i).append(" > 0; ").append(i)
            .append(" -= ").append(1 + r.nextInt(3)).append(") {\n");
        body.vars.add(new Var(i, P.INT, false, false));
        block(sb, body, depth - 1, level + 1, loops + 1, true, count);
      }
      case 3 -> { // the counter moves first, so a continue cannot skip it
        indent(sb, level);
        sb.append("int ").append(i).append(" = 0;\n");
        s.vars.add(new Var(i, P.INT, false, false));
        indent(sb, level);
        sb.append("while (").append(i).append(" < ").append(n).append(") {\n");
        indent(sb, level + 1);
        sb.append(i).append("++;\n");
        block(sb, body, depth - 1, level + 1, loops + 1, true, count);
      }
      default -> {
        indent(sb, level);
        sb.append("int ").append(i).append(" = 0;\n");
        s.vars.add(new Var(i, P.INT, false, false));
        indent(sb, level);
        sb.append("do {\n");
        indent(sb, level + 1);
        sb.append(i).append("++;\n");
        block(sb, body, depth - 1, level + 1, loops + 1, true, count);
        indent(sb, level);
        sb.append("} while (").append(i).append(" < ").append(n).append(");\n");
        return;
      }
    }
    indent(sb, level);
    sb.append("}\n");
  }

  private void switchStatement(StringBuilder sb, Scope s, int depth, int level, int loops, boolean inLoop) {
    indent(sb, level);
    String sel = switch (r.nextInt(3)) {
      case 0 -> "(" + expr(P.INT, s, 2) + ") & 7";
      case 1 -> "(" + expr(P.INT, s, 2) + ") % 5";
      default -> "(int) (" + expr(P.INT, s, 2) + ")"; // a byte or short selector would not take every label
    };
    sb.append("switch (").append(sel).append(") {\n");
    Set<Integer> labels = new LinkedHashSet<>();
    int cases = 1 + r.nextInt(4);
    boolean sparse = r.nextInt(4) == 0;
    while (labels.size() < cases) {
      labels.add(sparse ? r.nextInt(2001) - 1000 : r.nextInt(11) - 3);
    }
    List<String> heads = new ArrayList<>();
    for (int l : labels) {
      heads.add("case " + l + ":");
    }
    if (r.nextInt(4) > 0) {
      heads.add(r.nextInt(heads.size() + 1), "default:");
    }
    for (String h : heads) {
      indent(sb, level + 1);
      sb.append(h).append(" {\n");
      block(sb, new Scope(s), depth - 1, level + 2, loops, inLoop, 1 + r.nextInt(2));
      indent(sb, level + 1);
      sb.append(r.nextInt(3) > 0 ? "}\n" : "} // falls through\n");
      if (sb.charAt(sb.length() - 2) == '}') {
        indent(sb, level + 1);
        sb.append("break;\n");
      }
    }
    indent(sb, level);
    sb.append("}\n");
  }

  private String pick(String... options) {
    return options[r.nextInt(options.length)];
  }

  // ---------------------------------------------------------------- expressions

  /** An expression whose type widens to {@code t} (it may be narrower: Java's semantics all the same). */
  String expr(P t, Scope s, int d) {
    if (d <= 0 || r.nextInt(5) == 0) {
      return leaf(t, s);
    }
    if (r.nextInt(12) == 0) {
      return "(" + expr(P.BOOLEAN, s, d - 1) + " ? " + expr(t, s, d - 1) + " : " + expr(t, s, d - 1) + ")";
    }
    if (r.nextInt(10) == 0) {
      String call = helperCall(t, s, d);
      if (call != null) {
        return call;
      }
    }
    return switch (t) {
      case BOOLEAN -> bool(s, d);
      case BYTE, SHORT -> "((" + t.java + ") " + expr(numericType(), s, d - 1) + ")";
      case INT, LONG -> integral(t, s, d);
      case FLOAT, DOUBLE -> floating(t, s, d);
      default -> throw new IllegalArgumentException("not generated: " + t);
    };
  }

  private String helperCall(P t, Scope s, int d) {
    List<Helper> hs = helpers.stream().filter(h -> t.accepts(h.result())).toList();
    if (hs.isEmpty()) {
      return null;
    }
    Helper h = hs.get(r.nextInt(hs.size()));
    StringBuilder sb = new StringBuilder(h.name()).append('(');
    for (int i = 0; i < h.params().size(); i++) {
      sb.append(i > 0 ? ", " : "").append(expr(h.params().get(i), s, d - 1));
    }
    return sb.append(')').toString();
  }

  private String leaf(P t, Scope s) {
    if (r.nextInt(3) > 0) {
      List<Var> vs = s.all().stream().filter(v -> t.accepts(v.type())).toList();
      if (!vs.isEmpty()) {
        Var v = vs.get(r.nextInt(vs.size()));
        return v.boxed() ? "(+" + v.name() + ")" : v.name();
      }
    }
    return literal(t);
  }

  private String literal(P t) {
    return switch (t) {
      case BOOLEAN -> r.nextBoolean() ? "true" : "false";
      case BYTE -> "(byte) " + neg(r.nextInt(256) - 128);
      case SHORT -> "(short) " + neg(r.nextInt(65536) - 32768);
      case INT -> switch (r.nextInt(6)) {
        case 0 -> pick("Integer.MIN_VALUE", "Integer.MAX_VALUE", "0", "-1", "31", "32", "0x7fff", "0xff");
        case 1 -> neg(r.nextInt());
        default -> neg(r.nextInt(41) - 20);
      };
      case LONG -> switch (r.nextInt(6)) {
        case 0 -> pick("Long.MIN_VALUE", "Long.MAX_VALUE", "0L", "-1L", "63L", "64L", "0xffffffffL", "(1L << 53)");
        case 1 -> longLiteral(r.nextLong());
        default -> longLiteral(r.nextInt(41) - 20);
      };
      case FLOAT -> switch (r.nextInt(8)) {
        case 0 -> pick("Float.NaN", "Float.POSITIVE_INFINITY", "Float.NEGATIVE_INFINITY", "Float.MIN_VALUE",
            "Float.MAX_VALUE", "-0.0f", "0.0f", "0.1f", "Float.MIN_NORMAL");
        case 1 -> neg((float) ((r.nextDouble() - 0.5) * Math.pow(10, r.nextInt(40) - 20)));
        default -> neg((float) ((r.nextInt(81) - 40) / 4.0));
      };
      case DOUBLE -> switch (r.nextInt(8)) {
        case 0 -> pick("Double.NaN", "Double.POSITIVE_INFINITY", "Double.NEGATIVE_INFINITY", "Double.MIN_VALUE",
            "Double.MAX_VALUE", "-0.0", "0.0", "0.1", "Double.MIN_NORMAL", "1e300", "9.007199254740993E15");
        case 1 -> neg((r.nextDouble() - 0.5) * Math.pow(10, r.nextInt(60) - 30));
        default -> neg((r.nextInt(81) - 40) / 4.0);
      };
      default -> throw new IllegalArgumentException("not generated: " + t);
    };
  }

  private static String neg(long v) {
    return v < 0 ? "(" + v + ")" : Long.toString(v);
  }

  private static String longLiteral(long v) {
    return v < 0 ? "(" + v + "L)" : v + "L";
  }

  private static String neg(double v) {
    String s = Double.toString(v);
    return v < 0 || s.startsWith("-") ? "(" + s + ")" : s;
  }

  private static String neg(float v) {
    String s = Float.toString(v) + "f";
    return s.startsWith("-") ? "(" + s + ")" : s;
  }

  private String integral(P t, Scope s, int d) {
    String m = math();
    int k = r.nextInt(14);
    switch (k) {
      case 0, 1, 2 -> {
        return "(" + expr(t, s, d - 1) + " " + pick("+", "-", "*", "/", "%") + " " + expr(integralUpTo(t), s, d - 1) + ")";
      }
      case 3, 4 -> {
        return "(" + expr(t, s, d - 1) + " " + pick("&", "|", "^") + " " + expr(integralUpTo(t), s, d - 1) + ")";
      }
      case 5 -> {
        return "(" + expr(t, s, d - 1) + " " + pick("<<", ">>", ">>>") + " " + expr(r.nextBoolean() ? P.INT : P.LONG, s, d - 1) + ")";
      }
      case 6 -> {
        return "(" + pick("-", "~") + " " + expr(t, s, d - 1) + ")";
      }
      case 7, 8 -> {
        return "((" + t.java + ") " + expr(numericType(), s, d - 1) + ")";
      }
      default -> {
        List<String> fs = new ArrayList<>(List.of("abs", "min", "max", "floorDiv", "floorMod", "addExact",
            "subtractExact", "multiplyExact", "negateExact"));
        fs.add(t == P.INT ? "toIntExact" : "doubleToRawLongBits");
        if (t == P.INT) {
          fs.addAll(List.of("floatToRawIntBits", "bitCount", "numberOfLeadingZeros", "numberOfTrailingZeros", "compare",
              "boxes", "dates"));
        }
        fs.addAll(List.of("round", "tables"));
        fs.removeIf(x -> !f.has(x));
        if (fs.isEmpty()) {
          return expr(t, s, d - 1);
        }
        String fn = fs.get(r.nextInt(fs.size()));
        return switch (fn) {
          case "abs", "negateExact" -> m + fn + "(" + expr(t, s, d - 1) + ")";
          case "toIntExact" -> m + fn + "(" + expr(P.LONG, s, d - 1) + ")";
          case "doubleToRawLongBits" -> rawBits("Double.doubleToRawLongBits", P.DOUBLE, s, d);
          case "floatToRawIntBits" -> rawBits("Float.floatToRawIntBits", P.FLOAT, s, d);
          case "round" -> t == P.INT ? m + "round((float) " + expr(P.FLOAT, s, d - 1) + ")"
              : m + "round((double) " + expr(P.DOUBLE, s, d - 1) + ")";
          case "bitCount", "numberOfLeadingZeros", "numberOfTrailingZeros" -> (r.nextBoolean() ? "Integer." + fn + "("
              + expr(P.INT, s, d - 1) : "Long." + fn + "(" + expr(P.LONG, s, d - 1)) + ")";
          case "compare" -> {
            String c = pick("double", "float", "long", "int");
            yield Character.toUpperCase(c.charAt(0)) + (c.equals("int") ? "nteger" : c.substring(1)) + ".compare((" + c + ") "
                + expr(numericType(), s, d - 1) + ", (" + c + ") " + expr(numericType(), s, d - 1) + ")";
          }
          case "tables" -> t == P.INT ? "TI[(" + expr(P.INT, s, d - 1) + ") & 7]" : "TJ[(" + expr(P.INT, s, d - 1) + ") & 7]";
          case "boxes" -> boxed(s, d);
          case "dates" -> date(s, d);
          default -> m + fn + "(" + expr(t, s, d - 1) + ", " + expr(t, s, d - 1) + ")";
        };
      }
    }
  }

  /** An int from a boxed parameter: compareTo, hashCode, or a boolean equals as 0 or 1. */
  private String boxed(Scope s, int d) {
    List<Var> vs = s.all().stream().filter(Var::boxed).toList();
    if (vs.isEmpty()) {
      return expr(P.INT, s, d - 1);
    }
    Var v = vs.get(r.nextInt(vs.size()));
    String other = "(" + v.type().java + ") " + expr(v.type(), s, d - 1);
    return switch (r.nextInt(4)) {
      case 0 -> v.name() + ".compareTo(" + other + ")";
      case 1 -> v.name() + ".hashCode()";
      case 2 -> "(" + v.name() + ".equals(" + other + ") ? 1 : 0)";
      default -> "(java.util.Objects.equals(" + v.name() + ", " + other + ") ? 3 : " + v.type().box + ".compare(" + v.name()
          + ", " + other + "))";
    };
  }

  /** An int from a LocalDate parameter: its calendar fields, day of week, epoch day. */
  private String date(Scope s, int d) {
    List<Var> vs = s.all().stream().filter(v -> v.type() == P.LOCALDATE).toList();
    if (vs.isEmpty()) {
      return expr(P.INT, s, d - 1);
    }
    String v = vs.get(r.nextInt(vs.size())).name();
    return v + pick(".getYear()", ".getMonthValue()", ".getDayOfMonth()", ".getDayOfYear()", ".getDayOfWeek().getValue()",
        ".lengthOfMonth()", ".lengthOfYear()", ".hashCode()", ".compareTo(" + v + ")");
  }

  /** Raw bits of a parameter or local (its NaN, if any, is an input's or a literal's): else a cast. */
  private String rawBits(String fn, P of, Scope s, int d) {
    List<Var> vs = s.all().stream().filter(v -> v.type() == of && v.name().startsWith("a")).toList();
    if (vs.isEmpty()) {
      return "((" + (of == P.DOUBLE ? "long" : "int") + ") " + expr(of, s, d - 1) + ")";
    }
    Var v = vs.get(r.nextInt(vs.size()));
    return fn + "(" + (v.boxed() ? "(+" + v.name() + ")" : v.name()) + ")";
  }

  private P integralUpTo(P t) {
    P[] ps = t == P.INT ? new P[] {P.BYTE, P.SHORT, P.INT, P.INT} : new P[] {P.BYTE, P.SHORT, P.INT, P.LONG, P.LONG};
    return ps[r.nextInt(ps.length)];
  }

  private String floating(P t, Scope s, int d) {
    String m = math();
    int k = r.nextInt(14);
    switch (k) {
      case 0, 1, 2, 3 -> {
        String op = t == P.DOUBLE || f.floatDivisionAnywhere() ? pick("+", "-", "*", "/", "%") : pick("+", "-", "*", "%");
        if (op.equals("%") && !f.floatRemainder()) {
          op = "*";
        }
        P other = P.values()[1 + r.nextInt(t.rank)];
        if (t == P.FLOAT && op.equals("%") && !f.floatDivisionAnywhere()) {
          other = P.FLOAT;
        }
        if (op.equals("/") && !f.floatDivisionAnywhere()) { // a double division, whatever the operands' types
          return "((double) " + expr(t, s, d - 1) + " / " + expr(other, s, d - 1) + ")";
        }
        return "(" + expr(t, s, d - 1) + " " + op + " " + expr(other, s, d - 1) + ")";
      }
      case 4 -> {
        return "(- " + expr(t, s, d - 1) + ")";
      }
      case 5, 6, 7 -> {
        return "((" + t.java + ") " + expr(numericType(), s, d - 1) + ")";
      }
      default -> {
        List<String> fs = new ArrayList<>(List.of("abs", "min", "max", "signum", "copySign"));
        if (t == P.DOUBLE) {
          fs.addAll(List.of("sqrt", "floor", "ceil", "rint", "longBitsToDouble", "cbrt", "hypot", "tables"));
        } else {
          fs.add("intBitsToFloat");
        }
        fs.removeIf(x -> !f.has(x));
        if (fs.isEmpty()) {
          return expr(t, s, d - 1);
        }
        String fn = fs.get(r.nextInt(fs.size()));
        return switch (fn) {
          case "min", "max", "copySign" -> m + fn + "((" + t.java + ") " + expr(t, s, d - 1) + ", (" + t.java + ") "
              + expr(t, s, d - 1) + ")";
          // of a parameter: lavapipe's compiler folds such functions of constants for minutes (see variableExpr)
          case "hypot", "cbrt" -> {
            String x = variableExpr(P.DOUBLE, s);
            yield x == null ? expr(t, s, d - 1) : m + fn + "(" + x + (fn.equals("hypot") ? ", " + expr(t, s, d - 1) : "") + ")";
          }
          case "tables" -> "TD[(" + expr(P.INT, s, d - 1) + ") & 7]";
          case "longBitsToDouble" -> "Double.longBitsToDouble(" + expr(P.LONG, s, d - 1) + ")";
          case "intBitsToFloat" -> "Float.intBitsToFloat(" + expr(P.INT, s, d - 1) + ")";
          // abs, signum of an int would be Math.abs(int): keep the argument floating
          default -> m + fn + "((" + t.java + ") " + expr(t, s, d - 1) + ")";
        };
      }
    }
  }

  private String bool(Scope s, int d) {
    int k = r.nextInt(12);
    switch (k) {
      case 0, 1, 2, 3 -> {
        return "(" + expr(numericType(), s, d - 1) + " " + pick("<", "<=", ">", ">=", "==", "!=") + " "
            + expr(numericType(), s, d - 1) + ")";
      }
      case 4 -> {
        return "(!" + expr(P.BOOLEAN, s, d - 1) + ")";
      }
      case 5, 6 -> {
        return "(" + expr(P.BOOLEAN, s, d - 1) + " " + pick("&&", "||", "^", "&", "|", "==", "!=") + " "
            + expr(P.BOOLEAN, s, d - 1) + ")";
      }
      case 7, 8 -> {
        List<String> fs = new ArrayList<>(List.of("isNaN", "isInfinite", "isFinite"));
        fs.removeIf(x -> !f.has(x));
        if (fs.isEmpty()) {
          return bool(s, d);
        }
        String fn = fs.get(r.nextInt(fs.size()));
        boolean dbl = fn.equals("isFinite") || r.nextBoolean();
        return (dbl ? "Double." : "Float.") + fn + "(" + expr(dbl ? P.DOUBLE : P.FLOAT, s, d - 1) + ")";
      }
      default -> {
        return "(" + expr(numericType(), s, d - 1) + " " + pick("<", ">", "==", "!=") + " " + leaf(numericType(), s) + ")";
      }
    }
  }
}
