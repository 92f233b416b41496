package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * Scala's {@code StringOps} in a closure as scalac 2.13 compiles it: {@code s.split(',')}
 * ({@code StringOps$.MODULE$.split$extension(Predef$.MODULE$.augmentString(s), ',')}), {@code take},
 * {@code drop}, {@code takeRight}, {@code dropRight}, {@code slice}, {@code nonEmpty},
 * {@code isEmpty}, {@code toInt}, {@code toLong}, {@code stripPrefix}, {@code stripSuffix},
 * {@code contains} of a char, {@code *}; with Scala's results (a range outside the string is
 * clipped, never thrown). {@code s.length}, {@code s.trim}, {@code s.toUpperCase} and string
 * interpolation ({@code s"$a-$b"}, a {@code java.lang.StringBuilder} chain) are Java's methods
 * ({@link StringCalls}, {@link StringBuilders}).
 */
final class ScalaStrings {
  static final String OPS = "scala/collection/StringOps$";

  private ScalaStrings() {}

  /** Whether this class translates {@code call}. */
  static boolean owns(MethodInsnNode call) {
    return call.owner.equals(OPS) || call.owner.equals("scala/Predef$")
        && (call.name.equals("augmentString") || call.name.equals("wrapString"));
  }

  static Val invoke(StringCalls c, MethodInsnNode call, Val[] a) {
    MethodTranslator t = c.t;
    if (call.owner.equals("scala/Predef$")) {
      return a[0]; // the String itself: StringOps is a value class around it
    }
    String name = call.name.replace("$extension", "");
    Expr s = c.deref(a[0]);
    Expr len = Expr.call(JType.I, "vk_str_len", s);
    return switch (name + call.desc.replaceFirst("\\(Ljava/lang/String;", "(")) {
      case "split(C)[Ljava/lang/String;" -> {
        if (!(c.prim(a[1]) instanceof Expr.Const k)) {
          throw t.refuse("StringOps.split on a char that is not a constant");
        }
        char ch = (char) (int) (Integer) k.value(); // Scala splits on the char escaped as a regular expression
        String r = ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' ? String.valueOf(ch) : "\\" + ch;
        yield c.split(s, r, "scala.collection.StringOps.split");
      }
      case "take(I)Ljava/lang/String;" -> slice(c, s, Expr.i(0), c.prim(a[1]));
      case "drop(I)Ljava/lang/String;" -> slice(c, s, c.prim(a[1]), Expr.i(Integer.MAX_VALUE));
      case "slice(II)Ljava/lang/String;" -> slice(c, s, c.prim(a[1]), c.prim(a[2]));
      case "takeRight(I)Ljava/lang/String;", "dropRight(I)Ljava/lang/String;" -> {
        c.ascii(s);
        Expr cut = t.temp(JType.I, Expr.bin(BinOp.SUB, len, Expr.call(JType.I, "max", c.prim(a[1]), Expr.i(0))));
        yield name.equals("takeRight") ? slice(c, s, cut, Expr.i(Integer.MAX_VALUE)) : slice(c, s, Expr.i(0), cut);
      }
      case "nonEmpty()Z", "isEmpty()Z" -> Val.of(t.temp(JType.I, Expr.toInt(Expr.bin(name.equals("isEmpty") ? BinOp.EQ
          : BinOp.NE, len, Expr.i(0)))));
      case "toInt()I", "toLong()J" -> new StringBuilders(c).invoke(new MethodInsnNode(org.objectweb.asm.Opcodes.INVOKESTATIC,
          name.equals("toInt") ? "java/lang/Integer" : "java/lang/Long", name.equals("toInt") ? "parseInt" : "parseLong",
          name.equals("toInt") ? "(Ljava/lang/String;)I" : "(Ljava/lang/String;)J"), null, new Val[] {a[0]});
      case "stripPrefix(Ljava/lang/String;)Ljava/lang/String;", "stripSuffix(Ljava/lang/String;)Ljava/lang/String;" -> {
        Expr p = c.deref(a[1]); // a prefix of bytes is a prefix of chars: exact on every row
        Expr plen = Expr.call(JType.I, "vk_str_len", p);
        boolean prefix = name.equals("stripPrefix");
        Expr cut = prefix ? Expr.call(JType.S, "vk_str_sub", s, plen, len)
            : Expr.call(JType.S, "vk_str_sub", s, Expr.i(0), Expr.bin(BinOp.SUB, len, plen));
        yield StringCalls.string(t.temp(JType.S, Expr.select(Expr.call(JType.Z, prefix ? "vk_str_starts" : "vk_str_ends", s, p),
            cut, s)));
      }
      case "contains(C)Z" -> {
        Expr ch = c.prim(a[1]);
        if (!(ch instanceof Expr.Const k && (Integer) k.value() < 128)) {
          c.ascii(s); // a non-ASCII char is never in an ASCII string; an ASCII one is one byte wherever it is
        }
        yield Val.of(t.temp(JType.I, Expr.toInt(Expr.bin(BinOp.GE, Expr.call(JType.I, "vk_str_find", s,
            Expr.call(JType.I, "uint", ch), Expr.i(0)), Expr.i(0)))));
      }
      case "$times(I)Ljava/lang/String;" -> c.built(c.helper(JType.S, "vkt_repeat", s,
          t.temp(JType.I, Expr.call(JType.I, "max", c.prim(a[1]), Expr.i(0)))));
      default -> throw t.refuse("calls StringOps." + name + ", which has no device version");
    };
  }

  /** Scala's {@code slice(from, until)}: clipped to the string, "" when empty; UTF-16 indices, so ASCII rows only. */
  private static Val slice(StringCalls c, Expr s, Expr from, Expr until) {
    c.ascii(s);
    return StringCalls.string(c.helper(JType.S, "vkt_slice", s, from, until));
  }
}
