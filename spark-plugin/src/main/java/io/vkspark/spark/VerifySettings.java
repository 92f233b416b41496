package io.vkspark.spark;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.io.Serializable;
import java.util.Locale;
import java.util.function.Function;

/**
 * {@code spark.vkspark.verify}: whether the GPU node re-computes a sample of its GPU rows with the
 * UDF's own {@code call()} and compares. A wrong GLSL body, or a driver that miscompiles it, shows
 * up as mismatches on the real data instead of as silently wrong answers.
 *
 * @param mode {@code off} (default), {@code sample} (count and log mismatches), {@code strict}
 *     (fail the query at the first one)
 * @param sampleRate fraction of each batch's rows checked ({@code spark.vkspark.verify.sampleRate},
 *     default 0.001); at least one row per batch when verifying
 */
record VerifySettings(Mode mode, double sampleRate) implements Serializable {
  static final String VERIFY = VkConf.PREFIX + "verify";
  static final String SAMPLE_RATE = VkConf.PREFIX + "verify.sampleRate";
  static final double DEFAULT_SAMPLE_RATE = 0.001;

  /** What verification does. */
  enum Mode {
    OFF,
    SAMPLE,
    STRICT
  }

  static final VerifySettings OFF = new VerifySettings(Mode.OFF, DEFAULT_SAMPLE_RATE);

  /** Reads both keys through {@code lookup} (null for unset); a bad value fails naming the key. */
  static VerifySettings from(Function<String, String> lookup) {
    String m = lookup.apply(VERIFY);
    Mode mode = switch (m == null ? "off" : m.trim().toLowerCase(Locale.ROOT)) {
      case "off", "false" -> Mode.OFF;
      case "sample" -> Mode.SAMPLE;
      case "strict" -> Mode.STRICT;
      default -> throw GpuException.of(Code.INVALID_ARGUMENT, VERIFY + " is '" + m + "'.",
          "set " + VERIFY + " to off, sample or strict.");
    };
    String r = lookup.apply(SAMPLE_RATE);
    double rate = DEFAULT_SAMPLE_RATE;
    if (r != null) {
      try {
        rate = Double.parseDouble(r.trim());
      } catch (NumberFormatException e) {
        rate = Double.NaN;
      }
      if (!(rate > 0 && rate <= 1)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, SAMPLE_RATE + " is '" + r + "', not a fraction in (0, 1].",
            "set " + SAMPLE_RATE + " to the fraction of rows to check, e.g. 0.001 (at least one row per batch is checked).");
      }
    }
    return new VerifySettings(mode, rate);
  }

  boolean on() {
    return mode != Mode.OFF;
  }

  /** Rows to check in a batch of {@code rows}: the rate's share, at least one. */
  int sampleSize(int rows) {
    if (rows == 0) {
      return 0;
    }
    return (int) Math.min(rows, Math.max(1, Math.round(rows * sampleRate)));
  }
}
