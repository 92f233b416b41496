package io.vkspark.gpu;

/** Kinds of Vulkan physical devices, in the order vkspark prefers them. */
public enum DeviceType {
  DISCRETE_GPU("discrete GPU"),
  INTEGRATED_GPU("integrated GPU"),
  VIRTUAL_GPU("virtual GPU"),
  CPU("CPU (software Vulkan, e.g. lavapipe)"),
  OTHER("other device");

  private final String description;

  DeviceType(String description) {
    this.description = description;
  }

  public String description() {
    return description;
  }
}
