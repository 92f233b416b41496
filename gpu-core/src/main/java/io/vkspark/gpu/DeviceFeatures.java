package io.vkspark.gpu;

import java.util.EnumSet;
import java.util.Set;

/**
 * Optional device features vkspark enables when the device has them. Kernels that need a
 * missing one (a {@code double} column on a device without float64) are refused with a message
 * rather than failing inside the driver.
 *
 * <p>{@code denormPreserveFloat32/64}: whether the device can keep subnormal floats (as Java does)
 * when a kernel asks for it. vkspark's generated kernels ask; on a device that cannot, subnormal
 * results and operands may be flushed to zero (NVIDIA does so for 32-bit floats by default).
 */
public record DeviceFeatures(
    boolean shaderInt64,
    boolean shaderFloat64,
    boolean storage8Bit,
    boolean storage16Bit,
    boolean robustBufferAccess,
    boolean hostQueryReset,
    boolean denormPreserveFloat32,
    boolean denormPreserveFloat64) {

  /** Whether a kernel that needs {@code f} can run with these features enabled. */
  public boolean has(ShaderFeature f) {
    return switch (f) {
      case FLOAT64 -> shaderFloat64;
      case INT64 -> shaderInt64;
      case STORAGE_8BIT -> storage8Bit;
      case STORAGE_16BIT -> storage16Bit;
      case INT8, INT16, FLOAT16 -> false; // never enabled by vkspark
    };
  }

  /**
   * Which of {@code needs} these features lack, in {@link ShaderFeature} order: empty when a
   * kernel with those needs can run here.
   */
  public Set<ShaderFeature> missing(Set<ShaderFeature> needs) {
    EnumSet<ShaderFeature> out = EnumSet.noneOf(ShaderFeature.class);
    for (ShaderFeature f : needs) {
      if (!has(f)) {
        out.add(f);
      }
    }
    return out;
  }

  @Override
  public String toString() {
    return "int64=" + shaderInt64 + " float64=" + shaderFloat64 + " storage8=" + storage8Bit
        + " storage16=" + storage16Bit + " robustBufferAccess=" + robustBufferAccess
        + " denormPreserve32=" + denormPreserveFloat32 + " denormPreserve64=" + denormPreserveFloat64;
  }
}
