package io.vkspark.spark.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.spark.exec.AdaptivePlacement.Choice;
import io.vkspark.spark.exec.AdaptivePlacement.Outcome;
import io.vkspark.spark.exec.AdaptivePlacement.Path;
import io.vkspark.spark.exec.AdaptivePlacement.Shape;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The decision itself, on a clock the test moves: trials, the faster path, re-checks, shapes apart. */
final class AdaptivePlacementTest {
  private static final Shape SHAPE = Shape.of("k1", false, 4096);
  private final AtomicLong now = new AtomicLong();
  private final AdaptivePlacement placement = new AdaptivePlacement(now::get);

  /** Runs one batch of {@code rows} rows of {@code shape} at {@code gpu} / {@code cpu} ns per row; returns its choice. */
  private Choice batch(Shape shape, int rows, long gpu, long cpu, List<Outcome> outcomes) {
    Choice c = placement.choose(shape);
    outcomes.add(placement.record(shape, "f", c.path(), rows, (c.path() == Path.GPU ? gpu : cpu) * rows));
    now.addAndGet(1_000_000); // 1 ms a batch
    return c;
  }

  @Test
  void shape_bucketsRowsToPowersOfTwo() {
    assertEquals(1, Shape.bucket(0));
    assertEquals(1, Shape.bucket(1));
    assertEquals(4096, Shape.bucket(4096));
    assertEquals(8192, Shape.bucket(4097));
    assertEquals(Shape.of("k", false, 3000), Shape.of("k", false, 4000));
    assertFalse(Shape.of("k", false, 3000).equals(Shape.of("k", true, 3000)), "a reduced batch is another shape");
  }

  @Test
  void trials_alternateGpuFirst_thenTheFasterPathTakesTheBatches() {
    List<Outcome> outcomes = new ArrayList<>();
    List<Path> paths = new ArrayList<>();
    for (int i = 0; i < 2 * AdaptivePlacement.TRIALS; i++) {
      paths.add(batch(SHAPE, 4096, 500, 300, outcomes).path());
    }
    assertEquals(List.of(Path.GPU, Path.CPU, Path.GPU, Path.CPU, Path.GPU, Path.CPU), paths);
    Outcome last = outcomes.get(outcomes.size() - 1);
    assertTrue(last.switched(), "the CPU is faster: the shape switches once its trials are timed");
    assertEquals("f/4096 rows: CPU 0.300 us/row vs GPU 0.500 us/row, batches go to the CPU", last.reason());
    assertEquals(1, outcomes.stream().filter(Outcome::switched).count());
    for (int i = 0; i < 10; i++) {
      assertEquals(Path.CPU, batch(SHAPE, 4096, 500, 300, outcomes).path());
    }
    assertEquals(Path.CPU, placement.current(SHAPE));
  }

  @Test
  void ties_stayOnTheGpu() {
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < 2 * AdaptivePlacement.TRIALS + 10; i++) {
      batch(SHAPE, 4096, 500, 480, outcomes); // the CPU is 4% faster: within the margin
    }
    assertEquals(Path.GPU, placement.current(SHAPE));
    assertTrue(outcomes.stream().noneMatch(Outcome::switched));
  }

  @Test
  void trials_takeTheFastestBatch_soAColdFirstBatchDoesNotDecide() {
    List<Outcome> outcomes = new ArrayList<>();
    batch(SHAPE, 4096, 50_000, 300, outcomes); // the GPU's first batch builds pipelines and buffers
    for (int i = 1; i < 2 * AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 100, 300, outcomes);
    }
    assertEquals(Path.GPU, placement.current(SHAPE));
  }

  @Test
  void recheck_timesTheOtherPathOnce_andSwitchesBackWhenItGotFaster() {
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < 2 * AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 500, 300, outcomes);
    }
    int gpu = 0;
    for (int i = 0; i < AdaptivePlacement.RECHECK_BATCHES; i++) {
      gpu += batch(SHAPE, 4096, 500, 300, outcomes).path() == Path.GPU ? 1 : 0;
    }
    assertEquals(0, gpu, "no re-check before " + AdaptivePlacement.RECHECK_BATCHES + " batches");
    Choice recheck = placement.choose(SHAPE);
    assertEquals(new Choice(Path.GPU, true), recheck);
    // the GPU is now much faster (another job left it): one re-check moves the shape back
    Outcome o = placement.record(SHAPE, "f", Path.GPU, 4096, 10L * 4096); // replaces the stale 500s
    assertTrue(o.switched(), o.toString());
    assertTrue(o.reason().endsWith("batches go to the GPU"), o.reason());
    assertEquals(Path.GPU, placement.current(SHAPE));
  }

  @Test
  void oneSlowBatch_movesNothing() {
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < 2 * AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 500, 300, outcomes);
    }
    placement.choose(SHAPE);
    placement.record(SHAPE, "f", Path.CPU, 4096, 5_000L * 4096); // a GC pause, or a core busy with another task
    assertEquals(Path.CPU, placement.current(SHAPE));
    placement.choose(SHAPE);
    placement.record(SHAPE, "f", Path.CPU, 4096, 5_000L * 4096);
    placement.choose(SHAPE);
    placement.record(SHAPE, "f", Path.CPU, 4096, 5_000L * 4096);
    assertEquals(Path.GPU, placement.current(SHAPE), "the CPU stayed slow: most of its last batches " + placement.summary());
  }

  @Test
  void recheck_afterTime_evenWithFewBatches() {
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < 2 * AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 500, 300, outcomes);
    }
    assertEquals(Path.CPU, placement.choose(SHAPE).path());
    now.addAndGet(AdaptivePlacement.RECHECK_NANOS);
    assertEquals(new Choice(Path.GPU, true), placement.choose(SHAPE));
    assertEquals(new Choice(Path.CPU, false), placement.choose(SHAPE), "one re-check at a time");
  }

  @Test
  void shapes_decideApart() {
    List<Outcome> outcomes = new ArrayList<>();
    Shape big = Shape.of("k1", false, 1 << 20);
    Shape other = Shape.of("k2", false, 4096);
    for (int i = 0; i < 2 * AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 500, 300, outcomes);
      batch(big, 1 << 20, 10, 300, outcomes);
    }
    assertEquals(Path.CPU, placement.current(SHAPE));
    assertEquals(Path.GPU, placement.current(big), "large batches of the same calls stay on the GPU");
    assertEquals(Path.GPU, placement.current(other), "new calls start on the GPU");
    assertEquals(new Choice(Path.GPU, false), placement.choose(other), "and are timed from their first batch");
  }

  @Test
  void bias_addsToOnePathsMeasurements() {
    List<Outcome> outcomes = new ArrayList<>();
    placement.bias(Path.GPU, 1000);
    for (int i = 0; i < 2 * AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 100, 300, outcomes);
    }
    assertEquals(Path.CPU, placement.current(SHAPE), placement.summary());
    assertTrue(placement.summary().contains("GPU 1.100 us/row (3 batches), CPU 0.300 us/row (3 batches), on CPU"),
        placement.summary());
    placement.reset();
    assertEquals(Path.GPU, placement.current(SHAPE));
    assertEquals("", placement.summary());
  }

  @Test
  void unfinishedTrials_keepTimingThePathThatLacksBatches() {
    // three tasks took the GPU trials and ended before reporting: the next batches time the GPU again
    for (int i = 0; i < 2 * AdaptivePlacement.TRIALS; i++) {
      Choice c = placement.choose(SHAPE);
      if (c.path() == Path.CPU) {
        placement.record(SHAPE, "f", Path.CPU, 4096, 300L * 4096);
      }
    }
    assertEquals(Path.GPU, placement.choose(SHAPE).path());
    for (int i = 0; i < AdaptivePlacement.TRIALS; i++) {
      placement.record(SHAPE, "f", Path.GPU, 4096, 500L * 4096);
    }
    assertEquals(Path.CPU, placement.current(SHAPE));
  }

  @Test
  void placementRecord_onlyGpuIsAdaptive() {
    assertTrue(Placement.gpu(Placement.DecidedBy.PLANNER).adaptively().adaptive());
    assertEquals("on GPU (adaptive: GPU or call() per batch, timed)",
        Placement.gpu(Placement.DecidedBy.PLANNER).adaptively().render());
    assertEquals("on GPU", Placement.gpu(Placement.DecidedBy.PLANNER).render());
    assertThrows(IllegalArgumentException.class, () -> new Placement(Placement.Where.CPU, Placement.Cause.LAMBDA,
        List.of(), Placement.DecidedBy.PLANNER, true));
  }
}
