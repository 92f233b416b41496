package io.vkspark.spark.exec;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the GPU calls of a batch run under {@code spark.vkspark.placement=adaptive}: the executor
 * measures instead of guessing. Per {@link Shape} (the node's GPU calls and a power-of-two bucket of
 * the batch's rows), the first {@link #TRIALS} batches run on each path (GPU, and {@code call()} or
 * a GLSL-only UDF's SPIR-V on the CPU Vulkan device), timed per row in the task that ran them, under
 * the executor's real concurrency; later batches go to the faster path. Every {@link #RECHECK_BATCHES}
 * batches, or after {@link #RECHECK_NANOS}, the other path is timed once more.
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
  /** Batches on the chosen path after which the other path is timed once more. */
  static final int RECHECK_BATCHES = 64;
  /** Time after which the other path is timed once more, whatever the batch count (10 s). */
  static final long RECHECK_NANOS = 10_000_000_000L;
  /** How much faster the CPU must be to take batches from the GPU (and the GPU to take them back). */
  static final double MARGIN = 0.9;
  /** Timings per path whose median is its estimate. */
  static final int WINDOW = 5;
  /** Shapes one JVM remembers; past it, every shape is forgotten and timed again. */
  static final int MAX_SHAPES = 4096;

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

  /** The path for one batch, and whether it is timed to re-check the other path. */
  public record Choice(Path path, boolean recheck) {}

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

  /** The path the next batch of {@code shape} takes. */
  public Choice choose(Shape shape) {
    return state(shape).choose(clock.getAsLong());
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
    /** Per path: batches handed out to be timed in the trials, batches timed, and the estimate (ns per row). */
    private final int[] assigned = new int[2];
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

    synchronized Choice choose(long now) {
      if (!decided) {
        // trials: alternate, GPU first, until each path has had its batches handed out
        Path p = assigned[0] <= assigned[1] ? Path.GPU : Path.CPU;
        if (assigned[p.ordinal()] < TRIALS) {
          assigned[p.ordinal()]++;
          return new Choice(p, false);
        }
        // trials handed out, not all timed yet (a task may have ended first): time the path that lacks batches
        return new Choice(timed[0] <= timed[1] ? Path.GPU : Path.CPU, false);
      }
      if (recheckOut && sinceOther >= 2 * RECHECK_BATCHES) {
        recheckOut = false; // the task that took the re-check ended before timing it
      }
      if (!recheckOut && (sinceOther >= RECHECK_BATCHES || now - otherAt >= RECHECK_NANOS)) {
        recheckOut = true;
        return new Choice(other(current), true);
      }
      sinceOther++;
      return new Choice(current, false);
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
        return Outcome.NONE;
      }
      current = faster;
      sinceOther = 0;
      otherAt = now;
      recheckOut = false;
      return new Outcome(true, String.format(Locale.ROOT,
          "%s/%d rows: %s %.3f us/row vs %s %.3f us/row, batches go to the %s", name, shape.rowsBucket(),
          faster, perRow(faster) / 1000, other(faster), perRow(other(faster)) / 1000, faster));
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
      double[] w = java.util.Arrays.copyOf(window[p.ordinal()], n);
      java.util.Arrays.sort(w);
      return n % 2 == 1 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
    }

    private static Path other(Path p) {
      return p == Path.GPU ? Path.CPU : Path.GPU;
    }
  }
}
