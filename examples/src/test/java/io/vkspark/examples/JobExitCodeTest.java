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

  @Test
  void localSparkJobWithGpuUdfs_exitsZero() throws Exception {
    Path dir = ExampleSpark.tempDir("vkspark-exit");
    List<String> cmd = new ArrayList<>();
    cmd.add(System.getProperty("java.home") + "/bin/java");
    // The same JVM flags as this test JVM: Spark's --add-opens, the heap, the time zone.
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
        .filter(a -> a.startsWith("--") || a.startsWith("-XX:") || a.startsWith("-Duser.timezone")
            || a.startsWith("-Dio.netty"))
        .toList());
    cmd.addAll(List.of("-XX:ErrorFile=/dev/stderr", "-Xmx2g",
        "-Dspark.master=local[2]", "-Dspark.plugins=io.vkspark.spark.VkSparkPlugin",
        "-Dspark.ui.enabled=false", "-Dspark.driver.host=127.0.0.1", "-Dspark.driver.bindAddress=127.0.0.1",
        "-Dspark.vkspark.fallback=false",
        "-Dspark.vkspark.shaderCacheDir=" + Path.of("target", "shader-cache").toAbsolutePath(),
        "-cp", System.getProperty("java.class.path"), OptionsJob.class.getName(),
        dir.resolve("options.parquet").toString(), "--generate", "20000"));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(300, TimeUnit.SECONDS), "the job finished");
    String tail = out.length() > 6000 ? out.substring(out.length() - 6000) : out;
    assertEquals(0, p.exitValue(), "exit code of the Spark job:\n" + tail);
    assertFalse(out.contains("A fatal error has been detected") || out.contains("SIGSEGV"), tail);
    assertTrue(out.contains("[options] checks passed"), "the job ran its GPU checks:\n" + tail);
    assertTrue(out.contains("rows on CPU (fallback): 0\n"), "every row ran on the GPU:\n" + tail);
  }
}
