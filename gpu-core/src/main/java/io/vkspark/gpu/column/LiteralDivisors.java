package io.vkspark.gpu.column;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps a body's division by a double literal a division. The SPIR-V optimizer folds
 * {@code x / 100.0lf} into {@code x * 0.01}, which rounds twice: {@code 123456789.0 / 100.0}
 * became 1234567.8900000001 (Java: 1234567.89) on lavapipe and on the H200, whose division of two
 * run-time values is correctly rounded (and refined where a device's is not, see
 * {@code DoubleRounding}). Each such literal divisor is written {@code (100.0lf * vk_one)}, where
 * {@code vk_one} is 1.0 read from the kernel's parameters ({@code min(vk_rows, 1u)}: a kernel runs
 * only when there is a row), which no compiler can fold: the product is exactly the literal and the
 * division stays the device's run-time one. Powers of two are left alone (their reciprocal is
 * exact), and so are divisors that are not a literal right after {@code /} or {@code /=} (a
 * {@code const} variable, a parenthesised constant expression); docs/GLSL-SEMANTICS.md says so. The
 * rewrite keeps every line where it was, so compile errors still name the user's line.
 */
final class LiteralDivisors {
  /** {@code /} or {@code /=} (not part of a comment marker), then a double literal with {@code lf}. */
  private static final Pattern DIVISOR = Pattern.compile(
      "(?<![/*])/(=?)(\\s*)([-+]?(?:\\d+\\.\\d*|\\.\\d+|\\d+(?=[eE]))(?:[eE][-+]?\\d+)?)(lf|LF)(?![\\w.])");
  /** {@code native} leaves literal divisors to the compilers (for measuring what they do). */
  static final String PROPERTY = "vkspark.literalDivisors";
  /** 1.0, unknown to the compiler. */
  static final String ONE = "double(min(vk_rows, 1u))";

  private LiteralDivisors() {}

  /** {@code body} with each divisor that is a double literal, other than a power of two, made opaque. */
  static String opaque(String body) {
    if (body.indexOf('/') < 0 || "native".equals(System.getProperty(PROPERTY))) {
      return body;
    }
    Matcher m = DIVISOR.matcher(body);
    StringBuilder out = new StringBuilder(body.length() + 32);
    while (m.find()) {
      String literal = m.group(3);
      String replacement;
      if (exactReciprocal(literal)) {
        replacement = m.group();
      } else {
        replacement = "/" + m.group(1) + m.group(2) + "(" + literal + m.group(4) + " * " + ONE + ")";
      }
      m.appendReplacement(out, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** Zero, infinity, NaN or a power of two: x / c is x * (1 / c) exactly, or nothing to keep. */
  private static boolean exactReciprocal(String literal) {
    double v;
    try {
      v = Double.parseDouble(literal);
    } catch (NumberFormatException e) {
      return true; // not ours to judge: leave it to the compiler
    }
    long bits = Double.doubleToRawLongBits(v);
    long exponent = (bits >>> 52) & 0x7ff;
    return v == 0 || exponent == 0x7ff || exponent == 0 || (bits & 0xfffffffffffffL) == 0;
  }
}
