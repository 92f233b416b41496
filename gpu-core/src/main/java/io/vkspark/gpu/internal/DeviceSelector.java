package io.vkspark.gpu.internal;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Picks a device from a selector string: empty for the best (discrete &gt; integrated &gt; virtual
 * &gt; CPU, then the most device memory, then the lowest index), a number for an index in
 * Vulkan's order, a UUID (what a GPU discovery script reports to Spark), or a name substring.
 */
public final class DeviceSelector {
  private static final Pattern UUID = Pattern.compile(
      "(?i)(GPU-)?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}");

  /** The choice and the reason, for the log. */
  public record Choice(int position, String reason) {}

  private DeviceSelector() {}

  public static Choice select(String selector, List<DeviceInfo> devices) {
    if (devices.isEmpty()) {
      throw GpuException.of(Code.NO_DEVICE,
          "Vulkan found no device with Vulkan 1.2 and a compute queue.",
          "install a Vulkan driver for your GPU, or Mesa's lavapipe for the CPU (Debian: apt-get install mesa-vulkan-drivers).");
    }
    String s = selector == null ? "" : selector.trim();
    if (s.isEmpty() || s.equalsIgnoreCase("auto")) {
      int best = 0;
      for (int i = 1; i < devices.size(); i++) {
        if (BEST.compare(devices.get(i), devices.get(best)) < 0) {
          best = i;
        }
      }
      DeviceInfo d = devices.get(best);
      String others = devices.stream().filter(o -> o != d)
          .map(o -> "'" + o.name() + "' (" + o.type().description() + ")").collect(Collectors.joining(", "));
      return new Choice(best, "best of " + devices.size() + " device(s): " + d.type().description()
          + (others.isEmpty() ? "" : ", preferred over " + others));
    }
    if (s.chars().allMatch(Character::isDigit)) {
      int index = Integer.parseInt(s);
      for (int i = 0; i < devices.size(); i++) {
        if (devices.get(i).index() == index) {
          return new Choice(i, "index " + index + " was requested");
        }
      }
      throw notFound(s, devices);
    }
    if (UUID.matcher(s).matches()) {
      String want = normalize(s);
      for (int i = 0; i < devices.size(); i++) {
        if (normalize(devices.get(i).uuid()).equals(want)) {
          return new Choice(i, "UUID " + s + " was requested");
        }
      }
      throw notFound(s, devices);
    }
    String lower = s.toLowerCase(Locale.ROOT);
    for (int i = 0; i < devices.size(); i++) {
      if (devices.get(i).name().toLowerCase(Locale.ROOT).contains(lower)) {
        return new Choice(i, "name contains '" + s + "'");
      }
    }
    throw notFound(s, devices);
  }

  private static final Comparator<DeviceInfo> BEST = Comparator
      .comparingInt((DeviceInfo d) -> d.type().ordinal())
      .thenComparing(Comparator.comparingLong(DeviceInfo::deviceLocalBytes).reversed())
      .thenComparingInt(DeviceInfo::index);

  private static String normalize(String uuid) {
    String u = uuid.toLowerCase(Locale.ROOT);
    if (u.startsWith("gpu-")) {
      u = u.substring(4);
    }
    return u.replace("-", "");
  }

  private static GpuException notFound(String selector, List<DeviceInfo> devices) {
    String list = devices.stream().map(DeviceInfo::summary).collect(Collectors.joining("; "));
    return GpuException.of(Code.NO_DEVICE,
        "no Vulkan device matches '" + selector + "'. Devices: " + list + ".",
        "pass an index, a UUID or part of a name from that list (spark.vkspark.device), or leave it empty for the best device.");
  }
}
