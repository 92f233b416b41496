package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A machine with only the Vulkan runtime (issue 20): the validation layer is hidden from the
 * loader in a child JVM (VK_LAYER_PATH names an empty folder, which replaces the loader's search of
 * explicit_layer.d), so these run the same here and on a machine that never had the layer.
 */
final class MissingLayerTest {
  @TempDir
  Path noLayers;

  @Test
  void devices_sayTheLayerIsHidden() throws IOException, InterruptedException {
    Result r = run(false, "io.vkspark.gpu.tools.Devices");
    assertEquals(0, r.code(), r.out());
    assertTrue(r.out().contains("Vulkan validation layer (tests and debugging only): not installed"), r.out());
  }

  @Test
  void validationRequested_withoutTheLayer_warnsAndRuns() throws IOException, InterruptedException {
    Result r = run(false, "-Dvkspark.validation=true", "io.vkspark.gpu.tools.Demo", "4096");
    assertEquals(0, r.code(), r.out());
    assertTrue(r.out().contains("is not installed, so Vulkan runs without validation"), r.out());
    assertTrue(r.out().contains("replay 3:") && r.out().contains("0 wrong"), r.out());
  }

  @Test
  void validationRequired_withoutTheLayer_isAnError() throws IOException, InterruptedException {
    Result r = run(true, "-Dvkspark.validation=true", "io.vkspark.gpu.tools.Demo", "4096");
    assertNotEquals(0, r.code(), r.out());
    assertTrue(r.out().contains("validation was requested but the layer VK_LAYER_KHRONOS_validation is not "
        + "installed, and VKSPARK_VALIDATION_REQUIRED is set. Fix: install it"), r.out());
  }

  record Result(int code, String out) {}

  private Result run(boolean required, String... args) throws IOException, InterruptedException {
    try (var files = Files.list(noLayers)) {
      assertTrue(files.findAny().isEmpty(), "the layer folder is empty");
    }
    List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java",
        "-cp", TestGpu.childClassPath(), "-XX:ErrorFile=/dev/stderr"));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.put("VK_LAYER_PATH", noLayers.toString());
    env.remove("VK_ADD_LAYER_PATH");
    env.remove("VK_INSTANCE_LAYERS");
    env.remove("VKSPARK_VALIDATION_REQUIRED");
    if (required) {
      env.put("VKSPARK_VALIDATION_REQUIRED", "1");
    }
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "finished: " + String.join(" ", cmd));
    return new Result(p.exitValue(), out);
  }
}
