package io.vkspark.spark.exec;

import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.executor.ExecutorDevice;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.exec.call.VkMetric;
import io.vkspark.spark.exec.verify.GpuVerifier;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides the route of each batch of one task's GPU calls ({@link BatchRoute}), in one place:
 * adaptive placement's choice and its trial slices, rows too wide to stage, null arguments of a
 * translated UDF whose {@code call()} handles them, a fused aggregate's tiers (append straight to
 * the GPU, reduce on the GPU, or evaluate and fold on the host) and where a failed GPU run goes
 * next. The iterator only gathers, asks, runs and outputs.
 */
final class BatchRouter {
  private static final Logger LOG = LoggerFactory.getLogger(BatchRouter.class);

  private final List<GpuUdfCall> calls;
  private final GpuBatchStep gpu;
  /** A fused aggregate's reduction (null: a plain GPU node). */
  private final ReductionStep reduction;
  /** Adaptive placement's side of the task (null: every batch on the GPU). */
  private final AdaptiveStep adaptive;
  private final VkConf conf;
  private final GpuVerifier verifier;
  /**
   * Per call: a translated Java UDF on the GPU whose {@code call()} may return a value for a null
   * argument and whose kernel skips rows with a null argument (no null-aware kernel), so a batch
   * with one runs that call with {@code call()} ({@link #nullArgumentCalls}).
   */
  private final boolean[] lenient;
  /** {@link #appends()}, decided on the task's first coalesced batch (null before). */
  private Boolean appends;
  private boolean wideLogged;

  BatchRouter(List<GpuUdfCall> calls, GpuBatchStep gpu, ReductionStep reduction, AdaptiveStep adaptive, VkConf conf,
              GpuVerifier verifier) {
    this.calls = calls;
    this.gpu = gpu;
    this.reduction = reduction;
    this.adaptive = adaptive;
    this.conf = conf;
    this.verifier = verifier;
    this.lenient = new boolean[calls.size()];
    for (int i = 0; i < calls.size(); i++) {
      lenient[i] = calls.get(i).onGpu() && !calls.get(i).nullStrict() && !calls.get(i).nullsOnDevice();
    }
  }

  /** The node's calls as placed on this executor: those planned for the GPU fall back here when it has no device for them. */
  static List<GpuUdfCall> placeOnExecutor(List<GpuUdfCall> planned, ExecutorDevice device, VkConf conf, String executor) {
    if (planned.stream().noneMatch(GpuUdfCall::onGpu)) {
      return planned;
    }
    List<GpuUdfCall> out = new ArrayList<>();
    for (GpuUdfCall c : planned) {
      Placement p = !c.onGpu() ? c.placement() : c.translated() ? onThisExecutor(c, device, executor)
          : onThisExecutor(c, device, executor).strict(conf, c.name()); // Spark would run a plain Java UDF anyway
      if (c.onGpu() && !p.onGpu()) {
        LOG.warn("vkspark: {} (decided on executor {})", p.describe(c.name()), executor);
        c = c.placed(p);
      }
      out.add(c);
    }
    return out;
  }

  /** Where a call planned for the GPU runs on this executor: on its device, if it has one with the kernel's features. */
  private static Placement onThisExecutor(GpuUdfCall c, ExecutorDevice gpu, String executor) {
    if (gpu == null) {
      return Placement.cpu(Placement.Cause.NO_DEVICE_ON_EXECUTOR, Placement.DecidedBy.EXECUTOR, executor,
          ExecutorDevice.unavailableReason().orElse("not opened"));
    }
    return c.kernel().unsupportedOn(gpu.device().info())
        .map(missing -> Placement.cpu(Placement.Cause.FEATURE_MISSING, Placement.DecidedBy.EXECUTOR, missing))
        .orElse(c.placement());
  }

  /** The route a batch starts on, and adaptive placement's timing of it (null when not timed). */
  record Start(BatchRoute route, AdaptiveStep.Batch timing) {}

  /**
   * Whether verify needs a reducing task's rows read back: {@code strict}, or a sample whose calls'
   * results cannot come back beside the reduction ({@link ReductionStep#samples}).
   */
  private boolean verifyNeedsRows() {
    return verifier.needsRows() || (verifier.on() && !reduction.samples());
  }

  /**
   * The route of the batch that begins with child batch {@code first}: decided before more child
   * batches are gathered, since a batch for {@code call()} is never coalesced and one appended to
   * the GPU is never staged on the host.
   *
   * @param reducing the batch is a fused aggregate's
   * @param coalesces {@code first} is small enough to be gathered with the next ones
   */
  Start start(ColumnarBatch first, boolean reducing, boolean coalesces) {
    if (gpu.calls().isEmpty()) {
      return new Start(BatchRoute.GPU, null); // nothing to route: every call is placed on the CPU
    }
    if (wide(first)) {
      return new Start(new BatchRoute.Cpu(Placement.Cause.WIDE_ROW), null);
    }
    AdaptiveStep.Batch timing = adaptive == null || first.numRows() == 0 ? null : adaptive.begin(reducing, first.numRows());
    if (timing != null && timing.path() == AdaptivePlacement.Path.CPU) {
      return new Start(new BatchRoute.Cpu(Placement.Cause.ADAPTIVE_CHOICE), timing);
    }
    if (!reducing || reduction == null || !reduction.reduces(verifyNeedsRows(), calls.size())) {
      return new Start(BatchRoute.GPU, timing);
    }
    return new Start(coalesces && appends() ? BatchRoute.GPU_APPEND : BatchRoute.GPU_REDUCE, timing);
  }

  /**
   * Whether the batch that begins with child batch {@code first}, on {@code start}'s route, gathers
   * the next small child batches ({@code small}: {@code first} fits a coalesced batch). A batch for
   * {@code call()} is never coalesced. Nor is one whose columns the GPU reads from their device
   * copies ({@link GpuBatchStep#readsDeviceCopies}) unless it is appended to the GPU, where each
   * child batch's cached columns are copied on the device behind the rows before them: a host copy
   * would be no cached column, so every value would be uploaded again, every query.
   */
  boolean gathers(Start start, ColumnarBatch first, boolean small) {
    if (!small || start.route() instanceof BatchRoute.Cpu) {
      return false;
    }
    return start.route() instanceof BatchRoute.GpuAppend || !gpu.readsDeviceCopies(first);
  }

  /**
   * The route of the gathered batch {@code in} that started on {@code route}: a fused aggregate's
   * batch with a null argument of a {@link #lenient} call is evaluated (its rows go to the host),
   * not reduced.
   */
  BatchRoute gathered(BatchRoute route, ColumnarBatch in) {
    return route instanceof BatchRoute.GpuReduce && nullArgumentCalls(in, in.numRows()) != null ? BatchRoute.GPU : route;
  }

  /** Where the batch goes after its GPU run asked for a recompute: keys too wide on the GPU with rows read back, else {@code call()}. */
  BatchRoute after(GpuOutcome.Recompute<?> r) {
    return r.cause() == Placement.Cause.KEYS_TOO_WIDE ? BatchRoute.GPU : new BatchRoute.Cpu(r.cause());
  }

  /**
   * The calls that {@code call()} computes after a GPU run of {@code in}: the {@link #lenient} ones
   * with a null argument in its first {@code rows} rows ({@link Placement.Cause#NULL_ARGUMENTS});
   * null when none.
   */
  boolean[] nullArgumentCalls(ColumnarBatch in, int rows) {
    boolean[] out = null;
    for (int i = 0; i < calls.size(); i++) {
      if (lenient[i] && hasNullArgument(calls.get(i), in, rows)) {
        out = out == null ? new boolean[calls.size()] : out;
        out[i] = true;
      }
    }
    return out;
  }

  private static boolean hasNullArgument(GpuUdfCall c, ColumnarBatch in, int rows) {
    for (int a : c.argOrdinals()) {
      if (a < 0) {
        continue; // a constant, never null
      }
      ColumnVector v = in.column(a);
      if (v.hasNull() && v.numNulls() > 0) {
        if (rows == in.numRows()) {
          return true;
        }
        for (int r = 0; r < rows; r++) {
          if (v.isNullAt(r)) {
            return true;
          }
        }
      }
    }
    return false;
  }

  /**
   * Whether small child batches go straight to the GPU with no host copy: a fused aggregate whose
   * every batch this task reduces on the GPU, ungrouped (nothing on the host reads its rows),
   * verify off (a sample is read from the host batch), every call on the GPU, and no GPU run that could hand a batch back to be recomputed
   * with {@code call()} over rows the child has since overwritten. Decided once per task.
   */
  private boolean appends() {
    if (appends == null) {
      appends = !verifier.on() && gpu.calls().size() == calls.size() && gpu.neverRecomputes() && !reduction.grouped();
    }
    return appends;
  }

  /**
   * Whether {@code in} has a row wider than {@link GpuBatchStep#rowLimit()}: such a batch is never
   * staged, its GPU calls run with {@code call()}; without fallback, or for a GLSL-only UDF (it has
   * no {@code call()}), the task fails with SIZE before anything is allocated for it.
   */
  private boolean wide(ColumnarBatch in) {
    long widest = gpu.widestRow(in, in.numRows());
    long limit = gpu.rowLimit();
    if (widest <= limit) {
      return false;
    }
    String names = String.join(", ", gpu.calls().stream().map(GpuUdfCall::name).toList());
    String what = Placement.reason(Placement.Cause.WIDE_ROW, widest, names, limit);
    boolean glsl = gpu.calls().stream().anyMatch(GpuUdfCall::glslOnly);
    if (!conf.fallback() || glsl) {
      throw GpuException.of(Code.SIZE, what + " (" + Settings.BATCH_BYTES.key() + " is " + conf.batchBytes()
          + ", and one dispatch stages at most " + BatchRunner.MAX_VAR_ELEMENTS + " per argument).",
          glsl ? "keep the values passed to GLSL-only UDFs below " + limit + " bytes per row (a GLSL-only UDF has "
              + "no call() to run such rows on the CPU), or raise " + Settings.BATCH_BYTES.key() + " if it is below that."
              : "set " + Settings.FALLBACK.key() + "=true to run such rows with the UDF's call() on the CPU, keep the "
              + "values below " + limit + " bytes per row, or raise " + Settings.BATCH_BYTES.key() + " if it is below that.");
    }
    if (!wideLogged) {
      wideLogged = true;
      LOG.warn("vkspark: {}: its batch runs with call() on the CPU (cause {}, counted in {})", what,
          Placement.Cause.WIDE_ROW, VkMetric.cpuRows(Placement.Cause.WIDE_ROW).key());
    }
    return true;
  }
}
