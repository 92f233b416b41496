package io.vkspark.gpu.internal;

import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.vulkan.GpuDevices;

/**
 * A child-JVM program for the exit-code tests: it uses Vulkan the way one mode says and then ends,
 * so the parent can check the process's exit code (NVIDIA's driver crashed JVMs at exit with 134).
 *
 * <ul>
 *   <li>{@code list}: lists devices and returns from main (the instance is destroyed by the exit hook)
 *   <li>{@code open}: opens the best device, closes it and returns at once (within the grace period)
 *   <li>{@code exit}: opens and closes a device, then {@code System.exit(0)}
 *   <li>{@code open-sleep}, {@code open-thread}, {@code cross-thread}: the same with the instance
 *       destroyed after the grace period, or the device opened and closed on other threads
 *   <li>{@code halt-alive}: keeps an instance alive and halts, skipping vkspark's exit hook: the
 *       process exits with the driver still loaded under its threads, the crash's cause on NVIDIA
 * </ul>
 */
public final class ExitProbe {
  private ExitProbe() {}

  public static void main(String[] args) {
    String mode = args.length > 0 ? args[0] : "list";
    switch (mode) {
      case "list" -> System.out.println("devices: " + GpuDevices.list().size());
      case "open", "exit" -> {
        try (GpuDevice d = GpuDevices.open(DeviceOptions.defaults())) {
          System.out.println("opened " + d.info().name());
        }
        System.out.println("instance alive after close: " + VulkanInstance.alive(false));
        if (mode.equals("exit")) {
          System.exit(0);
        }
      }
      case "open-sleep" -> {
        try (GpuDevice d = GpuDevices.open(DeviceOptions.defaults())) {
          System.out.println("opened " + d.info().name());
        }
        sleep(Long.getLong("probe.sleepMillis", 1500));
        System.out.println("instance alive after sleep: " + VulkanInstance.alive(false));
      }
      case "open-thread" -> {
        Thread t = new Thread(() -> {
          try (GpuDevice d = GpuDevices.open(DeviceOptions.defaults())) {
            System.out.println("opened " + d.info().name() + " on " + Thread.currentThread().getName());
          }
        }, "probe-worker");
        t.start();
        try {
          t.join();
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
        System.out.println("instance alive after close: " + VulkanInstance.alive(false));
      }
      case "cross-thread" -> {
        GpuDevice d = GpuDevices.open(DeviceOptions.defaults());
        Thread t = new Thread(d::close, "probe-closer");
        t.start();
        try {
          t.join();
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
        System.out.println("closed on another thread; instance alive: " + VulkanInstance.alive(false));
      }
      case "halt-alive" -> {
        VulkanInstance.acquire(false);
        System.out.println("halting with the instance alive");
        System.out.flush();
        Runtime.getRuntime().halt(0);
      }
      default -> throw new IllegalArgumentException("mode " + mode);
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
