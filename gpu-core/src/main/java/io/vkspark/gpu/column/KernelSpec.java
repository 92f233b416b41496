package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * What a GPU UDF is, as the user wrote it: its {@link KernelSignature} (SQL name, named and typed
 * arguments, result type) and its GLSL body. Built once when the UDF is defined, compared by value,
 * and the key of every cache of compiled kernels ({@link ColumnKernel#compile(KernelSpec, java.nio.file.Path)},
 * the plan-side cache in spark-plugin). The SPIR-V disk cache is keyed more strictly, by the
 * SHA-256 of the compiler, its settings and the whole generated source ({@link ColumnKernel#id()}).
 *
 * <p>Three things are called kernel, in this order: a {@code KernelSpec} (what the user wrote;
 * spark-plugin's {@code GpuKernel} builds one), a {@link ColumnKernel} (its generated shader,
 * compiled to device-independent SPIR-V) and an {@link io.vkspark.gpu.Kernel} (that SPIR-V loaded on
 * one device as a pipeline).
 *
 * <p>{@code functions} are GLSL functions placed before {@code vk_udf}, which the body may call:
 * empty for a hand-written body, the translated helper methods for a Java UDF translated from its
 * bytecode ({@code io.vkspark.gpu.translate}). They are generated, not the user's text, so the
 * body's lexical check does not read them; the SPIR-V seal covers them as it does the body.
 *
 * <p>The name is part of the spec: it appears in the generated shader's comment, in shaderc's
 * diagnostics and in every message about the UDF.
 *
 * <p>{@code argOps}: empty, or one {@link ArgOps} per argument, the shape of an argument the kernel
 * computes from its column ({@code r + 0.01}); the literal values are not part of the spec.
 *
 * <p>{@code nulls}: null for the strict rule (a null argument gives a null result, computed on the
 * host), or the {@link NullFlags} of a kernel that computes its null rows itself.
 */
public record KernelSpec(KernelSignature signature, String body, String functions, List<ArgOps> argOps,
                         NullFlags nulls) implements Serializable {
  public KernelSpec {
    Objects.requireNonNull(signature, "signature");
    functions = functions == null ? "" : functions;
    argOps = argOps == null || argOps.stream().allMatch(ArgOps::isEmpty) ? List.of() : List.copyOf(argOps);
    ArgOps.check(signature, argOps);
    if (nulls != null) {
      nulls.check(signature);
    }
    if (body == null || body.isBlank()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + signature.name() + "' has an empty GLSL body.",
          "give a GLSL expression (e.g. \"2.5 * x + y\") or a function body with return.");
    }
  }

  /** A spec without functions of its own. */
  public KernelSpec(KernelSignature signature, String body) {
    this(signature, body, "");
  }

  /** A spec whose arguments are their columns. */
  public KernelSpec(KernelSignature signature, String body, String functions) {
    this(signature, body, functions, List.of());
  }

  /** A strict spec (the host computes its null rows). */
  public KernelSpec(KernelSignature signature, String body, String functions, List<ArgOps> argOps) {
    this(signature, body, functions, argOps, null);
  }

  /** This spec with arguments computed on the device as {@code argOps} say (one per argument; empty: none). */
  public KernelSpec withArgOps(List<ArgOps> argOps) {
    return new KernelSpec(signature, body, functions, argOps, nulls);
  }

  /** This spec computing its null rows on the device as {@code nulls} says (null: the strict rule). */
  public KernelSpec withNulls(NullFlags nulls) {
    return new KernelSpec(signature, body, functions, argOps, nulls);
  }

  /** How many literal values a call of this kernel supplies ({@link KernelCall#literals()}). */
  public int literals() {
    return ArgOps.literals(argOps);
  }

  /** The spec of {@code body} under {@code signature}. */
  public static KernelSpec of(KernelSignature signature, String body) {
    return new KernelSpec(signature, body);
  }

  /** The SQL name. */
  public String name() {
    return signature.name();
  }

  /** The result type. */
  public SqlType result() {
    return signature.result();
  }

  /** The arguments, in order. */
  public List<KernelSignature.Arg> args() {
    return signature.args();
  }

  /**
   * The same kernel under another SQL name ({@code this} when the name is the same): a UDF object
   * may be registered under any name, and the name is part of the spec.
   */
  public KernelSpec named(String name) {
    return signature.name().equals(name) ? this : new KernelSpec(new KernelSignature(name, signature.args(), signature.result(), signature.resultDecimal()), body,
        functions, argOps, nulls);
  }

  /** {@code name(arg type, ...) -> type}: for messages. */
  @Override
  public String toString() {
    return signature.toString();
  }
}
