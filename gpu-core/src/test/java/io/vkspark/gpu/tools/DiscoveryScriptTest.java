package io.vkspark.gpu.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.DeviceType;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * scripts/vulkan-gpus.sh, Spark's GPU discovery script, asks the Vulkan loader without a JVM
 * (python3 + ctypes): its UUIDs must be exactly those vkspark opens, or an executor would be
 * handed a device it cannot find.
 */
class DiscoveryScriptTest {
  private static final Path SCRIPT = Path.of("..", "scripts", "vulkan-gpus.sh");
  private static final Pattern UUID = Pattern.compile("\"([0-9a-f-]{36})\"");

  @Test
  void withoutAJvm_listsTheSameUuidsAsVkspark() throws Exception {
    List<DeviceInfo> devices = GpuDevices.list();
    assertFalse(devices.isEmpty(), "this test needs a Vulkan device (lavapipe at least)");
    assertEquals(devices.stream().map(DeviceInfo::uuid).toList(), uuids(run("--all", "--method", "python")));
    assertEquals(devices.stream().filter(d -> d.type() != DeviceType.CPU).map(DeviceInfo::uuid).toList(),
        uuids(run("--method", "python")), "the default leaves CPU devices such as lavapipe out");
  }

  @Test
  void noMethodAnswers_failsWithAFix() throws Exception {
    Process p = new ProcessBuilder("bash", SCRIPT.toString(), "--method", "vulkaninfo")
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    if (p.exitValue() == 0) {   // vulkan-tools is installed here: then it must agree too
      assertEquals(GpuDevices.list().stream().filter(d -> d.type() != DeviceType.CPU).map(DeviceInfo::uuid).toList(),
          uuids(out));
    } else {
      assertEquals(1, p.exitValue(), out);
      assertTrue(out.contains("Fix: install the Vulkan loader"), out);
    }
  }

  private static String run(String... args) throws IOException, InterruptedException {
    assertTrue(Files.isRegularFile(SCRIPT), SCRIPT.toAbsolutePath().toString());
    List<String> cmd = new ArrayList<>(List.of("bash", SCRIPT.toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "vulkan-gpus.sh did not finish");
    assertEquals(0, p.exitValue(), "vulkan-gpus.sh " + String.join(" ", args) + " failed: " + out);
    assertTrue(out.startsWith("{\"name\": \"gpu\", \"addresses\": ["), out);
    return out;
  }

  private static List<String> uuids(String json) {
    List<String> out = new ArrayList<>();
    Matcher m = UUID.matcher(json);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }
}
