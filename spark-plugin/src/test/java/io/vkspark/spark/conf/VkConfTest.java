package io.vkspark.spark.conf;

import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.TransferMode;
import io.vkspark.spark.conf.VerifySettings;
import io.vkspark.spark.conf.VkConf;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.GpuException;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.network.util.JavaUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Every spark.vkspark.* setting (verify too): parsed as documented, and a bad value names the key and the value with a Fix. */
final class VkConfTest {
  private static VkConf with(String key, String value) {
    return VkConf.from(Map.of(key, value)::get);
  }

  @Test
  void tildeInTheShaderCacheDir_isTheUserHome() {
    Path home = Path.of(System.getProperty("user.home"));
    assertEquals(home.resolve("x"), with(Settings.SHADER_CACHE_DIR.key(), "~/x").shaderCachePath());
    assertEquals(home.resolve("a/b"), with(Settings.SHADER_CACHE_DIR.key(), " ~/a/b ").deviceOptions("").shaderCacheDir());
    assertEquals(home, with(Settings.SHADER_CACHE_DIR.key(), "~").shaderCachePath());
    assertEquals(home.resolve("x").toString(), with(Settings.SHADER_CACHE_DIR.key(), "~/x").shaderCacheDir());
    assertFalse(with(Settings.SHADER_CACHE_DIR.key(), "~/x").shaderCachePath().toString().contains("~"));
    assertEquals(Path.of("/tmp/a~b"), with(Settings.SHADER_CACHE_DIR.key(), "/tmp/a~b").shaderCachePath());
    assertNull(with(Settings.SHADER_CACHE_DIR.key(), "none").shaderCachePath());
    // A record built directly (as tests and tools do) expands too.
    VkConf d = VkConf.from(k -> null);
    assertEquals(home.resolve("y"), new VkConf(true, "", 1, 1, "~/y", true, d.functions(), false, d.transfers(), 0,
        d.kernelTimeout(), d.metricsLevel(), d.verify(), d.coalesce(), d.define(), d.compileTimeout(), d.batchBytes(),
        d.placement(), false, false, false, d.cacheDeviceMemory(), List.of())
        .shaderCachePath());
  }

  @Test
  void sizes_acceptTheUsualSuffixes() {
    assertEquals(4L << 30, with(Settings.DEVICE_MEMORY_LIMIT.key(), "4g").deviceMemoryLimit());
    assertEquals(4L << 30, with(Settings.DEVICE_MEMORY_LIMIT.key(), "4GB").deviceMemoryLimit());
    assertEquals(512L << 20, with(Settings.DEVICE_MEMORY_LIMIT.key(), "512MiB").deviceMemoryLimit());
    assertEquals(1000L, with(Settings.DEVICE_MEMORY_LIMIT.key(), "1000").deviceMemoryLimit());
    assertEquals(0L, with(Settings.DEVICE_MEMORY_LIMIT.key(), "0").deviceMemoryLimit());
    assertEquals(1_048_576, with(Settings.BATCH_ROWS.key(), "1_048_576").batchRows());
    assertEquals(MetricsLevel.ESSENTIAL, VkConf.from(k -> null).metricsLevel());
    assertEquals(MetricsLevel.DEBUG, with(Settings.METRICS_LEVEL.key(), " Debug ").metricsLevel());
    assertEquals(List.of("a.B", "c.D"), with(Settings.FUNCTIONS.key(), " a.B, ,c.D ").functions());
    assertTrue(VkConf.from(k -> null).coalesce());
    assertFalse(with(Settings.COALESCE.key(), " FALSE ").coalesce());
    assertEquals(128L << 20, VkConf.from(k -> null).batchBytes());
    assertEquals(1L << 20, with(Settings.BATCH_BYTES.key(), "1m").batchBytes());
  }

  @Test
  void verify_offByDefault_sampleOrStrict_withARate() {
    assertEquals(VerifySettings.OFF, VkConf.from(k -> null).verify());
    assertEquals(VerifySettings.Mode.OFF, with(Settings.VERIFY.key(), "false").verify().mode());
    VerifySettings s = VkConf.from(Map.of(Settings.VERIFY.key(), " Sample", Settings.VERIFY_SAMPLE_RATE.key(), "0.01")::get)
        .verify();
    assertEquals(new VerifySettings(VerifySettings.Mode.SAMPLE, 0.01), s);
    assertTrue(s.on());
    assertEquals(1, s.sampleSize(10), "at least one row per batch");
    assertEquals(100, s.sampleSize(10_000));
    assertEquals(0, s.sampleSize(0));
    assertEquals(VerifySettings.Mode.STRICT, with(Settings.VERIFY.key(), "strict").verify().mode());
    assertEquals(Settings.VERIFY_SAMPLE_RATE.defaultValue(), with(Settings.VERIFY.key(), "strict").verify().sampleRate());
    assertEquals(1.0, with(Settings.VERIFY_SAMPLE_RATE.key(), "1").verify().sampleRate());
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
    Map<String, String> server = Map.of(Settings.DEFINE_ENABLED.key(), "false", Settings.KERNEL_TIMEOUT_MAX.key(), "2min",
        Settings.COMPILE_TIMEOUT.key(), "5s", Settings.SHADER_CACHE_DIR.key(), "none");
    Map<String, String> session = Map.of(Settings.DEFINE_ENABLED.key(), "true", Settings.KERNEL_TIMEOUT_MAX.key(), "1h",
        Settings.COMPILE_TIMEOUT.key(), "10min", Settings.SHADER_CACHE_DIR.key(), "/tmp/elsewhere",
        Settings.BATCH_ROWS.key(), "4096");
    VkConf c = VkConf.forSession(session::get, server::get);
    assertFalse(c.define(), "a session cannot switch vkspark_define on");
    assertEquals(Duration.ofSeconds(5), c.compileTimeout());
    assertNull(c.shaderCachePath(), "the server's cache setting");
    assertEquals(4096, c.batchRows(), "session keys still come from the session");
    assertEquals(Duration.ofSeconds(60), c.kernelTimeout(), "the default, under the max");
    assertEquals(Duration.ofSeconds(90), VkConf.forSession(Map.of(Settings.KERNEL_TIMEOUT.key(), "90s")::get,
        server::get).kernelTimeout());
    assertEquals(Duration.ofSeconds(30), VkConf.forSession(k -> null,
        Map.of(Settings.KERNEL_TIMEOUT_MAX.key(), "30s")::get).kernelTimeout(), "an unset timeout is clamped to the max");
    for (String tooLong : List.of("3min", "0")) {
      GpuException e = assertThrows(GpuException.class,
          () -> VkConf.forSession(Map.of(Settings.KERNEL_TIMEOUT.key(), tooLong)::get, server::get));
      assertTrue(e.getMessage().startsWith("spark.vkspark.kernelTimeout is '" + tooLong + "'"), e.getMessage());
      assertTrue(e.getMessage().contains("above spark.vkspark.kernelTimeout.max (2min)"), e.getMessage());
      assertTrue(e.fix().startsWith("set spark.vkspark.kernelTimeout to 2min or less"), e.getMessage());
    }
    GpuException start = assertThrows(GpuException.class,
        () -> VkConf.from(Map.of(Settings.KERNEL_TIMEOUT.key(), "5min", Settings.KERNEL_TIMEOUT_MAX.key(), "2min")::get));
    assertTrue(start.getMessage().contains("above spark.vkspark.kernelTimeout.max"), start.getMessage());
    VkConf d = VkConf.from(k -> null);
    assertTrue(d.define());
    assertEquals(Settings.COMPILE_TIMEOUT.defaultValue(), d.compileTimeout());
  }

  // ---- the declarations (Settings) ----

  private static GpuException bad(Setting<?> s, String value) {
    GpuException e = assertThrows(GpuException.class, () -> s.parse(value), s.key() + "=" + value);
    assertEquals(GpuException.Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().startsWith(s.key() + " is '" + value + "'"), e.getMessage());
    assertTrue(e.getMessage().contains(". Fix: set " + s.key() + " to "), e.getMessage());
    return e;
  }

  static List<Setting.Flag> flags() {
    return Settings.ALL.stream().filter(s -> s instanceof Setting.Flag).map(s -> (Setting.Flag) s).toList();
  }

  @ParameterizedTest
  @MethodSource("flags")
  void booleans_areTrueOrFalse_anythingElseNamesKeyAndValue(Setting.Flag flag) {
    assertEquals(true, flag.parse(" TRUE "));
    assertEquals(false, flag.parse("False"));
    for (String typo : List.of("yes", "no", "1", "0", "on", "off", "", "ture")) {
      GpuException e = bad(flag, typo);
      assertTrue(e.getMessage().contains("not a boolean. Fix: set " + flag.key() + " to true or false"), e.getMessage());
    }
  }

  @Test
  void keysReadOutsideVkConf_goThroughTheirDeclarations() {
    Map<String, String> none = Map.of();
    assertTrue(Settings.FUSE_AGGREGATES.find(none::get).isEmpty(), "unset: fuse what the GPU reduces");
    assertEquals(Optional.of(true), Settings.FUSE_AGGREGATES.find(Map.of(Settings.FUSE_AGGREGATES.key(), "True")::get));
    assertTrue(bad(Settings.FUSE_AGGREGATES, "yes").fix().endsWith("true or false, or leave it unset."));
    assertEquals(true, Settings.FUSE_AGGREGATES_ON_GPU.get(none::get));
    bad(Settings.FUSE_AGGREGATES_ON_GPU, "flase");
    assertEquals(64, Settings.FUSE_AGGREGATES_KEY_SLOTS.get(none::get));
    assertEquals(true, Settings.CACHE_COLUMNAR_OUTPUT.get(none::get));
    assertEquals(false, Settings.CACHE_COLUMNAR_OUTPUT.get(Map.of(Settings.CACHE_COLUMNAR_OUTPUT.key(),
        "FALSE")::get));
    bad(Settings.CACHE_COLUMNAR_OUTPUT, "no");
    assertEquals(List.of(Path.of("/etc/a.glsl"), Path.of(System.getProperty("user.home"), "b.glsl")),
        with(Settings.GLSL.key(), " /etc/a.glsl, ,~/b.glsl ").glslFiles());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"64m, 67108864", "1g, 1073741824", "1G, 1073741824", "4gb, 4294967296", "4GiB, 4294967296",
      "512KiB, 524288", "'4 g', 4294967296", "1_000, 1000", "1000b, 1000", "2t, 2199023255552", "0, 0"})
  void sizes_readBySparksParser(String text, long bytes) {
    assertEquals(bytes, Settings.DEVICE_MEMORY_LIMIT.parse(text));
    assertEquals(bytes, with(Settings.DEVICE_MEMORY_LIMIT.key(), text).deviceMemoryLimit());
    if (!text.matches(".*[i_ ].*")) { // what vkspark accepted before and Spark's parser does not (3.5: GiB)
      assertEquals(JavaUtils.byteStringAsBytes(text), bytes, "as Spark's own sizes read");
    }
  }

  @Test
  void sizes_outOfRangeOrNotSizes_areErrors() {
    assertEquals(64L << 20, with(Settings.BATCH_BYTES.key(), "64m").batchBytes());
    assertEquals(Settings.BATCH_BYTES.defaultValue(), with(Settings.BATCH_BYTES.key(), " ").batchBytes(),
        "blank: the default");
    assertEquals(0L, with(Settings.DEVICE_MEMORY_LIMIT.key(), " ").deviceMemoryLimit());
    for (String v : List.of("0", "-64m", "1.5g", "64q", "99999999999t")) {
      assertTrue(bad(Settings.BATCH_BYTES, v).getMessage().contains("not a positive size. Fix: set "
          + Settings.BATCH_BYTES.key() + " to a number of bytes with an optional k, m, g or t suffix, e.g. 128m."));
    }
    assertTrue(bad(Settings.DEVICE_MEMORY_LIMIT, "lots").getMessage().endsWith("e.g. 4g (0 for no limit)."));
  }

  @Test
  void wholeNumbers_areCheckedAgainstTheirBounds() {
    assertEquals(1, Settings.FUSE_AGGREGATES_KEY_SLOTS.parse("1"));
    assertEquals(256, Settings.FUSE_AGGREGATES_KEY_SLOTS.parse(" 256 "));
    for (String v : List.of("0", "257", "-3", "64.0", "many")) {
      GpuException e = bad(Settings.FUSE_AGGREGATES_KEY_SLOTS, v);
      assertTrue(e.getMessage().contains("', not a whole number from 1 to 256. Fix: set "
          + Settings.FUSE_AGGREGATES_KEY_SLOTS.key() + " to the number of key values one batch may span"), e.getMessage());
    }
    assertEquals(Integer.MAX_VALUE, Settings.BATCH_ROWS.parse(Integer.toString(Integer.MAX_VALUE)));
    assertTrue(bad(Settings.CONCURRENT_GPU_TASKS, "-1").getMessage().contains("not a positive whole number"));
    assertEquals(0.5, Settings.VERIFY_SAMPLE_RATE.parse("0.5"));
    bad(Settings.VERIFY_SAMPLE_RATE, "-0.1");
    assertEquals(Duration.ofSeconds(90), Settings.KERNEL_TIMEOUT.parse("90"), "a bare number is seconds");
    assertEquals(Duration.ZERO, Settings.KERNEL_TIMEOUT_MAX.defaultValue(), "unset: no cap");
  }

  static List<Setting.Choice<?>> choices() {
    return Settings.ALL.stream().filter(s -> s instanceof Setting.Choice).<Setting.Choice<?>>map(s -> (Setting.Choice<?>) s)
        .toList();
  }

  @ParameterizedTest
  @MethodSource("choices")
  void choices_acceptTheirWordsInAnyCase_andAnUnknownWordListsThem(Setting.Choice<?> choice) {
    for (Setting.Choice.Option<?> o : choice.options()) {
      assertEquals(o.value(), choice.parse(" " + o.word().toUpperCase(Locale.ROOT) + " "));
    }
    assertNotNull(choice.defaultValue());
    GpuException e = bad(choice, "nonsense");
    for (Setting.Choice.Option<?> o : choice.options()) {
      assertTrue(e.getMessage().contains(o.word()), e.getMessage());
    }
  }

  @Test
  void cacheDeviceMemory_isASizeOrAFractionOfTheDevice() {
    assertEquals(8L << 30, Settings.CACHE_DEVICE_MEMORY.parse("8g").of(1L << 40));
    assertEquals(512L << 20, Settings.CACHE_DEVICE_MEMORY.parse(" 512m ").of(1L << 40));
    assertEquals(1L << 38, Settings.CACHE_DEVICE_MEMORY.parse("0.25").of(1L << 40));
    assertEquals(1L << 40, Settings.CACHE_DEVICE_MEMORY.parse("1").of(1L << 40));
    assertEquals(1L << 38, Settings.CACHE_DEVICE_MEMORY.defaultValue().of(1L << 40), "default: a quarter of the device");
    assertNull(Settings.CACHE_DEVICE.info().defaultText(), "unset: the executor's device decides (ExecutorDevice.cachesColumns)");
    for (String v : List.of("1.5", "0", "-1", "lots", "")) {
      GpuException e = assertThrows(GpuException.class,
          () -> Settings.CACHE_DEVICE_MEMORY.parse(v), v);
      assertEquals("spark.vkspark.cache.deviceMemory is '" + v + "', neither a size nor a fraction in (0, 1]. Fix: set "
          + "spark.vkspark.cache.deviceMemory to a size such as 8g, or a fraction of the device's memory such as 0.25.",
          e.getMessage());
    }
  }

  @Test
  void everySettingIsDeclaredOnce_withADefaultThatParses_andTheStaticOnesAreTheSame() throws Exception {
    List<Object> fields = new ArrayList<>();
    for (Field f : Settings.class.getFields()) {
      if (Setting.class.isAssignableFrom(f.getType())) {
        fields.add(f.get(null));
      }
    }
    assertEquals(Settings.ALL.size(), fields.size(), "every Setting constant is in Settings.ALL");
    assertTrue(Settings.ALL.containsAll(fields));
    assertEquals(Settings.ALL.size(), Settings.ALL.stream().map(Setting::key).distinct().count(), "no key twice");
    for (Setting<?> s : Settings.ALL) {
      assertSame(s, Settings.of(s.key()));
      if (s.info().defaultText() != null) {
        assertNotNull(s.defaultValue(), s.key());
      }
    }
    assertNull(Settings.of("spark.vkspark.nonsense"));
    assertEquals(Set.of(Settings.DEVICE.key(), Settings.CONCURRENT_GPU_TASKS.key(),
        Settings.SHADER_CACHE_DIR.key(), Settings.FUNCTIONS.key(), Settings.GLSL.key(), Settings.VALIDATION.key(),
        Settings.TRANSFERS.key(), Settings.DEVICE_MEMORY_LIMIT.key(), Settings.KERNEL_TIMEOUT_MAX.key(),
        Settings.DEFINE_ENABLED.key(), Settings.COMPILE_TIMEOUT.key(), Settings.CACHE_DEVICE_MEMORY.key()), VkConf.STATIC);
    VkConf d = VkConf.from(k -> null);
    assertEquals(new VkConf(true, "", 1 << 20, 2, DeviceOptions.defaultCacheDir().toString(), true,
        List.of(), false, TransferMode.AUTO, 0, Duration.ofSeconds(60), MetricsLevel.ESSENTIAL,
        VerifySettings.OFF, true, true, Duration.ofSeconds(60), 128L << 20,
        PlacementMode.ADAPTIVE, false, false, null, new Setting.Share.Amount(0, 0.25), List.of()),
        d, "the defaults as before");
    assertTrue(with(Settings.FAST_MATH.key(), "true").fastMath());
    assertTrue(with(Settings.VERIFY.key(), "off").verifySet(), "set, even to its default");
    assertTrue(with(Settings.CACHE_DEVICE.key(), "true").cacheDevice());
    assertFalse(with(Settings.CACHE_DEVICE.key(), "false").cacheDevice());
    assertEquals(new Setting.Share.Amount(2L << 20, 0), with(Settings.CACHE_DEVICE_MEMORY.key(), "2m").cacheDeviceMemory());
  }

  // ---- the README's configuration table ----

  private static String readme() throws IOException {
    // the working directory's (Maven runs in the module), or vkspark.source.root's (scripts/kit-suite.sh)
    Path start = Path.of(System.getProperty("vkspark.source.root", "")).toAbsolutePath();
    for (Path dir = start; dir != null; dir = dir.getParent()) {
      Path p = dir.resolve("README.md");
      if (Files.isRegularFile(p) && Files.readString(p).contains("\n## Configuration\n")) {
        return Files.readString(p);
      }
    }
    return fail("no README.md with a Configuration section above " + Path.of("").toAbsolutePath());
  }

  /** The README's {@code spark.vkspark.*} rows of the configuration table, by key, in order. */
  static Map<String, String> readmeRows(String readme) {
    int from = readme.indexOf("\n## Configuration\n");
    int to = readme.indexOf("\n## ", from + 1);
    Map<String, String> rows = new LinkedHashMap<>();
    for (String line : readme.substring(from, to < 0 ? readme.length() : to).split("\n")) {
      if (line.startsWith("| `" + Settings.PREFIX)) {
        String key = line.substring(3, line.indexOf('`', 3));
        assertNull(rows.put(key, line), "the README lists " + key + " twice");
      }
    }
    return rows;
  }

  /** What differs between the README's table and the declarations, one sentence each (empty: nothing). */
  static List<String> readmeProblems(String readme) {
    Map<String, String> rows = readmeRows(readme);
    List<String> problems = new ArrayList<>();
    List<String> declared = Settings.ALL.stream().map(Setting::key).toList();
    rows.keySet().stream().filter(k -> !declared.contains(k))
        .forEach(k -> problems.add("the README lists " + k + ", which Settings does not declare"));
    declared.stream().filter(k -> !rows.containsKey(k))
        .forEach(k -> problems.add(k + " is missing from the README; add: " + Settings.row(Settings.of(k))));
    if (problems.isEmpty() && !declared.equals(List.copyOf(rows.keySet()))) {
      problems.add("the README lists the keys in another order than Settings.ALL: " + declared);
    }
    Pattern cells =
        Pattern.compile("\\| `([^`]+)` \\| (.*?) \\| (.*) \\((static|per session)\\) \\|");
    for (Setting<?> s : Settings.ALL) {
      String row = rows.get(s.key());
      if (row == null) {
        continue;
      }
      Matcher m = cells.matcher(row);
      if (!m.matches()) {
        problems.add("the README's row for " + s.key() + " does not end in (static) or (per session): " + row);
      } else if (!m.group(2).equals(s.info().shown())) {
        problems.add("the README's default of " + s.key() + " is " + m.group(2) + ", declared " + s.info().shown());
      } else if (!m.group(4).equals(s.info().scope().words())) {
        problems.add("the README says " + s.key() + " is " + m.group(4) + ", declared " + s.info().scope().words());
      } else if (!row.equals(Settings.row(s))) {
        problems.add("the README's text for " + s.key() + " differs from its declaration; declared: " + Settings.row(s));
      }
    }
    return problems;
  }

  @Test
  void readmeTable_matchesTheDeclarations() throws Exception {
    List<String> problems = readmeProblems(readme());
    assertTrue(problems.isEmpty(), "README.md's configuration table and Settings differ:\n" + String.join("\n", problems));
    GpuException lots = assertThrows(GpuException.class, () -> with(Settings.BATCH_ROWS.key(), "lots"));
    assertTrue(readme().replace("\n", " ").contains("`" + lots.getMessage() + "`"), "the README quotes " + lots.getMessage());
  }

  @Test
  void readmeCheck_failsOnEveryKindOfDifference() {
    String table = "\n## Configuration\n\n| key | default | meaning |\n|---|---|---|\n"
        + "| `spark.plugins` | | not a vkspark key: not checked |\n" + Settings.table() + "\n\n## Next\n";
    assertEquals(List.of(), readmeProblems(table));
    String rows = Settings.row(Settings.BATCH_ROWS);
    assertEquals(List.of("the README's default of spark.vkspark.batchRows is `4096`, declared `1048576`"),
        readmeProblems(table.replace(rows, rows.replace("`1048576`", "`4096`"))));
    String device = Settings.row(Settings.DEVICE);
    assertEquals(List.of("the README says spark.vkspark.device is per session, declared static"),
        readmeProblems(table.replace(device, device.replace("(static)", "(per session)"))));
    String cache = Settings.row(Settings.CACHE_COLUMNAR_OUTPUT);
    assertEquals(List.of(Settings.CACHE_COLUMNAR_OUTPUT.key() + " is missing from the README; add: " + cache),
        readmeProblems(table.replace(cache + "\n", "")));
    assertEquals(List.of("the README lists spark.vkspark.batchSize, which Settings does not declare"),
        readmeProblems(table.replace(cache, cache + "\n| `spark.vkspark.batchSize` | `1` | typo (per session) |")));
    assertTrue(readmeProblems(table.replace(Settings.row(Settings.ENABLED) + "\n", "")
        .replace(rows, rows + "\n" + Settings.row(Settings.ENABLED))).get(0).contains("another order"));
    assertTrue(readmeProblems(table.replace("rows per GPU dispatch;", "rows per dispatch;")).get(0)
        .startsWith("the README's text for spark.vkspark.batchRows differs"));
  }
}
