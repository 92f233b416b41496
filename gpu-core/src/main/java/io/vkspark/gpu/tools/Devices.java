package io.vkspark.gpu.tools;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.DeviceType;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Prints the Vulkan devices vkspark can use, one per line (index, name, type, UUID), or why there
 * are none. Exit code 0 when at least one device is found, 2 otherwise. Useful as a first check on
 * a new executor host: {@code java -cp vkspark.jar io.vkspark.gpu.tools.Devices}.
 *
 * <p>With {@code --spark-resources} it prints Spark's resource-discovery JSON instead, listing
 * the UUIDs of the GPUs (CPU devices such as lavapipe excluded), so Spark's GPU scheduling
 * ({@code spark.executor.resource.gpu.discoveryScript}) hands each executor a Vulkan device
 * whatever the vendor: {@code {"name": "gpu", "addresses": ["<uuid>", ...]}}.
 */
public final class Devices {
  private Devices() {}

  public static void main(String[] args) {
    boolean spark = args.length > 0 && args[0].equals("--spark-resources");
    boolean all = Arrays.asList(args).contains("--all");
    try {
      var devices = GpuDevices.list();
      if (spark) {
        System.out.println("{\"name\": \"gpu\", \"addresses\": [" + devices.stream()
            .filter(d -> all || d.type() != DeviceType.CPU)
            .map(d -> "\"" + d.uuid() + "\"").collect(Collectors.joining(", ")) + "]}");
        return;
      }
      if (devices.isEmpty()) {
        System.out.println("no Vulkan device with Vulkan 1.2 and a compute queue. Fix: install a Vulkan driver "
            + "(Debian: apt-get install mesa-vulkan-drivers for the CPU, or your GPU vendor's driver).");
        System.exit(2);
      }
      for (DeviceInfo d : devices) {
        System.out.println(d.summary() + " features: " + d.features());
      }
      System.out.println("Vulkan validation layer (tests and debugging only): "
          + (GpuDevices.validationLayerInstalled() ? "installed" : "not installed"));
    } catch (GpuException e) {
      System.out.println(e.code() + ": " + e.getMessage());
      System.exit(2);
    }
  }
}
