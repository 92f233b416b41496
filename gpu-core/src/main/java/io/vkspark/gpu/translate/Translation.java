package io.vkspark.gpu.translate;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.KernelSpec;
import io.vkspark.gpu.column.NullFlags;
import io.vkspark.gpu.column.SqlType;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link JavaTranslator} made of one Java method: a {@link Translated} kernel, or the
 * {@link Refused} reason it cannot be one. Plain data, serializable: a translated UDF travels to
 * executors with its kernel text.
 */
public sealed interface Translation extends java.io.Serializable {

  /** Where the method came from, for messages: {@code com.acme.Pricer.call}. */
  String source();

  /**
   * A method as a GLSL kernel: {@code body} is the body of {@code vk_udf} over arguments named
   * {@code a0 .. a(n-1)} with the GLSL types of {@code args}; {@code functions} are its helper
   * methods (and the translator's own helpers), placed before {@code vk_udf}. The kernel calls
   * {@code jthrow()} for a row whose Java method throws or returns null.
   *
   * @param nullStrict per argument: whether the method returns null whenever that argument is null
   *     (proved from its bytecode), so that a row with a null there may skip the kernel
   * @param approximate the calls whose device version is not bit-exact ({@code Math.exp}: within
   *     1 ulp of StrictMath; {@code Math.fma} where the device's is not fused), sorted; empty when
   *     every row gives Java's bits
   */
  record Translated(String source, List<SqlType> args, SqlType result, String body, String functions,
                    List<Boolean> nullStrict, List<String> approximate, NullAware nullAware) implements Translation {
    public Translated {
      args = List.copyOf(args);
      nullStrict = List.copyOf(nullStrict);
      approximate = List.copyOf(approximate);
    }

    /** A translation without a {@link NullAware} form. */
    public Translated(String source, List<SqlType> args, SqlType result, String body, String functions,
                      List<Boolean> nullStrict, List<String> approximate) {
      this(source, args, result, body, functions, nullStrict, approximate, null);
    }

    /** A translation with no approximate call. */
    public Translated(String source, List<SqlType> args, SqlType result, String body, String functions,
                      List<Boolean> nullStrict) {
      this(source, args, result, body, functions, nullStrict, List.of());
    }

    /** Whether every row gives Java's bits (no approximate call). */
    public boolean exact() {
      return approximate.isEmpty();
    }

    /** Whether a null in any argument means a null result (the usual strict GPU UDF). */
    public boolean strict() {
      return !nullStrict.contains(false);
    }

    /** The kernel's signature under SQL name {@code name}: arguments {@code a0 ..}. */
    public KernelSignature signature(String name) {
      List<KernelSignature.Arg> a = new ArrayList<>();
      for (int i = 0; i < args.size(); i++) {
        a.add(new KernelSignature.Arg("a" + i, args.get(i)));
      }
      return new KernelSignature(name, a, result);
    }

    /** The kernel under SQL name {@code name}. */
    public KernelSpec spec(String name) {
      return new KernelSpec(signature(name), body, functions);
    }

    /**
     * The kernel under SQL name {@code name} that computes its null rows on the device: the
     * {@link NullAware} form with its arguments' null flags and its result's ({@link NullFlags});
     * null when there is none, or when an argument or the result is a string or binary (those keep
     * the strict kernel, whose null rows {@code call()} computes).
     */
    public KernelSpec nullAwareSpec(String name) {
      if (nullAware == null || result.isVariableWidth() || args.stream().anyMatch(SqlType::isVariableWidth)) {
        return null;
      }
      StringBuilder call = new StringBuilder("vkt_main(");
      for (int i = 0; i < args.size(); i++) {
        String a = "a" + i;
        call.append(i == 0 ? "" : ", ").append(args.get(i) == SqlType.BOOLEAN ? "(" + a + " ? 1 : 0)" : a)
            .append(nullAware.nullable().get(i) ? ", " + NullFlags.flag(a) : "");
      }
      if (nullAware.nullResult()) {
        call.append(args.isEmpty() ? "" : ", ").append(NullFlags.RESULT);
      }
      call.append(')');
      String value = result == SqlType.BOOLEAN ? "(" + call + ") != 0" : call.toString();
      return new KernelSpec(signature(name), "return " + value + ";", nullAware.functions())
          .withNulls(new NullFlags(nullAware.nullable(), nullAware.nullResult()));
    }
  }

  /**
   * The same method computing its null rows too, for a kernel that receives its arguments' nullness
   * (a UDF that tolerates null arguments: {@code x == null ? 0 : ...}). {@code functions} defines
   * {@code vkt_main} with, for each argument, its value and, for an object argument (a box, a
   * date), then a {@code bool} that is true when it is null; and, when the result is an object, a
   * last {@code out bool} that it sets when the method returns null (a null result, not a
   * {@code jthrow()}). {@code jthrow()} then marks only the rows whose Java method throws. The body
   * of the kernel passes the arguments' null flags and turns the out flag into the result's
   * validity ({@code exampleBody} shows the call, with {@code a0_null} .. as the flags and
   * {@code r_null} as the result's).
   *
   * @param nullable per argument: whether it has a null flag (an object argument)
   * @param nullResult whether the result has one
   */
  record NullAware(String functions, List<Boolean> nullable, boolean nullResult) implements java.io.Serializable {
    public NullAware {
      nullable = List.copyOf(nullable);
    }

    /** The call of {@code vkt_main}: {@code vkt_main(a0, a0_null, a1, r_null)}. */
    public String exampleBody() {
      StringBuilder s = new StringBuilder("vkt_main(");
      for (int i = 0; i < nullable.size(); i++) {
        s.append(i == 0 ? "" : ", ").append('a').append(i).append(nullable.get(i) ? ", a" + i + "_null" : "");
      }
      return s.append(nullResult ? (nullable.isEmpty() ? "" : ", ") + "r_null)" : ")").toString();
    }
  }

  /**
   * A method that does not translate; {@code reason} names the class, the method, the source line
   * and the instruction, e.g. {@code com.acme.Pricer.call line 12: new java.lang.StringBuilder
   * (allocation)}.
   */
  record Refused(String source, String reason) implements Translation {
    /** The refusal as an UNSUPPORTED error for UDF {@code udfName}, with a Fix. */
    public GpuException toException(String udfName) {
      return GpuException.of(Code.UNSUPPORTED, "Java UDF '" + udfName + "' does not translate to the GPU: " + reason + ".",
          "keep " + source + " to arithmetic, Math calls, branches, loops and static helpers of its class, or implement "
              + "io.vkspark.spark.api.GpuUdf with a GLSL body; it runs on the CPU as it is.");
    }
  }
}
