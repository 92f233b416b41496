package io.vkspark.gpu.column;

/**
 * Why a row of a GPU UDF is computed by its {@code call()} instead of the kernel: the statuses a
 * kernel reports for single rows ({@code vk_to_cpu}, {@code vk_str_require_ascii}, a string result
 * that could not be Java's), in the order of {@link BatchRunner#cpuRowCauses()}. The rest of the
 * batch keeps the kernel's results. See docs/GLSL-SEMANTICS.md, "Strings".
 */
public enum CpuCause {
  /** The body called {@code vk_to_cpu()}. */
  BODY,
  /** A string the body needs as ASCII is not ({@code vk_str_require_ascii}): Java's UTF-16 or Unicode semantics differ from bytes. */
  NON_ASCII,
  /** A string result whose bytes are not well-formed UTF-8, which no {@code String} returned by call() encodes to. */
  MALFORMED_UTF8,
  /** A row longer than one value may be (128 MiB), or whose writing pass wrote other bytes than its measuring pass counted. */
  OVERFLOW
}
