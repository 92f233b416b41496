package io.vkspark.spark.exec;

import io.vkspark.gpu.translate.Translation;
import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import java.util.Objects;

/**
 * A plain Java UDF ({@code UDF1} .. {@code UDF22}, a class or a serializable lambda) whose
 * {@code call()} translated to a GPU kernel ({@code JavaTranslator}): a GPU UDF like a hand-written
 * one, planned into the same {@code VkGpuEval} node. Its {@code call()} stays the CPU path: Spark's
 * closure around {@link #javaUdf()} computes the rows the GPU does not (fallback, rows whose
 * {@code call()} throws or returns null, null arguments of a non-strict UDF). Made by
 * {@link ScalaUdfs#of(Object)} when {@code spark.vkspark.translate} is on.
 */
public final class TranslatedUdf implements GpuUdf {
  private static final long serialVersionUID = 1L;

  private final Object javaUdf;
  private final Translation.Translated translation;
  private final GpuKernel kernel;

  TranslatedUdf(Object javaUdf, Translation.Translated translation) {
    this.javaUdf = Objects.requireNonNull(javaUdf, "javaUdf");
    this.translation = Objects.requireNonNull(translation, "translation");
    this.kernel = GpuKernel.of(translation.spec("udf"));
  }

  /** The Java UDF object whose {@code call()} was translated. */
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

  @Override
  public GpuKernel kernel() {
    return kernel;
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
