package io.vkspark.spark.agg;

import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.exec.DeviceReduction;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.VkGpuEvalExec;
import io.vkspark.spark.executor.ExecutorDevice;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.column.reduce.ColumnReduction;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Expression;
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
 * @param filterNote what became of a {@code Filter} under the GPU node, for EXPLAIN: evaluated on the
 *     device ({@link DeviceFilter}), or why it stays in Spark's plan; null when there is none
 */
public record ReducePlacement(GpuReduction reduction, String doubt, String filterNote) implements DeviceReduction {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ReducePlacement.class);

  /** What {@code spark.vkspark.fuseAggregates} asks for. */
  public enum Mode {
    /** Unset (the default): fuse exactly the ungrouped aggregates that will be reduced on the GPU. */
    GPU_REDUCED,
    /** {@code true}: fuse every aggregate the node reproduces, folding on the host where the GPU cannot reduce. */
    ALWAYS,
    /** {@code false}: Spark keeps every partial aggregate. */
    NEVER;

    /** The session's mode; a value other than true or false is an error ({@link Settings#FUSE_AGGREGATES}). */
    static Mode of(SparkSession session) {
      return Settings.FUSE_AGGREGATES.find(Settings.lookup(session)).map(on -> on ? ALWAYS : NEVER).orElse(GPU_REDUCED);
    }
  }

  public ReducePlacement(GpuReduction reduction, String doubt) {
    this(reduction, doubt, null);
  }

  /** Every batch folds on the host. */
  static ReducePlacement host(String why) {
    return new ReducePlacement(null, why);
  }

  /**
   * Without the texts that carry expression ids (the filter's note and printed condition): two copies
   * of one subquery compare equal, so Spark reuses the exchange above them.
   */
  ReducePlacement canonical() {
    GpuReduction r = reduction;
    if (r != null && r.filter() != null) {
      DeviceFilter f = r.filter();
      r = r.withFilter(new DeviceFilter(f.condition().canonicalized(), f.columns(), f.types(), ""));
    }
    return new ReducePlacement(r, doubt, null);
  }

  /** The same placement, with what became of the filter under the GPU node. */
  ReducePlacement withFilterNote(String note) {
    return new ReducePlacement(reduction, doubt, note);
  }

  @Override
  public List<Integer> filterColumns() {
    return reduction == null || reduction.filter() == null ? List.of() : reduction.filter().columns();
  }

  @Override
  public Expression hostFilter() {
    return reduction == null || reduction.filter() == null ? null : reduction.filter().condition();
  }

  /** Whether the executors try the reduction on the GPU. */
  public boolean onGpu() {
    return reduction != null;
  }

  /**
   * The placement of the aggregate {@code spec} fused over {@code eval}, or empty when {@code mode}
   * keeps Spark's partial aggregate: {@link Mode#ALWAYS} fuses whatever qualifies, reducing on the
   * GPU where {@link GpuReduction#plan} accepts it; {@link Mode#GPU_REDUCED} only what the driver
   * can promise reduces on the GPU: ungrouped, or grouped by a key whose expression bounds it within
   * the slots ({@code id % 16}, {@code pmod(f(x), 8)}: {@link GpuReduction#keyBounded}). Not by a
   * column: whether it reduces depends on how many key values each batch spans, which the planner
   * cannot know, and a high-cardinality key would replace Spark's generated hash aggregate with the
   * host fold.
   */
  static Optional<ReducePlacement> fusing(SparkSession session, Mode mode, VkGpuAggregateExec.Spec spec,
                                          VkGpuEvalExec eval, DeviceFilter filter) {
    if (mode == Mode.NEVER) {
      return Optional.empty();
    }
    boolean always = mode == Mode.ALWAYS;
    if (!onGpu(session)) {
      return always ? Optional.of(host(Settings.FUSE_AGGREGATES_ON_GPU.key() + " is false")) : Optional.empty();
    }
    String doubt = doubt(eval);
    if (!always && doubt != null) {
      return Optional.empty();
    }
    // as the node read it when it ran: an invalid keySlots fails a fused aggregate that may reduce on the GPU
    int slots = always || spec.keyOrdinal() >= 0 ? keySlots(session) : ColumnReduction.DEFAULT_SLOTS;
    Optional<GpuReduction.Planned> planned = GpuReduction.plan(spec, eval, slots, filter);
    if (planned.isEmpty()) {
      return always ? Optional.of(host("not every part reduces on the GPU")) : Optional.empty();
    }
    GpuReduction reduction = planned.get().reduction();
    if (doubt == null && reduction.grouped() && !reduction.keyBounded()) {
      doubt = "grouped by a key its expression does not bound within the key slots: a batch whose keys span more"
          + " folds on the host";
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
    return Optional.of(new ReducePlacement(reduction, doubt));
  }

  /** What the driver knows stops a batch from reducing on the GPU, before planning the reduction. */
  private static String doubt(VkGpuEvalExec eval) {
    if (eval.verifySettings().needsRows()) { // sample (a translated UDF's default) checks beside the reduction
      return "verify=strict is on: the rows come back to be re-checked";
    }
    if (eval.calls().isEmpty() || !eval.calls().stream().allMatch(GpuUdfCall::onGpu)) {
      return "a call of the GPU node runs on the CPU";
    }
    return null;
  }

  /** In local mode the planner sees the device: what it lacks for {@code compiled}, or null. */
  private static String localDeviceLacks(ColumnReduction compiled) {
    Optional<ExecutorDevice> gpu = ExecutorDevice.current();
    if (gpu.isEmpty()) {
      return "no device opened in this JVM";
    }
    return compiled.unsupportedOn(gpu.get().device().info()).orElse(null);
  }

  /** {@code fuseAggregates.onGpu}: whether eligible fused aggregates reduce on the GPU (default true). */
  static boolean onGpu(SparkSession session) {
    return Settings.FUSE_AGGREGATES_ON_GPU.get(Settings.lookup(session));
  }

  /** {@code fuseAggregates.onGpu.keySlots}: key values one batch may span for a grouped aggregate to reduce on the GPU. */
  static int keySlots(SparkSession session) {
    return Settings.FUSE_AGGREGATES_KEY_SLOTS.get(Settings.lookup(session));
  }

  @Override
  public int keyOrdinal() {
    return reduction == null ? -1 : reduction.keyOrdinal();
  }

  @Override
  public int slots() {
    return reduction == null ? 0 : reduction.slots();
  }

  /** Grouped, by a column of the GPU node's child or by a key computed from one or from a UDF's result. */
  @Override
  public boolean grouped() {
    return reduction != null && reduction.grouped();
  }

  /**
   * The executor's check, once per task: the reduction runs only when verify is not strict (strict
   * needs every row back; sample checks its rows beside the reduction), every call of the node runs on this executor's GPU, a grouped key's type can be
   * reduced by, and the device has the reduction's features; otherwise every batch of the task
   * folds on the host, with the same results.
   */
  @Override
  public Optional<ColumnReduction> onExecutor(Executor executor) {
    if (reduction == null || executor.verifying() || !executor.allOnGpu()
        || (grouped() && reduction.keyExpr() == null && !ColumnReduction.groupable(executor.keyType()))) {
      return Optional.empty();
    }
    Optional<String> why;
    ColumnReduction built = null;
    try {
      DeviceFilter f = reduction.filter();
      if (f != null && !executor.filterTypes().equals(f.types())) {
        LOG.info("vkspark: fused aggregate folds on the host: the runner takes the filter's columns as {}, not {}",
            executor.filterTypes(), f.types());
        return Optional.empty();
      }
      built = reduction.build(executor.resultTypes(), executor.keyInput(), executor.keyType(), executor.filterInputs());
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
