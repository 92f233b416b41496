package io.vkspark.gpu.column;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.MemoryKind;
import io.vkspark.gpu.Program;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * A kernel that computes its null rows itself instead of the strict rule (a null argument gives a
 * null result): a UDF that tolerates null arguments ({@code x == null ? 0 : x * 2}) or returns
 * null for some rows ({@code None}). The body sees, after each argument {@code x} whose flag is on
 * in {@code args}, a {@code bool x_null} that is true where the row's argument is null (its value
 * is then unspecified), and, when {@code result} is on, an {@code inout bool r_null}, false on
 * entry, that it sets to make the row's result null.
 *
 * <p>On the device, each flagged argument's column has a validity buffer of bits (Arrow's bitmap,
 * uploaded as the values are), and the result's validity is a bit buffer the kernel writes, read
 * back and ANDed into the result vector's validity. An argument without a flag keeps the strict
 * rule: where it is null the result is null (the host ANDs its validity in, as for a strict kernel).
 * Bindings, after the literals' ({@link ColumnKernel#literalBinding}): one per flagged argument
 * that reads a column (not a constant), in argument order, then the result's validity. A kernel
 * with string, binary or array arguments or results keeps the strict rule.
 */
public record NullFlags(List<Boolean> args, boolean result) implements Serializable {
  /** The name of the body's result flag. */
  public static final String RESULT = "r_null";

  public NullFlags {
    args = List.copyOf(args);
  }

  /** Refuses flags that do not fit {@code sig}: one per argument, fixed-width types only. */
  void check(KernelSignature sig) {
    String problem = args.size() != sig.args().size() ? args.size() + " argument null flags for "
        + sig.args().size() + " arguments"
        : sig.result().isVariableWidth() || sig.result() == SqlType.DECIMAL
        || sig.args().stream().anyMatch(a -> a.type().isVariableWidth()) ? "string, binary, array or decimal types"
        : null;
    if (problem != null) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + sig.name() + "' computes its null rows but has "
          + problem + ".", "give one flag per argument, and compute null rows only for fixed-width arguments and "
          + "results (the others keep the strict rule).");
    }
  }

  /** Whether any argument has a flag. */
  public boolean anyArg() {
    return args.contains(true);
  }

  /** The flag name of argument {@code name}. */
  public static String flag(String name) {
    return name + "_null";
  }

  /** The parameters of {@code vk_udf}: each argument, its flag, then the result's flag. */
  String params(KernelSignature sig) {
    List<String> p = new ArrayList<>();
    for (int i = 0; i < sig.args().size(); i++) {
      KernelSignature.Arg a = sig.args().get(i);
      p.add(a.type().glsl() + " " + a.name());
      if (args.get(i)) {
        p.add("bool " + flag(a.name()));
      }
    }
    if (result) {
      p.add("inout bool " + RESULT);
    }
    return String.join(", ", p);
  }

  /** The arguments of main's call of {@code vk_udf}: {@code loads} with each flag (a constant is never null). */
  String callArgs(List<String> loads, List<ArgOps> argOps) {
    List<String> p = new ArrayList<>();
    int binding = 0;
    for (int i = 0; i < loads.size(); i++) {
      p.add(loads.get(i));
      if (args.get(i)) {
        p.add(ArgOps.isConstant(argOps, i) ? "false"
            : "((vk_valid" + binding++ + "[vk_row >> 5u] >> (vk_row & 31u)) & 1u) == 0u");
      }
    }
    if (result) {
      p.add("vk_r_null");
    }
    return String.join(", ", p);
  }

  /** The buffers, from {@code binding}. */
  List<String> declarations(List<ArgOps> argOps, int binding) {
    List<String> l = new ArrayList<>();
    int n = validityInputs(argOps);
    for (int j = 0; j < n; j++) {
      l.add("layout(std430, set = 0, binding = " + (binding + j) + ") readonly buffer VkValid" + j + " { uint vk_valid"
          + j + "[]; };");
    }
    if (result) {
      l.add("layout(std430, set = 0, binding = " + (binding + n) + ") buffer VkOutValid { uint vk_out_valid[]; };");
    }
    return l;
  }

  /** Main's lines before the call. */
  List<String> beforeCall() {
    return result ? List.of("  bool vk_r_null = false;") : List.of();
  }

  /** Main's lines after the result is stored: the row's validity bit. */
  List<String> afterStore() {
    return result ? List.of("  if (!vk_r_null) { atomicOr(vk_out_valid[vk_row >> 5u], 1u << (vk_row & 31u)); }")
        : List.of();
  }

  /** The arguments that read a validity buffer: flagged and not constant. */
  public int validityInputs(List<ArgOps> argOps) {
    int n = 0;
    for (int i = 0; i < args.size(); i++) {
      n += args.get(i) && !ArgOps.isConstant(argOps, i) ? 1 : 0;
    }
    return n;
  }

  /** Declares the buffers {@link #declarations} binds, from {@code binding}: bit-packed validity. */
  void addBuffers(Program.Builder b, List<ArgOps> argOps, int binding) {
    int n = validityInputs(argOps);
    for (int j = 0; j < n; j++) {
      b.buffer(new BufferDecl("valid" + j, 0, binding + j, MemoryKind.READ_ONLY, ElementType.UINT32, false, 0));
    }
    if (result) {
      b.buffer(BufferDecl.output("outvalid", binding + n, ElementType.UINT32));
    }
  }
}
