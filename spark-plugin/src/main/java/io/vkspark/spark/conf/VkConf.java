package io.vkspark.spark.conf;


import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.TransferMode;
import java.io.Serializable;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The {@code spark.vkspark.*} settings, parsed and checked once: a bad value fails with the key,
 * the value and what to write instead.
 *
 * @param enabled plan GPU UDFs onto the GPU at all ({@code spark.vkspark.enabled}, default true)
 * @param device which Vulkan device ({@code spark.vkspark.device}: empty for the best, an index, a
 *     UUID or part of a name; Spark's {@code gpu} resource address wins when one is assigned)
 * @param batchRows rows per GPU dispatch ({@code spark.vkspark.batchRows}, default 1,048,576)
 * @param concurrentGpuTasks tasks of one executor using the device at once
 *     ({@code spark.vkspark.concurrentGpuTasks}, default 2)
 * @param shaderCacheDir SPIR-V and pipeline cache directory ({@code spark.vkspark.shaderCacheDir},
 *     default {@code ~/.cache/vkspark}; "none" disables it; a leading {@code ~} is the user's home)
 * @param fallback run a UDF on the CPU when it cannot run on the GPU
 *     ({@code spark.vkspark.fallback}, default true; false makes that an error)
 * @param functions GPU UDF classes registered as SQL functions in every session
 *     ({@code spark.vkspark.functions}, comma-separated)
 * @param validation Khronos validation layer on the executor's device
 *     ({@code spark.vkspark.validation}, default false; for debugging)
 * @param transfers {@code auto} or {@code staged} ({@code spark.vkspark.transfers})
 * @param deviceMemoryLimit most device memory the executor's buffers may hold
 *     ({@code spark.vkspark.deviceMemoryLimit}, e.g. {@code 4g}; default 0, no limit beyond the
 *     device's); when reached, batches are split into smaller dispatches
 * @param kernelTimeout longest one GPU dispatch may run ({@code spark.vkspark.kernelTimeout}, a
 *     duration such as {@code 60s}, {@code 500ms} or {@code 2min}; default 60s; 0 for no limit);
 *     past it the kernel is aborted and the task fails with a TIMEOUT error naming the UDF
 * @param metricsLevel which {@code VkMetric}s the GPU node shows ({@code spark.vkspark.metrics.level}:
 *     {@code essential}, the default, or {@code debug} for vkspark internals too)
 * @param verify whether the GPU node re-checks a sample of GPU rows with {@code call()}
 *     ({@code spark.vkspark.verify}: {@code off}, the default, {@code sample} or {@code strict};
 *     {@code spark.vkspark.verify.sampleRate}, a fraction in (0, 1], default 0.001)
 * @param coalesce gather consecutive small child batches (Parquet's and ORC's 4,096 rows, the
 *     cache's 10,000) into one GPU dispatch of up to {@code batchRows} rows
 *     ({@code spark.vkspark.coalesce}, default true)
 * @param define whether sessions may define GLSL-only UDFs with {@code vkspark_define}
 *     ({@code spark.vkspark.define.enabled}, default true; static: a shared server turns it off)
 * @param compileTimeout time budget for compiling one GPU UDF's kernel, all its compiles together
 *     ({@code spark.vkspark.compileTimeout}, default 60s; 0 for none; static)
 *
 * <p>Some settings are <em>static</em> ({@link #STATIC}): a session cannot change them, so an
 * administrator of a shared Thrift or Connect server can rely on them. {@link #forSession} reads
 * them from the SparkContext's conf only, and caps {@code kernelTimeout} by the static
 * {@code spark.vkspark.kernelTimeout.max}.
 * @param batchBytes most bytes of rows in one batch that vkspark builds or stages: the rows it
 *     turns into columns under the GPU node, coalesced batches, a batch's GPU arguments
 *     ({@code spark.vkspark.batchBytes}, default 128 MiB); a larger batch is split, and a single
 *     larger row runs its GPU UDFs with {@code call()} (SIZE error without fallback), so wide rows
 *     cannot exhaust an executor's heap where Spark alone would not
 */
public record VkConf(boolean enabled, String device, int batchRows, int concurrentGpuTasks, String shaderCacheDir,
                     boolean fallback, List<String> functions, boolean validation, TransferMode transfers,
                     long deviceMemoryLimit, java.time.Duration kernelTimeout,
                     MetricsLevel metricsLevel, VerifySettings verify, boolean coalesce, boolean define,
                     java.time.Duration compileTimeout, long batchBytes)
    implements Serializable {

  public static final String PREFIX = "spark.vkspark.";
  public static final String ENABLED = PREFIX + "enabled";
  public static final String DEVICE = PREFIX + "device";
  public static final String BATCH_ROWS = PREFIX + "batchRows";
  public static final String CONCURRENT_GPU_TASKS = PREFIX + "concurrentGpuTasks";
  public static final String SHADER_CACHE_DIR = PREFIX + "shaderCacheDir";
  public static final String FALLBACK = PREFIX + "fallback";
  public static final String FUNCTIONS = PREFIX + "functions";
  /** GLSL files of GLSL-only GPU UDFs, comma-separated, read on the driver ({@link GlslFunctions}). */
  public static final String GLSL = PREFIX + "glsl";
  public static final String VALIDATION = PREFIX + "validation";
  public static final String TRANSFERS = PREFIX + "transfers";
  public static final String DEVICE_MEMORY_LIMIT = PREFIX + "deviceMemoryLimit";
  public static final String KERNEL_TIMEOUT = PREFIX + "kernelTimeout";
  public static final String METRICS_LEVEL = PREFIX + "metrics.level";
  public static final String VERIFY = PREFIX + "verify";
  public static final String VERIFY_SAMPLE_RATE = PREFIX + "verify.sampleRate";
  public static final double DEFAULT_VERIFY_SAMPLE_RATE = 0.001;
  public static final String COALESCE = PREFIX + "coalesce";
  public static final String BATCH_BYTES = PREFIX + "batchBytes";
  public static final long DEFAULT_BATCH_BYTES = 128L << 20;
  public static final java.time.Duration DEFAULT_KERNEL_TIMEOUT = java.time.Duration.ofSeconds(60);
  /** The most {@link #KERNEL_TIMEOUT} a session may ask for (static; unset: no cap). */
  public static final String KERNEL_TIMEOUT_MAX = KERNEL_TIMEOUT + ".max";
  /** Whether {@code vkspark_define} may be used (static). */
  public static final String DEFINE_ENABLED = PREFIX + "define.enabled";
  /** Time budget for compiling one GPU UDF's kernel (static). */
  public static final String COMPILE_TIMEOUT = PREFIX + "compileTimeout";
  public static final java.time.Duration DEFAULT_COMPILE_TIMEOUT = java.time.Duration.ofSeconds(60);
  /**
   * Keys a session cannot change ({@link #forSession} reads them from the SparkContext's conf): the
   * executor's device and its resources, what is compiled and where it is cached, and the limits
   * an administrator sets for every session.
   */
  public static final java.util.Set<String> STATIC = java.util.Set.of(DEVICE, CONCURRENT_GPU_TASKS, SHADER_CACHE_DIR,
      FUNCTIONS, GLSL, VALIDATION, TRANSFERS, DEVICE_MEMORY_LIMIT, KERNEL_TIMEOUT_MAX, DEFINE_ENABLED, COMPILE_TIMEOUT);

  public static final int DEFAULT_BATCH_ROWS = 1 << 20;
  public static final int DEFAULT_CONCURRENT_GPU_TASKS = 2;

  public VkConf {
    functions = List.copyOf(functions);
    java.util.Objects.requireNonNull(kernelTimeout, "kernelTimeout");
    java.util.Objects.requireNonNull(metricsLevel, "metricsLevel");
    java.util.Objects.requireNonNull(verify, "verify");
    java.util.Objects.requireNonNull(compileTimeout, "compileTimeout");
    if (batchBytes <= 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, BATCH_BYTES + " is " + batchBytes + ", not a positive size.",
          "set " + BATCH_BYTES + " to the most bytes of rows per batch, e.g. 128m.");
    }
  }

  /** The settings with {@code vkspark_define} allowed, the default compile budget and batch bytes. */
  public VkConf(boolean enabled, String device, int batchRows, int concurrentGpuTasks, String shaderCacheDir,
                boolean fallback, List<String> functions, boolean validation, TransferMode transfers,
                long deviceMemoryLimit, java.time.Duration kernelTimeout, MetricsLevel metricsLevel,
                VerifySettings verify, boolean coalesce) {
    this(enabled, device, batchRows, concurrentGpuTasks, shaderCacheDir, fallback, functions, validation, transfers,
        deviceMemoryLimit, kernelTimeout, metricsLevel, verify, coalesce, true, DEFAULT_COMPILE_TIMEOUT, DEFAULT_BATCH_BYTES);
  }

  /** The settings with verification off and small batches coalesced (the defaults). */
  public VkConf(boolean enabled, String device, int batchRows, int concurrentGpuTasks, String shaderCacheDir,
                boolean fallback, List<String> functions, boolean validation, TransferMode transfers,
                long deviceMemoryLimit, java.time.Duration kernelTimeout, MetricsLevel metricsLevel) {
    this(enabled, device, batchRows, concurrentGpuTasks, shaderCacheDir, fallback, functions, validation, transfers,
        deviceMemoryLimit, kernelTimeout, metricsLevel, VerifySettings.OFF, true);
  }

  /** The settings with the default metrics level. */
  public VkConf(boolean enabled, String device, int batchRows, int concurrentGpuTasks, String shaderCacheDir,
                boolean fallback, List<String> functions, boolean validation, TransferMode transfers,
                long deviceMemoryLimit, java.time.Duration kernelTimeout) {
    this(enabled, device, batchRows, concurrentGpuTasks, shaderCacheDir, fallback, functions, validation, transfers,
        deviceMemoryLimit, kernelTimeout, MetricsLevel.ESSENTIAL);
  }

  /** The settings with the default kernel timeout. */
  public VkConf(boolean enabled, String device, int batchRows, int concurrentGpuTasks, String shaderCacheDir,
                boolean fallback, List<String> functions, boolean validation, TransferMode transfers,
                long deviceMemoryLimit) {
    this(enabled, device, batchRows, concurrentGpuTasks, shaderCacheDir, fallback, functions, validation, transfers,
        deviceMemoryLimit, DEFAULT_KERNEL_TIMEOUT);
  }

  /** Reads every setting through {@code lookup} (null for unset), as at application start. */
  public static VkConf from(Function<String, String> lookup) {
    return from(lookup, lookup);
  }

  /**
   * A session's settings: the {@link #STATIC} keys from {@code server} (the SparkContext's conf;
   * what a session SETs for them is ignored), the others from {@code session} (which sees the
   * SparkContext's values too, unless it set its own).
   *
   * @throws GpuException INVALID_ARGUMENT for a bad value, or a {@code kernelTimeout} the session
   *     set above the static {@code kernelTimeout.max}
   */
  public static VkConf forSession(Function<String, String> session, Function<String, String> server) {
    return from(k -> STATIC.contains(k) ? server.apply(k) : session.apply(k), server);
  }

  /** The settings of {@code session}: its own values, the static ones from its SparkContext ({@link #forSession}). */
  public static VkConf of(org.apache.spark.sql.SparkSession session) {
    org.apache.spark.SparkConf server = session.sparkContext().conf();
    return forSession(k -> session.conf().contains(k) ? session.conf().get(k) : null,
        k -> server.contains(k) ? server.get(k) : null);
  }

  private static VkConf from(Function<String, String> lookup, Function<String, String> server) {
    return new VkConf(
        bool(lookup, ENABLED, true),
        str(lookup, DEVICE, ""),
        positiveInt(lookup, BATCH_ROWS, DEFAULT_BATCH_ROWS, "rows per GPU batch, e.g. 1048576"),
        positiveInt(lookup, CONCURRENT_GPU_TASKS, DEFAULT_CONCURRENT_GPU_TASKS, "tasks per executor on the GPU at once, e.g. 2"),
        path(lookup, SHADER_CACHE_DIR, DeviceOptions.defaultCacheDir().toString()),
        bool(lookup, FALLBACK, true),
        Arrays.stream(str(lookup, FUNCTIONS, "").split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList(),
        bool(lookup, VALIDATION, false),
        transfers(lookup),
        bytes(lookup, DEVICE_MEMORY_LIMIT),
        kernelTimeout(lookup, server),
        metricsLevel(lookup),
        verify(lookup),
        bool(lookup, COALESCE, true),
        bool(lookup, DEFINE_ENABLED, true),
        duration(lookup, COMPILE_TIMEOUT, DEFAULT_COMPILE_TIMEOUT),
        positiveBytes(lookup, BATCH_BYTES, DEFAULT_BATCH_BYTES));
  }

  /**
   * {@code kernelTimeout} within the static {@code kernelTimeout.max}: unset, the default or the
   * max, whichever is shorter; set above the max (or to 0, no limit), refused rather than
   * clamped, so a session never runs with a limit other than the one it asked for. The server's
   * own value is checked the same way, at start.
   */
  private static java.time.Duration kernelTimeout(Function<String, String> lookup, Function<String, String> server) {
    java.time.Duration max = duration(server, KERNEL_TIMEOUT_MAX, java.time.Duration.ZERO);
    String asked = lookup.apply(KERNEL_TIMEOUT);
    java.time.Duration t = duration(lookup, KERNEL_TIMEOUT, DEFAULT_KERNEL_TIMEOUT);
    if (max.isZero()) {
      return t;
    }
    if (asked == null || asked.isBlank()) {
      return t.compareTo(max) > 0 ? max : t;
    }
    if (t.isZero() || t.compareTo(max) > 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, KERNEL_TIMEOUT + " is '" + asked.trim() + "'" + (t.isZero()
              ? " (no limit)" : "") + ", above " + KERNEL_TIMEOUT_MAX + " (" + server.apply(KERNEL_TIMEOUT_MAX).trim()
              + "), the most the server lets a session use.",
          "set " + KERNEL_TIMEOUT + " to " + server.apply(KERNEL_TIMEOUT_MAX).trim() + " or less, or unset it; "
              + KERNEL_TIMEOUT_MAX + " is static (set where the server starts).");
    }
    return t;
  }

  /** From a SparkConf. */
  public static VkConf from(org.apache.spark.SparkConf conf) {
    return from(k -> conf.contains(k) ? conf.get(k) : null);
  }

  /** The device options these settings ask for, with {@code deviceSelector} replacing {@link #device()}. */
  public DeviceOptions deviceOptions(String deviceSelector) {
    return DeviceOptions.defaults().withDevice(deviceSelector).withValidation(validation).withTransfers(transfers)
        .withShaderCacheDir(shaderCachePath()).withMemoryLimit(deviceMemoryLimit);
  }

  /** The shader cache directory, or null when it is off ("none" or blank). */
  public Path shaderCachePath() {
    return shaderCacheDir.isBlank() || shaderCacheDir.equalsIgnoreCase("none") ? null : Path.of(expandHome(shaderCacheDir));
  }

  /**
   * {@code ~} and {@code ~/...} (or {@code ~\...}) with the user's home directory, as a shell
   * would: Java does not, and a folder literally named {@code ~} is never what a user meant.
   * {@code ~user/...} is not expanded (it is rejected where a path is read).
   */
  public static String expandHome(String path) {
    if (path.equals("~")) {
      return System.getProperty("user.home");
    }
    if (path.startsWith("~/") || path.startsWith("~" + java.io.File.separator)) {
      return Path.of(System.getProperty("user.home")).resolve(path.substring(2)).toString();
    }
    return path;
  }

  /** A directory setting: {@code ~} expanded; "none" and blank kept (they switch the feature off). */
  private static String path(Function<String, String> lookup, String key, String def) {
    String v = str(lookup, key, def);
    if (v.isBlank() || v.equalsIgnoreCase("none")) {
      return v;
    }
    if (v.startsWith("~") && expandHome(v).equals(v)) {
      throw GpuException.of(Code.INVALID_ARGUMENT, key + " is '" + v + "': vkspark expands only ~ and ~/ to the home "
          + "directory, not ~user.", "set " + key + " to an absolute path or one starting with ~/.");
    }
    String expanded = expandHome(v);
    try {
      Path.of(expanded);
    } catch (java.nio.file.InvalidPathException e) {
      throw GpuException.of(Code.INVALID_ARGUMENT, key + " is '" + v + "', not a valid path (" + e.getReason() + ").",
          "set " + key + " to a directory path, or none to switch it off.");
    }
    return expanded;
  }

  private static String str(Function<String, String> lookup, String key, String def) {
    String v = lookup.apply(key);
    return v == null ? def : v.trim();
  }

  static boolean bool(Function<String, String> lookup, String key, boolean def) {
    String v = lookup.apply(key);
    if (v == null) {
      return def;
    }
    return switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw GpuException.of(Code.INVALID_ARGUMENT, key + " is '" + v + "', not a boolean.",
          "set " + key + " to true or false.");
    };
  }

  private static int positiveInt(Function<String, String> lookup, String key, int def, String meaning) {
    String v = lookup.apply(key);
    if (v == null) {
      return def;
    }
    try {
      int n = Integer.parseInt(v.trim().replace("_", ""));
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw GpuException.of(Code.INVALID_ARGUMENT, key + " is '" + v + "', not a positive whole number.",
        "set " + key + " to the number of " + meaning + ".");
  }

  /** A byte size: a number with an optional k, m, g or t suffix (powers of 1024; "4g", "4gb", "4GiB" alike). */
  private static long bytes(Function<String, String> lookup, String key) {
    String v = lookup.apply(key);
    if (v == null || v.isBlank()) {
      return 0;
    }
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("([0-9][0-9_]*)\\s*(?:([kmgt])(?:i?b)?|b)?")
        .matcher(v.trim().toLowerCase(Locale.ROOT));
    if (m.matches()) {
      int shift = m.group(2) == null ? 0 : switch (m.group(2)) {
        case "k" -> 10;
        case "m" -> 20;
        case "g" -> 30;
        default -> 40;
      };
      try {
        long n = Long.parseLong(m.group(1).replace("_", ""));
        if (n <= (Long.MAX_VALUE >> shift)) {
          return n << shift;
        }
      } catch (NumberFormatException e) {
        // too many digits: reported below
      }
    }
    throw GpuException.of(Code.INVALID_ARGUMENT, key + " is '" + v + "', not a size.",
        "set " + key + " to a number of bytes with an optional k, m, g or t suffix, e.g. 4g (0 for no limit).");
  }

  /** A byte size that must be positive ({@code def} when unset). */
  private static long positiveBytes(Function<String, String> lookup, String key, long def) {
    String v = lookup.apply(key);
    if (v == null || v.isBlank()) {
      return def;
    }
    long n;
    try {
      n = bytes(lookup, key);
    } catch (GpuException e) {
      n = 0; // reported below, without bytes()'s "0 for no limit"
    }
    if (n <= 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, key + " is '" + v + "', not a positive size.",
          "set " + key + " to a number of bytes with an optional k, m or g suffix, e.g. 128m.");
    }
    return n;
  }

  /** A duration as Spark writes them ({@code 60s}, {@code 500ms}, {@code 2min}, {@code 1h}; a bare number is seconds). */
  private static java.time.Duration duration(Function<String, String> lookup, String key, java.time.Duration def) {
    String v = lookup.apply(key);
    if (v == null || v.isBlank()) {
      return def;
    }
    try {
      long ms = org.apache.spark.network.util.JavaUtils.timeStringAsMs(
          v.trim().matches("\\d+") ? v.trim() + "s" : v.trim());
      if (ms >= 0) {
        return java.time.Duration.ofMillis(ms);
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw GpuException.of(Code.INVALID_ARGUMENT, key + " is '" + v + "', not a duration.",
        "set " + key + " to a duration such as 60s, 500ms or 2min (0 for no limit).");
  }

  private static TransferMode transfers(Function<String, String> lookup) {
    String v = str(lookup, TRANSFERS, "auto");
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "auto" -> TransferMode.AUTO;
      case "staged" -> TransferMode.STAGED;
      default -> throw GpuException.of(Code.INVALID_ARGUMENT, TRANSFERS + " is '" + v + "', not auto or staged.",
          "set " + TRANSFERS + " to auto (mapped device memory where the device has it) or staged.");
    };
  }

  private static MetricsLevel metricsLevel(Function<String, String> lookup) {
    String v = str(lookup, METRICS_LEVEL, "essential");
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "essential" -> MetricsLevel.ESSENTIAL;
      case "debug" -> MetricsLevel.DEBUG;
      default -> throw GpuException.of(Code.INVALID_ARGUMENT, METRICS_LEVEL + " is '" + v + "', not essential or debug.",
          "set " + METRICS_LEVEL + " to essential (rows, bytes, times, memory) or debug (also vkspark internals).");
    };
  }

  private static VerifySettings verify(Function<String, String> lookup) {
    String m = str(lookup, VERIFY, "off");
    VerifySettings.Mode mode = switch (m.toLowerCase(Locale.ROOT)) {
      case "off", "false" -> VerifySettings.Mode.OFF;
      case "sample" -> VerifySettings.Mode.SAMPLE;
      case "strict" -> VerifySettings.Mode.STRICT;
      default -> throw GpuException.of(Code.INVALID_ARGUMENT, VERIFY + " is '" + m + "', not off, sample or strict.",
          "set " + VERIFY + " to off, sample (count and log mismatches) or strict (fail the query at the first one).");
    };
    String r = lookup.apply(VERIFY_SAMPLE_RATE);
    double rate = DEFAULT_VERIFY_SAMPLE_RATE;
    if (r != null) {
      try {
        rate = Double.parseDouble(r.trim());
      } catch (NumberFormatException e) {
        rate = Double.NaN;
      }
      if (!(rate > 0 && rate <= 1)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, VERIFY_SAMPLE_RATE + " is '" + r + "', not a fraction in (0, 1].",
            "set " + VERIFY_SAMPLE_RATE + " to the fraction of rows to check, e.g. 0.001 (at least one row per batch is checked).");
      }
    }
    return new VerifySettings(mode, rate);
  }
}
