package io.vkspark.gpu.column;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The text rewrite itself; {@code DoubleDivisionBodyTest} runs the kernels. */
final class LiteralDivisorsTest {
  private static final String ONE = LiteralDivisors.ONE;

  @Test
  void literalDivisorsAreMadeOpaque_powersOfTwoCommentsAndOthersAreNot() {
    assertEquals("a / (100.0lf * " + ONE + ")", LiteralDivisors.opaque("a / 100.0lf"));
    assertEquals("q /= (3.0lf * " + ONE + ");", LiteralDivisors.opaque("q /= 3.0lf;"));
    assertEquals("a/(1e4lf * " + ONE + ") + b / (-.1LF * " + ONE + ")", LiteralDivisors.opaque("a/1e4lf + b / -.1LF"));
    assertEquals("a / 2.0lf + a / 0.25lf + a / 0.0lf", LiteralDivisors.opaque("a / 2.0lf + a / 0.25lf + a / 0.0lf"));
    assertEquals("a / 100.0 + a / K + a / (2.0lf * 5.0lf)", LiteralDivisors.opaque("a / 100.0 + a / K + a / (2.0lf * 5.0lf)"));
    assertEquals("a * 100.0lf // x\n/* y */ b", LiteralDivisors.opaque("a * 100.0lf // x\n/* y */ b"));
    assertEquals("x /\n (7.0lf * " + ONE + ")\n", LiteralDivisors.opaque("x /\n 7.0lf\n"));
  }
}
