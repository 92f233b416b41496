package io.vkspark.spark.udf;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.GpuUdfs;
import io.vkspark.spark.api.SparkTypes;
import io.vkspark.spark.api.VkAnalysisException;
import io.vkspark.spark.conf.Settings;
import io.vkspark.gpu.translate.JavaTranslator;
import io.vkspark.gpu.translate.Translation;
import org.apache.spark.sql.internal.SQLConf;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.shim.SparkShim;
import java.lang.invoke.SerializedLambda;
import java.lang.ref.SoftReference;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import scala.Option;

/**
 * GPU UDFs as Spark plans hold them. A Java UDF registered with {@code spark.udf().register}
 * reaches the plan as a {@link ScalaUDF} whose function is a Scala closure capturing the Java UDF;
 * {@link #of(ScalaUDF)} finds it through the closure's serialized form, as spark-rapids does. A
 * user's own Scala closure is the function itself ({@link ScalaClosures}). The
 * SQL functions of {@code spark.vkspark.functions} are built here as the same ScalaUDF calls.
 */
public final class ScalaUdfs {
  private static final Map<Class<?>, Optional<Method>> WRITE_REPLACE = new ConcurrentHashMap<>();

  private ScalaUdfs() {}

  /** The GPU UDF behind a ScalaUDF, if it is one. */
  public static Optional<GpuUdf> of(ScalaUDF udf) {
    return of(udf.function());
  }

  /**
   * The GPU UDF behind a Scala function, if it is one (see the class comment): a captured
   * {@link GpuUdf} as it is, or, while {@code spark.vkspark.translate} is on, a captured plain Java
   * UDF whose {@code call()} translates, or a user's Scala closure that translates
   * ({@link ScalaClosures}), as a {@link TranslatedUdf}.
   */
  public static Optional<GpuUdf> of(Object function) {
    if (function instanceof GpuUdf g) {
      return Optional.of(g);
    }
    if (function instanceof CountedFunction c) {
      return of(c.inner());
    }
    if (function instanceof NullSkipping n) {
      return of(n.inner());
    }
    return recognition(function).udf();
  }

  /**
   * Why the plain Java UDF behind {@code function}, or the user's Scala closure {@code function} is,
   * does not translate, while {@code spark.vkspark.translate} is on; empty for a GPU UDF, a
   * translated one, or anything else.
   */
  public static Optional<Translation.Refused> refusal(Object function) {
    if (function instanceof GpuUdf) {
      return Optional.empty();
    }
    if (function instanceof CountedFunction c) {
      return refusal(c.inner());
    }
    if (function instanceof NullSkipping n) {
      return refusal(n.inner());
    }
    return recognition(function).refusal();
  }

  /** How many functions have been recognized (looked into and translated) since the JVM started: for tests. */
  public static long recognitions() {
    return RECOGNITIONS.sum();
  }

  /** What a function is to vkspark: the GPU UDF it calls, or why it does not translate (or neither). */
  private record Recognition(Optional<GpuUdf> udf, Optional<Translation.Refused> refusal) {
    static final Recognition NONE = new Recognition(Optional.empty(), Optional.empty());

    static Recognition of(Translation t, java.util.function.Function<Translation.Translated, GpuUdf> udf) {
      return t instanceof Translation.Translated ok ? new Recognition(Optional.of(udf.apply(ok)), Optional.empty())
          : t instanceof Translation.Refused r ? new Recognition(Optional.empty(), Optional.of(r)) : NONE;
    }
  }

  /**
   * Recognitions by function, one map per value of {@code spark.vkspark.translate}: every planning
   * rule that asks about a call (analysis's argument check, the optimizer's null checks, the
   * physical rule's call sites, counting and planning, EXPLAIN's reasons) shares one look into the
   * closure and one translation. Keys are the closures Spark's plans hold, which have no equals of
   * their own (so this is by identity), held weakly; values softly, since a Scala closure's
   * {@link TranslatedUdf} holds its key.
   */
  private static final List<Map<Object, SoftReference<Recognition>>> RECOGNIZED =
      List.of(new WeakHashMap<>(), new WeakHashMap<>());
  private static final LongAdder RECOGNITIONS = new LongAdder();

  private static Recognition recognition(Object function) {
    boolean on = translateOn();
    Map<Object, SoftReference<Recognition>> seen = RECOGNIZED.get(on ? 1 : 0);
    synchronized (seen) {
      SoftReference<Recognition> r = seen.get(function);
      Recognition known = r == null ? null : r.get();
      if (known != null) {
        return known;
      }
    }
    Recognition found = recognize(function, on);
    synchronized (seen) {
      seen.put(function, new SoftReference<>(found));
    }
    return found;
  }

  private static Recognition recognize(Object function, boolean translateOn) {
    RECOGNITIONS.increment();
    List<Object> captured = captured(function);
    for (Object o : captured) {
      if (o instanceof GpuUdf g) {
        return new Recognition(Optional.of(g), Optional.empty());
      }
    }
    if (!translateOn) {
      return Recognition.NONE;
    }
    for (Object o : captured) {
      if (isJavaUdf(o)) {
        return Recognition.of(translate(o), ok -> new TranslatedUdf(o, ok));
      }
    }
    Optional<ScalaClosures.Closure> closure = ScalaClosures.of(function);
    if (closure.isEmpty()) {
      return Recognition.NONE;
    }
    ScalaClosures.Translated t = ScalaClosures.translate(closure.get());
    return Recognition.of(t.translation(), ok -> TranslatedUdf.scala(function, ok, t.primitives()));
  }

  /** The translation of Java UDF {@code udf}; a translator failure is a refusal naming it. */
  public static Translation translate(Object udf) {
    try {
      return JavaTranslator.translate(udf);
    } catch (RuntimeException | LinkageError e) {
      return new Translation.Refused(udf.getClass().getName() + ".call", "the translator failed (" + e + ")");
    }
  }

  /** Whether {@code spark.vkspark.translate} is on in the session planning now (its SQL conf). */
  public static boolean translateOn() {
    String v = SQLConf.get().getConfString(Settings.TRANSLATE.key(), null);
    return Settings.TRANSLATE.get(k -> v);
  }

  /** Whether {@code o} is a Spark Java UDF ({@code UDF0} .. {@code UDF22}) that is not a GPU UDF. */
  public static boolean isJavaUdf(Object o) {
    return o != null && !(o instanceof GpuUdf) && isJavaUdfClass(o.getClass());
  }

  /** Whether class {@code k} implements a Spark Java UDF interface ({@code UDF0} .. {@code UDF22}). */
  public static boolean isJavaUdfClass(Class<?> k) {
    for (Class<?> c = k; c != null; c = c.getSuperclass()) {
      for (Class<?> i : c.getInterfaces()) {
        if (i.getName().startsWith("org.apache.spark.sql.api.java.UDF")) {
          return true;
        }
      }
    }
    return false;
  }

  /** The values a Scala closure captured (through its serialized form); empty for anything else. */
  private static List<Object> captured(Object function) {
    Optional<Method> writeReplace = WRITE_REPLACE.computeIfAbsent(function.getClass(), c -> {
      try {
        Method m = c.getDeclaredMethod("writeReplace");
        m.setAccessible(true);
        return Optional.of(m);
      } catch (ReflectiveOperationException | RuntimeException e) {
        return Optional.empty();
      }
    });
    if (writeReplace.isEmpty()) {
      return List.of();
    }
    try {
      if (writeReplace.get().invoke(function) instanceof SerializedLambda lambda) {
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < lambda.getCapturedArgCount(); i++) {
          out.add(lambda.getCapturedArg(i));
        }
        return out;
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      return List.of();
    }
    return List.of();
  }

  /** The Scala function Spark uses for a Java UDF of the kernel's arity (the same as registration makes). */
  public static Object scalaFunction(String name, GpuUdf udf) {
    return SparkShim.javaUdfFunction(udf, GpuUdfs.checkArity(name, udf, udf.kernel().argNames().size()));
  }

  /**
   * A ScalaUDF call of {@code udf} (whose Scala function is {@code function}, see
   * {@link #scalaFunction}) over {@code children}, as Spark builds for a registered Java UDF.
   */
  public static ScalaUDF call(String name, GpuUdf udf, Object function, List<Expression> children) {
    int n = udf.kernel().argNames().size();
    if (children.size() != n) {
      throw wrongArgumentCount(name, udf.kernel(), children.size());
    }
    List<Option<org.apache.spark.sql.catalyst.encoders.ExpressionEncoder<?>>> encoders = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      encoders.add(Option.empty());
    }
    return new ScalaUDF(function, SparkTypes.result(udf.kernel().signature()),
        Scala.seq(children), Scala.seq(encoders),
        Option.empty(), Option.apply(name), true, true);
  }

  /**
   * A ScalaUDF call of plain Java UDF {@code name} of {@code arity} arguments (whose Scala function
   * is {@code function}, {@code SparkShim.javaUdfFunction}) returning {@code result}, as Spark builds
   * for a registered Java UDF.
   */
  public static ScalaUDF javaCall(String name, Object function, int arity, org.apache.spark.sql.types.DataType result,
                                  List<Expression> children) {
    if (children.size() != arity) {
      throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_WRONG_NUM_ARGS, name,
          GpuException.of(Code.INVALID_ARGUMENT, "UDF '" + name + "' takes " + arity + " arguments but was called with "
              + children.size() + ".", "call " + name + " with " + arity + " arguments."));
    }
    List<Option<org.apache.spark.sql.catalyst.encoders.ExpressionEncoder<?>>> encoders = new ArrayList<>();
    for (int i = 0; i < arity; i++) {
      encoders.add(Option.empty());
    }
    return new ScalaUDF(function, result, Scala.seq(children), Scala.seq(encoders), Option.empty(), Option.apply(name),
        true, true);
  }

  /** The analysis error for a call of {@code name} with {@code given} arguments. */
  public static RuntimeException wrongArgumentCount(String name, GpuKernel k, int given) {
    int n = k.argNames().size();
    throw VkAnalysisException.raise(VkAnalysisException.Condition.VKSPARK_GPU_UDF_WRONG_NUM_ARGS, name,
        GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + name + "' takes " + n + " arguments " + k
            + " but was called with " + given + ".", "call " + name + " with " + n + " arguments."));
  }
}
