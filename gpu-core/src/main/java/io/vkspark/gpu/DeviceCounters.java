package io.vkspark.gpu;

/**
 * Counts of what a device has created and still holds. After a workload's first batch of a
 * shape, the {@code *Created} counts stop growing; at close every {@code live*} count is zero.
 */
public record DeviceCounters(
    long buffersCreated,
    long buffersLive,
    long bufferBytesLive,
    long commandBuffersCreated,
    long commandBuffersLive,
    long descriptorSetsCreated,
    long descriptorSetsLive,
    long kernelsLive,
    long dispatchesSubmitted,
    long bytesWritten,
    long bytesRead,
    long deviceNs) {

  /** Whether no buffer, command buffer or descriptor set is alive. */
  public boolean nothingLive() {
    return buffersLive == 0 && commandBuffersLive == 0 && descriptorSetsLive == 0 && kernelsLive == 0;
  }
}
