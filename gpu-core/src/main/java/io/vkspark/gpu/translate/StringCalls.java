package io.vkspark.gpu.translate;

import io.vkspark.gpu.translate.Expr.BinOp;
import java.util.Locale;
import java.util.Set;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.MethodInsnNode;

/**
 * {@code java.lang.String}'s methods in a translated UDF, with Java's results. A string is a view
 * of UTF-8 bytes ({@code vk_string}: an argument's, a constant's or the row's scratch, see
 * {@link StringPool}), exactly the bytes Spark gives {@code call()} (an ill-formed byte of the
 * input is U+FFFD, as {@code call()} decodes it) or takes from it.
 *
 * <p>Exact on every row, whatever its characters: {@code length} (UTF-16 units), {@code isEmpty},
 * {@code equals}, {@code contentEquals}, {@code hashCode}, {@code startsWith}, {@code endsWith},
 * {@code contains}, {@code trim}, {@code concat}, {@code replace} of ASCII chars or of strings,
 * {@code split} on one ASCII char (UTF-8 never puts an ASCII byte inside another character).
 * Exact on rows whose string is ASCII, where a byte is a UTF-16 unit and case mapping is ASCII's,
 * the others handed back to {@code call()} and counted as not ASCII: {@code charAt},
 * {@code substring}, {@code indexOf}/{@code lastIndexOf} (of the string searched),
 * {@code startsWith} from an offset, {@code equalsIgnoreCase}, {@code compareTo},
 * {@code compareToIgnoreCase}, {@code toUpperCase}, {@code toLowerCase}, {@code strip} and kin
 * where stripping stops at a non-ASCII char. Case mapping depends on the default locale: under a
 * Turkish, Azeri or Lithuanian one (ASCII {@code i}/{@code I} map otherwise) it is refused.
 * Where Java throws ({@code NullPointerException}, an index out of range) the row throws.
 *
 * <p>Refused, with the reason: regular expressions ({@code matches}, {@code replaceAll},
 * {@code replaceFirst}, {@code split} on anything but one literal char), {@code String.format},
 * calls with an explicit {@code Locale}, {@code Double.toString}.
 */
final class StringCalls {
  static final String STRING = "java/lang/String";
  private static final Set<String> TURKIC = Set.of("tr", "az", "lt");
  private static final Set<String> REGEX = Set.of("matches", "replaceAll", "replaceFirst", "split");

  final MethodTranslator t;

  StringCalls(MethodTranslator t) {
    this.t = t;
  }

  // ---- the IR of string code ------------------------------------------------------------------

  StringPool pool() {
    return t.unit.strings;
  }

  /** A temporary holding the translator helper {@code name}'s value ({@link StringHelpers}). */
  Expr helper(JType type, String name, Expr... args) {
    if (name.startsWith("vkt_sb_")) {
      pool().useBuilders();
    } else if (name.startsWith("vkt_put") || name.startsWith("vkt_built") || name.startsWith("vkt_replace")
        || name.startsWith("vkt_repeat")) {
      pool().useScratch();
    }
    pool().use();
    return t.temp(type, t.helper(type, name, args));
  }

  /** A temporary holding the string helper {@code name}'s value ({@code vk_str_*}, gpu-core vkstring.glsl). */
  Expr str(JType type, String name, Expr... args) {
    pool().use();
    return t.temp(type, Expr.call(type, name, args));
  }

  /** After a helper that may hand the row back: the code returns at once (its result is call()'s). */
  void returnIfHandedBack() {
    t.emit(Stmt.when(StringPool.HANDED_BACK.ref(), new Stmt.Return(Expr.zero(t.returns))));
  }

  /** The row goes to call() unless {@code s} is ASCII. */
  void ascii(Expr s) {
    helper(JType.Z, "vkt_ascii", s);
    returnIfHandedBack();
  }

  static Val.Obj string(Expr view) {
    return new Val.Obj(new ObjType.Str(), view, Expr.FALSE);
  }

  /** The constant {@code s} as a string value (refused when it holds an unpaired surrogate). */
  Val.Obj constant(String s) {
    Expr v = pool().constant(s);
    if (v == null) {
      throw t.refuse("a string constant with an unpaired surrogate");
    }
    return string(v);
  }

  static boolean isString(Val v) {
    return v instanceof Val.Obj o && o.type() instanceof ObjType.Str;
  }

  /** The view of string {@code v}, which Java dereferences: the row throws when it is null. */
  Expr deref(Val v) {
    if (!isString(v)) {
      throw t.refuse("passes " + describe(v) + " where a string is expected");
    }
    Val.Obj o = (Val.Obj) v;
    Boxes.nonNull(o, t);
    return o.value();
  }

  /** The view of string {@code v}, or of {@code "null"} when it is null ({@code String.valueOf}, {@code +}). */
  Expr orNull(Val v) {
    Val.Obj o = (Val.Obj) v;
    if (o.neverNull()) {
      return o.value();
    }
    Expr nul = constant("null").value();
    return o.alwaysNull() ? nul : t.temp(JType.S, Expr.select(o.isNull(), nul, o.value()));
  }

  Expr prim(Val v) {
    if (!(v instanceof Val.Prim p)) {
      throw t.refuse("passes " + describe(v) + " where a primitive is expected");
    }
    return p.e();
  }

  static String describe(Val v) {
    return v instanceof Val.Obj o ? "a " + o.type().className() : v instanceof Val.Known k ? "a " + k.value().getClass().getName() : "a value";
  }

  /** The value of the UDF's string result {@code o}: a null one is the null view (a null result, no call()). */
  static Expr result(MethodTranslator t, Val.Obj o) {
    Expr nul = new Expr.Call(JType.S, "vk_string", java.util.List.of(Expr.i(-2), Expr.i(0), Expr.i(0), Expr.i(0)));
    return o.neverNull() ? o.value() : o.alwaysNull() ? nul : t.temp(JType.S, Expr.select(o.isNull(), nul, o.value()));
  }

  private Val bool(Expr cond) {
    return Val.of(t.temp(JType.I, Expr.toInt(cond)));
  }

  private Val integer(Expr e) {
    return Val.of(t.temp(JType.I, e));
  }

  private static Expr or(Expr a, Expr b) {
    return Expr.bin(BinOp.LOR, a, b);
  }

  private static Expr lt(Expr a, Expr b) {
    return Expr.bin(BinOp.LT, a, b);
  }

  private static Expr len(Expr s) {
    return Expr.call(JType.I, "vk_str_len", s);
  }

  // ---- String's methods -----------------------------------------------------------------------

  /** Whether this family translates {@code call} (a method of String, or of Object, CharSequence or Objects on a string). */
  static boolean owns(MethodInsnNode call, Val receiver, Val[] args) {
    return switch (call.owner) {
      case STRING -> true;
      case "java/lang/CharSequence", "java/lang/Object", "java/lang/Comparable" -> isString(receiver);
      case "java/util/Objects" -> java.util.Arrays.stream(args).anyMatch(StringCalls::isString)
          && Set.of("equals", "hashCode", "toString").contains(call.name);
      default -> false;
    };
  }

  /** The value of {@code call} (null for none), for a call this family {@link #owns}. */
  Val invoke(MethodInsnNode call, Val receiver, Val[] a) {
    String m = call.name + call.desc;
    if (call.owner.equals("java/util/Objects")) {
      return objects(m, a);
    }
    if (call.getOpcode() == Opcodes.INVOKESTATIC) {
      return new StringBuilders(this).staticCall(call, a);
    }
    if (REGEX.contains(call.name) && !m.equals("split(Ljava/lang/String;)[Ljava/lang/String;")) {
      throw t.refuse("String." + call.name + " uses a regular expression (regular expressions stay on the CPU)");
    }
    if (call.desc.contains("Ljava/util/Locale;")) {
      throw t.refuse("String." + call.name + " with an explicit java.util.Locale (Locale-explicit calls stay on the CPU)");
    }
    Expr s = deref(receiver); // NullPointerException
    return switch (m) {
      case "length()I" -> integer(Expr.call(JType.I, "vk_str_utf16_len", s));
      case "isEmpty()Z" -> bool(Expr.bin(BinOp.EQ, len(s), Expr.i(0)));
      case "charAt(I)C", "codePointAt(I)I" -> {
        ascii(s);
        Expr i = prim(a[0]);
        t.throwIf(or(lt(i, Expr.i(0)), Expr.bin(BinOp.GE, i, len(s)))); // StringIndexOutOfBoundsException
        yield integer(Expr.call(JType.I, "int", Expr.call(JType.I, "vk_str_at", s, i)));
      }
      case "substring(I)Ljava/lang/String;" -> substring(s, prim(a[0]), null);
      case "substring(II)Ljava/lang/String;", "subSequence(II)Ljava/lang/CharSequence;" ->
          substring(s, prim(a[0]), prim(a[1]));
      case "indexOf(I)I", "indexOf(II)I", "lastIndexOf(I)I", "lastIndexOf(II)I" -> {
        ascii(s); // a char of an ASCII string is its byte; a char >= 128 is never found there
        boolean last = call.name.startsWith("last");
        Expr from = a.length > 1 ? prim(a[1]) : last ? Expr.bin(BinOp.SUB, len(s), Expr.i(1)) : Expr.i(0);
        yield integer(Expr.call(JType.I, last ? "vk_str_rfind" : "vk_str_find", s, unsigned(prim(a[0])), from));
      }
      case "indexOf(Ljava/lang/String;)I", "indexOf(Ljava/lang/String;I)I", "lastIndexOf(Ljava/lang/String;)I",
           "lastIndexOf(Ljava/lang/String;I)I" -> {
        Expr x = deref(a[0]);
        ascii(s); // a non-ASCII string is never found in an ASCII one
        boolean last = call.name.startsWith("last");
        Expr from = a.length > 1 ? prim(a[1]) : last ? len(s) : Expr.i(0);
        yield integer(Expr.call(JType.I, last ? "vk_str_rfind_str" : "vk_str_find_str", s, x, from));
      }
      case "startsWith(Ljava/lang/String;)Z" -> bool(Expr.call(JType.Z, "vk_str_starts", s, deref(a[0])));
      case "startsWith(Ljava/lang/String;I)Z" -> {
        Expr p = deref(a[0]);
        ascii(s);
        yield bool(t.helper(JType.Z, "vkt_starts_at", s, p, prim(a[1])));
      }
      case "endsWith(Ljava/lang/String;)Z" -> bool(Expr.call(JType.Z, "vk_str_ends", s, deref(a[0])));
      case "contains(Ljava/lang/CharSequence;)Z" -> bool(Expr.call(JType.Z, "vk_str_contains", s, sequence(a[0])));
      case "equals(Ljava/lang/Object;)Z" -> bool(equal(s, a[0]));
      case "contentEquals(Ljava/lang/CharSequence;)Z" -> bool(Expr.call(JType.Z, "vk_str_eq", s, sequence(a[0])));
      case "equalsIgnoreCase(Ljava/lang/String;)Z" -> {
        if (!isString(a[0])) {
          throw t.refuse("String.equalsIgnoreCase of " + describe(a[0]));
        }
        Val.Obj o = (Val.Obj) a[0];
        if (o.alwaysNull()) {
          yield Val.of(Expr.i(0));
        }
        ascii(s);
        ascii(o.value()); // a null argument is the empty view here: ASCII
        yield bool(Expr.bin(BinOp.LAND, Expr.not(o.isNull()), Expr.call(JType.Z, "vk_str_eq_ignore_case", s, o.value())));
      }
      case "compareTo(Ljava/lang/String;)I", "compareTo(Ljava/lang/Object;)I", "compareToIgnoreCase(Ljava/lang/String;)I" -> {
        Expr x = deref(a[0]);
        ascii(s);
        ascii(x);
        yield integer(call.name.equals("compareTo") ? Expr.call(JType.I, "vk_str_cmp", s, x)
            : t.helper(JType.I, "vkt_cmp_ic", s, x));
      }
      case "hashCode()I" -> integer(Expr.call(JType.I, "vk_str_hash", s));
      case "trim()Ljava/lang/String;" -> string(str(JType.S, "vk_str_trim", s));
      case "strip()Ljava/lang/String;", "stripLeading()Ljava/lang/String;", "stripTrailing()Ljava/lang/String;" -> {
        int which = call.name.equals("strip") ? 3 : call.name.equals("stripLeading") ? 1 : 2;
        Expr r = helper(JType.S, "vkt_strip", s, Expr.i(which));
        returnIfHandedBack();
        yield string(r);
      }
      case "isBlank()Z" -> {
        Expr r = helper(JType.S, "vkt_strip", s, Expr.i(1));
        returnIfHandedBack();
        yield bool(Expr.bin(BinOp.EQ, len(r), Expr.i(0)));
      }
      case "toUpperCase()Ljava/lang/String;", "toLowerCase()Ljava/lang/String;" -> {
        Locale l = Locale.getDefault();
        if (TURKIC.contains(l.getLanguage())) {
          throw t.refuse("String." + call.name + " under the default locale " + l + " (Turkish, Azeri and Lithuanian map "
              + "ASCII i and I otherwise; case mapping stays on the CPU)");
        }
        ascii(s);
        yield string(str(JType.S, call.name.equals("toUpperCase") ? "vk_str_upper" : "vk_str_lower", s));
      }
      case "replace(CC)Ljava/lang/String;" -> built(helper(JType.S, "vkt_replace_c", s, prim(a[0]), prim(a[1])));
      case "replace(Ljava/lang/CharSequence;Ljava/lang/CharSequence;)Ljava/lang/String;" ->
          built(helper(JType.S, "vkt_replace_s", s, sequence(a[0]), sequence(a[1])));
      case "concat(Ljava/lang/String;)Ljava/lang/String;" -> new StringBuilders(this).concat(s, deref(a[0]));
      case "repeat(I)Ljava/lang/String;" -> {
        Expr n = prim(a[0]);
        t.throwIf(lt(n, Expr.i(0))); // IllegalArgumentException
        yield built(helper(JType.S, "vkt_repeat", s, n));
      }
      case "split(Ljava/lang/String;)[Ljava/lang/String;" -> split(s, a[0]);
      case "toString()Ljava/lang/String;", "intern()Ljava/lang/String;" -> string(s);
      default -> throw t.refuse("calls String." + call.name + call.desc + ", which has no device version");
    };
  }

  Val built(Expr view) {
    returnIfHandedBack();
    return string(view);
  }

  /** A CharSequence argument: a string (or a builder's current text). */
  private Expr sequence(Val v) {
    if (v instanceof Val.Obj o && o.type() instanceof ObjType.Builder) {
      Boxes.nonNull(o, t);
      return helper(JType.S, "vkt_sb_view", o.value());
    }
    return deref(v);
  }

  private static Expr unsigned(Expr c) {
    return Expr.call(JType.I, "uint", c); // GLSL text only: a negative char is never found
  }

  private Val substring(Expr s, Expr b, Expr e) {
    ascii(s);
    Expr end = e == null ? len(s) : e;
    t.throwIf(or(or(lt(b, Expr.i(0)), Expr.bin(BinOp.GT, end, len(s))), Expr.bin(BinOp.GT, b, end)));
    return string(str(JType.S, "vk_str_sub", s, b, end));
  }

  /** {@code s.equals(v)}: false for null or an object of another class. */
  private Expr equal(Expr s, Val v) {
    if (isString(v)) {
      Val.Obj o = (Val.Obj) v;
      return o.alwaysNull() ? Expr.FALSE : Expr.bin(BinOp.LAND, Expr.not(o.isNull()), Expr.call(JType.Z, "vk_str_eq", s, o.value()));
    }
    if (v instanceof Val.Obj || v instanceof Val.Known) {
      return Expr.FALSE;
    }
    throw t.refuse("compares a string with " + describe(v));
  }

  private Val objects(String m, Val[] a) {
    return switch (m) {
      case "equals(Ljava/lang/Object;Ljava/lang/Object;)Z" -> {
        if (!isString(a[0])) {
          yield bool(isString(a[1]) && a[0] instanceof Val.Obj o ? Expr.bin(BinOp.LAND, o.isNull(), ((Val.Obj) a[1]).isNull())
              : Expr.FALSE);
        }
        Val.Obj x = (Val.Obj) a[0];
        Expr bothNull = a[1] instanceof Val.Obj y ? Expr.bin(BinOp.LAND, x.isNull(), y.isNull()) : Expr.FALSE;
        yield bool(or(bothNull, Expr.bin(BinOp.LAND, Expr.not(x.isNull()), equal(x.value(), a[1]))));
      }
      case "hashCode(Ljava/lang/Object;)I" -> {
        Val.Obj x = (Val.Obj) a[0];
        yield integer(Expr.select(x.isNull(), Expr.i(0), Expr.call(JType.I, "vk_str_hash", x.value())));
      }
      case "toString(Ljava/lang/Object;)Ljava/lang/String;" -> string(orNull(a[0]));
      case "toString(Ljava/lang/Object;Ljava/lang/String;)Ljava/lang/String;" -> {
        if (!isString(a[0]) || !isString(a[1])) {
          throw t.refuse("Objects.toString of " + describe(a[0]));
        }
        Val.Obj x = (Val.Obj) a[0];
        Val.Obj d = (Val.Obj) a[1];
        yield new Val.Obj(x.type(), t.temp(JType.S, Expr.select(x.isNull(), d.value(), x.value())),
            t.temp(JType.Z, Expr.bin(BinOp.LAND, x.isNull(), d.isNull())));
      }
      default -> throw t.refuse("calls java.util.Objects." + m + " on a string");
    };
  }

  /** {@code s.split(regex)} where the regex is one literal char: Java's fast path, exact on bytes for an ASCII char. */
  private Val split(Expr s, Val regex) {
    String r = isString(regex) ? pool().textOf(((Val.Obj) regex).value()) : null;
    if (r == null) {
      throw t.refuse("String.split with a regular expression that is not a constant (regular expressions stay on the CPU)");
    }
    return split(s, r, "String.split");
  }

  /** {@code what} ({@code String.split}) of {@code s} by regular expression {@code r}, a constant. */
  Val split(Expr s, String r, String what) {
    char c = r.length() == 1 && ".$|()[{^?*+\\".indexOf(r.charAt(0)) < 0 ? r.charAt(0)
        : r.length() == 2 && r.charAt(0) == '\\' && !Character.isLetterOrDigit(r.charAt(1)) && r.charAt(1) < 128
        ? r.charAt(1) : 0;
    if (c == 0 || c >= 128) {
      throw t.refuse(what + "(\"" + r + "\") uses a regular expression (only one ASCII character, literal or "
          + "escaped, splits on the device; regular expressions stay on the CPU)");
    }
    return new Val.Obj(new ObjType.Parts(), helper(JType.S, "vkt_parts", s, Expr.i(c)), Expr.FALSE);
  }

  /** {@code parts[k]} of a split: the row throws where Java's index is out of range. */
  Val.Obj piece(Val.Obj parts, Expr k) {
    Boxes.nonNull(parts, t);
    Expr n = helper(JType.I, "vkt_split_n", parts.value());
    t.throwIf(or(lt(k, Expr.i(0)), Expr.bin(BinOp.GE, k, n))); // ArrayIndexOutOfBoundsException
    return string(helper(JType.S, "vkt_split_at", parts.value(), k));
  }

  /** {@code parts.length} of a split. */
  Val count(Val.Obj parts) {
    Boxes.nonNull(parts, t);
    return Val.of(helper(JType.I, "vkt_split_n", parts.value()));
  }

  /** The owner's simple name: {@code String}. */
  static String simple(String owner) {
    return Type.getObjectType(owner).getClassName().replaceFirst("^.*\\.", "");
  }
}
