package io.vkspark.gpu;

/**
 * An optional device feature a compute shader may need, read from the SPIR-V capabilities it
 * declares ({@code Float64}, {@code Int64}, 8/16-bit storage, ...). A kernel's needs are computed
 * once from its SPIR-V; {@link DeviceFeatures#missing} says, as data, which of them a device lacks,
 * so the planner can choose the CPU and the device refuse the load without parsing a message.
 */
public enum ShaderFeature {
  /** {@code double} arithmetic and storage (capability Float64). */
  FLOAT64("shaderFloat64 (double)"),
  /** 64-bit integers (capability Int64). */
  INT64("shaderInt64 (64-bit integers)"),
  /** 8-bit values in storage buffers (StorageBuffer8BitAccess). */
  STORAGE_8BIT("storageBuffer8BitAccess"),
  /** 16-bit values in storage buffers (StorageBuffer16BitAccess). */
  STORAGE_16BIT("storageBuffer16BitAccess"),
  /** 8-bit integer arithmetic (capability Int8): vkspark never enables it. */
  INT8("shaderInt8 (8-bit arithmetic)"),
  /** 16-bit integer arithmetic (capability Int16): vkspark never enables it. */
  INT16("shaderInt16 (16-bit arithmetic)"),
  /** 16-bit floats (capability Float16): vkspark never enables it. */
  FLOAT16("shaderFloat16 (16-bit floats)");

  private final String vulkanName;

  ShaderFeature(String vulkanName) {
    this.vulkanName = vulkanName;
  }

  /** The Vulkan feature's name and what it is for, as messages show it. */
  public String vulkanName() {
    return vulkanName;
  }
}
