package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.objectweb.asm.Handle;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * The strings a translated UDF builds, written into the row's scratch ({@link StringPool}) with
 * Java's text: concatenation ({@code +}: javac's {@code makeConcatWithConstants} recipe, or a
 * {@code StringBuilder} chain), {@code String.concat}, {@code StringBuilder.append} of strings,
 * chars, ints, longs and booleans (a null string appends {@code "null"}), {@code String.valueOf},
 * {@code Integer}/{@code Long.toString}; and the methods that read numbers and chars:
 * {@code Integer.parseInt}, {@code Long.parseLong} (radix 10; a row where Java throws throws, a
 * non-ASCII row, whose Unicode digits Java reads, goes to {@code call()}), {@code Character}'s
 * tests and case mapping of a char (a char >= 128 goes to {@code call()}),
 * {@code Boolean.parseBoolean}. A builder is one of the row's {@value StringPool#BUILDERS}; a row
 * that needs more, or builds more than the scratch holds, goes to {@code call()}.
 * {@code Double}/{@code Float.toString} (shortest decimal) stay on the CPU.
 */
final class StringBuilders {
  private static final Set<String> NUMBERS = Set.of("parseInt(Ljava/lang/String;)I", "parseLong(Ljava/lang/String;)J",
      "valueOf(Ljava/lang/String;)Ljava/lang/Integer;", "valueOf(Ljava/lang/String;)Ljava/lang/Long;",
      "toString(I)Ljava/lang/String;", "toString(J)Ljava/lang/String;", "toString()Ljava/lang/String;");
  private static final Set<String> CHARACTER = Set.of("isDigit", "isLetter", "isLetterOrDigit", "isAlphabetic",
      "isWhitespace", "isSpaceChar", "isUpperCase", "isLowerCase", "toUpperCase", "toLowerCase", "toString");

  private final StringCalls c;
  private final MethodTranslator t;

  StringBuilders(StringCalls c) {
    this.c = c;
    this.t = c.t;
  }

  /** Whether this class translates {@code call}. */
  static boolean owns(MethodInsnNode call) {
    return switch (call.owner) {
      case "java/lang/StringBuilder" -> true;
      case "java/lang/Integer", "java/lang/Long" -> NUMBERS.contains(call.name + call.desc)
          || call.desc.contains("Ljava/lang/String;");
      case "java/lang/Character" -> call.getOpcode() == Opcodes.INVOKESTATIC && CHARACTER.contains(call.name);
      case "java/lang/Boolean" -> call.desc.contains("Ljava/lang/String;");
      default -> false;
    };
  }

  /** The value of {@code call} (null for none), for a call this class {@link #owns}. */
  Val invoke(MethodInsnNode call, Val receiver, Val[] a) {
    String m = call.name + call.desc;
    if (call.owner.equals("java/lang/StringBuilder")) {
      return builder(m, receiver, a);
    }
    if (call.owner.equals("java/lang/Character")) {
      return character(call.name, c.prim(a[0]));
    }
    if (call.owner.equals("java/lang/Boolean")) {
      if (!m.startsWith("parseBoolean") && !m.startsWith("valueOf")) {
        throw t.refuse("calls Boolean." + call.name + call.desc + ", which has no device version");
      }
      Val.Obj s = (Val.Obj) a[0];
      c.ascii(s.value()); // equalsIgnoreCase("true"); a null string is false
      Expr yes = Expr.bin(BinOp.LAND, Expr.not(s.isNull()), Expr.call(JType.Z, "vk_str_eq_ignore_case", s.value(),
          c.constant("true").value()));
      Expr v = t.temp(JType.I, Expr.toInt(yes));
      return m.startsWith("valueOf") ? new Val.Obj(new ObjType.Box(Type.BOOLEAN_TYPE), v, Expr.FALSE) : Val.of(v);
    }
    boolean isLong = call.owner.equals("java/lang/Long");
    return switch (m) {
      case "toString(I)Ljava/lang/String;", "toString(J)Ljava/lang/String;" -> number(c.prim(a[0]));
      case "toString()Ljava/lang/String;" -> {
        Val.Obj box = (Val.Obj) receiver;
        Boxes.nonNull(box, t);
        yield number(box.value());
      }
      case "parseInt(Ljava/lang/String;)I", "parseLong(Ljava/lang/String;)J", "valueOf(Ljava/lang/String;)Ljava/lang/Integer;",
           "valueOf(Ljava/lang/String;)Ljava/lang/Long;" -> {
        Val.Obj s = (Val.Obj) a[0];
        t.throwIf(s.isNull()); // NumberFormatException
        c.ascii(s.value());
        Expr r = c.helper(JType.J, "vkt_parse", s.value(), Expr.j(isLong ? Long.MAX_VALUE : Integer.MAX_VALUE));
        t.throwIf(StringPool.BAD.ref()); // NumberFormatException
        Expr v = isLong ? r : t.temp(JType.I, new Expr.Convert(JType.I, r));
        yield m.startsWith("valueOf") ? new Val.Obj(new ObjType.Box(isLong ? Type.LONG_TYPE : Type.INT_TYPE), v, Expr.FALSE)
            : Val.of(v);
      }
      default -> throw t.refuse("calls " + StringCalls.simple(call.owner) + "." + call.name + call.desc
          + " (only radix 10 reads and writes numbers on the device)");
    };
  }

  /** Static methods of String. */
  Val staticCall(MethodInsnNode call, Val[] a) {
    String m = call.name + call.desc;
    return switch (m) {
      case "valueOf(I)Ljava/lang/String;", "valueOf(J)Ljava/lang/String;" -> number(c.prim(a[0]));
      case "valueOf(C)Ljava/lang/String;" -> build(List.of(a[0]), List.of(Type.CHAR_TYPE));
      case "valueOf(Z)Ljava/lang/String;" -> StringCalls.string(booleanText(c.prim(a[0])));
      case "valueOf(Ljava/lang/Object;)Ljava/lang/String;" -> {
        if (a[0] instanceof Val.Obj o && o.type() instanceof ObjType.Builder) {
          Boxes.nonNull(o, t);
          yield StringCalls.string(c.helper(JType.S, "vkt_sb_view", o.value()));
        }
        if (!StringCalls.isString(a[0])) {
          throw t.refuse("String.valueOf of " + StringCalls.describe(a[0]) + " (its toString has no device version)");
        }
        yield StringCalls.string(c.orNull(a[0]));
      }
      case "valueOf(D)Ljava/lang/String;", "valueOf(F)Ljava/lang/String;" ->
          throw t.refuse("String.valueOf of a " + (m.contains("(D)") ? "double" : "float")
              + " (Java's shortest decimal form stays on the CPU)");
      default -> throw t.refuse(call.name.equals("format") ? "String.format (formatting stays on the CPU)"
          : "calls String." + call.name + call.desc + ", which has no device version");
    };
  }

  private Expr booleanText(Expr z) {
    return t.temp(JType.S, Expr.select(Expr.bin(BinOp.NE, z, Expr.i(0)), c.constant("true").value(),
        c.constant("false").value()));
  }

  /** The decimal text of int or long {@code v}. */
  private Val number(Expr v) {
    return build(List.of(Val.of(v)), List.of(v.type() == JType.J ? Type.LONG_TYPE : Type.INT_TYPE));
  }

  /** {@code s.concat(x)}. */
  Val concat(Expr s, Expr x) {
    return build(List.of(StringCalls.string(s), StringCalls.string(x)), List.of(Type.getObjectType(StringCalls.STRING),
        Type.getObjectType(StringCalls.STRING)));
  }

  /** {@code a + b + ...} as javac 9+ compiles it: {@code invokedynamic makeConcatWithConstants} with its recipe. */
  void concat(InvokeDynamicInsnNode indy) {
    Type[] types = Type.getArgumentTypes(indy.desc);
    Val[] vals = new Val[types.length];
    for (int i = types.length - 1; i >= 0; i--) {
      vals[i] = t.pop();
    }
    List<Val> pieces = new ArrayList<>();
    List<Type> kinds = new ArrayList<>();
    Type string = Type.getObjectType(StringCalls.STRING);
    if (indy.name.equals("makeConcat")) {
      pieces.addAll(List.of(vals));
      kinds.addAll(List.of(types));
    } else {
      String recipe = (String) indy.bsmArgs[0];
      int arg = 0;
      int constant = 1;
      StringBuilder text = new StringBuilder();
      for (int i = 0; i <= recipe.length(); i++) {
        char ch = i < recipe.length() ? recipe.charAt(i) : '\u0001';
        if (ch != '\u0001' && ch != '\u0002') {
          text.append(ch);
          continue;
        }
        if (!text.isEmpty()) {
          pieces.add(c.constant(text.toString()));
          kinds.add(string);
          text.setLength(0);
        }
        if (i == recipe.length()) {
          break;
        }
        if (ch == '\u0001') {
          pieces.add(vals[arg]);
          kinds.add(types[arg++]);
        } else {
          pieces.add(c.constant(String.valueOf(indy.bsmArgs[constant++])));
          kinds.add(string);
        }
      }
    }
    t.push(build(pieces, kinds));
  }

  /** Whether {@code indy} is javac's string concatenation. */
  static boolean isConcat(InvokeDynamicInsnNode indy) {
    Handle h = indy.bsm;
    return h.getOwner().equals("java/lang/invoke/StringConcatFactory");
  }

  /** A new string: each piece's text (of its static type) written into the scratch, in order. */
  private Val build(List<Val> pieces, List<Type> kinds) {
    Expr start = t.temp(JType.I, StringPool.TOP.ref());
    c.pool().useScratch();
    for (int i = 0; i < pieces.size(); i++) {
      put(pieces.get(i), kinds.get(i));
    }
    Expr v = c.helper(JType.S, "vkt_built", start);
    c.returnIfHandedBack();
    return StringCalls.string(v);
  }

  /** Writes {@code v}'s text, as {@code String.valueOf} of its static type {@code kind} gives it. */
  private void put(Val v, Type kind) {
    switch (kind.getSort()) {
      case Type.INT, Type.SHORT, Type.BYTE -> c.helper(JType.I, "vkt_put_int", c.prim(v));
      case Type.LONG -> c.helper(JType.I, "vkt_put_long", c.prim(v));
      case Type.CHAR -> c.helper(JType.I, "vkt_put_char", c.prim(v));
      case Type.BOOLEAN -> c.helper(JType.I, "vkt_put_str", booleanText(c.prim(v)));
      case Type.FLOAT, Type.DOUBLE -> throw t.refuse("concatenates a " + kind.getClassName()
          + " (Java's shortest decimal form stays on the CPU)");
      default -> {
        if (v instanceof Val.Obj o && o.type() instanceof ObjType.Builder) {
          Boxes.nonNull(o, t); // "null" in Java; a null builder is rare enough to recompute
          c.helper(JType.I, "vkt_put_str", c.helper(JType.S, "vkt_sb_view", o.value()));
        } else if (StringCalls.isString(v)) {
          c.helper(JType.I, "vkt_put_str", c.orNull(v));
        } else if (kind.getInternalName().equals(StringCalls.STRING) && v instanceof Val.Obj) {
          c.helper(JType.I, "vkt_put_str", c.constant("null").value()); // a local that only ever holds null
        } else if (v instanceof Val.Obj o && o.type() instanceof ObjType.Box b
            && (b.repr() == JType.I || b.repr() == JType.J) && b.prim().getSort() != Type.BOOLEAN) {
          Boxes.nonNull(o, t); // "null" in Java; recomputed
          c.helper(JType.I, b.repr() == JType.J ? "vkt_put_long" : "vkt_put_int", o.value());
        } else {
          throw t.refuse("concatenates " + StringCalls.describe(v) + " (its toString has no device version)");
        }
      }
    }
  }

  /** A new builder ({@code new StringBuilder}): the number of one of the row's builders. */
  Val.Obj newBuilder() {
    Expr id = c.helper(JType.I, "vkt_sb_new");
    c.returnIfHandedBack();
    return new Val.Obj(new ObjType.Builder(), id, Expr.FALSE);
  }

  /** A builder's constructor: {@code ()}, {@code (int capacity)}, {@code (String)}, {@code (CharSequence)}. */
  void init(Val.Obj sb, String desc, Val[] a) {
    switch (desc) {
      case "()V" -> { }
      case "(I)V" -> t.throwIf(Expr.bin(BinOp.LT, c.prim(a[0]), Expr.i(0))); // NegativeArraySizeException
      case "(Ljava/lang/String;)V", "(Ljava/lang/CharSequence;)V" -> append(sb, c.deref(a[0]), null, null);
      default -> throw t.refuse("new StringBuilder" + desc);
    }
  }

  private Val builder(String m, Val receiver, Val[] a) {
    if (!(receiver instanceof Val.Obj sb) || !(sb.type() instanceof ObjType.Builder)) {
      throw t.refuse("calls StringBuilder." + m + " on " + StringCalls.describe(receiver));
    }
    Boxes.nonNull(sb, t);
    if (m.startsWith("append(")) {
      Type kind = Type.getArgumentTypes(m.substring(m.indexOf('(')))[0];
      if (a[0] instanceof Val.Obj o && (o.type() instanceof ObjType.Str || o.type() instanceof ObjType.Builder)) {
        kind = Type.getObjectType(StringCalls.STRING);
      } else if (kind.getSort() == Type.OBJECT) {
        throw t.refuse("StringBuilder.append of " + StringCalls.describe(a[0]));
      }
      append(sb, null, a[0], kind);
      return sb;
    }
    Expr view = c.helper(JType.S, "vkt_sb_view", sb.value());
    return switch (m) {
      case "toString()Ljava/lang/String;" -> StringCalls.string(view);
      case "length()I" -> Val.of(c.str(JType.I, "vk_str_utf16_len", view));
      case "isEmpty()Z" -> Val.of(t.temp(JType.I, Expr.toInt(Expr.bin(BinOp.EQ, Expr.call(JType.I, "vk_str_len", view),
          Expr.i(0)))));
      case "charAt(I)C" -> c.invoke(new MethodInsnNode(Opcodes.INVOKEVIRTUAL, StringCalls.STRING, "charAt", "(I)C"),
          StringCalls.string(view), a);
      default -> throw t.refuse("calls StringBuilder." + m + ", which has no device version (append, toString, length "
          + "and charAt have)");
    };
  }

  /** Appends view {@code s}, or value {@code v} of static type {@code kind}, to builder {@code sb}. */
  private void append(Val.Obj sb, Expr s, Val v, Type kind) {
    c.helper(JType.I, "vkt_sb_open", sb.value());
    if (s != null) {
      c.helper(JType.I, "vkt_put_str", s);
    } else {
      put(v, kind);
    }
    c.helper(JType.I, "vkt_sb_close", sb.value());
    c.returnIfHandedBack();
  }

  /** {@code Character}'s methods of one char: ASCII's answers; a char >= 128 goes to call(). */
  private Val character(String name, Expr ch) {
    c.helper(JType.Z, "vkt_char_ascii", ch);
    c.returnIfHandedBack();
    Expr upper = range(ch, 'A', 'Z');
    Expr lower = range(ch, 'a', 'z');
    Expr digit = range(ch, '0', '9');
    Expr r = switch (name) {
      case "isDigit" -> Expr.toInt(digit);
      case "isLetter", "isAlphabetic" -> Expr.toInt(Expr.bin(BinOp.LOR, upper, lower));
      case "isLetterOrDigit" -> Expr.toInt(Expr.bin(BinOp.LOR, Expr.bin(BinOp.LOR, upper, lower), digit));
      case "isUpperCase" -> Expr.toInt(upper);
      case "isLowerCase" -> Expr.toInt(lower);
      case "isWhitespace" -> Expr.toInt(t.helper(JType.Z, "vkt_ws", Expr.call(JType.I, "uint", ch)));
      case "isSpaceChar" -> Expr.toInt(Expr.bin(BinOp.EQ, ch, Expr.i(' ')));
      case "toUpperCase" -> Expr.select(lower, Expr.bin(BinOp.SUB, ch, Expr.i(32)), ch);
      case "toLowerCase" -> Expr.select(upper, Expr.bin(BinOp.ADD, ch, Expr.i(32)), ch);
      case "toString" -> null;
      default -> throw t.refuse("calls Character." + name);
    };
    if (r == null) {
      return build(List.of(Val.of(ch)), List.of(Type.CHAR_TYPE));
    }
    return Val.of(t.temp(JType.I, r));
  }

  private static Expr range(Expr ch, char lo, char hi) {
    return Expr.bin(BinOp.LAND, Expr.bin(BinOp.GE, ch, Expr.i(lo)), Expr.bin(BinOp.LE, ch, Expr.i(hi)));
  }
}
