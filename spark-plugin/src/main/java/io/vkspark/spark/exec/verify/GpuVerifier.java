package io.vkspark.spark.exec.verify;

import io.vkspark.spark.executor.CpuVulkan;
import io.vkspark.spark.shim.Scala;
import io.vkspark.spark.api.Tolerance;
import io.vkspark.spark.conf.VerifySettings;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.spark.conf.Settings;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.call.NodeMetrics;
import io.vkspark.spark.exec.call.VkMetric;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Verify mode of one partition: for each batch, re-computes a few GPU rows of each GPU call with
 * the UDF's {@code call()} and compares within the UDF's {@link Tolerance}. Only rows Spark
 * evaluates the call for are checked (the guard is true: a CASE branch skipped for a row is not
 * run for it here either); a row with a null argument must have a null GPU result. Rows are drawn
 * at random from a seed of the partition and the batch number, so a rerun checks the same rows.
 */
public final class GpuVerifier {
  private static final Logger LOG = LoggerFactory.getLogger(GpuVerifier.class);
  /** What {@link #compare} returns for a row it could not check (a GLSL-only call() without a CPU Vulkan device). */
  private static final String SKIPPED = "skipped";
  private static final AtomicBoolean WARNED_SKIP = new AtomicBoolean();
  /** Rows of a task's first check under {@code sample}, which measures what {@code call()} costs a row. */
  static final int PROBE_ROWS = 16;

  private final VerifySettings settings;
  private final NodeMetrics metrics;
  private final long seed;
  private final Set<String> logged = new HashSet<>();
  private long batch;

  public GpuVerifier(VerifySettings settings, NodeMetrics metrics, long partitionSeed) {
    this.settings = settings;
    this.metrics = metrics;
    this.seed = partitionSeed;
  }

  public boolean on() {
    return settings.on();
  }

  /** Whether every GPU row must come back to be checked ({@code strict}): a fused aggregate then folds on the host. */
  public boolean needsRows() {
    return settings.needsRows();
  }

  /**
   * Rows of a batch of {@code rows} whose GPU run took {@code gpuNanos} to check: the sample rate's
   * share, and under {@code sample} no more than {@code verify.budget} of that time at this task's
   * measured cost of {@code call()} per row; at least one. The task's first check, before that cost
   * is known, takes at most {@link #PROBE_ROWS}: on the H200 a whole first sample of implied
   * volatility (125 rows at about 60 us each) cost each task 8 ms of its critical path (issue 33).
   */
  public int sampleRows(int rows, long gpuNanos) {
    int n = settings.sampleSize(rows);
    if (n == 0 || settings.needsRows() || settings.budget() >= 1) {
      return n;
    }
    if (Double.isNaN(nanosPerRow)) {
      return Math.min(n, PROBE_ROWS);
    }
    return (int) Math.max(1, Math.min(n, (long) (settings.budget() * gpuNanos / Math.max(1, nanosPerRow))));
  }

  /** Checks a sample of batch {@code in}, whose GPU run took {@code gpuNanos}; {@code results[i]} holds call {@code i}'s values. */
  public void check(ColumnarBatch in, int rows, List<GpuUdfCall> calls, ColumnVector[] results, long gpuNanos) {
    check(in, rows, calls, results, sampleRows(rows, gpuNanos));
  }

  /**
   * Rows of a fused aggregate's next batch of {@code rows} to check ({@link #checkReduced}), whose
   * results the GPU reads back beside the reduction, from the same dispatch
   * ({@code BatchRunner.sample()}); 0 when this batch is not checked. The task's first reduced batch
   * is checked, later ones as {@link #sampleWithinBudget} allows.
   */
  public int reducedSample(int rows) {
    if (!sampleWithinBudget()) {
      return 0;
    }
    return Math.min(rows, sampleRows(rows, reducedBatches == 0 ? 0 : reducedNanos / reducedBatches));
  }

  /**
   * Checks a fused aggregate's batch that the GPU reduced in {@code gpuNanos} (its rows never came
   * back): {@code sample} holds the rows {@link #reducedSample} asked for (those an absorbed filter
   * keeps), its columns the batch's, then each call's GPU results as the reduction read them; null
   * when the batch was not sampled. So the aggregate keeps reducing on the GPU under
   * {@code verify=sample}, and a wrong kernel is still caught.
   */
  public void checkReduced(ColumnarBatch sample, List<GpuUdfCall> calls, long gpuNanos) {
    reducedNanos += gpuNanos;
    reducedBatches++;
    if (sample == null) {
      return;
    }
    long t0 = System.nanoTime();
    try {
      ColumnVector[] results = new ColumnVector[calls.size()];
      for (int i = 0; i < results.length; i++) {
        results[i] = sample.column(sample.numCols() - results.length + i);
      }
      check(sample, sample.numRows(), calls, results, sample.numRows());
    } finally {
      sampleNanos += System.nanoTime() - t0;
      nextSample = 2 * reducedBatches;
    }
  }

  /**
   * Whether the next reduced batch is checked: always the task's first; later ones at doubling
   * intervals (batches 1, 2, 4, 8, ...) and only while the checks so far took at most
   * {@code verify.budget} of the task's reduction time, so a task checks O(log batches). The
   * sample's results come back with the batch's own dispatch (a copy of a few rows in its
   * submission); the cost left is {@code call()} on the host. (A sample run as a dispatch of its own
   * cost a submission and a wait behind the other tasks' batches: 17 ms a query on the H200, issue 33.)
   */
  private boolean sampleWithinBudget() {
    // the first batch passes both: nextSample is 0 and no check has taken any time yet
    return settings.budget() >= 1 || (reducedBatches + 1 >= nextSample && sampleNanos <= settings.budget() * reducedNanos);
  }

  /** This task's cost of checking one row with {@code call()} (ns, a moving average; NaN before the first check). */
  private double nanosPerRow = Double.NaN;
  /** This task's reduced batches: their time, the time their samples' checks took, and how many there were. */
  private long reducedNanos;
  private long sampleNanos;
  private long reducedBatches;
  /** The reduced batch (counted from 1) from which the next sample may be checked. */
  private long nextSample;

  /** Checks {@code n} rows of batch {@code in} (all of them when {@code n == rows}). */
  private void check(ColumnarBatch in, int rows, List<GpuUdfCall> calls, ColumnVector[] results, int n) {
    long b = batch++;
    if (n == 0) {
      return;
    }
    long t0 = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + b);
    long checked = 0;
    long mismatches = 0;
    long skipped = 0;
    for (int s = 0; s < n; s++) {
      int r = n == rows ? s : random.nextInt(rows);
      InternalRow row = in.getRow(r);
      for (int i = 0; i < calls.size(); i++) {
        GpuUdfCall c = calls.get(i);
        if (!c.onGpu() || !c.evaluatedFor(row)) {
          continue;
        }
        String problem = compare(c, row, results[i], r);
        if (problem == SKIPPED) {
          skipped++;
          continue;
        }
        checked++;
        if (problem != null) {
          mismatches++;
          report(c, row, problem);
        }
      }
    }
    long spent = System.nanoTime() - t0;
    nanosPerRow = Double.isNaN(nanosPerRow) ? (double) spent / n : 0.7 * nanosPerRow + 0.3 * spent / n;
    metrics.add(VkMetric.VERIFY_TIME, spent);
    metrics.add(VkMetric.VERIFY_ROWS, checked);
    metrics.add(VkMetric.VERIFY_MISMATCHES, mismatches);
    if (skipped > 0) {
      metrics.add(VkMetric.VERIFY_SKIPPED_ROWS, skipped);
    }
  }

  /** Null when the GPU value agrees with call(); otherwise "GPU gave X, call() gave Y". */
  private String compare(GpuUdfCall c, InternalRow row, ColumnVector gpu, int r) {
    boolean nullArg = false;
    for (int a : c.argOrdinals()) {
      nullArg |= a >= 0 && row.isNullAt(a);
    }
    Object gpuValue = gpu.isNullAt(r) ? null : value(gpu, c.resultType(), r);
    Object cpuValue;
    if (nullArg && c.nullStrict()) {
      cpuValue = null;
    } else {
      try {
        // A GLSL-only call() runs on the CPU Vulkan device here: on the GPU it would check the GPU against itself.
        cpuValue = c.glslOnly() ? CpuVulkan.onCpuDevice(() -> c.boundCpu().eval(row)) : c.boundCpu().eval(row);
      } catch (Exception e) { // Spark's UDF error (SparkException) is checked, thrown from Scala
        if (c.glslOnly() && CpuVulkan.isMissing(e)) {
          if (WARNED_SKIP.compareAndSet(false, true)) {
            LOG.warn("vkspark verify: GPU rows of GLSL-only UDFs (here '{}') are not checked: their call() runs their "
                + "SPIR-V on a CPU Vulkan device and this JVM has none (counted in verifySkippedRows). Fix: {}.",
                c.name(), "install Mesa's lavapipe (mesa-vulkan-drivers, libvulkan1) on every executor");
          }
          return SKIPPED;
        }
        if (!(e instanceof RuntimeException)) {
          throw e; // as before: only a RuntimeException of call() is a mismatch
        }
        return "GPU gave " + gpuValue + ", call() threw " + e;
      }
    }
    if (cpuValue == null || gpuValue == null) {
      return cpuValue == gpuValue ? null : "GPU gave " + gpuValue + ", call() gave " + cpuValue;
    }
    boolean agree = switch (c.resultType()) {
      case FLOAT -> tolerance(c).agrees((Float) cpuValue, (Float) gpuValue, true);
      case DOUBLE -> tolerance(c).agrees((Double) cpuValue, (Double) gpuValue, false);
      case BINARY -> Arrays.equals((byte[]) cpuValue, (byte[]) gpuValue);
      default -> cpuValue.equals(gpuValue) || exactWithin(c, cpuValue, gpuValue);
    };
    String tolerance = c.resultType() == SqlType.FLOAT || c.resultType() == SqlType.DOUBLE || tolerance(c).absolute() > 0
        ? " (tolerance " + tolerance(c) + ")" : "";
    return agree ? null : "GPU gave " + gpuValue + ", call() gave " + cpuValue + tolerance;
  }

  /** Integer results compare exactly unless the UDF asks for an absolute tolerance. */
  private boolean exactWithin(GpuUdfCall c, Object cpu, Object gpu) {
    Tolerance t = tolerance(c);
    return cpu instanceof Number x && gpu instanceof Number y && t.absolute() > 0
        && Math.abs(x.doubleValue() - y.doubleValue()) <= t.absolute();
  }

  private Tolerance tolerance(GpuUdfCall c) {
    return c.kind().tolerance();
  }

  private static Object value(ColumnVector v, SqlType t, int r) {
    return switch (t) {
      case INT, DATE -> v.getInt(r);
      case BIGINT, TIMESTAMP -> v.getLong(r);
      case FLOAT -> v.getFloat(r);
      case DOUBLE -> v.getDouble(r);
      case BOOLEAN -> v.getBoolean(r);
      case TINYINT -> v.getByte(r);
      case SMALLINT -> v.getShort(r);
      case DECIMAL -> {
        DecimalType d = (DecimalType) v.dataType();
        yield v.getDecimal(r, d.precision(), d.scale());
      }
      case STRING -> v.getUTF8String(r).clone(); // call() gives a UTF8String: compared byte for byte
      case BINARY -> v.getBinary(r);
      default -> throw new IllegalStateException(t.sqlName() + " is not a result type"); // arrays: arguments only
    };
  }

  private void report(GpuUdfCall c, InternalRow row, String problem) {
    String where = "GPU UDF '" + c.name() + "' disagrees with its call() on the row " + arguments(c, row) + ": " + problem;
    if (settings.mode() == VerifySettings.Mode.STRICT) {
      throw GpuException.of(Code.VERIFY, "vkspark: " + where + ".",
          "make the GLSL body and call() compute the same function (or widen the UDF's tolerance() if the difference "
              + "is rounding); " + Settings.VERIFY.key() + "=sample only counts and logs mismatches.");
    }
    if (logged.add(c.name())) {
      LOG.warn("vkspark verify: {} (further mismatches of this UDF in this task are only counted)", where);
    }
  }

  /** {@code (x=3, y=0)}: the kernel's argument names with this row's values. */
  private static String arguments(GpuUdfCall c, InternalRow row) {
    List<Expression> args = Scala.list(c.boundCpu().children());
    List<String> names = c.kernel().signature().args().stream().map(a -> a.name()).toList();
    List<String> out = new ArrayList<>();
    for (int a = 0; a < args.size(); a++) {
      out.add((a < names.size() ? names.get(a) : "arg" + a) + "=" + args.get(a).eval(row));
    }
    return "(" + String.join(", ", out) + ")";
  }
}
