package io.vkspark.gpu.column;

/**
 * Where GLSL comments start and end, for every reader of UDF text: the body checks and generators
 * here, and spark-plugin's parser of GLSL-only UDF files. One definition, so they all agree with
 * glslang on what is code (a {@code "//"} inside a block comment is not a line comment, and so on).
 */
public final class GlslSource {
  private GlslSource() {}

  /**
   * The index just past the comment starting at {@code i} in {@code s} (for a line comment, its
   * {@code '\n'} or the end); {@code i} when no comment starts there; -1 when a block comment never
   * closes.
   */
  public static int commentEnd(String s, int i) {
    if (s.charAt(i) != '/' || i + 1 >= s.length()) {
      return i;
    }
    if (s.charAt(i + 1) == '/') {
      int nl = s.indexOf('\n', i);
      return nl < 0 ? s.length() : nl;
    }
    if (s.charAt(i + 1) == '*') {
      int close = s.indexOf("*/", i + 2);
      return close < 0 ? -1 : close + 2;
    }
    return i;
  }

  /**
   * {@code s} with comments blanked (newlines kept): what glslang reads as code, at the same
   * indices and lines. An unclosed block comment runs to the end.
   */
  public static String code(String s) {
    char[] out = s.toCharArray();
    int i = 0;
    while (i < out.length) {
      int end = commentEnd(s, i);
      if (end == i) {
        i++;
        continue;
      }
      for (end = end < 0 ? out.length : end; i < end; i++) {
        if (out[i] != '\n') {
          out[i] = ' ';
        }
      }
    }
    return new String(out);
  }
}
