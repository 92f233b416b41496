package io.vkspark.gpu;

import java.util.Objects;

/**
 * The one exception vkspark throws: unchecked, so it crosses Spark's lambdas, and carrying a
 * stable {@link Code} that callers and tests can match on instead of parsing text.
 *
 * <p>Every message says what happened, with the numbers involved, and ends with {@code Fix: ...}
 * telling the reader what to change. The constructor enforces that shape and keeps both parts,
 * {@link #what()} and {@link #fix()}, so that code quoting an error never parses its message.
 */
public final class GpuException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** Stable error codes; their names never change once released. */
  public enum Code {
    /** No Vulkan loader or no driver on this machine. */
    NO_VULKAN,
    /** Vulkan works but no device matches the request. */
    NO_DEVICE,
    /** A Vulkan call returned an error. */
    VULKAN,
    /** The device is out of memory (or a buffer exceeds a device limit). */
    OUT_OF_MEMORY,
    /** The device was lost (driver reset, hang, crash). */
    DEVICE_LOST,
    /** GLSL did not compile. */
    COMPILE,
    /** Buffers passed to a dispatch do not match the program's declarations. */
    BINDING,
    /** A size computation overflowed or exceeded a limit. */
    SIZE,
    /** The object was already closed. */
    CLOSED,
    /** A replay was requested while the previous one is still running. */
    IN_FLIGHT,
    /** A caller passed an invalid argument (names, types, configuration). */
    INVALID_ARGUMENT,
    /** A type or feature is not supported on this device or by vkspark. */
    UNSUPPORTED,
    /** Waiting for the device took longer than allowed. */
    TIMEOUT,
    /**
     * The device cut a kernel's loops short (a driver loop limit, e.g. lavapipe's 65,535
     * iterations); the batch's results were discarded, never returned.
     */
    LOOP_LIMIT,
    /** The caller cancelled a dispatch while it ran (a killed Spark task); the kernel was aborted. */
    CANCELLED,
    /** Verify mode found a GPU result that disagrees with the UDF's CPU reference. */
    VERIFY,
    /** A result does not fit its SQL type (a decimal with more digits than its precision) and the policy is to fail. */
    OVERFLOW,
    /**
     * Rows of a batch are ones whose Java {@code call()} throws or returns null (the kernel called
     * {@code jthrow()} for them); the batch's GPU results were discarded, to be recomputed with
     * {@code call()}.
     */
    RECOMPUTE
  }

  private static final String FIX = "Fix: ";

  private final Code code;
  private final String what;
  private final String fix;

  /**
   * @param code stable code
   * @param message what happened, ending with {@code Fix: ...}
   * @throws IllegalArgumentException if the message has no {@code Fix:} part
   */
  public GpuException(Code code, String message) {
    this(code, message, null);
  }

  public GpuException(Code code, String message, Throwable cause) {
    super(checked(message), cause);
    this.code = Objects.requireNonNull(code, "code");
    int at = message.indexOf(FIX);
    this.what = message.substring(0, at).strip();
    this.fix = message.substring(at + FIX.length()).strip();
  }

  /** Builds {@code "<what> Fix: <fix>"}. */
  public static GpuException of(Code code, String what, String fix) {
    String w = what.strip();
    return new GpuException(code, w + (w.endsWith(".") ? "" : ".") + " " + FIX + fix);
  }

  public Code code() {
    return code;
  }

  /**
   * What happened: the message before its {@code Fix:}, with its final period, e.g. to quote the
   * error inside another message or a log line.
   */
  public String what() {
    return what;
  }

  /** What to change: the text after {@code Fix:}. */
  public String fix() {
    return fix;
  }

  /**
   * {@code io.vkspark.gpu.GpuException [TIMEOUT]: ...}: the stable code in every stack trace, and so
   * in the task failure a Spark user reads ("Lost task ...: io.vkspark.gpu.GpuException [TIMEOUT]: ...").
   */
  @Override
  public String toString() {
    return getClass().getName() + " [" + code + "]: " + getLocalizedMessage();
  }

  private static String checked(String message) {
    Objects.requireNonNull(message, "message");
    if (!message.contains(FIX)) {
      throw new IllegalArgumentException("GpuException message must end with 'Fix: ...': " + message);
    }
    return message;
  }
}
