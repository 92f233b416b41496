package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every program that uses Vulkan exits 0. On the NVIDIA H200 every such JVM used to end in SIGSEGV
 * (exit code 134) after its work: the process exited with the shared VkInstance alive, or destroyed
 * it on another thread than the one that created it. Each case runs in a child JVM and checks its
 * exit code and that no crash log was written; on lavapipe they pass either way, on the H200 they
 * are the check (docs/RELIABILITY.md).
 */
final class ExitCodeTest {

  @ParameterizedTest
  @ValueSource(strings = {"io.vkspark.gpu.tools.Devices", "io.vkspark.gpu.tools.Demo 65536",
      "io.vkspark.gpu.internal.ExitProbe list", "io.vkspark.gpu.internal.ExitProbe open",
      "io.vkspark.gpu.internal.ExitProbe exit", "io.vkspark.gpu.internal.ExitProbe open-thread",
      "io.vkspark.gpu.internal.ExitProbe cross-thread",
      "-Dvkspark.instance.graceMillis=200 io.vkspark.gpu.internal.ExitProbe open-sleep"})
  void programUsingVulkan_exitsZero(String command) throws IOException, InterruptedException {
    Result r = run(command.split(" "));
    assertEquals(0, r.code(), "exit code of " + command + ":\n" + r.out());
    assertFalse(r.out().contains("SIGSEGV") || r.out().contains("hs_err_pid"), r.out());
  }

  @ParameterizedTest
  @ValueSource(strings = {"open", "exit"})
  void instanceIsDestroyedBeforeTheProcessEnds(String mode) throws IOException, InterruptedException {
    Result r = run("-Dvkspark.instance.graceMillis=60000", "io.vkspark.gpu.internal.ExitProbe", mode);
    assertEquals(0, r.code(), r.out());
    // Within the grace period the instance is still alive after close: only the exit hook can end it.
    assertTrue(r.out().contains("instance alive after close: true"), r.out());
    assertTrue(r.out().contains("destroyed the Vulkan instance"), "the exit hook destroyed it:\n" + r.out());
  }

  record Result(int code, String out) {}

  static Result run(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(System.getProperty("java.home") + "/bin/java",
        "-cp", TestGpu.childClassPath(), "-XX:ErrorFile=/dev/stderr",
        "-Dorg.slf4j.simpleLogger.log.io.vkspark.gpu.internal.VulkanInstance=debug"));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "finished: " + String.join(" ", cmd));
    return new Result(p.exitValue(), out);
  }
}
