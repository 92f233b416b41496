package io.vkspark.gpu;

/**
 * Optional device features vkspark enables when the device has them. Kernels that need a
 * missing one (a {@code double} column on a device without float64) are refused with a message
 * rather than failing inside the driver.
 */
public record DeviceFeatures(
    boolean shaderInt64,
    boolean shaderFloat64,
    boolean storage8Bit,
    boolean storage16Bit,
    boolean robustBufferAccess,
    boolean hostQueryReset) {

  @Override
  public String toString() {
    return "int64=" + shaderInt64 + " float64=" + shaderFloat64 + " storage8=" + storage8Bit
        + " storage16=" + storage16Bit + " robustBufferAccess=" + robustBufferAccess;
  }
}
