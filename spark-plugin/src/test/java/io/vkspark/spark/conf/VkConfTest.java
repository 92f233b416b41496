package io.vkspark.spark.conf;

import io.vkspark.spark.conf.VerifySettings;
import io.vkspark.spark.conf.VkConf;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every spark.vkspark.* setting (verify too): parsed as documented, and a bad value names the key and the value with a Fix. */
final class VkConfTest {
  private static VkConf with(String key, String value) {
    return VkConf.from(Map.of(key, value)::get);
  }

  @Test
  void tildeInTheShaderCacheDir_isTheUserHome() {
    Path home = Path.of(System.getProperty("user.home"));
    assertEquals(home.resolve("x"), with(VkConf.SHADER_CACHE_DIR, "~/x").shaderCachePath());
    assertEquals(home.resolve("a/b"), with(VkConf.SHADER_CACHE_DIR, " ~/a/b ").deviceOptions("").shaderCacheDir());
    assertEquals(home, with(VkConf.SHADER_CACHE_DIR, "~").shaderCachePath());
    assertEquals(home.resolve("x").toString(), with(VkConf.SHADER_CACHE_DIR, "~/x").shaderCacheDir());
    assertFalse(with(VkConf.SHADER_CACHE_DIR, "~/x").shaderCachePath().toString().contains("~"));
    assertEquals(Path.of("/tmp/a~b"), with(VkConf.SHADER_CACHE_DIR, "/tmp/a~b").shaderCachePath());
    assertNull(with(VkConf.SHADER_CACHE_DIR, "none").shaderCachePath());
    // A record built directly (as tests and tools do) expands too.
    VkConf d = VkConf.from(k -> null);
    assertEquals(home.resolve("y"), new VkConf(true, "", 1, 1, "~/y", true, d.functions(), false, d.transfers(), 0)
        .shaderCachePath());
  }

  @Test
  void sizes_acceptTheUsualSuffixes() {
    assertEquals(4L << 30, with(VkConf.DEVICE_MEMORY_LIMIT, "4g").deviceMemoryLimit());
    assertEquals(4L << 30, with(VkConf.DEVICE_MEMORY_LIMIT, "4GB").deviceMemoryLimit());
    assertEquals(512L << 20, with(VkConf.DEVICE_MEMORY_LIMIT, "512MiB").deviceMemoryLimit());
    assertEquals(1000L, with(VkConf.DEVICE_MEMORY_LIMIT, "1000").deviceMemoryLimit());
    assertEquals(0L, with(VkConf.DEVICE_MEMORY_LIMIT, "0").deviceMemoryLimit());
    assertEquals(1_048_576, with(VkConf.BATCH_ROWS, "1_048_576").batchRows());
    assertEquals(MetricsLevel.ESSENTIAL, VkConf.from(k -> null).metricsLevel());
    assertEquals(MetricsLevel.DEBUG, with(VkConf.METRICS_LEVEL, " Debug ").metricsLevel());
    assertEquals(java.util.List.of("a.B", "c.D"), with(VkConf.FUNCTIONS, " a.B, ,c.D ").functions());
    assertTrue(VkConf.from(k -> null).coalesce());
    assertFalse(with(VkConf.COALESCE, " FALSE ").coalesce());
    assertEquals(128L << 20, VkConf.from(k -> null).batchBytes());
    assertEquals(1L << 20, with(VkConf.BATCH_BYTES, "1m").batchBytes());
  }

  @Test
  void verify_offByDefault_sampleOrStrict_withARate() {
    assertEquals(VerifySettings.OFF, VkConf.from(k -> null).verify());
    assertEquals(VerifySettings.Mode.OFF, with(VkConf.VERIFY, "false").verify().mode());
    VerifySettings s = VkConf.from(Map.of(VkConf.VERIFY, " Sample", VkConf.VERIFY_SAMPLE_RATE, "0.01")::get).verify();
    assertEquals(new VerifySettings(VerifySettings.Mode.SAMPLE, 0.01), s);
    assertTrue(s.on());
    assertEquals(1, s.sampleSize(10), "at least one row per batch");
    assertEquals(100, s.sampleSize(10_000));
    assertEquals(0, s.sampleSize(0));
    assertEquals(VerifySettings.Mode.STRICT, with(VkConf.VERIFY, "strict").verify().mode());
    assertEquals(VkConf.DEFAULT_VERIFY_SAMPLE_RATE, with(VkConf.VERIFY, "strict").verify().sampleRate());
    assertEquals(1.0, with(VkConf.VERIFY_SAMPLE_RATE, "1").verify().sampleRate());
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource(delimiter = '|', value = {
      "spark.vkspark.enabled|yes|spark.vkspark.enabled is 'yes', not a boolean. Fix: set spark.vkspark.enabled to true or false.",
      "spark.vkspark.fallback|1|spark.vkspark.fallback is '1', not a boolean. Fix: set spark.vkspark.fallback to true or false.",
      "spark.vkspark.coalesce|maybe|spark.vkspark.coalesce is 'maybe', not a boolean. Fix: set spark.vkspark.coalesce to true or false.",
      "spark.vkspark.validation|on|spark.vkspark.validation is 'on', not a boolean. Fix: set spark.vkspark.validation to true or false.",
      "spark.vkspark.batchRows|0|spark.vkspark.batchRows is '0', not a positive whole number. Fix: set spark.vkspark.batchRows",
      "spark.vkspark.batchRows|9999999999|spark.vkspark.batchRows is '9999999999', not a positive whole number. Fix: ",
      "spark.vkspark.concurrentGpuTasks|two|spark.vkspark.concurrentGpuTasks is 'two', not a positive whole number. Fix: set spark.vkspark.concurrentGpuTasks",
      "spark.vkspark.deviceMemoryLimit|-1g|spark.vkspark.deviceMemoryLimit is '-1g', not a size. Fix: set spark.vkspark.deviceMemoryLimit",
      "spark.vkspark.deviceMemoryLimit|4x|spark.vkspark.deviceMemoryLimit is '4x', not a size. Fix: ",
      "spark.vkspark.deviceMemoryLimit|99999999999t|spark.vkspark.deviceMemoryLimit is '99999999999t', not a size. Fix: ",
      "spark.vkspark.batchBytes|0|spark.vkspark.batchBytes is '0', not a positive size. Fix: set spark.vkspark.batchBytes to a number of bytes",
      "spark.vkspark.batchBytes|lots|spark.vkspark.batchBytes is 'lots', not a positive size. Fix: set spark.vkspark.batchBytes to a number of bytes",
      "spark.vkspark.metrics.level|all|spark.vkspark.metrics.level is 'all', not essential or debug. Fix: set spark.vkspark.metrics.level to essential",
      "spark.vkspark.verify|always|spark.vkspark.verify is 'always', not off, sample or strict. Fix: set spark.vkspark.verify to off, sample",
      "spark.vkspark.verify.sampleRate|2|spark.vkspark.verify.sampleRate is '2', not a fraction in (0, 1]. Fix: set spark.vkspark.verify.sampleRate",
      "spark.vkspark.verify.sampleRate|0|spark.vkspark.verify.sampleRate is '0', not a fraction in (0, 1]. Fix: ",
      "spark.vkspark.verify.sampleRate|NaN|spark.vkspark.verify.sampleRate is 'NaN', not a fraction in (0, 1]. Fix: ",
      "spark.vkspark.verify.sampleRate|1%|spark.vkspark.verify.sampleRate is '1%', not a fraction in (0, 1]. Fix: ",
      "spark.vkspark.transfers|fast|spark.vkspark.transfers is 'fast', not auto or staged. Fix: set spark.vkspark.transfers to auto",
      "spark.vkspark.shaderCacheDir|~bob/cache|spark.vkspark.shaderCacheDir is '~bob/cache': vkspark expands only ~ and ~/ to the home directory, not ~user. Fix: ",
      "spark.vkspark.shaderCacheDir|/tmp/a\u0000b|spark.vkspark.shaderCacheDir is '/tmp/a\u0000b', not a valid path",
      "spark.vkspark.define.enabled|off|spark.vkspark.define.enabled is 'off', not a boolean. Fix: set spark.vkspark.define.enabled to true or false.",
      "spark.vkspark.compileTimeout|soon|spark.vkspark.compileTimeout is 'soon', not a duration. Fix: set spark.vkspark.compileTimeout",
      "spark.vkspark.kernelTimeout.max|-1s|spark.vkspark.kernelTimeout.max is '-1s', not a duration. Fix: set spark.vkspark.kernelTimeout.max"})
  void badValue_namesKeyAndValue_andSaysWhatToWrite(String key, String value, String message) {
    GpuException e = assertThrows(GpuException.class, () -> with(key, value));
    assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().startsWith(message), e.getMessage());
    assertTrue(e.getMessage().contains("Fix: set " + key), e.getMessage());
  }

  @Test
  void sessionSettings_staticKeysComeFromTheServer_andKernelTimeoutIsCapped() {
    Map<String, String> server = Map.of(VkConf.DEFINE_ENABLED, "false", VkConf.KERNEL_TIMEOUT_MAX, "2min",
        VkConf.COMPILE_TIMEOUT, "5s", VkConf.SHADER_CACHE_DIR, "none");
    Map<String, String> session = Map.of(VkConf.DEFINE_ENABLED, "true", VkConf.KERNEL_TIMEOUT_MAX, "1h",
        VkConf.COMPILE_TIMEOUT, "10min", VkConf.SHADER_CACHE_DIR, "/tmp/elsewhere", VkConf.BATCH_ROWS, "4096");
    VkConf c = VkConf.forSession(session::get, server::get);
    assertFalse(c.define(), "a session cannot switch vkspark_define on");
    assertEquals(java.time.Duration.ofSeconds(5), c.compileTimeout());
    assertNull(c.shaderCachePath(), "the server's cache setting");
    assertEquals(4096, c.batchRows(), "session keys still come from the session");
    assertEquals(java.time.Duration.ofSeconds(60), c.kernelTimeout(), "the default, under the max");
    assertEquals(java.time.Duration.ofSeconds(90), VkConf.forSession(Map.of(VkConf.KERNEL_TIMEOUT, "90s")::get,
        server::get).kernelTimeout());
    assertEquals(java.time.Duration.ofSeconds(30), VkConf.forSession(k -> null,
        Map.of(VkConf.KERNEL_TIMEOUT_MAX, "30s")::get).kernelTimeout(), "an unset timeout is clamped to the max");
    for (String tooLong : List.of("3min", "0")) {
      GpuException e = assertThrows(GpuException.class,
          () -> VkConf.forSession(Map.of(VkConf.KERNEL_TIMEOUT, tooLong)::get, server::get));
      assertTrue(e.getMessage().startsWith("spark.vkspark.kernelTimeout is '" + tooLong + "'"), e.getMessage());
      assertTrue(e.getMessage().contains("above spark.vkspark.kernelTimeout.max (2min)"), e.getMessage());
      assertTrue(e.fix().startsWith("set spark.vkspark.kernelTimeout to 2min or less"), e.getMessage());
    }
    GpuException start = assertThrows(GpuException.class,
        () -> VkConf.from(Map.of(VkConf.KERNEL_TIMEOUT, "5min", VkConf.KERNEL_TIMEOUT_MAX, "2min")::get));
    assertTrue(start.getMessage().contains("above spark.vkspark.kernelTimeout.max"), start.getMessage());
    VkConf d = VkConf.from(k -> null);
    assertTrue(d.define());
    assertEquals(VkConf.DEFAULT_COMPILE_TIMEOUT, d.compileTimeout());
  }
}
