package io.vkspark.spark.exec.call;

import io.vkspark.spark.conf.VkConf;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.spark.conf.Settings;
import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Where one GPU UDF call runs and why: the single answer that the planner ({@code GpuPlanner}), the
 * executor ({@code GpuEvalIterator}) and the tagging of calls left in Spark's operators
 * ({@code InsertGpuEval}) give. EXPLAIN, the plan node, logs and {@code spark.vkspark.fallback=false}
 * errors all render it here, so each reason is worded once, in {@link Cause}.
 *
 * @param where the device the call's rows are computed on
 * @param cause why it runs on the CPU; null exactly when {@code where} is GPU
 * @param details the values the cause's text names (a device error, a type, an operator)
 * @param by where the decision was made
 * @param adaptive on the GPU, but each executor may send a batch to the CPU when the CPU measures
 *     faster ({@code spark.vkspark.placement=adaptive}, {@code AdaptivePlacement}); false on the CPU
 */
public record Placement(Where where, Cause cause, List<String> details, DecidedBy by, boolean adaptive)
    implements Serializable {

  /** The device a call's rows are computed on. */
  public enum Where { GPU, CPU }

  /** Where the decision was made. */
  public enum DecidedBy {
    /** On the driver, planning the query ({@code GpuPlanner#decide}). */
    PLANNER,
    /** On the executor, when a task starts or a batch fails on the GPU ({@code GpuEvalIterator}). */
    EXECUTOR,
    /** On the driver, for calls the planner left in Spark's operators ({@code InsertGpuEval}). */
    LEFTOVERS
  }

  private static final String IN_A_SUBQUERY = "compute it in a SELECT or WHERE first (a subquery)";
  private static final String INSTALL_DRIVER =
      "install a Vulkan driver on the executors (Debian: apt-get install libvulkan1 mesa-vulkan-drivers)";

  /**
   * Why a call runs on the CPU, with its wording ({@code %s} are the placement's details) and what
   * the user can change. {@link #inNode()}: the GPU node evaluates the call with {@code call()};
   * otherwise the call stays in Spark's own operator.
   */
  public enum Cause {
    NO_DEVICE_WHEN_PLANNING(true, "no Vulkan device could be opened (%s)",
        INSTALL_DRIVER + " or correct " + Settings.DEVICE.key()),
    NO_PLUGIN(true, "no Vulkan device is open in this JVM (is spark.plugins=io.vkspark.spark.VkSparkPlugin set?)",
        "set spark.plugins=io.vkspark.spark.VkSparkPlugin"),
    NO_DEVICE_ON_EXECUTOR(true, "executor %s has no Vulkan device (%s)", INSTALL_DRIVER),
    FEATURE_MISSING(true, "%s", "run it on a device that has the feature, or avoid that type"),
    RESULT_TYPE_DIFFERS(false, "it is registered as returning %s but its kernel returns %s",
        "register it with the kernel's result type"),
    ARGUMENT_TYPE_DIFFERS(false, "argument %s (%s) is %s, not %s", "cast the argument to the kernel's type"),
    LAMBDA(false, "it is inside a lambda function or a try_* function (its arguments read the lambda's variables, "
        + "or its errors are caught)", IN_A_SUBQUERY),
    CONDITIONAL(false, "it sits in a branch of CASE, IF, COALESCE, AND or OR with arguments or a condition that "
        + "cannot be re-evaluated (non-deterministic, or a subquery), which must not run for rows the condition skips",
        IN_A_SUBQUERY),
    UNPLANNED_OPERATOR(false, "it is inside %s, which vkspark does not plan on the GPU", IN_A_SUBQUERY + " there"),
    DISABLED(false, Settings.ENABLED.key() + " is false", "set " + Settings.ENABLED.key() + "=true"),
    /**
     * A plain Java UDF (not a GPU UDF) whose {@code call()} does not translate to a GPU kernel, or
     * whose translation does not fit the call: it stays Spark's, and is never an error.
     */
    NOT_TRANSLATED(false, "it does not translate to the GPU: %s",
        "keep call() to arithmetic, Math calls, branches, loops and static helpers of its class, or implement "
            + "io.vkspark.spark.api.GpuUdf with a GLSL body"),
    LOOP_LIMIT(true, "the device's loop limit cut its loops short in a batch, which is recomputed with call() (%s)",
        "keep the UDF's loops short"),
    // ---- per batch: why one batch's GPU calls ran with call() (BatchRouter; each has a cpuRows* metric) ----
    /** A bounded slice of a batch timed with {@code call()} for adaptive placement; the GPU computes the batch too. */
    ADAPTIVE_TRIAL(true, "adaptive placement timed a slice of the batch with call() (%s)",
        "set " + Settings.PLACEMENT.key() + "=gpu to time nothing on the CPU"),
    /** Adaptive placement measured {@code call()} faster for batches of this shape. */
    ADAPTIVE_CHOICE(true, "adaptive placement measured call() faster for batches of this size (%s)",
        "set " + Settings.PLACEMENT.key() + "=gpu to keep every batch on the GPU"),
    /** A translated UDF whose {@code call()} may return a value for a null argument met one. */
    NULL_ARGUMENTS(true, "a translated UDF whose call() may return a value for a null argument met a null argument",
        "return null for a null argument in call(), or filter the nulls out before the call"),
    /** A row's arguments are wider than one GPU batch may stage. */
    WIDE_ROW(true, "a row holds %s bytes of arguments of GPU UDF(s) %s, more than the %s bytes one GPU batch may stage",
        "keep the values below that, or raise " + Settings.BATCH_BYTES.key() + " if it is below that"),
    /** A translated UDF's row threw or returned null on the GPU: {@code call()} gives Spark's exception or null. */
    RECOMPUTE(true, "a row threw or returned null in the translated kernel, so call() recomputes its batch (%s)",
        "none needed: the results are Spark's; keep exceptions and nulls rare for speed"),
    /** The GPU run failed in a way {@code call()} can answer (a decimal overflow under ANSI). */
    GPU_FAILURE(true, "the GPU run of the batch failed (%s), so call() recomputes it",
        "see the error; " + Settings.FALLBACK.key() + "=false makes the failure the task's"),
    /**
     * Single rows the kernel handed to {@code call()} (a string it computes only as ASCII was not, a
     * string result that is not well-formed UTF-8, or the body's {@code vk_to_cpu()}); the rest of
     * the batch keeps the GPU's results.
     */
    HANDED_BACK(true, "the kernel handed single rows to call() (a string it computes exactly only as ASCII was not, "
        + "or its body asked: %s)", "none needed: the results are Spark's; the handedBack* metrics say why per row"),
    /**
     * A grouped batch's keys span more values than the reduction's slots: its UDFs still run on the
     * GPU, its rows are read back and folded on the host. No row runs with {@code call()}.
     */
    KEYS_TOO_WIDE(true, "a batch's grouping keys span more than %s values, so its rows are folded on the host",
        "raise spark.vkspark.fuseAggregates.onGpu.keySlots");

    private final boolean inNode;
    private final String text;
    private final String fix;

    Cause(boolean inNode, String text, String fix) {
      this.inNode = inNode;
      this.text = text;
      this.fix = fix;
    }

    /** What the user can change, as the error's and the log's {@code Fix:} says it. */
    public String fix() {
      return fix;
    }

    /** Whether the GPU node runs the call on the CPU (true) or Spark's operator keeps it (false). */
    boolean inNode() {
      return inNode;
    }
  }

  public Placement {
    Objects.requireNonNull(where, "where");
    Objects.requireNonNull(by, "by");
    details = List.copyOf(details);
    if ((where == Where.GPU) != (cause == null)) {
      throw new IllegalArgumentException("a call on the GPU has no cause, one on the CPU has one: " + where + ", " + cause);
    }
    if (adaptive && where != Where.GPU) {
      throw new IllegalArgumentException("only a call on the GPU is placed adaptively: " + cause);
    }
  }

  /** Not adaptive: always where it says. */
  public Placement(Where where, Cause cause, List<String> details, DecidedBy by) {
    this(where, cause, details, by, false);
  }

  /** This GPU placement, with each batch free to run on the CPU when the CPU measures faster. */
  public Placement adaptively() {
    return new Placement(where, cause, details, by, true);
  }

  /** On the GPU. */
  public static Placement gpu(DecidedBy by) {
    return new Placement(Where.GPU, null, List.of(), by);
  }

  /** On the CPU for {@code cause}, whose text names {@code details}. */
  public static Placement cpu(Cause cause, DecidedBy by, Object... details) {
    return new Placement(Where.CPU, Objects.requireNonNull(cause, "cause"),
        Arrays.stream(details).map(Placement::detail).toList(), by);
  }


  public boolean onGpu() {
    return where == Where.GPU;
  }

  /** Whether Spark's own operator keeps the call (no GPU node computes it). */
  public boolean leftToSpark() {
    return cause != null && !cause.inNode();
  }

  /** Why a batch runs on the CPU, worded as EXPLAIN and the logs word a call's reason. */
  public static String reason(Cause cause, Object... details) {
    return cpu(cause, DecidedBy.EXECUTOR, details).reason();
  }

  /** Why it runs on the CPU, e.g. {@code "it is inside Sort, which vkspark does not plan on the GPU"}; empty on the GPU. */
  public String reason() {
    return cause == null ? "" : String.format(Locale.ROOT, cause.text, details.toArray());
  }

  /**
   * {@code "on GPU"}, {@code "on GPU (adaptive: GPU or call() per batch, timed)"} or
   * {@code "on CPU because <reason>"}, as EXPLAIN prints after a call.
   */
  public String render() {
    return onGpu() ? "on GPU" + (adaptive ? ADAPTIVE : "") : "on CPU because " + reason();
  }

  /** What EXPLAIN adds after "on GPU" for an adaptive placement. */
  static final String ADAPTIVE = " (adaptive: GPU or call() per batch, timed)";

  /** {@code "<name> runs on CPU because <reason>"}, for EXPLAIN's lines about calls without a node, and logs. */
  public String describe(String name) {
    return name + " runs " + render();
  }

  /** The error for {@code spark.vkspark.fallback=false}: the call cannot run on the GPU, and why. */
  GpuException error(String name) {
    return GpuException.of(Code.UNSUPPORTED, "vkspark: GPU UDF '" + name + "' cannot run on the GPU because " + reason(),
        cause.fix + ", or set " + Settings.FALLBACK.key() + "=true to run it on the CPU.");
  }

  /**
   * This placement, or {@link #error} when it is on the CPU and fallback is off (disabled, and a
   * plain Java UDF that does not translate, are never errors).
   */
  public Placement strict(VkConf conf, String name) {
    if (!onGpu() && cause != Cause.DISABLED && cause != Cause.NOT_TRANSLATED && !conf.fallback()) {
      throw error(name);
    }
    return this;
  }

  /** A detail as a sentence part: a GpuException's {@link GpuException#what()}, without a final period. */
  private static String detail(Object d) {
    String s = d instanceof GpuException e ? e.what() : String.valueOf(d);
    return s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
  }
}
