package io.vkspark.gpu.internal;

import io.vkspark.gpu.DeviceFeatures;
import io.vkspark.gpu.DoubleRounding;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.Program;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The SPIR-V passes every program goes through when it loads on a device, after its seal, so that
 * its floating-point results are Java's whoever wrote the code and whatever the driver does. In
 * order:
 *
 * <ol>
 *   <li>{@link ZeroDivisors}: {@code x / 0.0} is {@code x * inf} (undefined in SPIR-V);</li>
 *   <li>{@link FlushFreeFloats}, on a device that flushes 32-bit subnormals ({@link Float32Mode}):
 *       32-bit float arithmetic computed from the bits;</li>
 *   <li>{@link ConstantDivisors}: no divisor a driver could fold into a reciprocal;</li>
 *   <li>{@link SqrtZeros}: {@code sqrt(-0.0)} is {@code -0.0} whatever the driver makes of the code around it;</li>
 *   <li>{@link DoubleRoundingRewrite}, where the device's double {@code /} or {@code sqrt} is not
 *       correctly rounded;</li>
 *   <li>{@link NoContraction}: no fused multiply-add or other merged operation.</li>
 * </ol>
 *
 * <p>A program with {@link Program#fastMath()} skips the second and the last. The compiled and
 * cached SPIR-V is the same for every device and session; only these passes differ.
 */
public final class KernelPasses {
  /** The system property choosing {@link Float32Mode}: {@code auto}, {@code exact} or {@code native}. */
  public static final String FLOAT32_PROPERTY = "vkspark.float32Subnormals";

  /**
   * The system property that, set to {@code native}, leaves constant divisors to the compilers
   * ({@link ConstantDivisors}), for measuring what they do.
   */
  public static final String CONSTANT_DIVISORS_PROPERTY = ConstantDivisors.PROPERTY;

  /**
   * For tests: {@code true} makes the device opened while it is set flush 32-bit subnormals as
   * the H200 does ({@link FlushSimulation}), so that the exact path can be checked against it on a
   * device that keeps them.
   */
  public static final String SIMULATE_FLUSH_PROPERTY = "vkspark.float32Subnormals.simulateFlush";

  private KernelPasses() {}

  /** How 32-bit float arithmetic is compiled on a device. */
  public enum Float32Mode {
    /** The device's own float operations: it keeps subnormals ({@code shaderDenormPreserveFloat32}), or was told to be trusted. */
    NATIVE,
    /** {@link FlushFreeFloats}: computed from the bits, so a device that flushes subnormals still gives Java's. */
    EXACT;

    /**
     * The mode for a device with {@code f}: {@link #FLOAT32_PROPERTY} {@code exact} or {@code
     * native} forces it (tests, measurements); {@code auto} (the default) is {@code EXACT} where the
     * device does not promise to keep 32-bit subnormals ({@code shaderDenormPreserveFloat32}), has
     * float64 and {@code flushes} (a probe: the H200 does; lavapipe promises nothing but keeps them).
     *
     * @param flushes a description of a case the device flushed, empty when it kept every one
     * @throws GpuException INVALID_ARGUMENT for another value
     */
    public static Float32Mode of(DeviceFeatures f, Supplier<String> flushes) {
      String v = System.getProperty(FLOAT32_PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
      return switch (v) {
        case "", "auto" -> !f.denormPreserveFloat32() && f.shaderFloat64() && !flushes.get().isEmpty() ? EXACT : NATIVE;
        case "exact" -> f.shaderFloat64() ? EXACT : NATIVE;
        case "native" -> NATIVE;
        default -> throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
            "system property " + FLOAT32_PROPERTY + " is '" + v + "', not auto, exact or native.",
            "set -D" + FLOAT32_PROPERTY + "=auto (exact where the device flushes 32-bit subnormals), exact or native.");
      };
    }

    @Override
    public String toString() {
      return this == EXACT ? "float32 subnormals kept by vkspark" : "float32 arithmetic the device's";
    }
  }

  /**
   * {@code spirv} as {@code program} runs on a device with {@code features}: every pass above;
   * {@code rounding} null for a program loaded exactly as compiled (the double-rounding probe),
   * which gets only {@link ZeroDivisors}.
   */
  public static byte[] forDevice(Program program, byte[] spirv, DeviceFeatures features, DoubleRounding rounding,
                                 Float32Mode floats) {
    return forDevice(program, spirv, features, rounding, floats, false);
  }

  /** As above; {@code simulateFlush} (tests): the result as a device that flushes 32-bit subnormals runs it. */
  public static byte[] forDevice(Program program, byte[] spirv, DeviceFeatures features, DoubleRounding rounding,
                                 Float32Mode floats, boolean simulateFlush) {
    spirv = ZeroDivisors.rewrite(spirv);
    if (rounding == null) {
      return spirv;
    }
    boolean exact = !program.fastMath();
    if (exact && floats == Float32Mode.EXACT && features.shaderFloat64()) {
      int n = FlushFreeFloats.operations(spirv);
      if (n > FlushFreeFloats.MAX_OPERATIONS) {
        throw GpuException.of(GpuException.Code.COMPILE, "kernel '" + program.name() + "' has " + n
            + " 32-bit float operations. This device flushes 32-bit subnormal floats, so vkspark computes each float "
            + "operation from its bits (about 35 instructions each), and more than " + FlushFreeFloats.MAX_OPERATIONS
            + " would keep the driver's compiler busy for minutes.",
            "compute in double, split the body into several UDFs, or set spark.vkspark.fastMath=true (the device's own "
                + "float arithmetic: subnormal floats become zero).");
      }
      spirv = FlushFreeFloats.rewrite(spirv);
    }
    spirv = ConstantDivisors.hide(spirv, program);
    spirv = SqrtZeros.rewrite(spirv);
    if (rounding.refines()) {
      spirv = DoubleRoundingRewrite.refine(spirv, rounding.refineDivide(), rounding.refineSqrt(), rounding.fusedFma(),
          program.nativePreciseDivisions());
    }
    spirv = exact ? NoContraction.decorate(spirv) : spirv;
    return simulateFlush ? FlushSimulation.rewrite(spirv) : spirv;
  }
}
