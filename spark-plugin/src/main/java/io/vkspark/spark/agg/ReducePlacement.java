package io.vkspark.spark.agg;

import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.exec.DeviceReduction;
import io.vkspark.spark.exec.GpuUdfCall;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.executor.ExecutorGpu;
import io.vkspark.spark.plan.GpuPlanner;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.ColumnReduction;
import java.util.Locale;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a fused aggregate is reduced: on the GPU, in the UDFs' own submission, or folded on the host.
 * The one decision for it, so that the planner rule, the aggregate node and the iterator cannot
 * disagree: made once on the driver when the rule fuses ({@link #fusing}: the reduction planned
 * once and carried to the executors inside the node), and checked once per task on the executor
 * ({@link #onExecutor}: verify, every call on its GPU, the device's features). The only later
 * change is per batch and documented: a grouped batch whose keys span more values than the key
 * slots folds on the host ({@code ReductionStep} in {@code exec}).
 *
 * <p>It also reads the {@code spark.vkspark.fuseAggregates*} settings, in one place.
 *
 * @param reduction what the executors reduce on the GPU; null: every batch folds on the host
 * @param doubt why the driver cannot promise that every batch reduces on the GPU (null: it can);
 *     the default {@code fuseAggregates} fuses only what it can promise
 */
public record ReducePlacement(GpuReduction reduction, String doubt) implements DeviceReduction {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ReducePlacement.class);

  /** {@code spark.vkspark.fuseAggregates}: see {@link Mode}. */
  public static final String FUSE = VkConf.PREFIX + "fuseAggregates";
  /** {@code spark.vkspark.fuseAggregates.onGpu}: reduce eligible fused aggregates on the GPU (default true). */
  public static final String ON_GPU = FUSE + ".onGpu";
  /**
   * {@code spark.vkspark.fuseAggregates.onGpu.keySlots}: key values (and null) one batch may span
   * for a grouped aggregate to be reduced on the GPU, 1 to 256 (default 64); a batch spanning more
   * folds on the host.
   */
  public static final String KEY_SLOTS = ON_GPU + ".keySlots";

  /** What {@code spark.vkspark.fuseAggregates} asks for. */
  public enum Mode {
    /** Unset (the default): fuse exactly the ungrouped aggregates that will be reduced on the GPU. */
    GPU_REDUCED,
    /** {@code true}: fuse every aggregate the node reproduces, folding on the host where the GPU cannot reduce. */
    ALWAYS,
    /** {@code false}: Spark keeps every partial aggregate. */
    NEVER;

    /** The session's mode; a value other than true or false is an error. */
    static Mode of(SparkSession session) {
      if (!session.conf().contains(FUSE)) {
        return GPU_REDUCED;
      }
      String v = session.conf().get(FUSE);
      return switch (v.trim().toLowerCase(Locale.ROOT)) {
        case "true" -> ALWAYS;
        case "false" -> NEVER;
        default -> throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
            FUSE + " is '" + v + "', not a boolean.", "set " + FUSE + " to true (fuse whenever possible), false "
                + "(never), or leave it unset (fuse where the GPU reduces the aggregate).");
      };
    }
  }

  /** Every batch folds on the host. */
  static ReducePlacement host(String why) {
    return new ReducePlacement(null, why);
  }

  /** Whether the executors try the reduction on the GPU. */
  public boolean onGpu() {
    return reduction != null;
  }

  /**
   * The placement of the aggregate {@code spec} fused over {@code eval}, or empty when {@code mode}
   * keeps Spark's partial aggregate: {@link Mode#ALWAYS} fuses whatever qualifies, reducing on the
   * GPU where {@link GpuReduction#plan} accepts it; {@link Mode#GPU_REDUCED} only what the driver
   * can promise reduces on the GPU. Ungrouped only, for the promise: whether a grouped one reduces
   * depends on how many key values each batch spans, which the planner cannot know, and a
   * high-cardinality key would replace Spark's generated hash aggregate with the host fold.
   */
  static Optional<ReducePlacement> fusing(SparkSession session, Mode mode, VkGpuAggregateExec.Spec spec,
                                          VkGpuEvalExec eval) {
    if (mode == Mode.NEVER) {
      return Optional.empty();
    }
    boolean always = mode == Mode.ALWAYS;
    if (!onGpu(session)) {
      return always ? Optional.of(host(ON_GPU + " is false")) : Optional.empty();
    }
    String doubt = doubt(session, spec, eval);
    if (!always && doubt != null) {
      return Optional.empty();
    }
    // as the node read it when it ran: an invalid keySlots fails a fused aggregate that may reduce on the GPU
    int slots = always ? keySlots(session) : ColumnReduction.DEFAULT_SLOTS;
    Optional<GpuReduction.Planned> planned = GpuReduction.plan(spec, eval, slots);
    if (planned.isEmpty()) {
      return always ? Optional.of(host("not every part reduces on the GPU")) : Optional.empty();
    }
    if (doubt == null && session.sparkContext().isLocal()) {
      doubt = localDeviceLacks(planned.get().compiled());
    }
    if (!always) {
      if (doubt != null) {
        return Optional.empty();
      }
      keySlots(session);
    }
    return Optional.of(new ReducePlacement(planned.get().reduction(), doubt));
  }

  /** What the driver knows stops a batch from reducing on the GPU, before planning the reduction. */
  private static String doubt(SparkSession session, VkGpuAggregateExec.Spec spec, VkGpuEvalExec eval) {
    if (spec.keyOrdinal() >= 0) {
      return "grouped: a batch whose keys span more than the key slots folds on the host";
    }
    if (GpuPlanner.conf(session).verify().on()) {
      return "verify is on: the rows come back to be re-checked";
    }
    if (eval.calls().isEmpty() || !eval.calls().stream().allMatch(GpuUdfCall::onGpu)) {
      return "a call of the GPU node runs on the CPU";
    }
    return null;
  }

  /** In local mode the planner sees the device: what it lacks for {@code compiled}, or null. */
  private static String localDeviceLacks(ColumnReduction compiled) {
    Optional<ExecutorGpu> gpu = ExecutorGpu.current();
    if (gpu.isEmpty()) {
      return "no device opened in this JVM";
    }
    return compiled.unsupportedOn(gpu.get().device().info()).orElse(null);
  }

  /** {@code fuseAggregates.onGpu}: whether eligible fused aggregates reduce on the GPU (default true). */
  static boolean onGpu(SparkSession session) {
    return Boolean.parseBoolean(session.conf().get(ON_GPU, "true").trim());
  }

  /** {@code fuseAggregates.onGpu.keySlots}: key values one batch may span for a grouped aggregate to reduce on the GPU. */
  static int keySlots(SparkSession session) {
    String v = session.conf().contains(KEY_SLOTS) ? session.conf().get(KEY_SLOTS) : null;
    int slots;
    try {
      slots = v == null ? ColumnReduction.DEFAULT_SLOTS : Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      slots = -1;
    }
    if (slots < 1 || slots > ColumnReduction.MAX_SLOTS) {
      throw GpuException.of(GpuException.Code.INVALID_ARGUMENT, KEY_SLOTS + " is '" + v
          + "', not a number of key slots from 1 to " + ColumnReduction.MAX_SLOTS + ".",
          "set it to e.g. " + ColumnReduction.DEFAULT_SLOTS + ", or leave it unset.");
    }
    return slots;
  }

  @Override
  public int keyOrdinal() {
    return reduction == null ? -1 : reduction.keyOrdinal();
  }

  @Override
  public int slots() {
    return reduction == null ? 0 : reduction.slots();
  }

  /**
   * The executor's check, once per task: the reduction runs only when verify is off (verify needs
   * the rows), every call of the node runs on this executor's GPU, a grouped key's type can be
   * reduced by, and the device has the reduction's features; otherwise every batch of the task
   * folds on the host, with the same results.
   */
  @Override
  public Optional<ColumnReduction> onExecutor(Executor executor) {
    if (reduction == null || executor.verifying() || !executor.allOnGpu()
        || (grouped() && !ColumnReduction.groupable(executor.keyType()))) {
      return Optional.empty();
    }
    Optional<String> why;
    ColumnReduction built = null;
    try {
      built = reduction.build(executor.resultTypes(), executor.keyInput(), executor.keyType());
      why = built.unsupportedOn(executor.device());
    } catch (GpuException e) { // e.g. a grouped shader past the compiler's size limit
      why = Optional.of(e.getMessage());
    }
    if (why.isPresent()) {
      LOG.info("vkspark: fused aggregate folds on the host: {}", why.get());
      return Optional.empty();
    }
    return Optional.of(built);
  }
}
