package io.vkspark.spark.udf;

import io.vkspark.gpu.translate.JavaTranslator;
import io.vkspark.gpu.translate.Translation;
import java.lang.invoke.MethodHandleInfo;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Scala closures as Spark holds them: {@code udf((x: Double) => x * 2)} and
 * {@code spark.udf.register("f", (a: Int, b: Int) => ...)} reach the plan as a {@code ScalaUDF}
 * whose function is the closure itself, a serializable LambdaMetafactory lambda. Its
 * {@code writeReplace} names the implementation method, as for a Java lambda: a static
 * {@code $anonfun$...} of the enclosing class taking the captured values first. A closure over
 * primitives of a specialized function type ({@code scala.runtime.java8.JFunction1$mcDD$sp}) points
 * at the primitive method itself; any other ({@code scala.Function3}, an {@code Option} result)
 * points at a {@code $anonfun$...$adapted} bridge over boxes, which unboxes with
 * {@code BoxesRunTime} (a null becomes 0) and calls the primitive method. The translation of a
 * bridge that captures nothing is the translation of the method it calls; Spark's null handling
 * for primitive parameters ({@code ScalaUDF.inputPrimitives}) decides whether that is the closure's
 * result for a null argument ({@link TranslatedUdf#nullAsZeroArgument}). A captured case class (or
 * any object of the application's classes) and a Scala {@code object} the closure calls are read
 * when planning: their final fields become constants of this closure's kernel, a {@code var} is a
 * refusal.
 *
 * <p>Spark's own closures ({@code org.apache.spark.*}: the wrappers of Java UDFs, ML's internals)
 * are not users' closures and are left alone.
 */
public final class ScalaClosures {
  private static final Map<Class<?>, Optional<Method>> WRITE_REPLACE = new ConcurrentHashMap<>();

  private ScalaClosures() {}

  /** A user's Scala closure: the function object and its serialized form. */
  record Closure(Object function, SerializedLambda lambda) {
    String source() {
      return lambda.getImplClass().replace('/', '.') + "." + lambda.getImplMethodName();
    }
  }

  /** A translation and, per argument of the kernel, whether the translated parameter is a primitive. */
  record Translated(Translation translation, List<Boolean> primitives) {}

  /**
   * Whether {@code internalName} is the functional interface of a Scala closure:
   * {@code scala/Function0} .. {@code scala/Function22} or a specialized
   * {@code scala/runtime/java8/JFunctionN$mc..$sp}.
   */
  public static boolean isScalaFunction(String internalName) {
    return internalName.matches("scala/Function\\d+") || internalName.matches("scala/runtime/java8/JFunction\\d+(\\$mc\\w+\\$sp)?");
  }

  /** The user's Scala closure {@code function} is, if it is one (see the class comment). */
  static Optional<Closure> of(Object function) {
    if (function == null) {
      return Optional.empty();
    }
    Class<?> c = function.getClass();
    if (!c.isSynthetic() && !c.getName().contains("$$Lambda")) {
      return Optional.empty();
    }
    SerializedLambda l = serialized(function);
    if (l == null || !isScalaFunction(l.getFunctionalInterfaceClass()) || l.getImplClass().startsWith("org/apache/spark/")) {
      return Optional.empty();
    }
    return Optional.of(new Closure(function, l));
  }

  /**
   * The translation of {@code function} if it is a user's Scala closure (see the class comment), as
   * planning makes it; empty for anything else.
   */
  public static Optional<Translation> translation(Object function) {
    return of(function).map(c -> translate(c).translation());
  }

  /** The serialized form of a lambda ({@code writeReplace}), or null. */
  static SerializedLambda serialized(Object function) {
    Optional<Method> writeReplace = WRITE_REPLACE.computeIfAbsent(function.getClass(), k -> {
      try {
        Method m = k.getDeclaredMethod("writeReplace");
        m.setAccessible(true);
        return Optional.of(m);
      } catch (ReflectiveOperationException | RuntimeException e) {
        return Optional.empty();
      }
    });
    if (writeReplace.isEmpty()) {
      return null;
    }
    try {
      return writeReplace.get().invoke(function) instanceof SerializedLambda s ? s : null;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /**
   * The translation of {@code closure}: of the primitive method a non-capturing {@code $adapted}
   * bridge calls, otherwise of the implementation method with its captured values as constants. A
   * translator failure is a refusal naming the method.
   */
  static Translated translate(Closure closure) {
    return TRANSLATED.computeIfAbsent(closure.function(), f -> translateNow(closure));
  }

  /** Translations by closure object (planning asks for a call's UDF many times); weak: a closure may go. */
  private static final Map<Object, Translated> TRANSLATED = java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

  private static Translated translateNow(Closure closure) {
    SerializedLambda l = closure.lambda();
    try {
      ClassLoader loader = closure.function().getClass().getClassLoader();
      Optional<Method> target = l.getCapturedArgCount() == 0 && l.getImplMethodKind() == MethodHandleInfo.REF_invokeStatic
          ? adaptedTarget(loader, l.getImplClass(), l.getImplMethodName()) : Optional.empty();
      if (target.isPresent()) {
        return new Translated(JavaTranslator.translate(target.get()), primitives(target.get().getParameterTypes(), 0));
      }
      Class<?>[] params = implParameters(loader, l);
      int captured = l.getImplMethodKind() == MethodHandleInfo.REF_invokeStatic ? l.getCapturedArgCount()
          : Math.max(0, l.getCapturedArgCount() - 1); // the receiver is no parameter
      return new Translated(JavaTranslator.translate(closure.function()), primitives(params, captured));
    } catch (RuntimeException | LinkageError | ReflectiveOperationException e) {
      return new Translated(new Translation.Refused(closure.source(), closure.source() + ": the translator failed (" + e + ")"),
          List.of());
    }
  }

  /**
   * The static primitive method that bridge {@code method} of {@code implClass} calls: the method
   * named {@code method} without its {@code $adapted} suffix, with as many parameters; empty when
   * {@code method} is no such bridge.
   */
  private static Optional<Method> adaptedTarget(ClassLoader loader, String implClass, String method)
      throws ClassNotFoundException {
    if (!method.endsWith("$adapted")) {
      return Optional.empty();
    }
    String name = method.substring(0, method.length() - "$adapted".length());
    Class<?> owner = Class.forName(implClass.replace('/', '.'), false, loader);
    Method bridge = null;
    Method target = null;
    for (Method m : owner.getDeclaredMethods()) {
      if (m.getName().equals(method)) {
        bridge = m;
      }
    }
    for (Method m : owner.getDeclaredMethods()) {
      if (bridge != null && m.getName().equals(name) && Modifier.isStatic(m.getModifiers())
          && m.getParameterCount() == bridge.getParameterCount()) {
        target = m;
      }
    }
    return Optional.ofNullable(target);
  }

  private static Class<?>[] implParameters(ClassLoader loader, SerializedLambda l) throws ReflectiveOperationException {
    Class<?> owner = Class.forName(l.getImplClass().replace('/', '.'), false, loader);
    for (Method m : owner.getDeclaredMethods()) {
      if (m.getName().equals(l.getImplMethodName())
          && java.lang.invoke.MethodType.methodType(m.getReturnType(), m.getParameterTypes()).toMethodDescriptorString()
              .equals(l.getImplMethodSignature())) {
        return m.getParameterTypes();
      }
    }
    throw new NoSuchMethodException(l.getImplClass() + "." + l.getImplMethodName() + l.getImplMethodSignature());
  }

  /** Per parameter after the first {@code skip} (captured values): whether it is a primitive. */
  private static List<Boolean> primitives(Class<?>[] params, int skip) {
    List<Boolean> out = new ArrayList<>();
    for (int i = skip; i < params.length; i++) {
      out.add(params[i].isPrimitive());
    }
    return out;
  }
}
