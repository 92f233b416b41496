package io.vkspark.spark.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vkspark.spark.exec.AdaptivePlacement.Choice;
import io.vkspark.spark.exec.AdaptivePlacement.Outcome;
import io.vkspark.spark.exec.AdaptivePlacement.Path;
import io.vkspark.spark.exec.AdaptivePlacement.Shape;
import io.vkspark.spark.exec.call.Placement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The decision itself, on a clock the test moves: trials on the GPU with bounded CPU slices, the
 * faster path, re-checks and their back-off, shapes apart.
 */
final class AdaptivePlacementTest {
  private static final Shape SHAPE = Shape.of("k1", false, 4096);
  private final AtomicLong now = new AtomicLong();
  private final AdaptivePlacement placement = new AdaptivePlacement(now::get);

  /**
   * Runs one batch of {@code rows} rows of {@code shape} at {@code gpu} / {@code cpu} ns per row, as
   * a task does: its slice (if any) timed with call() first, then the batch on its path; returns its
   * choice.
   */
  private Choice batch(Shape shape, int rows, long gpu, long cpu, List<Outcome> outcomes) {
    Choice c = placement.choose(shape, rows);
    if (c.slice() > 0) {
      outcomes.add(placement.record(shape, "f", Path.CPU, c.slice(), cpu * c.slice()));
    }
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
  void trials_runOnTheGpu_withBoundedSlices_thenTheFasterPathTakesTheBatches() {
    List<Outcome> outcomes = new ArrayList<>();
    List<Choice> trials = new ArrayList<>();
    for (int i = 0; i < AdaptivePlacement.TRIALS; i++) {
      trials.add(batch(SHAPE, 4096, 500, 300, outcomes));
    }
    Choice first = new Choice(Path.GPU, false, AdaptivePlacement.TRIAL_ROWS);
    Choice next = new Choice(Path.GPU, false, AdaptivePlacement.sliceRows(500, 300, 4096)); // within the budget once timed
    assertEquals(List.of(first, next, next), trials, "every trial batch on the GPU, a slice of it timed with call()");
    Outcome last = outcomes.get(outcomes.size() - 1);
    assertTrue(last.switched(), "the CPU is faster: the shape switches once its trials are timed");
    assertEquals("f/4096 rows: CPU 0.300 us/row vs GPU 0.500 us/row, batches go to the CPU "
        + "(cause ADAPTIVE_CHOICE, counted in cpuRowsAdaptiveChoice)", last.reason());
    assertEquals(1, outcomes.stream().filter(Outcome::switched).count());
    for (int i = 0; i < 10; i++) {
      assertEquals(new Choice(Path.CPU, false, 0), batch(SHAPE, 4096, 500, 300, outcomes));
    }
    assertEquals(Path.CPU, placement.current(SHAPE));
  }

  @Test
  void sliceRows_boundedByRowsAndByTheBudget() {
    assertEquals(AdaptivePlacement.TRIAL_ROWS, AdaptivePlacement.sliceRows(Double.NaN, Double.NaN, 1 << 20),
        "untimed: the most a slice takes");
    assertEquals(100, AdaptivePlacement.sliceRows(Double.NaN, Double.NaN, 100), "never more than the batch");
    // a UDF 125x slower on the CPU (400 ns vs 3.2 ns a row): 5% of a 1M-row batch's GPU time is 420 rows
    assertEquals(420, AdaptivePlacement.sliceRows(3.2, 400, 1 << 20));
    assertEquals(AdaptivePlacement.MIN_TRIAL_ROWS, AdaptivePlacement.sliceRows(3.2, 400, 100_000), "at least the floor");
    assertEquals(AdaptivePlacement.TRIAL_ROWS, AdaptivePlacement.sliceRows(10, 5, 1 << 20), "a cheap UDF: the ceiling");
  }

  @Test
  void recheck_whileOnTheGpu_timesASlice_andBacksOffWhileTheGpuIsTenTimesFaster() {
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 10, 400, outcomes); // the CPU is 40x slower
    }
    assertEquals(Path.GPU, placement.current(SHAPE));
    List<Integer> gaps = new ArrayList<>();
    int since = 0;
    while (gaps.size() < 4) {
      Choice c = batch(SHAPE, 4096, 10, 400, outcomes);
      since++;
      assertEquals(Path.GPU, c.path(), "every batch stays on the GPU");
      if (c.recheck()) {
        int want = AdaptivePlacement.sliceRows(10, 400, 4096);
        assertEquals(want, c.slice(), "a re-check times a slice within the budget");
        assertTrue(want < 4096 / 10, "" + want);
        gaps.add(since);
        since = 0;
      }
    }
    int base = AdaptivePlacement.RECHECK_BATCHES;
    assertEquals(List.of(base + 1, 2 * base + 1, 4 * base + 1, 8 * base + 1), gaps, "each confirming re-check doubles the interval");
    assertEquals(4, placement.backoff(SHAPE));
  }

  @Test
  void recheck_whileOnTheGpu_noBackOffBelowTheGap() {
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < AdaptivePlacement.TRIALS + 3 * (AdaptivePlacement.RECHECK_BATCHES + 1); i++) {
      batch(SHAPE, 4096, 100, 300, outcomes); // the GPU is 3x faster
    }
    assertEquals(Path.GPU, placement.current(SHAPE));
    assertEquals(0, placement.backoff(SHAPE));
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
  void trials_takeTheMedian_soAColdFirstBatchDoesNotDecide() {
    List<Outcome> outcomes = new ArrayList<>();
    batch(SHAPE, 4096, 50_000, 300, outcomes); // the GPU's first batch builds pipelines and buffers
    for (int i = 1; i < AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 100, 300, outcomes);
    }
    assertEquals(Path.GPU, placement.current(SHAPE));
  }

  @Test
  void recheck_whileOnTheCpu_timesAWholeGpuBatch_andSwitchesBackWhenItGotFaster() {
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 500, 300, outcomes);
    }
    int gpu = 0;
    for (int i = 0; i < AdaptivePlacement.RECHECK_BATCHES; i++) {
      gpu += batch(SHAPE, 4096, 500, 300, outcomes).path() == Path.GPU ? 1 : 0;
    }
    assertEquals(0, gpu, "no re-check before " + AdaptivePlacement.RECHECK_BATCHES + " batches");
    Choice recheck = placement.choose(SHAPE);
    assertEquals(new Choice(Path.GPU, true, 0), recheck);
    // the GPU is now much faster (another job left it): one re-check moves the shape back
    Outcome o = placement.record(SHAPE, "f", Path.GPU, 4096, 10L * 4096); // replaces the stale 500s
    assertTrue(o.switched(), o.toString());
    assertTrue(o.reason().endsWith("batches go to the GPU"), o.reason());
    assertEquals(Path.GPU, placement.current(SHAPE));
  }

  @Test
  void oneSlowBatch_movesNothing() {
    List<Outcome> outcomes = new ArrayList<>();
    for (int i = 0; i < AdaptivePlacement.TRIALS; i++) {
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
    for (int i = 0; i < AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 500, 300, outcomes);
    }
    assertEquals(Path.CPU, placement.choose(SHAPE).path());
    now.addAndGet(AdaptivePlacement.RECHECK_NANOS);
    assertEquals(new Choice(Path.GPU, true, 0), placement.choose(SHAPE));
    assertEquals(new Choice(Path.CPU, false, 0), placement.choose(SHAPE), "one re-check at a time");
  }

  @Test
  void shapes_decideApart() {
    List<Outcome> outcomes = new ArrayList<>();
    Shape big = Shape.of("k1", false, 1 << 20);
    Shape other = Shape.of("k2", false, 4096);
    for (int i = 0; i < AdaptivePlacement.TRIALS; i++) {
      batch(SHAPE, 4096, 500, 300, outcomes);
      batch(big, 1 << 20, 10, 300, outcomes);
    }
    assertEquals(Path.CPU, placement.current(SHAPE));
    assertEquals(Path.GPU, placement.current(big), "large batches of the same calls stay on the GPU");
    assertEquals(Path.GPU, placement.current(other), "new calls start on the GPU");
    assertEquals(new Choice(Path.GPU, false, AdaptivePlacement.TRIAL_ROWS), placement.choose(other, 4096),
        "and are timed from their first batch");
  }

  @Test
  void bias_addsToOnePathsMeasurements() {
    List<Outcome> outcomes = new ArrayList<>();
    placement.bias(Path.GPU, 1000);
    for (int i = 0; i < AdaptivePlacement.TRIALS; i++) {
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
  void unfinishedTrials_keepSlicingUntilTheCpuIsTimed() {
    // tasks took slices and ended before reporting them: later batches still take slices
    for (int i = 0; i < 2 * AdaptivePlacement.TRIALS; i++) {
      Choice c = placement.choose(SHAPE, 4096);
      assertEquals(AdaptivePlacement.TRIAL_ROWS, c.slice());
      placement.record(SHAPE, "f", Path.GPU, 4096, 500L * 4096);
    }
    for (int i = 0; i < AdaptivePlacement.TRIALS; i++) {
      placement.record(SHAPE, "f", Path.CPU, 2048, 300L * 2048);
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
