package io.vkspark.gpu;

import java.util.Locale;

/**
 * Whether a device's double division and square root give Java's bits, and whether vkspark
 * replaces them with its own correctly rounded ones on that device. Vulkan requires only
 * single-precision accuracy of 64-bit {@code OpFDiv} and {@code sqrt}: an NVIDIA H200 gives
 * {@code 1234567.8900000001} for {@code 123456789.0 / 100.0} where Java gives {@code 1234567.89}.
 * Measured by a probe kernel when the device opens; see docs/GLSL-SEMANTICS.md.
 *
 * @param nativeDivide the device's own double {@code /} gave Java's bits on every probe case
 * @param nativeSqrt the device's own double {@code sqrt} gave Java's {@code Math.sqrt} on every case
 * @param refineDivide kernels loaded on this device divide doubles with vkspark's correctly
 *     rounded function (where the device's is not exact, or when forced)
 * @param refineSqrt the same for {@code sqrt}
 * @param fusedFma the device's double {@code fma} rounds once (as Java's {@code Math.fma}) on every
 *     case (and {@link #FMA_PROPERTY} allows it); vkspark's functions then use it, else exact
 *     products from plain multiplications: the division and sqrt refinement, and vkmath's exact
 *     products (specialization constant 1 of every kernel), which give the same bits either way
 * @param refinedExact vkspark's functions gave Java's bits on every probe case on this device
 *     (they need a fused {@code fma}); true when neither is used
 * @param example a case the device's own operations got wrong, for the log; empty when none
 */
public record DoubleRounding(boolean nativeDivide, boolean nativeSqrt, boolean refineDivide, boolean refineSqrt,
                             boolean fusedFma, boolean refinedExact, String example) {
  /** The system property that overrides the probe: {@code auto}, {@code refine} or {@code native}. */
  public static final String PROPERTY = "vkspark.doubleRounding";

  /**
   * The system property that keeps vkspark from using the device's {@code fma} even where the
   * probe found it fused: {@code auto} (the default) or {@code off}. For a driver whose {@code fma}
   * the probe's cases do not catch, and to measure what the fused form saves.
   */
  public static final String FMA_PROPERTY = "vkspark.fma";

  /** What a device without doubles reports: nothing to refine. */
  public static final DoubleRounding NO_DOUBLES = new DoubleRounding(true, true, false, false, false, true, "");

  /** How the probe's result is used. */
  public enum Mode {
    /** Refine what the device does not round correctly (the default). */
    AUTO,
    /** Always use vkspark's functions (to test them on a device whose own are exact). */
    REFINE,
    /** Never: the device's own operations, exact or not (to measure what refining costs). */
    NATIVE;

    /**
     * The mode {@link #PROPERTY} selects.
     *
     * @throws GpuException INVALID_ARGUMENT for another value
     */
    public static Mode fromSystemProperty() {
      String v = System.getProperty(PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
      return switch (v) {
        case "", "auto" -> AUTO;
        case "refine" -> REFINE;
        case "native" -> NATIVE;
        default -> throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
            "system property " + PROPERTY + " is '" + v + "', not auto, refine or native.",
            "set -D" + PROPERTY + "=auto (correctly rounded where the device is not), refine or native.");
      };
    }
  }

  /**
   * Whether {@link #FMA_PROPERTY} lets vkspark use a fused {@code fma}.
   *
   * @throws GpuException INVALID_ARGUMENT for a value other than auto or off
   */
  public static boolean fmaAllowed() {
    String v = System.getProperty(FMA_PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
    return switch (v) {
      case "", "auto" -> true;
      case "off" -> false;
      default -> throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
          "system property " + FMA_PROPERTY + " is '" + v + "', not auto or off.",
          "set -D" + FMA_PROPERTY + "=auto (fma where the device fuses it) or off (exact products without it).");
    };
  }

  /** Whether kernels on this device are rewritten at all. */
  public boolean refines() {
    return refineDivide || refineSqrt;
  }

  @Override
  public String toString() {
    return "double / " + (nativeDivide ? "exact" : "NOT exact") + ", sqrt " + (nativeSqrt ? "exact" : "NOT exact")
        + ", fma " + (fusedFma ? "fused" : "not used")
        + (refines() ? "; vkspark refines " + (refineDivide && refineSqrt ? "/ and sqrt" : refineDivide ? "/" : "sqrt")
            + (refinedExact ? " (exact)" : " (STILL NOT EXACT)") : "")
        + (example.isEmpty() ? "" : "; e.g. " + example);
  }
}
