package io.vkspark.spark.udf;

import io.vkspark.gpu.column.KernelSpec;
import io.vkspark.gpu.translate.Translation;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.Tolerance;
import io.vkspark.spark.shim.Scala;
import java.util.List;
import java.util.Objects;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;

/**
 * A plain Java UDF ({@code UDF1} .. {@code UDF22}, a class or a serializable lambda) or a Scala
 * closure ({@link ScalaClosures}) whose bytecode translated to a GPU kernel ({@code JavaTranslator}):
 * a GPU UDF like a hand-written one, planned into the same {@code VkGpuEval} node. Its
 * {@code call()} (the closure itself) stays the CPU path: Spark's function {@link #javaUdf()}
 * computes the rows the GPU does not (fallback, rows whose method throws). Null arguments and null
 * results are the kernel's where the translation has a null-aware form ({@link #nullsOnDevice()}).
 * Made by {@link ScalaUdfs#of(Object)} when
 * {@code spark.vkspark.translate} is on.
 */
public final class TranslatedUdf implements GpuUdf {
  private static final long serialVersionUID = 1L;

  private final Object javaUdf;
  private final Translation.Translated translation;
  private final GpuKernel kernel;
  /** Per argument of a Scala closure, whether its translated parameter is a primitive; null for a Java UDF. */
  private final List<Boolean> scalaPrimitives;
  /** Whether the kernel computes the null rows itself ({@link Translation.Translated#nullAwareSpec}). */
  private final boolean nullsOnDevice;

  TranslatedUdf(Object javaUdf, Translation.Translated translation) {
    this(javaUdf, translation, null);
  }

  private TranslatedUdf(Object javaUdf, Translation.Translated translation, List<Boolean> scalaPrimitives) {
    this.javaUdf = Objects.requireNonNull(javaUdf, "javaUdf");
    this.translation = Objects.requireNonNull(translation, "translation");
    KernelSpec nullAware = translation.nullAwareSpec("udf"); // strict UDFs keep the cheaper strict kernel
    this.nullsOnDevice = nullAware != null;
    this.kernel = GpuKernel.of(nullAware != null ? nullAware : translation.spec("udf"));
    this.scalaPrimitives = scalaPrimitives == null ? null : List.copyOf(scalaPrimitives);
  }

  /**
   * Scala closure {@code function} translated: {@code primitives} says, per argument, whether the
   * translated method takes a primitive (see {@link #nullAsZeroArgument}).
   */
  static TranslatedUdf scala(Object function, Translation.Translated translation, List<Boolean> primitives) {
    return new TranslatedUdf(function, translation, primitives);
  }

  /** "Scala" for a Scala closure, "Java" for a Java UDF: the language EXPLAIN says it was translated from. */
  public String language() {
    return scalaPrimitives == null ? "Java" : "Scala";
  }

  /**
   * For a Scala closure called as {@code u}: the first argument (from 1) that Spark may pass to it
   * as null where the translated method takes a primitive, or 0 when there is none. Spark passes
   * no null to a primitive parameter it knows of ({@code ScalaUDF.inputPrimitives}: it returns
   * null for such a row without calling the closure, as the kernel does); it knows of none for a
   * closure registered without input types (an untyped {@code udf(f, dataType)}), whose bridge
   * unboxes a null as 0 where the kernel would return null.
   */
  public int nullAsZeroArgument(ScalaUDF u) {
    if (scalaPrimitives == null) {
      return 0;
    }
    List<Object> checked = Scala.list(u.inputPrimitives());
    List<Expression> args = Scala.list(u.children());
    for (int i = 0; i < scalaPrimitives.size() && i < args.size(); i++) {
      boolean sparkChecks = i < checked.size() && Boolean.TRUE.equals(checked.get(i));
      if (scalaPrimitives.get(i) && !sparkChecks && args.get(i).nullable()) {
        return i + 1;
      }
    }
    return 0;
  }

  /** The Java UDF object whose {@code call()} was translated, or the Scala closure. */
  public Object javaUdf() {
    return javaUdf;
  }

  public Translation.Translated translation() {
    return translation;
  }

  /** Whether a null in any argument means a null result, so the kernel may skip such rows. */
  public boolean strict() {
    return translation.strict();
  }

  /**
   * Whether the kernel computes the rows with null arguments and the null results itself (a UDF
   * that tolerates a null argument, or returns null or {@code None} for some rows): no batch is
   * recomputed with {@code call()} for them.
   */
  public boolean nullsOnDevice() {
    return nullsOnDevice;
  }

  @Override
  public GpuKernel kernel() {
    return kernel;
  }

  /**
   * Java's bits ({@link Tolerance#EXACT}) when the translation uses no approximate call; otherwise
   * the default for its result type (vkspark's {@code exp}, {@code log}, ... are within 1 ulp of
   * StrictMath).
   */
  @Override
  public Tolerance tolerance() {
    return translation.exact() ? Tolerance.EXACT : Tolerance.defaultFor(kernel.result());
  }

  @Override
  public String name() {
    return javaUdf.getClass().isSynthetic() ? "udf" : GpuUdf.snakeCase(javaUdf.getClass().getSimpleName());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TranslatedUdf t && t.javaUdf == javaUdf && t.translation.equals(translation);
  }

  @Override
  public int hashCode() {
    return System.identityHashCode(javaUdf) * 31 + translation.hashCode();
  }

  @Override
  public String toString() {
    return "translated " + translation.source() + kernel;
  }
}
