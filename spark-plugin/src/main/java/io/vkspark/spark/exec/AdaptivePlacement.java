package io.vkspark.spark.exec;

import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.exec.call.VkMetric;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the GPU calls of a batch run under {@code spark.vkspark.placement=adaptive}: the executor
 * measures instead of guessing. Per {@link Shape} (the node's GPU calls and a power-of-two bucket of
 * the batch's rows), the first {@link #TRIALS} batches run on the GPU, each with a bounded slice of
 * its rows also timed with {@code call()} (or a GLSL-only UDF's SPIR-V on the CPU Vulkan device),
 * per row, in the task that ran them, under the executor's real concurrency; later batches go to
 * the faster path. A slice is at most {@link #TRIAL_ROWS} rows, and once both paths are timed, only
 * as many as cost {@link #TRIAL_BUDGET} of the batch's GPU time, so a UDF that costs 400 ns a row on
 * the CPU never holds a task for a whole batch (issue 33: whole-batch trials made every other query
 * of a sweep 5 to 10 times slower). Every {@link #RECHECK_BATCHES} batches, or after
 * {@link #RECHECK_NANOS}, the other path is timed once more: a slice while the GPU has the
 * batches, a whole GPU batch while the CPU has them. While the GPU measures
 * {@link #BACKOFF_GAP} times faster or more, each re-check that confirms it doubles the interval
 * (up to {@link #MAX_BACKOFF} times).
 *
 * <p>One instance per JVM ({@link #shared()}), shared by the executor's concurrent tasks: each shape's
 * state is guarded by its own lock, and the only cost per batch is two {@code System.nanoTime} calls.
 * Results never depend on the choice: the GPU and {@code call()} compute the same rows.
 *
 * <p>A path's estimate is the median of its last {@link #WINDOW} timed batches, so that one slow
 * batch (the first of a task pays for pipelines, buffers and the JIT; a GC; a core busy with another
 * task) moves nothing; a re-check replaces the other path's stale timings with its new one. The
 * CPU takes over only when it is {@link #MARGIN} faster: ties stay on the GPU.
 */
public final class AdaptivePlacement {
  private static final Logger LOG = LoggerFactory.getLogger(AdaptivePlacement.class);

  /** Timed batches per path before a shape's first decision. */
  static final int TRIALS = 3;
  /** Batches on the chosen path after which the other path is timed once more (before any back-off). */
  static final int RECHECK_BATCHES = 64;
  /** Time after which the other path is timed once more, whatever the batch count (10 s, before any back-off). */
  static final long RECHECK_NANOS = 10_000_000_000L;
  /** How much faster the CPU must be to take batches from the GPU (and the GPU to take them back). */
  static final double MARGIN = 0.9;
  /** Timings per path whose median is its estimate. */
  static final int WINDOW = 5;
  /** Shapes one JVM remembers; past it, every shape is forgotten and timed again. */
  static final int MAX_SHAPES = 4096;
  /** Most rows of a batch timed with {@code call()} in a trial or re-check (the first trials take this many). */
  static final int TRIAL_ROWS = 2048;
  /** Fewest rows a slice times (fewer when the batch has fewer): below it, the clock's noise decides. */
  static final int MIN_TRIAL_ROWS = 128;
  /** A slice's share of its batch's GPU time, once both paths are timed. */
  static final double TRIAL_BUDGET = 0.05;
  /** How many times faster the GPU must measure for its re-checks to back off. */
  static final double BACKOFF_GAP = 10;
  /** Most times the re-check interval doubles (64 batches and 10 s become 4,096 batches and 640 s). */
  static final int MAX_BACKOFF = 6;

  private static final AdaptivePlacement SHARED = new AdaptivePlacement(System::nanoTime);

  /** The two paths a batch of GPU calls can take. */
  public enum Path { GPU, CPU }

  /**
   * What is timed: the node's GPU calls (kernel ids, which name the UDF and its argument types), what
   * the GPU path does with them (evaluate, or also reduce for a fused aggregate) and the rows of the
   * batch rounded up to a power of two.
   */
  public record Shape(String calls, boolean reducing, int rowsBucket) {
    /** The shape of a batch of {@code rows} rows. */
    public static Shape of(String calls, boolean reducing, int rows) {
      return new Shape(calls, reducing, bucket(rows));
    }

    /** The power of two at or above {@code rows} (1 for 0 or 1 rows). */
    static int bucket(int rows) {
      return rows <= 1 ? 1 : Integer.highestOneBit(rows - 1) << 1;
    }
  }

  /**
   * The path for one batch, whether it is timed to re-check the other path, and how many of its
   * first rows to time with {@code call()} as well (0 for none; only on the GPU path, which computes
   * every row of the batch, those too).
   */
  public record Choice(Path path, boolean recheck, int slice) {
    public Choice(Path path, boolean recheck) {
      this(path, recheck, 0);
    }
  }

  /**
   * Rows of a batch of {@code rows} to time with {@code call()}: {@link #TRIAL_ROWS} while a path is
   * untimed (NaN), else as many as cost {@link #TRIAL_BUDGET} of the batch's GPU time at the
   * estimates, within {@link #MIN_TRIAL_ROWS}..{@link #TRIAL_ROWS}; never more than the batch.
   */
  static int sliceRows(double gpuNanosPerRow, double cpuNanosPerRow, int rows) {
    long k = TRIAL_ROWS;
    if (!Double.isNaN(gpuNanosPerRow) && !Double.isNaN(cpuNanosPerRow) && cpuNanosPerRow > 0) {
      k = Math.max(MIN_TRIAL_ROWS, Math.min(TRIAL_ROWS,
          (long) Math.ceil(TRIAL_BUDGET * Math.max(0, gpuNanosPerRow) * rows / cpuNanosPerRow)));
    }
    return (int) Math.min(k, Math.max(0, rows));
  }

  /**
   * What one timed batch changed: whether the shape's batches now go to the other path (a switch),
   * and why, in the words of the log line.
   */
  public record Outcome(boolean switched, String reason) {
    static final Outcome NONE = new Outcome(false, "");
  }

  private final LongSupplier clock;
  private final Map<Shape, State> shapes = new ConcurrentHashMap<>();
  /** Test hook: nanoseconds per row added to each path's measured time (0 in production). */
  private volatile double gpuBias;
  private volatile double cpuBias;

  AdaptivePlacement(LongSupplier clock) {
    this.clock = clock;
  }

  /** This JVM's placement, shared by every task of the executor. */
  public static AdaptivePlacement shared() {
    return SHARED;
  }

  /** The path the next batch of {@code shape} takes (a batch of the bucket's rows). */
  public Choice choose(Shape shape) {
    return choose(shape, shape.rowsBucket());
  }

  /** The path the next batch of {@code shape}, of {@code rows} rows, takes. */
  public Choice choose(Shape shape, int rows) {
    return state(shape).choose(clock.getAsLong(), rows);
  }

  /**
   * Records that a batch of {@code shape} with {@code rows} rows took {@code nanos} on {@code path};
   * {@code name} (the calls' names) is for the log line of a switch, logged once per switch at INFO.
   */
  public Outcome record(Shape shape, String name, Path path, int rows, long nanos) {
    if (rows <= 0) {
      return Outcome.NONE;
    }
    double bias = path == Path.GPU ? gpuBias : cpuBias;
    double perRow = (double) nanos / rows + bias;
    Outcome o = state(shape).record(path, perRow, clock.getAsLong(), name, shape);
    if (o.switched()) {
      LOG.info("vkspark: {}", o.reason());
    }
    return o;
  }

  /** Times {@code shape}'s re-check interval has doubled (0 before any decision), for tests. */
  int backoff(Shape shape) {
    State s = shapes.get(shape);
    return s == null ? 0 : s.backoff();
  }

  /** The path {@code shape}'s batches go to now (GPU before any decision). */
  Path current(Shape shape) {
    State s = shapes.get(shape);
    return s == null ? Path.GPU : s.current();
  }

  /** Each shape's estimates, one line each ({@code calls/rows: GPU 0.1 us/row (3), CPU ..., on GPU}), for logs and tests. */
  String summary() {
    StringBuilder b = new StringBuilder();
    shapes.forEach((shape, state) -> b.append(state.summary(shape)).append('\n'));
    return b.toString();
  }

  /** Test hook: adds {@code nanosPerRow} to each measured batch of {@code path}; 0 removes it. */
  void bias(Path path, double nanosPerRow) {
    if (path == Path.GPU) {
      gpuBias = nanosPerRow;
    } else {
      cpuBias = nanosPerRow;
    }
  }

  /** Test hook: forgets every shape (and bias), as in a fresh executor. */
  void reset() {
    shapes.clear();
    gpuBias = 0;
    cpuBias = 0;
  }

  private State state(Shape shape) {
    State s = shapes.get(shape);
    if (s != null) {
      return s;
    }
    if (shapes.size() >= MAX_SHAPES) {
      shapes.clear(); // a long-lived server that saw many UDFs and sizes: re-timing is cheap
    }
    return shapes.computeIfAbsent(shape, k -> new State());
  }

  /** One shape's timings and decision; every method holds its lock. */
  private static final class State {
    /** Per path: batches (or slices) timed. */
    private final int[] timed = new int[2];
    /** Per path: its last {@link #WINDOW} timings (ns per row), oldest overwritten first. */
    private final double[][] window = new double[2][WINDOW];
    private final int[] filled = new int[2];
    private Path current = Path.GPU;
    private boolean decided;
    /** Batches on {@link #current} since the other path was last timed, and when that was. */
    private int sinceOther;
    private long otherAt;
    private boolean recheckOut;
    /** Times the re-check interval has doubled ({@link #BACKOFF_GAP}). */
    private int backoff;

    synchronized Choice choose(long now, int rows) {
      if (!decided) {
        // trials: every batch on the GPU (timed), with a slice timed with call() until the CPU has its timings
        return new Choice(Path.GPU, false, timed[Path.CPU.ordinal()] < TRIALS ? slice(rows) : 0);
      }
      if (recheckOut && sinceOther >= 2 * (RECHECK_BATCHES << backoff)) {
        recheckOut = false; // the task that took the re-check ended before timing it
      }
      if (!recheckOut && (sinceOther >= (RECHECK_BATCHES << backoff) || now - otherAt >= (RECHECK_NANOS << backoff))) {
        recheckOut = true;
        // the GPU keeps the batch and a slice is timed with call(); or a whole batch is timed on the GPU
        return current == Path.GPU ? new Choice(Path.GPU, true, slice(rows)) : new Choice(Path.GPU, true, 0);
      }
      sinceOther++;
      return new Choice(current, false, 0);
    }

    private int slice(int rows) {
      return sliceRows(perRow(Path.GPU), perRow(Path.CPU), rows);
    }

    synchronized Outcome record(Path path, double nanosPerRow, long now, String name, Shape shape) {
      int i = path.ordinal();
      if (decided && path != current) {
        filled[i] = 0; // a re-check: the other path's older timings are stale
      }
      window[i][filled[i]++ % WINDOW] = nanosPerRow;
      timed[i]++;
      if (path != current) {
        sinceOther = 0;
        otherAt = now;
        recheckOut = false;
      }
      if (!decided) {
        if (timed[0] < TRIALS || timed[1] < TRIALS) {
          return Outcome.NONE;
        }
        decided = true;
        otherAt = now;
      }
      Path faster = perRow(other(current)) < MARGIN * perRow(current) ? other(current) : current;
      if (faster == current) {
        boolean wide = current == Path.GPU && perRow(Path.CPU) >= BACKOFF_GAP * perRow(Path.GPU);
        if (path != current && wide) {
          backoff = Math.min(MAX_BACKOFF, backoff + 1); // a re-check confirmed a wide gap: look again later
        } else if (!wide) {
          backoff = 0;
        }
        return Outcome.NONE;
      }
      current = faster;
      sinceOther = 0;
      otherAt = now;
      recheckOut = false;
      backoff = 0;
      Placement.Cause cause = faster == Path.CPU ? Placement.Cause.ADAPTIVE_CHOICE : null;
      return new Outcome(true, String.format(Locale.ROOT,
          "%s/%d rows: %s %.3f us/row vs %s %.3f us/row, batches go to the %s%s", name, shape.rowsBucket(),
          faster, perRow(faster) / 1000, other(faster), perRow(other(faster)) / 1000, faster,
          cause == null ? "" : " (cause " + cause + ", counted in " + VkMetric.cpuRows(cause).key() + ")"));
    }

    /** The re-check interval's doublings, for tests. */
    synchronized int backoff() {
      return backoff;
    }

    synchronized String summary(Shape shape) {
      return String.format(Locale.ROOT, "%s%s/%d rows: GPU %.3f us/row (%d batches), CPU %.3f us/row (%d batches), on %s",
          shape.calls().length() > 40 ? shape.calls().substring(0, 40) + "..." : shape.calls(),
          shape.reducing() ? " (reduced)" : "", shape.rowsBucket(), perRow(Path.GPU) / 1000, timed[0], perRow(Path.CPU) / 1000,
          timed[1], current);
    }

    synchronized Path current() {
      return current;
    }

    /** The median of {@code p}'s window: one slow batch (a GC, a busy core, a cold first batch) moves nothing. */
    private double perRow(Path p) {
      int n = Math.min(filled[p.ordinal()], WINDOW);
      if (n == 0) {
        return Double.NaN;
      }
      double[] w = Arrays.copyOf(window[p.ordinal()], n);
      Arrays.sort(w);
      return n % 2 == 1 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
    }

    private static Path other(Path p) {
      return p == Path.GPU ? Path.CPU : Path.GPU;
    }
  }
}
