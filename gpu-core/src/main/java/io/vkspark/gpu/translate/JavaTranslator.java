package io.vkspark.gpu.translate;

import io.vkspark.gpu.column.SqlType;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.ClassNode;

/**
 * Translates the JVM bytecode of a Java UDF's {@code call()} (or of a static method) into a GLSL
 * kernel with Java's results, so that an existing Java UDF runs on the GPU without a line of GLSL.
 *
 * <p>What translates: primitives and their boxes, {@code LocalDate}, {@code Instant} and
 * {@code java.sql.Timestamp} ({@link Temporal}); arithmetic with Java's rules (wrapping, masked
 * shifts, saturating float-to-integer conversions, NaN ordering, division rounded as Java does,
 * floating-point {@code %} exact); {@code Math}/{@code StrictMath} and box methods with device
 * versions ({@link LibraryCalls}, {@link MathCalls}, {@link Boxes}, {@link DateCalls}); Scala
 * closures' runtime calls ({@link ScalaCalls}); branches, {@code switch}, loops with
 * {@code break}/{@code continue}, early returns; static methods of the UDF's class and of other
 * classes on its class path, and instance methods of objects known when translating
 * (non-recursive): the UDF itself, a captured case class, a Scala {@code object} and the methods
 * it inherits from a trait ({@link KnownObjects}); {@code static final} constants, the UDF
 * object's fields, a lambda's captured values and the final fields of known objects, read now as
 * constants, primitive arrays among them as constant tables ({@link ConstTable}); null checks
 * and null results. A lambda erased to return {@code Object} translates with the box it returns
 * ({@link Results}). A row whose Java method throws (integer division by zero, {@code *Exact}
 * overflow, an index out of bounds, an explicit {@code throw}, unboxing a null) or returns null
 * calls {@code jthrow()}, and the caller recomputes its batch with {@code call()}. Strings:
 * {@code String}'s methods, concatenation, {@code StringBuilder}, {@code split} on one char,
 * {@code parseInt}, Scala's {@code StringOps} ({@link StringCalls}), a row whose characters Java's
 * semantics need handed back to {@code call()} alone.
 *
 * <p>What does not: other allocation (but a {@code StringBuilder}), regular expressions, writes into arrays, caught exceptions, calls
 * outside that set, recursion, writes to fields, reads of non-final static fields and of non-final
 * fields of objects other than the UDF (a Scala {@code var}: it may change after planning),
 * {@code synchronized}, {@code java.sql.Date}, {@code invokedynamic}. The
 * {@link Translation.Refused} reason names the class, the method, the source line and the
 * instruction. Translations are cached per class, method, the field values of the UDF object and
 * of captured objects ({@code FieldValues}: a closure over another {@code Fee} is another kernel)
 * and the types the caller gives. The package Javadoc says how the translation is built and where new value types
 * and library calls plug in.
 */
public final class JavaTranslator {
  private static final Map<List<Object>, Translation> CACHE = new ConcurrentHashMap<>();

  private JavaTranslator() {}

  /**
   * The translation of {@code udf}: an object of a class with one non-bridge public method named
   * {@code call} taking 1 to 22 arguments (Spark's {@code UDF1 .. UDF22}), or a serializable Java
   * lambda or method reference (its {@code writeReplace} names the implementation method; captured
   * values become constants). Fields of the object and {@code static final} fields are read now, as
   * constants.
   */
  public static Translation translate(Object udf) {
    return translate(udf, null);
  }

  /**
   * As {@link #translate(Object)}, for a UDF registered with SQL result type {@code expectedResult}
   * (null: unknown). A lambda whose implementation javac erased to return {@code Object}
   * ({@code functions.udf((Long x) -> x * x, DataTypes.LongType)}) translates with the box its
   * {@code areturn}s return, or, when they do not tell, with {@code expectedResult}'s box; a box
   * that differs from {@code expectedResult} is a refusal. A method that declares its result type
   * is translated as it declares it (the caller compares the types).
   */
  public static Translation translate(Object udf, SqlType expectedResult) {
    return translate(udf, expectedResult, null);
  }

  /**
   * As {@link #translate(Object, SqlType)}, with the SQL types of the UDF's arguments
   * ({@code expectedArgs}, null: unknown) for arguments its method declares only as {@code Object}
   * (a Scala closure's {@code $adapted} bridge unboxes them itself, which also tells their types).
   */
  public static Translation translate(Object udf, SqlType expectedResult, List<SqlType> expectedArgs) {
    Class<?> c = udf.getClass();
    Expected expected = new Expected(expectedResult, expectedArgs == null ? null
        : java.util.Collections.unmodifiableList(new ArrayList<>(expectedArgs)));
    SerializedLambda lambda = lambdaOf(udf);
    if (lambda != null) {
      return translateLambda(udf, lambda, expected);
    }
    Method call = null;
    for (Method m : c.getMethods()) {
      if (m.getName().equals("call") && !m.isBridge() && !m.isSynthetic() && !Modifier.isStatic(m.getModifiers())
          && m.getParameterCount() >= 1 && m.getParameterCount() <= 22) {
        if (call != null && !call.getDeclaringClass().equals(m.getDeclaringClass())) {
          continue;
        }
        call = m;
      }
    }
    String source = c.getName() + ".call";
    if (call == null) {
      return new Translation.Refused(source, source + ": no public call method with 1 to 22 arguments");
    }
    List<Object> key = new ArrayList<>(List.of(call.getDeclaringClass(), Type.getMethodDescriptor(call)));
    key.add(FieldValues.of(udf));
    key.add(expected);
    Method found = call;
    return CACHE.computeIfAbsent(key, k -> run(found.getDeclaringClass().getClassLoader(), udf,
        Type.getInternalName(found.getDeclaringClass()), "call", Type.getMethodDescriptor(found), Map.of(), 0,
        expected));
  }

  /** The translation of a static method (primitive or boxed arguments and result). */
  public static Translation translate(Method staticMethod) {
    if (!Modifier.isStatic(staticMethod.getModifiers())) {
      throw new IllegalArgumentException(staticMethod + " is not static");
    }
    Class<?> c = staticMethod.getDeclaringClass();
    String desc = Type.getMethodDescriptor(staticMethod);
    return CACHE.computeIfAbsent(List.of(c, staticMethod.getName(), desc),
        k -> run(c.getClassLoader(), null, Type.getInternalName(c), staticMethod.getName(), desc, Map.of(), 0, Expected.NONE));
  }

  /** What the caller knows of the UDF's registered types (each null when unknown); part of the cache key. */
  private record Expected(SqlType result, List<SqlType> args) {
    static final Expected NONE = new Expected(null, null);
  }

  private static SerializedLambda lambdaOf(Object udf) {
    Class<?> c = udf.getClass();
    if (!c.isSynthetic() && !c.getName().contains("$$Lambda")) {
      return null;
    }
    try {
      Method w = c.getDeclaredMethod("writeReplace");
      w.setAccessible(true);
      return w.invoke(udf) instanceof SerializedLambda s ? s : null;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  private static Translation translateLambda(Object udf, SerializedLambda l, Expected expected) {
    String source = l.getImplClass().replace('/', '.') + "." + l.getImplMethodName();
    int kind = l.getImplMethodKind();
    List<Object> captured = new ArrayList<>();
    for (int i = 0; i < l.getCapturedArgCount(); i++) {
      captured.add(l.getCapturedArg(i));
    }
    Object receiver;
    Map<Integer, Object> constants = new HashMap<>();
    int skip;
    if (kind == java.lang.invoke.MethodHandleInfo.REF_invokeStatic) {
      for (int i = 0; i < captured.size(); i++) {
        constants.put(i, captured.get(i));
      }
      skip = captured.size();
      receiver = null;
    } else if (kind == java.lang.invoke.MethodHandleInfo.REF_invokeVirtual
        || kind == java.lang.invoke.MethodHandleInfo.REF_invokeSpecial) {
      if (captured.isEmpty()) {
        return new Translation.Refused(source, source + ": an unbound instance method reference");
      }
      receiver = captured.get(0);
      for (int i = 1; i < captured.size(); i++) {
        constants.put(i - 1, captured.get(i));
      }
      skip = captured.size() - 1;
    } else {
      return new Translation.Refused(source, source + ": a constructor or interface method reference");
    }
    if (l.getImplClass().startsWith("java/")) {
      return new Translation.Refused(source, source + ": a reference to a JDK method (write it as a lambda, "
          + "x -> Math.sqrt(x))");
    }
    for (Object c : captured) {
      if (c != receiver && c != null && JType.unboxed(Type.getInternalName(c.getClass())) == null && !KnownObjects.knowable(c)) {
        return new Translation.Refused(source, source + ": captures a " + c.getClass().getName()
            + " (primitives, their boxes and objects of the application's classes translate)");
      }
    }
    List<Object> key = new ArrayList<>(List.of(l.getImplClass(), l.getImplMethodName(), l.getImplMethodSignature()));
    key.add(captured.stream().map(c -> c == null || JType.unboxed(Type.getInternalName(c.getClass())) != null ? c
        : FieldValues.of(c)).toList());
    key.add(expected);
    Object r = receiver;
    int s = skip;
    ClassLoader loader = udf.getClass().getClassLoader();
    return CACHE.computeIfAbsent(key, k -> run(loader, r, l.getImplClass(), l.getImplMethodName(),
        l.getImplMethodSignature(), constants, s, expected));
  }

  private static Translation run(ClassLoader loader, Object receiver, String owner, String name, String desc,
                                 Map<Integer, Object> constants, int skip, Expected expected) {
    String source = Type.getObjectType(owner).getClassName() + "." + name;
    try {
      Unit unit = new Unit(loader, receiver);
      ClassNode c = unit.classNode(owner);
      Unit.Method main = unit.method(c, name, desc, constants, receiver);
      Type[] args = Type.getArgumentTypes(desc);
      Results.erasedArgs(main, source, skip, expected.args());
      List<SqlType> sqlArgs = new ArrayList<>();
      List<Expr> call = new ArrayList<>();
      for (int i = skip; i < args.length; i++) {
        ObjType o = main.argType(i);
        SqlType t = o != null ? o.sqlType() : JType.sqlType(args[i]);
        if (t == null) {
          throw new Untranslatable(source + ": argument " + (i - skip + 1) + " is a " + args[i].getClassName()
              + (args[i].getClassName().equals("java.sql.Date") || args[i].getClassName().equals("java.util.Date")
                  ? " (it depends on the JVM's default time zone: take a java.time.LocalDate, which Spark passes with "
                  + "spark.sql.datetime.java8API.enabled=true)"
                  : " (primitives, their boxes, LocalDate, Instant and java.sql.Timestamp translate)"));
        }
        sqlArgs.add(t);
        Var a = new Var("a" + (i - skip), t == SqlType.BOOLEAN ? JType.Z : o != null ? o.repr() : JType.of(args[i]),
            Var.Kind.PARAM);
        call.add(t == SqlType.BOOLEAN ? Expr.toInt(a.ref()) : a.ref());
      }
      ObjType erased = Results.erased(main, source, expected.result(), unit);
      ObjType box = erased != null ? erased : ObjType.of(Type.getReturnType(desc));
      SqlType result = box != null ? box.sqlType() : JType.sqlType(Type.getReturnType(desc));
      if (result == null) {
        throw new Untranslatable(source + ": returns a " + Type.getReturnType(desc).getClassName()
            + " (primitives, their boxes, LocalDate, Instant and java.sql.Timestamp translate)");
      }
      unit.enter(owner + "." + name + desc);
      MethodTranslator t = new MethodTranslator(unit, main, "vkt_main", false, erased);
      unit.addMain(t.translate());
      if (result != SqlType.STRING && !sqlArgs.contains(SqlType.STRING) && unit.functions().contains("vk_string")) {
        throw new Untranslatable((unit.strings.firstUse != null ? unit.strings.firstUse : source + ": uses strings")
            + ", with no string argument or result");
      }
      Expr value = new Expr.Call(t.returns, "vkt_main", call);
      String body = GlslWriter.statement(new Stmt.Return(result == SqlType.BOOLEAN
          ? Expr.bin(Expr.BinOp.NE, value, Expr.i(0)) : value));
      List<Boolean> strict = NullStrictness.of(owner, main.node(), skip);
      Translation.NullAware nullAware = null;
      String strictFunctions = unit.functions();
      boolean tolerant = strict.contains(false);
      // the same method with its arguments' null flags and a null result, for a method that tolerates a null
      // argument or may return null for non-null ones (Scala's None)
      if (tolerant || box != null && NullStrictness.mayReturnNull(owner, main.node())) {
        try {
          MethodTranslator n = new MethodTranslator(unit, main, "vkt_main", true, erased);
          Fn nullable = n.translate();
          List<Boolean> flags = new ArrayList<>();
          for (int i = skip; i < args.length; i++) {
            flags.add(main.argType(i) != null);
          }
          nullAware = new Translation.NullAware(unit.functions(nullable), flags, n.nullOut != null);
        } catch (Untranslatable e) {
          if (tolerant) {
            throw e;
          } // else the strict kernel alone: a null result makes its batch call()'s, as before
        }
      }
      return new Translation.Translated(source, sqlArgs, result, body, nullAware != null ? unit.functions()
          : strictFunctions, strict, unit.approximations(), nullAware);
    } catch (Untranslatable e) {
      return new Translation.Refused(source, e.getMessage());
    } catch (StackOverflowError e) {
      return new Translation.Refused(source, source + ": its control flow nests too deeply to translate");
    }
  }
}
