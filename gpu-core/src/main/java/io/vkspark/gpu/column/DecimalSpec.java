package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.io.Serializable;
import java.math.BigDecimal;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * Precision and scale of a {@code decimal(p, s)} argument or result ({@link SqlType#DECIMAL}):
 * kept beside the {@link SqlType} enum, which names the type's layout only. A GPU UDF sees such a
 * value as the {@code int64_t} of its unscaled value, {@code value = unscaled / 10^scale}, so
 * precision is at most 18 digits (every such value fits an {@code int64_t}, as in Spark's own
 * {@code Decimal} and column vectors). Arrow holds these values as Decimal128.
 *
 * @param precision digits in all, 1 to {@value #MAX_PRECISION}
 * @param scale digits after the point, 0 to {@code precision}
 */
public record DecimalSpec(int precision, int scale) implements Serializable {
  /** Most digits a GPU decimal has: every unscaled value fits an {@code int64_t}. */
  public static final int MAX_PRECISION = 18;
  /** Spark's {@code decimal} without parameters. */
  public static final DecimalSpec SPARK_DEFAULT = new DecimalSpec(10, 0);

  private static final Pattern SYNTAX =
      Pattern.compile("(?:decimal|numeric|dec)\\s*(?:\\(\\s*(-?\\d+)\\s*(?:,\\s*(-?\\d+)\\s*)?\\))?");
  private static final long[] POW10 = new long[MAX_PRECISION + 1];

  static {
    POW10[0] = 1;
    for (int i = 1; i < POW10.length; i++) {
      POW10[i] = POW10[i - 1] * 10;
    }
  }

  public DecimalSpec {
    if (precision < 1 || precision > MAX_PRECISION || scale < 0 || scale > precision) {
      throw GpuException.of(Code.UNSUPPORTED, "decimal(" + precision + ", " + scale + ") is not supported by GPU UDFs"
              + " (precision 1 to " + MAX_PRECISION + ", scale 0 to the precision).",
          "use a decimal of at most " + MAX_PRECISION + " digits with a scale of 0 to its precision, e.g. decimal(18, 2),"
              + " or CAST the column to double.");
    }
  }

  /** {@code decimal(p, s)}, {@code decimal(p)} (scale 0), {@code decimal} ({@code decimal(10, 0)}, as Spark), or {@code numeric(...)}. */
  public static Optional<DecimalSpec> parse(String sqlType) {
    String n = sqlType == null ? "" : sqlType.trim().toLowerCase(Locale.ROOT);
    Matcher m = SYNTAX.matcher(n);
    if (!m.matches()) {
      return Optional.empty();
    }
    if (m.group(1) == null) {
      return Optional.of(SPARK_DEFAULT);
    }
    try {
      return Optional.of(new DecimalSpec(Integer.parseInt(m.group(1)), m.group(2) == null ? 0 : Integer.parseInt(m.group(2))));
    } catch (NumberFormatException e) {
      throw GpuException.of(Code.UNSUPPORTED, "type '" + sqlType + "' has a precision or scale out of range.",
          "use a decimal of at most " + MAX_PRECISION + " digits, e.g. decimal(18, 2).");
    }
  }

  /** The largest unscaled value: {@code 10^precision - 1}. */
  public long maxUnscaled() {
    return POW10[precision] - 1;
  }

  /** Whether {@code unscaled} has at most {@link #precision} digits. */
  public boolean fits(long unscaled) {
    return unscaled >= -maxUnscaled() && unscaled <= maxUnscaled();
  }

  /** Arrow's Decimal128 of this precision and scale. */
  public ArrowType arrowType() {
    return new ArrowType.Decimal(precision, scale, 128);
  }

  /** {@code decimal(p,s)}, as Spark writes it. */
  public String sqlName() {
    return "decimal(" + precision + "," + scale + ")";
  }

  /** The value of {@code unscaled} at this scale, for messages. */
  public BigDecimal value(long unscaled) {
    return BigDecimal.valueOf(unscaled, scale);
  }

  @Override
  public String toString() {
    return sqlName();
  }
}
