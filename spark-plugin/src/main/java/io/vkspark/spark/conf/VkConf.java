package io.vkspark.spark.conf;

import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.TransferMode;
import java.io.Serializable;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.SparkSession;

/**
 * The {@code spark.vkspark.*} settings a plan uses, read through their declarations in
 * {@link Settings} (which parse and check them: a bad value fails with the key, the value and what
 * to write instead), plus the one rule across two keys: {@code kernelTimeout.max}.
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
 * @param placement {@code adaptive} (the default): each executor times batches of GPU calls on the
 *     GPU and on the CPU and sends later ones to the faster; {@code gpu}: always the GPU
 *     ({@code spark.vkspark.placement})
 * @param fastMath the device's own floating-point arithmetic in GPU UDF kernels: contraction of
 *     {@code a * b + c} into fused multiply-adds, and a device's flushing of 32-bit subnormals
 *     ({@code spark.vkspark.fastMath}, default false: Java's bits)
 * @param verifySet whether {@code spark.vkspark.verify} is set: unset, a GPU node that runs a
 *     translated Java UDF on the GPU checks a sample ({@code VkGpuEvalExec.verifySettings})
 * @param cacheDevice whether GPU UDFs over cached columns read them from device copies
 *     ({@code spark.vkspark.cache.device}); null (unset): the executor's device decides, on for a
 *     GPU and off for a CPU Vulkan device ({@code ExecutorDevice.cachesColumns})
 * @param cacheDeviceMemory most device memory each executor's cached columns take
 *     ({@code spark.vkspark.cache.deviceMemory}, a size or a fraction of the device's; static)
 * @param glsl GLSL files on the driver whose functions become GLSL-only GPU UDFs of every session
 *     ({@code spark.vkspark.glsl}, comma-separated, as written; {@link #glslFiles}; static)
 *
 * <p>Built on the driver ({@link #of}, in the rules that build vkspark's nodes; again only when a
 * setting changed) and carried in the nodes to the executors, which use the node's copy; the executor plugin
 * and the SQL extensions read the application's ({@link #from(org.apache.spark.SparkConf)}) once.
 */
public record VkConf(boolean enabled, String device, int batchRows, int concurrentGpuTasks, String shaderCacheDir,
                     boolean fallback, List<String> functions, boolean validation, TransferMode transfers,
                     long deviceMemoryLimit, Duration kernelTimeout,
                     MetricsLevel metricsLevel, VerifySettings verify, boolean coalesce, boolean define,
                     Duration compileTimeout, long batchBytes, PlacementMode placement, boolean fastMath,
                     boolean verifySet, Boolean cacheDevice, Setting.Share.Amount cacheDeviceMemory, List<String> glsl)
    implements Serializable {

  /**
   * Keys a session cannot change ({@link #forSession} reads them from the SparkContext's conf): the
   * executor's device and its resources, what is compiled and where it is cached, and the limits
   * an administrator sets for every session. Declared by {@link Setting#isStatic}.
   */
  public static final Set<String> STATIC = Settings.ALL.stream().filter(Setting::isStatic)
      .map(Setting::key).collect(Collectors.toUnmodifiableSet());

  public VkConf {
    functions = List.copyOf(functions);
    glsl = List.copyOf(glsl);
    Objects.requireNonNull(cacheDeviceMemory, "cacheDeviceMemory");
    Objects.requireNonNull(kernelTimeout, "kernelTimeout");
    Objects.requireNonNull(metricsLevel, "metricsLevel");
    Objects.requireNonNull(verify, "verify");
    Objects.requireNonNull(compileTimeout, "compileTimeout");
    Objects.requireNonNull(placement, "placement");
    if (batchBytes <= 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT,
          Settings.BATCH_BYTES.key() + " is " + batchBytes + ", not a positive size.",
          "set " + Settings.BATCH_BYTES.key() + " to the most bytes of rows per batch, e.g. 128m.");
    }
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

  /**
   * The settings of {@code session}: its own values, the static ones from its SparkContext ({@link #forSession}).
   *
   * <p>Every rule that plans vkspark's nodes asks, several times per query and again per adaptive
   * stage; parsing every setting was most of those rules' time (issue 35). The settings built last
   * are kept with every value they were built from and returned while a lookup of each finds the
   * same value, so a changed setting, in the session or the SparkContext, builds them again.
   */
  public static VkConf of(SparkSession session) {
    SparkConf server = session.sparkContext().conf();
    Function<String, String> sessionLookup = k -> session.conf().contains(k) ? session.conf().get(k) : null;
    Function<String, String> serverLookup = k -> server.contains(k) ? server.get(k) : null;
    Built last = lastBuilt;
    if (last != null && last.current(sessionLookup, serverLookup)) {
      return last.conf();
    }
    Map<String, String> sessionRead = new HashMap<>();
    Map<String, String> serverRead = new HashMap<>();
    VkConf conf = forSession(k -> read(sessionRead, k, sessionLookup), k -> read(serverRead, k, serverLookup));
    lastBuilt = new Built(sessionRead, serverRead, conf);
    return conf;
  }

  /** What {@link #of} built last; null before the first. */
  private static volatile Built lastBuilt;

  /** Settings built by {@link #of} and the values it read (null: unset) from the session and from the server. */
  private record Built(Map<String, String> session, Map<String, String> server, VkConf conf) {
    boolean current(Function<String, String> sessionLookup, Function<String, String> serverLookup) {
      return same(session, sessionLookup) && same(server, serverLookup);
    }

    private static boolean same(Map<String, String> read, Function<String, String> lookup) {
      for (Map.Entry<String, String> e : read.entrySet()) {
        if (!Objects.equals(lookup.apply(e.getKey()), e.getValue())) {
          return false;
        }
      }
      return true;
    }
  }

  private static String read(Map<String, String> read, String key, Function<String, String> lookup) {
    String value = lookup.apply(key);
    read.put(key, value);
    return value;
  }

  private static VkConf from(Function<String, String> lookup, Function<String, String> server) {
    return new VkConf(
        Settings.ENABLED.get(lookup),
        Settings.DEVICE.get(lookup),
        Settings.BATCH_ROWS.get(lookup),
        Settings.CONCURRENT_GPU_TASKS.get(lookup),
        Settings.SHADER_CACHE_DIR.get(lookup),
        Settings.FALLBACK.get(lookup),
        Settings.FUNCTIONS.get(lookup),
        Settings.VALIDATION.get(lookup),
        Settings.TRANSFERS.get(lookup),
        Settings.DEVICE_MEMORY_LIMIT.get(lookup),
        kernelTimeout(lookup, server),
        Settings.METRICS_LEVEL.get(lookup),
        new VerifySettings(Settings.VERIFY.get(lookup), Settings.VERIFY_SAMPLE_RATE.get(lookup),
            Settings.VERIFY_BUDGET.get(lookup)),
        Settings.COALESCE.get(lookup),
        Settings.DEFINE_ENABLED.get(lookup),
        Settings.COMPILE_TIMEOUT.get(lookup),
        Settings.BATCH_BYTES.get(lookup),
        Settings.PLACEMENT.get(lookup),
        Settings.FAST_MATH.get(lookup),
        lookup.apply(Settings.VERIFY.key()) != null,
        Settings.CACHE_DEVICE.find(lookup).orElse(null),
        Settings.CACHE_DEVICE_MEMORY.get(lookup),
        Settings.GLSL.get(lookup));
  }

  /**
   * {@code kernelTimeout} within the static {@code kernelTimeout.max}: unset, the default or the
   * max, whichever is shorter; set above the max (or to 0, no limit), refused rather than
   * clamped, so a session never runs with a limit other than the one it asked for. The server's
   * own value is checked the same way, at start.
   */
  private static Duration kernelTimeout(Function<String, String> lookup, Function<String, String> server) {
    Duration max = Settings.KERNEL_TIMEOUT_MAX.get(server);
    String asked = lookup.apply(Settings.KERNEL_TIMEOUT.key());
    Duration t = Settings.KERNEL_TIMEOUT.get(lookup);
    if (max.isZero()) {
      return t;
    }
    if (asked == null || asked.isBlank()) {
      return t.compareTo(max) > 0 ? max : t;
    }
    if (t.isZero() || t.compareTo(max) > 0) {
      String key = Settings.KERNEL_TIMEOUT.key();
      String maxKey = Settings.KERNEL_TIMEOUT_MAX.key();
      String maxText = server.apply(maxKey).trim();
      throw GpuException.of(Code.INVALID_ARGUMENT, key + " is '" + asked.trim() + "'" + (t.isZero() ? " (no limit)" : "")
              + ", above " + maxKey + " (" + maxText + "), the most the server lets a session use.",
          "set " + key + " to " + maxText + " or less, or unset it; " + maxKey + " is static (set where the server starts).");
    }
    return t;
  }

  /** From a SparkConf. */
  public static VkConf from(SparkConf conf) {
    return from(k -> conf.contains(k) ? conf.get(k) : null);
  }

  /** The device options these settings ask for, with {@code deviceSelector} replacing {@link #device()}. */
  public DeviceOptions deviceOptions(String deviceSelector) {
    return DeviceOptions.defaults().withDevice(deviceSelector).withValidation(validation).withTransfers(transfers)
        .withShaderCacheDir(shaderCachePath()).withMemoryLimit(deviceMemoryLimit);
  }

  /** The files of {@link #glsl}, {@code ~/} expanded to the home directory. */
  public List<Path> glslFiles() {
    return glsl.stream().map(p -> Path.of(expandHome(p))).toList();
  }

  /** The shader cache directory, or null when it is off ("none" or blank). */
  public Path shaderCachePath() {
    return shaderCacheDir.isBlank() || shaderCacheDir.equalsIgnoreCase("none") ? null : Path.of(expandHome(shaderCacheDir));
  }

  /** {@code ~} and {@code ~/...} with the user's home directory ({@link Setting.Dir#expandHome}). */
  public static String expandHome(String path) {
    return Setting.Dir.expandHome(path);
  }
}
