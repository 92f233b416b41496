package io.vkspark.spark.conf;

import java.io.Serializable;
import java.util.Objects;

/**
 * What {@code spark.vkspark.verify} asks of the GPU node (part of {@link VkConf}, which reads and
 * checks both keys): re-compute a sample of its GPU rows with the UDF's own {@code call()} and
 * compare, so a wrong GLSL body, or a driver that miscompiles it, shows up as mismatches on the
 * real data instead of as silently wrong answers.
 *
 * @param mode {@code off} (default), {@code sample} (count and log mismatches), {@code strict}
 *     (fail the query at the first one)
 * @param sampleRate fraction of each batch's rows checked ({@code spark.vkspark.verify.sampleRate},
 *     default 0.001); at least one row per batch when verifying
 * @param budget under {@code sample}, the most of a batch's GPU time its check may take
 *     ({@code spark.vkspark.verify.budget}, default 0.02; 1: the whole sample)
 */
public record VerifySettings(Mode mode, double sampleRate, double budget) implements Serializable {
  /** What verification does. */
  public enum Mode {
    OFF,
    SAMPLE,
    STRICT
  }

  static final VerifySettings OFF = new VerifySettings(Mode.OFF, Settings.VERIFY_SAMPLE_RATE.defaultValue());

  /** With the default budget. */
  public VerifySettings(Mode mode, double sampleRate) {
    this(mode, sampleRate, Settings.VERIFY_BUDGET.defaultValue());
  }

  /** This mode with the same rate and budget. */
  public VerifySettings withMode(Mode m) {
    return new VerifySettings(m, sampleRate, budget);
  }

  /**
   * Whether every checked row must come back from the GPU as it is computed: {@code strict} fails
   * the query at the first mismatch, so a fused aggregate folds on the host; {@code sample} checks a
   * sample beside the GPU's work, and the aggregate still reduces on the GPU.
   */
  public boolean needsRows() {
    return mode == Mode.STRICT;
  }
  public VerifySettings {
    Objects.requireNonNull(mode, "mode");
  }

  public boolean on() {
    return mode != Mode.OFF;
  }

  /** Rows to check in a batch of {@code rows}: the rate's share, at least one. */
  public int sampleSize(int rows) {
    if (rows == 0) {
      return 0;
    }
    return (int) Math.min(rows, Math.max(1, Math.round(rows * sampleRate)));
  }
}
