package io.vkspark.gpu.internal;

import io.vkspark.gpu.DeviceCounters;
import java.util.concurrent.atomic.AtomicLong;

/** The live and created counts behind {@link DeviceCounters}. */
final class Counters {
  final AtomicLong buffersCreated = new AtomicLong();
  final AtomicLong buffersLive = new AtomicLong();
  final AtomicLong bufferBytesLive = new AtomicLong();
  final AtomicLong commandBuffersCreated = new AtomicLong();
  final AtomicLong commandBuffersLive = new AtomicLong();
  final AtomicLong descriptorSetsCreated = new AtomicLong();
  final AtomicLong descriptorSetsLive = new AtomicLong();
  final AtomicLong kernelsLive = new AtomicLong();
  final AtomicLong dispatches = new AtomicLong();
  final AtomicLong bytesWritten = new AtomicLong();
  final AtomicLong bytesRead = new AtomicLong();
  final AtomicLong deviceNs = new AtomicLong();

  DeviceCounters snapshot() {
    return new DeviceCounters(buffersCreated.get(), buffersLive.get(), bufferBytesLive.get(),
        commandBuffersCreated.get(), commandBuffersLive.get(), descriptorSetsCreated.get(),
        descriptorSetsLive.get(), kernelsLive.get(), dispatches.get(), bytesWritten.get(),
        bytesRead.get(), deviceNs.get());
  }
}
