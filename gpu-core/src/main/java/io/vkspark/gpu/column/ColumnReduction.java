package io.vkspark.gpu.column;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.GlslCompiler;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.MemoryKind;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.ShaderFeature;
import io.vkspark.gpu.internal.SpirvModule;
import io.vkspark.gpu.internal.SpirvSeal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Ungrouped aggregates of kernel results computed on the device, in the same recording as the
 * kernels: a generated compute shader that runs after them over the same indirect group count.
 * Each workgroup reduces its rows in shared memory and writes one partial per aggregate (value and
 * non-null count, 16 bytes) to a small output; the host folds the partials in workgroup order
 * ({@link #fold}). The per-row results stay in device-only memory and never cross the bus.
 *
 * <p>Semantics are Spark's partial aggregation buffers': {@code SUM} of int/bigint is a wrapping
 * int64 sum, of float/double a double sum (float widened first); {@code COUNT} counts non-null
 * rows ({@code call = -1}: every row); {@code MIN}/{@code MAX} order NaN above everything, compare
 * {@code -0.0} equal to {@code 0.0} and keep the first of equal values (workgroups reduce
 * contiguous, ordered ranges, so "first" is row order); {@code AVG} is a double sum and a count.
 * A value is null when its count is 0. Integer results and MIN/MAX are exact; double sums differ
 * from a sequential sum only by summation order (a pairwise tree per workgroup, then workgroups in
 * order): within {@code n * 2^-53 * sum(|x|)} for {@code n} rows, in practice far less.
 *
 * <p>Needs 64-bit integers and, for any floating-point aggregate, 64-bit floats in shaders;
 * {@link #unsupportedOn} says when a device lacks them (the caller then folds on the host).
 * Compiled once per JVM per shape ({@link #of}); immutable and thread-safe.
 */
public final class ColumnReduction {
  /** The aggregate functions the device computes. */
  public enum Function { SUM, COUNT, MIN, MAX, AVG }

  /**
   * One aggregate over one call's result or over an expression of call results computed per row.
   *
   * @param function the function
   * @param argument what it aggregates: a {@link DeviceExpr.Call} for a call's result, any other
   *     {@link DeviceExpr} of int, bigint, float or double (of any type for {@code COUNT}, which
   *     counts the rows where it is not null); null for {@code COUNT(*)}
   */
  public record Aggregate(Function function, DeviceExpr argument) implements java.io.Serializable {
    public Aggregate {
      java.util.Objects.requireNonNull(function, "function");
      if (argument == null && function != Function.COUNT) {
        throw GpuException.of(Code.INVALID_ARGUMENT, function + " of nothing.",
            "name the call or expression it reads (only COUNT(*) reads none).");
      }
    }

    /**
     * One aggregate over call {@code call}'s result (its index in the runner's calls); -1 for
     * {@code COUNT(*)}.
     */
    public Aggregate(Function function, int call) {
      this(function, call == -1 ? null : new DeviceExpr.Call(call));
    }

    /** The call whose result it reads as is, -1 when none (COUNT(*) or an expression over calls). */
    public int call() {
      return argument instanceof DeviceExpr.Call c ? c.call() : -1;
    }
  }

  /**
   * One aggregate's value over a batch. {@code count} non-null rows; the value is {@code integral}
   * for SUM/MIN/MAX of int or bigint, else {@code floating} (SUM, AVG, MIN/MAX of float or double).
   */
  public record Value(long count, long integral, double floating) {
    /** SUM, MIN, MAX: null when no row was non-null. */
    public boolean isNull() {
      return count == 0;
    }
  }

  /** What {@link BatchRunner#runReduced} returns: the rows of the batch and one value per aggregate. */
  public record Result(long rows, List<Value> values) {
    public Result {
      values = List.copyOf(values);
    }
  }

  /** Bytes of one workgroup's partial of one aggregate: value (8), count (4), padding (4). */
  static final int PARTIAL_BYTES = 16;
  private static final Map<String, ColumnReduction> CACHE = new ConcurrentHashMap<>();

  private final List<Aggregate> aggregates;
  private final List<SqlType> callTypes;
  /** The calls read, in binding order (each: its result, then its validity). */
  private final int[] reads;
  private final String source;
  private final byte[] spirv;
  private final String id;
  private final Set<ShaderFeature> requirements;

  private ColumnReduction(List<Aggregate> aggregates, List<SqlType> callTypes, int[] reads, String source, byte[] spirv) {
    this.aggregates = aggregates;
    this.callTypes = callTypes;
    this.reads = reads;
    this.source = source;
    this.spirv = spirv;
    this.id = "reduce-" + GlslCompiler.key(source, GlslCompiler.Flavor.OPTIMIZED);
    this.requirements = Set.copyOf(SpirvSeal.requirements(SpirvModule.parse("vkspark reduction", spirv)));
  }

  /**
   * The reduction of {@code aggregates} over calls whose results have {@code callTypes} (in call
   * order), compiled once per JVM.
   *
   * @throws GpuException INVALID_ARGUMENT for an aggregate over a call that does not exist, of a
   *     type other than int, bigint, float or double, or more than 32 calls
   */
  public static ColumnReduction of(List<Aggregate> aggregates, List<SqlType> callTypes) {
    List<Aggregate> aggs = List.copyOf(aggregates);
    List<SqlType> types = List.copyOf(callTypes);
    if (aggs.isEmpty()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a reduction needs at least one aggregate.", "pass one or more.");
    }
    if (types.size() > 32) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a reduction over " + types.size() + " calls; at most 32 are supported.",
          "reduce on the host for this many calls.");
    }
    for (Aggregate a : aggs) {
      if (a.argument() == null) {
        continue;
      }
      SqlType t = a.argument().type(types); // checks the calls it reads and its operands
      if (a.function() != Function.COUNT && !reducible(t)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, a + " aggregates a " + t.sqlName() + " value.",
            "aggregate int, bigint, float or double values on the device (COUNT counts any); others on the host.");
      }
    }
    String key = aggs + "|" + types;
    return CACHE.computeIfAbsent(key, k -> compile(aggs, types));
  }

  /** The result types a reduction reads. */
  public static boolean reducible(SqlType t) {
    return t == SqlType.INT || t == SqlType.BIGINT || t == SqlType.FLOAT || t == SqlType.DOUBLE;
  }

  private static ColumnReduction compile(List<Aggregate> aggs, List<SqlType> types) {
    int[] reads = aggs.stream().filter(a -> a.argument() != null).flatMap(a -> a.argument().calls().stream())
        .mapToInt(Integer::intValue).distinct().sorted().toArray();
    String source = generate(aggs, types, reads);
    byte[] spirv = GlslCompiler.compileOrThrow("vkspark-reduce.comp", source, null);
    return new ColumnReduction(aggs, types, reads, source, spirv);
  }

  /** Whether the aggregate accumulates an int64 (else a double). */
  private static boolean integral(Aggregate a, List<SqlType> types) {
    if (a.argument() == null || a.function() == Function.COUNT || a.function() == Function.AVG) {
      return true; // COUNT: the value is unused
    }
    SqlType t = a.argument().type(types);
    return t == SqlType.INT || t == SqlType.BIGINT;
  }

  /** Whether {@code e} or an operand of it is a float or double. */
  private static boolean floating(DeviceExpr e, List<SqlType> types) {
    SqlType t = e.type(types);
    return t == SqlType.FLOAT || t == SqlType.DOUBLE || e.children().stream().anyMatch(c -> floating(c, types));
  }

  /** Whether an argument is more than a call's result (computed per row by {@link DeviceExprGlsl}). */
  private static boolean computed(Aggregate a) {
    return a.argument() != null && !(a.argument() instanceof DeviceExpr.Call);
  }

  static String generate(List<Aggregate> aggs, List<SqlType> types, int[] reads) {
    // the expression helpers compute in doubles: only where an expression has a float or double in it
    boolean exprFloating = aggs.stream().anyMatch(a -> computed(a) && floating(a.argument(), types));
    boolean anyDouble = exprFloating || aggs.stream().anyMatch(a -> !integral(a, types) || a.function() == Function.AVG);
    List<String> l = new ArrayList<>();
    l.add("#version 450");
    l.add("#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require");
    l.add("// generated by vkspark: " + aggs + " over " + types);
    l.add("layout(local_size_x_id = 0) in;");
    l.add("layout(std140, set = 0, binding = 0) uniform VkParams { uint vk_rows; uint vk_nulls; uint vk_pad1;"
        + " uint vk_pad2; uvec4 vk_groups; };");
    int b = 1;
    for (int c : reads) {
      l.add("layout(std430, set = 0, binding = " + b++ + ") readonly buffer VkV" + c + " { "
          + types.get(c).bufferElement() + " vk_v" + c + "[]; };");
      l.add("layout(std430, set = 0, binding = " + b++ + ") readonly buffer VkN" + c + " { uint vk_n" + c + "[]; };");
    }
    l.add("layout(std430, set = 0, binding = " + b + ") writeonly buffer VkPartials { uint vk_p[]; };");
    l.add("shared uint vk_sc[gl_WorkGroupSize.x];");
    l.add("shared int64_t vk_si[gl_WorkGroupSize.x];");
    if (anyDouble) {
      l.add("shared double vk_sd[gl_WorkGroupSize.x];");
      l.add("bool vk_isnan(double x) { uvec2 u = unpackDouble2x32(x);"
          + " return (u.y & 0x7ff00000u) == 0x7ff00000u && ((u.y & 0xfffffu) | u.x) != 0u; }");
      // Spark's order: NaN above everything, -0.0 == 0.0
      l.add("bool vk_gt(double x, double y) { return vk_isnan(x) ? !vk_isnan(y) : (!vk_isnan(y) && x > y); }");
    }
    if (exprFloating) {
      l.addAll(DeviceExprGlsl.HELPERS);
    }
    l.add("void main() {");
    l.add("  uint vk_lid = gl_LocalInvocationID.x;");
    l.add("  uint vk_gid = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;");
    l.add("  uint vk_first = vk_gid * gl_WorkGroupSize.x;");
    l.add("  if (vk_first >= vk_rows) { return; } // the whole workgroup: no rows");
    l.add("  uint vk_row = vk_first + vk_lid;");
    l.add("  bool vk_in = vk_row < vk_rows;");
    for (int i = 0; i < aggs.size(); i++) {
      Aggregate a = aggs.get(i);
      boolean whole = integral(a, types) && a.function() != Function.AVG;
      String arr = whole ? "vk_si" : "vk_sd";
      String ok;
      String load;
      String zero = whole ? "int64_t(0)" : "0.0lf";
      List<String> prologue = new ArrayList<>();
      if (a.argument() == null) {
        ok = "vk_in";
        load = "0";
      } else if (!computed(a)) {
        int c = a.call();
        ok = "vk_in && (((vk_nulls >> " + c + "u) & 1u) == 0u || ((vk_n" + c + "[vk_row >> 5u] >> (vk_row & 31u)) & 1u) != 0u)";
        load = (whole ? "int64_t" : "double") + "(vk_v" + c + "[vk_row])";
      } else {
        // the expression, per row in range: its value and null flag into vk_xv, vk_xz
        prologue.add("    bool vk_xz = true;");
        prologue.add("    " + (whole ? "int64_t" : "double") + " vk_xv = " + zero + ";");
        prologue.add("    if (vk_in) {");
        DeviceExprGlsl g = new DeviceExprGlsl(types, prologue, "      ", 0);
        int k = g.emit(a.argument());
        prologue.add("      vk_xz = vk_z" + k + ";");
        if (a.function() != Function.COUNT) {
          prologue.add("      vk_xv = " + (whole ? "int64_t" : "double") + "(vk_e" + k + ");");
        }
        prologue.add("    }");
        ok = "!vk_xz";
        load = "vk_xv";
      }
      l.add("  { // " + a);
      l.addAll(prologue);
      l.add("    bool vk_ok = " + ok + ";");
      l.add("    vk_sc[vk_lid] = vk_ok ? 1u : 0u;");
      if (a.function() != Function.COUNT) {
        l.add("    " + arr + "[vk_lid] = vk_ok ? " + load + " : " + zero + ";");
      }
      l.add("    barrier();");
      l.add("    for (uint s = 1u; s < gl_WorkGroupSize.x; s <<= 1u) {");
      l.add("      uint o = vk_lid + s;");
      l.add("      if ((vk_lid & (2u * s - 1u)) == 0u && o < gl_WorkGroupSize.x) {");
      switch (a.function()) {
        case SUM, AVG -> l.add("        " + arr + "[vk_lid] += " + arr + "[o];");
        case MIN, MAX -> {
          String better = whole
              ? (a.function() == Function.MAX ? arr + "[o] > " + arr + "[vk_lid]" : arr + "[o] < " + arr + "[vk_lid]")
              : (a.function() == Function.MAX ? "vk_gt(" + arr + "[o], " + arr + "[vk_lid])"
                  : "vk_gt(" + arr + "[vk_lid], " + arr + "[o])");
          l.add("        if (vk_sc[o] != 0u && (vk_sc[vk_lid] == 0u || " + better + ")) { " + arr + "[vk_lid] = "
              + arr + "[o]; }");
        }
        case COUNT -> { }
      }
      l.add("        vk_sc[vk_lid] += vk_sc[o];");
      l.add("      }");
      l.add("      barrier();");
      l.add("    }");
      l.add("    if (vk_lid == 0u) {");
      l.add("      uint p = (vk_gid * " + aggs.size() + "u + " + i + "u) * 4u;");
      if (a.function() == Function.COUNT) {
        l.add("      vk_p[p] = 0u; vk_p[p + 1u] = 0u;");
      } else if (whole) {
        l.add("      int64_t v = vk_si[0];");
        l.add("      vk_p[p] = uint(uint64_t(v)); vk_p[p + 1u] = uint(uint64_t(v) >> 32u);");
      } else {
        l.add("      uvec2 v = unpackDouble2x32(vk_sd[0]);");
        l.add("      vk_p[p] = v.x; vk_p[p + 1u] = v.y;");
      }
      l.add("      vk_p[p + 2u] = vk_sc[0]; vk_p[p + 3u] = 0u;");
      l.add("    }");
      l.add("    barrier(); // the shared arrays are reused by the next aggregate");
      l.add("  }");
    }
    l.add("}");
    return String.join("\n", l) + "\n";
  }

  /**
   * The program: params at binding 0 (the kernels' buffer: rows, then a bit per call saying its
   * validity buffer holds nulls), each read call's result and validity, the partials; indirect.
   */
  Program program(int workgroupSize) {
    Program.Builder b = Program.spirv("vkspark-reduce", ByteBuffer.wrap(spirv))
        .workgroupSize(workgroupSize)
        .buffer(BufferDecl.params("params", 0))
        .indirect("params", ColumnKernel.GROUPS_OFFSET)
        .clearOutputs(false)
        // the workgroup's running values and counts (declared in the shader, never bound)
        .buffer(new BufferDecl("shared", 0, 0, MemoryKind.SHARED, ElementType.UINT32, false, 0));
    int binding = 1;
    for (int c : reads) {
      b.buffer(new BufferDecl("v" + c, 0, binding++, MemoryKind.READ_ONLY, ColumnKernel.elementType(callTypes.get(c)), false, 0));
      b.buffer(new BufferDecl("n" + c, 0, binding++, MemoryKind.READ_ONLY, ElementType.UINT32, false, 0));
    }
    b.buffer(BufferDecl.output("partials", binding, ElementType.UINT32));
    return b.build();
  }

  /** Bytes of the partials of {@code groups} workgroups. */
  long partialBytes(long groups) {
    return io.vkspark.gpu.Sizes.multiply(groups, (long) aggregates.size() * PARTIAL_BYTES, "bytes of the partials");
  }

  /**
   * Folds {@code groups} workgroups' partials at {@code address} into {@code acc} (one per
   * aggregate, updated in place), in workgroup order: sums add, MIN/MAX keep the first of equals.
   */
  void fold(long address, int groups, Value[] acc) {
    for (int g = 0; g < groups; g++) {
      for (int i = 0; i < aggregates.size(); i++) {
        long at = address + ((long) g * aggregates.size() + i) * PARTIAL_BYTES;
        long bits = RawMemory.memGetLong(at);
        long count = RawMemory.memGetLong(at + 8) & 0xffffffffL; // the count and 4 bytes of padding
        acc[i] = combine(i, acc[i], count, bits);
      }
    }
  }

  /** An empty accumulator per aggregate (count 0, SUM from 0 / 0.0). */
  Value[] empty() {
    Value[] v = new Value[aggregates.size()];
    java.util.Arrays.fill(v, new Value(0, 0, 0.0));
    return v;
  }

  /** {@code acc} with one more partial ({@code count} rows; {@code bits} the int64 or double's bits). */
  private Value combine(int i, Value acc, long count, long bits) {
    if (count == 0) {
      return acc;
    }
    Aggregate a = aggregates.get(i);
    boolean whole = integral(a, callTypes) && a.function() != Function.AVG;
    double d = Double.longBitsToDouble(bits);
    long n = acc.count() + count;
    return switch (a.function()) {
      case COUNT -> new Value(n, 0, 0.0);
      case SUM, AVG -> whole ? new Value(n, acc.integral() + bits, 0.0) : new Value(n, 0, acc.floating() + d);
      case MIN, MAX -> {
        boolean max = a.function() == Function.MAX;
        boolean better = acc.count() == 0 || (whole ? (max ? bits > acc.integral() : bits < acc.integral())
            : (max ? greater(d, acc.floating()) : greater(acc.floating(), d)));
        yield better ? new Value(n, whole ? bits : 0, whole ? 0.0 : d) : new Value(n, acc.integral(), acc.floating());
      }
    };
  }

  /** Spark's order: NaN above everything, {@code -0.0 == 0.0}. */
  static boolean greater(double x, double y) {
    return Double.isNaN(x) ? !Double.isNaN(y) : !Double.isNaN(y) && x > y;
  }

  public List<Aggregate> aggregates() {
    return aggregates;
  }

  /** The result type of each call, in call order. */
  public List<SqlType> callTypes() {
    return callTypes;
  }

  /** The calls read, ascending. */
  int[] reads() {
    return reads.clone();
  }

  /** The generated GLSL, for debugging. */
  public String source() {
    return source;
  }

  /** Name and SHA-256 of the generated source: the key of loaded programs. */
  public String id() {
    return id;
  }

  /** Why this reduction cannot run on {@code device}, if it cannot: the shader features it lacks. */
  public java.util.Optional<String> unsupportedOn(DeviceInfo device) {
    Set<ShaderFeature> missing = device.features().missing(requirements);
    return missing.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of("the GPU reduction of " + aggregates
        + " needs " + SpirvSeal.describe(missing) + ", which device '" + device.name() + "' does not support");
  }

  @Override
  public String toString() {
    return "ColumnReduction" + aggregates;
  }
}
