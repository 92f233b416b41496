package io.vkspark.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A local-mode Spark job that runs GPU UDFs exits 0, as spark-submit callers and schedulers read
 * it. On the NVIDIA H200 every such JVM used to end in SIGSEGV (exit code 134) after its work; the
 * job runs in a child JVM here so its real exit code is seen (on lavapipe and on the H200 alike).
 */
final class JobExitCodeTest {

  /** java with this test JVM's flags (Spark's --add-opens, the time zone) and a local Spark with the plugin. */
  private static List<String> sparkJvm() {
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("java.home") + "/bin/java");
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--") || a.startsWith("-XX:") || a.startsWith("-Duser.timezone")
            || a.startsWith("-Dio.netty"))
        .toList());
    cmd.addAll(List.of("-XX:ErrorFile=/dev/stderr", "-Xmx2g",
        "-Dspark.master=local[2]", "-Dspark.plugins=io.vkspark.spark.VkSparkPlugin",
        "-Dspark.ui.enabled=false", "-Dspark.driver.host=127.0.0.1", "-Dspark.driver.bindAddress=127.0.0.1",
        "-Dspark.vkspark.fallback=false", "-Dspark.vkspark.placement=gpu", // the tests assert rows on the GPU
        "-Dspark.vkspark.shaderCacheDir=" + Path.of("target", "shader-cache").toAbsolutePath(),
        "-cp", System.getProperty("java.class.path")));
    return cmd;
  }

  @Test
  void localSparkJobWithGpuUdfs_exitsZero() throws Exception {
    Path dir = ExampleSpark.tempDir("vkspark-exit");
    List<String> cmd = sparkJvm();
    cmd.addAll(List.of(OptionsJob.class.getName(), dir.resolve("options.parquet").toString(), "--generate", "20000"));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "the job finished");
    String tail = out.length() > 6000 ? out.substring(out.length() - 6000) : out;
    assertEquals(0, p.exitValue(), "exit code of the Spark job:\n" + tail);
    assertFalse(out.contains("A fatal error has been detected") || out.contains("SIGSEGV"), tail);
    assertTrue(out.contains("[options] checks passed"), "the job ran its GPU checks:\n" + tail);
    assertTrue(out.lines().anyMatch(l -> l.contains(JobsTest.CPU_ROWS) && l.endsWith("): 0"))
        && out.lines().noneMatch(l -> l.contains(JobsTest.CPU_ROWS) && !l.endsWith("): 0")), "every row ran on the GPU:\n" + tail);
  }

  /**
   * A long-running local Spark application (a stand-in for a Thrift or Connect server) stopped
   * with SIGTERM, as Spark's stop scripts stop a server. Another shutdown hook (the executor's
   * device hook, or Spark's) closes the GPU device 40-150 ms after the signal, and the JVM halts
   * only once every hook has returned, so the old "exits with 1 Vulkan device(s) still open"
   * warning was a false alarm (it shows again with -Dvkspark.instance.exitWaitMillis=0); the
   * instance hook now waits for the close. The instance is destroyed before the process ends: exit
   * status 143 (the JVM's own for SIGTERM), never a crash in NVIDIA's driver (134).
   */
  @Test
  void localSparkServer_stoppedWithSigterm_closesItsDeviceWithoutAWarning() throws Exception {
    List<String> cmd = sparkJvm();
    cmd.add(1, "-Dlog4j2.configurationFile=sigterm-probe-log4j2.properties"); // a test resource, on the classpath
    cmd.add(SigtermProbe.class.getName());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    StringBuffer out = new StringBuffer();
    Thread reader = new Thread(() -> {
      try (var in = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          out.append(line).append('\n');
        }
      } catch (java.io.IOException e) {
        out.append("[test] reading the output failed: ").append(e).append('\n');
      }
    }, "sigterm-probe-output");
    reader.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(300);
    while (!out.toString().contains("[probe] ready") && p.isAlive() && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertTrue(out.toString().contains("[probe] ready"), () -> "the probe is up and ran its query:\n" + out);
    assertTrue(p.toHandle().destroy(), "SIGTERM sent"); // Process.destroy() would also close the output
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), () -> "the probe ended after SIGTERM:\n" + out);
    reader.join(10_000);
    String all = out.toString();
    assertTrue(all.contains("[probe] rows 20000, wrong 0, on GPU 20000, on CPU 0"), all);
    assertEquals(143, p.exitValue(), "exit status after SIGTERM (128 + 15):\n" + all);
    assertFalse(all.contains("A fatal error has been detected") || all.contains("SIGSEGV"), all);
    assertFalse(all.contains("still open"), all);
    assertTrue(all.contains("closed its Vulkan device"), "a shutdown hook closed the device:\n" + all);
    assertTrue(all.contains("destroyed the Vulkan instance"), "the instance was destroyed before the end:\n" + all);
  }
}
