package io.vkspark.spark.udf;

import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.Tolerance;
import io.vkspark.spark.glsl.GlslUdf;
import java.io.Serializable;
import java.util.Objects;

/**
 * What kind of GPU UDF a planned call runs, decided once by the planner from the UDF
 * {@link ScalaUdfs#of} found, and carried in the plan to the executor, which reads it instead of
 * looking at the UDF's function again. Each kind carries the UDF's {@link Tolerance}, which verify
 * mode compares within.
 */
public sealed interface UdfKind extends Serializable {
  /** How far the GPU result may be from {@code call()}'s ({@link GpuUdf#tolerance()}). */
  Tolerance tolerance();

  /** A GPU UDF written as one: a Java {@code call()} and a GLSL kernel. */
  record Gpu(Tolerance tolerance) implements UdfKind {
    public Gpu {
      Objects.requireNonNull(tolerance, "tolerance");
    }
  }

  /** A GPU UDF defined in GLSL only: its CPU path runs its SPIR-V on the CPU Vulkan device. */
  record GlslOnly(Tolerance tolerance) implements UdfKind {
    public GlslOnly {
      Objects.requireNonNull(tolerance, "tolerance");
    }
  }

  /**
   * A plain Java UDF or a Scala closure translated to the GPU ({@link TranslatedUdf}).
   *
   * @param strict whether a null argument means a null result without running the UDF
   * @param language "Java" or "Scala", the language EXPLAIN says it was translated from
   * @param nullsOnDevice whether its kernel computes null arguments and null results itself
   *     ({@link TranslatedUdf#nullsOnDevice()}), so a batch with nulls is not recomputed with {@code call()}
   */
  record Translated(boolean strict, String language, Tolerance tolerance, boolean nullsOnDevice) implements UdfKind {
    public Translated {
      Objects.requireNonNull(language, "language");
      Objects.requireNonNull(tolerance, "tolerance");
    }
  }

  /** The kind of {@code udf}, one that {@link ScalaUdfs#of} returned. */
  static UdfKind of(GpuUdf udf) {
    if (udf instanceof TranslatedUdf t) {
      return new Translated(t.strict(), t.language(), t.tolerance(), t.nullsOnDevice());
    }
    return udf instanceof GlslUdf g ? new GlslOnly(g.tolerance()) : new Gpu(udf.tolerance());
  }

  /**
   * Whether a null argument means a null result without running the UDF: every GPU UDF, except a
   * translated one whose {@code call()} may return a value for a null argument.
   */
  default boolean nullStrict() {
    return !(this instanceof Translated t) || t.strict();
  }

  /** Whether the kernel computes null arguments and null results itself (a translated UDF's null-aware form). */
  default boolean nullsOnDevice() {
    return this instanceof Translated t && t.nullsOnDevice();
  }
}
