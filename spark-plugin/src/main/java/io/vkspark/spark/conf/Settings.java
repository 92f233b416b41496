package io.vkspark.spark.conf;

import static io.vkspark.spark.conf.Setting.Scope.SESSION;
import static io.vkspark.spark.conf.Setting.Scope.STATIC;

import io.vkspark.gpu.TransferMode;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import io.vkspark.spark.conf.Setting.Choice;
import io.vkspark.spark.conf.Setting.Choice.Option;
import io.vkspark.spark.conf.Setting.Dir;
import io.vkspark.spark.conf.Setting.Flag;
import io.vkspark.spark.conf.Setting.Fraction;
import io.vkspark.spark.conf.Setting.Names;
import io.vkspark.spark.conf.Setting.Share;
import io.vkspark.spark.conf.Setting.Size;
import io.vkspark.spark.conf.Setting.Text;
import io.vkspark.spark.conf.Setting.Time;
import io.vkspark.spark.conf.Setting.Whole;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.spark.sql.SparkSession;

/**
 * Every {@code spark.vkspark.*} setting, declared once, in the order of the README's configuration
 * table: each constant holds the key, type, default, bounds, scope and the README's text, and is
 * the only way code reads the key ({@code Settings.FALLBACK.get(lookup)}), so no key is parsed in
 * two ways. {@link VkConf} reads most of them, once per planned query, and the plan's nodes carry
 * it to the executors. Three are read where a plan is made instead, each by its one reader:
 * {@code fuseAggregates*} ({@code agg.ReducePlacement}, per fused aggregate: a bad value fails only
 * an aggregate it concerns), {@code translate} ({@code udf.ScalaUdfs}, when a call is recognized) and
 * {@code cache.columnarOutput} ({@code cache.VkCacheSerializer}, when Spark plans a cache scan).
 * {@code VkConfTest} fails when the README's table and {@link #ALL} differ; {@link #table()} prints
 * the rows to paste.
 */
public final class Settings {
  public static final String PREFIX = "spark.vkspark.";

  private Settings() {}

  private static Setting.Info info(String name, Setting.Scope scope, String defaultText, String shownDefault,
      String doc) {
    return new Setting.Info(PREFIX + name, scope, defaultText, shownDefault, doc);
  }

  public static final Flag ENABLED = new Flag(info("enabled", SESSION, "true", null,
      "plan GPU UDFs onto the GPU; `false` leaves plans to Spark"));

  public static final Text DEVICE = new Text(info("device", STATIC, "", "empty: the best device",
      "which Vulkan device an executor opens: an index, a UUID or part of the name; Spark's `gpu` "
          + "resource address wins when one is assigned"));

  public static final Whole BATCH_ROWS = new Whole(info("batchRows", SESSION, "1048576", null,
      "rows per GPU dispatch; larger batches are split"),
      1, Integer.MAX_VALUE, "the number of rows per GPU batch, e.g. 1048576");

  public static final Flag COALESCE = new Flag(info("coalesce", SESSION, "true", null,
      "gather consecutive small child batches (Parquet's and ORC's 4,096-row batches, the cache's "
          + "10,000) into one GPU dispatch of up to `batchRows` rows and `batchBytes` bytes; batches of "
          + "`batchRows / 2` rows or `batchBytes / 2` bytes or more are never copied"));

  public static final Choice<PlacementMode> PLACEMENT = new Choice<>(info("placement", SESSION, "adaptive", null,
      "`adaptive`: on each executor, the first batches of a UDF (per set of calls and batch size) run "
          + "on the GPU, each with a bounded slice of its rows (at most 2,048, then at most 5% of the "
          + "batch's GPU time) also timed with `call()` (a GLSL-only UDF: its SPIR-V on the CPU Vulkan "
          + "device, when the executor has one besides its GPU), and later batches go to the faster path, "
          + "re-timed now and then, less often while the GPU is 10x faster (metrics `adaptiveGpuRows`, "
          + "`adaptiveCpuRows`, `adaptiveSwitches`, `cpuRowsAdaptiveTrial`, `cpuRowsAdaptiveChoice`); "
          + "`gpu`: every batch of a call planned for the GPU runs there. Results never depend on it"),
      List.of(new Option<>("adaptive", PlacementMode.ADAPTIVE, "time both paths, use the faster"),
          new Option<>("gpu", PlacementMode.GPU, "always the GPU")), Map.of());

  public static final Size BATCH_BYTES = new Size(info("batchBytes", SESSION, "128m", null,
      "most bytes of rows in one batch vkspark builds or stages, measured, not guessed from the "
          + "types: the rows it turns into columns under the GPU node (`VkRowToColumnar`, in place of "
          + "Spark's `RowToColumnar`, which fills `spark.sql.inMemoryColumnarStorage.batchSize` rows "
          + "however wide), coalesced batches and a batch's GPU arguments. A larger batch is split; a "
          + "row wider than this is a batch of its own, read in place without a copy, and its GPU UDFs "
          + "run with `call()` (see [Where calls stay on the CPU](#where-calls-stay-on-the-cpu)). A "
          + "task's vectors hold about this much, at most twice it"), 1, "128m");

  public static final Flag FUSE_AGGREGATES = new Flag(info("fuseAggregates", SESSION, null, "unset",
      "fold `SUM`, `COUNT`, `MIN`, `MAX` and `AVG` over GPU UDF results (ungrouped, or one "
          + "int/bigint/date key) into Spark's partial aggregation buffers straight from the GPU node's "
          + "columns (`VkGpuAggregate`, see docs/GLSL-SEMANTICS.md). Unset: fuse exactly the aggregates "
          + "the GPU reduces in the UDFs' own submission, ungrouped or grouped by a key whose expression "
          + "bounds it within `.onGpu.keySlots` (`id % 16`, `pmod(f(x), 8)`: computed on the device) "
          + "(see `.onGpu`; on an H200 faster "
          + "than Spark's partial aggregate, and only the partials come back); `true`: fuse whatever "
          + "qualifies, grouped ones too (reduced per key on the GPU while a batch's keys fit "
          + "`.onGpu.keySlots`), folding on the host where the GPU cannot reduce; `false`: never fuse"));

  public static final Flag FUSE_AGGREGATES_ON_GPU = new Flag(info("fuseAggregates.onGpu", SESSION, "true", null,
      "for fused aggregates: compute a fused aggregate whose functions read GPU UDF results "
          + "directly or through exact expressions such as `CASE WHEN isnan(x) THEN 0D ELSE x END` (or "
          + "are `COUNT(*)`), ungrouped or grouped by an int/bigint/date column of the GPU node's "
          + "input or a key the device computes from one column or UDF result (`%` and `pmod` by "
          + "literals, `+ - *` by literals, casts, `floor`), on the GPU, in the UDFs' own submission, so "
          + "only partials come back (per workgroup, "
          + "or per key); integer sums, counts, `MIN`/`MAX` exact, double sums within summation order "
          + "(at most `n * 2^-53 * sum(abs(x))`); not under `verify`, nor for an int/bigint `SUM` under "
          + "ANSI; `false` folds on the host, so with `fuseAggregates` unset nothing is fused "
          + "(docs/GLSL-SEMANTICS.md)"));

  public static final Whole FUSE_AGGREGATES_KEY_SLOTS = new Whole(
      info("fuseAggregates.onGpu.keySlots", SESSION, "64", null,
      "with `fuseAggregates.onGpu`, grouped: the key values (plus one for null keys) a batch may "
          + "span, 1 to 256, to be reduced per key on the GPU; a batch whose keys span more runs its "
          + "UDFs on the GPU and folds its rows on the host"),
      1, ColumnReduction.MAX_SLOTS, "the number of key values one batch may span, e.g. 64,"
          + " or leave it unset");

  public static final Flag FUSE_AGGREGATES_GATHER = new Flag(info("fuseAggregates.gather", SESSION, "true", null,
      "for fused aggregates reduced to a bounded number of rows per partition (ungrouped, or grouped by a "
          + "key whose expression bounds it within `.onGpu.keySlots`): return those rows to the driver as "
          + "task results and compute the final aggregate there (`VkDriverAggregate`), instead of Spark's "
          + "shuffle, second stage and final aggregate; `false` keeps Spark's"));

  public static final Whole CONCURRENT_GPU_TASKS = new Whole(info("concurrentGpuTasks", STATIC, "2", null,
      "tasks of one executor using the device at once"),
      1, Integer.MAX_VALUE, "the number of tasks per executor on the GPU at once, e.g. 2");

  public static final Dir SHADER_CACHE_DIR = new Dir(info("shaderCacheDir", STATIC, "~/.cache/vkspark", null,
      "SPIR-V and Vulkan pipeline cache; `none` turns it off; a leading `~` or `~/` is the user's "
          + "home directory; a session cannot point the driver's writes elsewhere"));

  public static final Flag FALLBACK = new Flag(info("fallback", SESSION, "true", null,
      "run a GPU UDF on the CPU when it cannot run on the GPU; `false` makes that an error"));

  public static final Names FUNCTIONS = new Names(info("functions", STATIC, "", "empty",
      "comma-separated GPU UDF classes registered as SQL functions in every session; a plain Java "
          + "UDF class (`UDF1` .. `UDF22`) is registered too, returning the SQL type of its `call()`'s "
          + "boxed result, and translated like any other plain Java UDF (`translate`)"));

  public static final Flag TRANSLATE = new Flag(info("translate", SESSION, "true", null,
      "translate plain Java UDFs (`UDF1` .. `UDF22`, classes or serializable lambdas, registered "
          + "with `spark.udf().register` or `functions.udf`) and Scala closures (`udf(...)`, "
          + "`spark.udf.register`) from their bytecode into GPU "
          + "kernels; they run as GPU UDFs (verified with `verify=sample` unless `verify` is set), and "
          + "one that does not translate stays in Spark's plan with the reason in EXPLAIN; `false` "
          + "leaves plain Java UDFs and Scala closures to Spark"));

  public static final Names GLSL = new Names(info("glsl", STATIC, "", "empty",
      "comma-separated GLSL files on the driver whose functions become GLSL-only GPU UDFs of "
          + "every session ([PySpark and SQL](#pyspark-and-sql)); read at start"));

  public static final Flag DEFINE_ENABLED = new Flag(info("define.enabled", STATIC, "true", null,
      "whether sessions may define GLSL-only UDFs with `vkspark_define`; `false` on a shared "
          + "server ([Shared servers](#pyspark-and-sql))"));

  public static final Time COMPILE_TIMEOUT = new Time(info("compileTimeout", STATIC, "60s", null,
      "longest shaderc may take to compile one GPU UDF (all its compiles together), on the driver "
          + "and on executors; past it the definition or query fails naming the UDF; `0` for no limit"));

  public static final Size DEVICE_MEMORY_LIMIT = new Size(
      info("deviceMemoryLimit", STATIC, "0", "`0` (the device's own)",
      "most device memory an executor's buffers may hold, e.g. `4g`; when reached, dispatches get "
          + "smaller"), 0, "4g");

  public static final Time KERNEL_TIMEOUT = new Time(info("kernelTimeout", SESSION, "60s", null,
      "longest one GPU dispatch may run (`500ms`, `2min`; a bare number is seconds; `0` for no "
          + "limit); past it the kernel is aborted and the task fails with `TIMEOUT` naming the UDF; a "
          + "session may use at most `kernelTimeout.max`"));

  public static final Time KERNEL_TIMEOUT_MAX = new Time(info("kernelTimeout.max", STATIC, "0", "unset: no cap",
      "most `kernelTimeout` a session may use; a session that sets more (or `0`) is refused, not "
          + "clamped: its next GPU UDF query fails naming both settings; unset in a session, "
          + "`kernelTimeout` is the default or the max, whichever is shorter"));

  public static final Choice<TransferMode> TRANSFERS = new Choice<>(info("transfers", STATIC, "auto", null,
      "`auto`: write inputs straight into device memory where the device allows (ReBAR, unified "
          + "memory); `staged`: always copy through staging buffers"),
      List.of(new Option<>("auto", TransferMode.AUTO, "mapped device memory where the device has it"),
          new Option<>("staged", TransferMode.STAGED, "")), Map.of());

  public static final Choice<MetricsLevel> METRICS_LEVEL = new Choice<>(
      info("metrics.level", SESSION, "essential", null,
      "which `VkGpuEval` metrics the Spark UI shows: `essential` or `debug` (also vkspark "
          + "internals); see [docs/METRICS.md](docs/METRICS.md)"),
      List.of(new Option<>("essential", MetricsLevel.ESSENTIAL, "rows, bytes, times, memory"),
          new Option<>("debug", MetricsLevel.DEBUG, "also vkspark internals")), Map.of());

  public static final Flag VALIDATION = new Flag(info("validation", STATIC, "false", null,
      "Khronos validation layer on the executors' devices (debugging)"));

  public static final Choice<VerifySettings.Mode> VERIFY = new Choice<>(info("verify", SESSION, "off", null,
      "`sample`: re-compute a sample of GPU rows with `call()` and count mismatches (metrics, "
          + "log); `strict`: fail the query at the first mismatch"),
      List.of(new Option<>("off", VerifySettings.Mode.OFF, ""),
          new Option<>("sample", VerifySettings.Mode.SAMPLE, "count and log mismatches"),
          new Option<>("strict", VerifySettings.Mode.STRICT, "fail the query at the first one")),
      Map.of("false", VerifySettings.Mode.OFF));

  public static final Fraction VERIFY_SAMPLE_RATE = new Fraction(info("verify.sampleRate", SESSION, "0.001", null,
      "fraction of each batch's rows that verify checks, at least one row per batch"),
      "the fraction of rows to check, e.g. 0.001 (at least one row per batch is checked)");

  public static final Fraction VERIFY_BUDGET = new Fraction(info("verify.budget", SESSION, "0.02", null,
      "with `verify=sample`: most of a batch's GPU time that re-checking its sample with `call()` may "
          + "take (at least one row a batch is checked, and at most 16 in a task's first check, which measures what "
          + "`call()` costs; the check runs beside the GPU's work, so a fused "
          + "aggregate still reduces on the GPU: its sampled rows' results come back with the reduction, from the "
          + "same dispatch, for a task's first reduced batch, then at doubling intervals while those checks take "
          + "at most this share of the task's reduction time); `1` checks the whole sample"),
      "the share of a batch's GPU time verify may take, e.g. 0.02");

  public static final Flag CACHE_COLUMNAR_OUTPUT = new Flag(info("cache.columnarOutput", SESSION, "true", null,
      "with vkspark's table cache "
          + "(`spark.sql.cache.serializer=io.vkspark.spark.cache.VkCacheSerializer`): scans read cached "
          + "batches as columns, in place; `false` makes them read rows, copied into Spark's row "
          + "format, as Spark does where a plan needs rows"));

  public static final Flag CACHE_DEVICE = new Flag(info("cache.device", SESSION, null, "unset",
      "with vkspark's table cache: GPU UDFs over cached columns read them from a copy in device "
          + "memory, written on first use and then copied on the device, with no host read and no "
          + "PCIe copy per query; the host copy stays the truth and CPU queries read it "
          + "([Caching tables](#caching-tables)). Unset: on for a GPU, off for a CPU Vulkan device "
          + "(lavapipe), whose device memory is the host's; `true` or `false` for every device"));

  public static final Share CACHE_DEVICE_MEMORY = new Share(info("cache.deviceMemory", STATIC, "0.25", null,
      "with `cache.device`: most device memory each executor's cached columns take, a size (`8g`) or "
          + "a fraction of the device's memory; past it the least recently used columns leave the "
          + "device (their host copies stay) and are written again on their next use"), "8g");

  public static final Flag FAST_MATH = new Flag(info("fastMath", SESSION, "false", null,
      "`true` lets the GPU compile GPU UDFs' float arithmetic its own way: fuse `a * b + c` into one "
          + "fused multiply-add (one rounding where Java rounds twice) and, on a device that flushes 32-bit "
          + "subnormal floats (NVIDIA), flush them; faster, but results may differ from `call()` and Spark "
          + "in the last bit ([docs/GLSL-SEMANTICS.md](docs/GLSL-SEMANTICS.md))"));

  /** Every setting, in the README's order. */
  public static final List<Setting<?>> ALL = List.of(
      ENABLED, DEVICE, BATCH_ROWS, COALESCE, PLACEMENT, BATCH_BYTES, FUSE_AGGREGATES, FUSE_AGGREGATES_ON_GPU,
      FUSE_AGGREGATES_KEY_SLOTS, FUSE_AGGREGATES_GATHER, CONCURRENT_GPU_TASKS, SHADER_CACHE_DIR, FALLBACK, FUNCTIONS, TRANSLATE, GLSL, DEFINE_ENABLED,
      COMPILE_TIMEOUT, DEVICE_MEMORY_LIMIT, KERNEL_TIMEOUT, KERNEL_TIMEOUT_MAX, TRANSFERS, METRICS_LEVEL, VALIDATION,
      VERIFY, VERIFY_SAMPLE_RATE, VERIFY_BUDGET, CACHE_COLUMNAR_OUTPUT, CACHE_DEVICE, CACHE_DEVICE_MEMORY, FAST_MATH);

  /** The declaration of {@code key}, or null when vkspark has no such setting. */
  public static Setting<?> of(String key) {
    return BY_KEY.get(key);
  }

  private static final Map<String, Setting<?>> BY_KEY =
      ALL.stream().collect(Collectors.toUnmodifiableMap(Setting::key, s -> s));

  /** A session's settings as a lookup (null for unset); a session sees its SparkContext's values too. */
  public static Function<String, String> lookup(SparkSession session) {
    return k -> session.conf().contains(k) ? session.conf().get(k) : null;
  }

  /** The README's row for {@code s}: key, default, meaning and, last, the scope in parentheses. */
  public static String row(Setting<?> s) {
    return "| `" + s.key() + "` | " + s.info().shown() + " | " + s.info().doc() + " (" + s.info().scope().words()
        + ") |";
  }

  /** The README's rows for every setting, in order. */
  public static String table() {
    return ALL.stream().map(Settings::row).collect(Collectors.joining("\n"));
  }
}
