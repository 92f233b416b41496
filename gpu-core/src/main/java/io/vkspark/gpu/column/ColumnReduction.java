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

  /**
   * One key's aggregates over a batch of a grouped reduction ({@link #grouped}).
   *
   * @param nullKey whether this is the group of the rows whose key is null ({@code key} is then 0)
   * @param key the key value (a date as its epoch day)
   * @param rows the batch's rows with this key (at least 1)
   * @param values one per aggregate, as {@link Result#values()}
   */
  public record Group(boolean nullKey, long key, long rows, List<Value> values) {
    public Group {
      values = List.copyOf(values);
    }
  }

  /**
   * What {@link BatchRunner#runGrouped} returns: the rows of the batch and one {@link Group} per
   * key present, ascending by key, the null key last.
   */
  public record Grouped(long rows, List<Group> groups) {
    public Grouped {
      groups = List.copyOf(groups);
    }
  }

  /** The first lines of every generated reduction shader. */
  private static final List<String> PREAMBLE = List.of("#version 450",
      "#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require");
  /** The kernels' params buffer (binding 0): rows, then a bit per call saying its validity buffer holds nulls. */
  private static final String PARAMS = "layout(std140, set = 0, binding = 0) uniform VkParams { uint vk_rows; uint vk_nulls;"
      + " uint vk_pad1; uint vk_pad2; uvec4 vk_groups; };";
  /** Spark's order of doubles: NaN (tested on the bits) above everything, {@code -0.0 == 0.0}. */
  private static final List<String> ORDER = List.of("bool vk_isnan(double x) { uvec2 u = unpackDouble2x32(x);"
          + " return (u.y & 0x7ff00000u) == 0x7ff00000u && ((u.y & 0xfffffu) | u.x) != 0u; }",
      "bool vk_gt(double x, double y) { return vk_isnan(x) ? !vk_isnan(y) : (!vk_isnan(y) && x > y); }");

  /** Declares each read call's result and validity buffer from binding {@code b} on; returns the next binding. */
  private static int bindReads(List<String> l, int[] reads, List<SqlType> types, int b) {
    for (int c : reads) {
      l.add("layout(std430, set = 0, binding = " + b++ + ") readonly buffer VkV" + c + " { "
          + types.get(c).bufferElement() + " vk_v" + c + "[]; };");
      l.add("layout(std430, set = 0, binding = " + b++ + ") readonly buffer VkN" + c + " { uint vk_n" + c + "[]; };");
    }
    return b;
  }

  /** Bytes of one workgroup's partial of one aggregate: value (8), count (4), padding (4). */
  static final int PARTIAL_BYTES = 16;
  /** Key slots of a grouped reduction unless the caller asks otherwise: distinct keys (and null) per batch. */
  public static final int DEFAULT_SLOTS = 64;
  /** Most key slots of a grouped reduction (its first pass scans its rows once per slot). */
  public static final int MAX_SLOTS = 256;
  /** First-pass workgroups of a grouped reduction per dispatch, at most, where the loop limit allows. */
  static final int FIRST_PASS_GROUPS = 1024;
  /** Most aggregates of a grouped reduction (bounds the loop iterations of one invocation). */
  public static final int MAX_GROUPED_AGGREGATES = 32;
  /**
   * Bytes of a grouped reduction's parameters: key base (int64), null slot, key-null flag, first-pass
   * groups (x, y, z), their total, the slots in use (the batch's key range, and null), the chunks
   * per first-pass workgroup, padding.
   */
  static final int KEY_PARAMS_BYTES = 48;
  /** Offset of the first pass's indirect group counts in the key parameters. */
  static final int KEY_GROUPS_OFFSET = 16;
  private static final Map<String, ColumnReduction> CACHE = new ConcurrentHashMap<>();

  private final List<Aggregate> aggregates;
  /** What the device computes: the aggregates, then (grouped) a hidden COUNT(*) giving each key's rows. */
  private final List<Aggregate> all;
  private final List<SqlType> callTypes;
  /** The grouping key: the runner's input column it is (-1: ungrouped), its type and the slots per batch. */
  private final int keyColumn;
  private final SqlType keyType;
  private final int slots;
  /** Grouped: the second pass (per-workgroup partials to one per key slot and aggregate). */
  private final byte[] secondSpirv;
  private final String secondId;
  /** The calls read, in binding order (each: its result, then its validity). */
  private final int[] reads;
  private final String source;
  private final byte[] spirv;
  private final String id;
  private final Set<ShaderFeature> requirements;

  private ColumnReduction(List<Aggregate> aggregates, List<Aggregate> all, List<SqlType> callTypes, int[] reads,
                          int keyColumn, SqlType keyType, int slots, String source, byte[] spirv,
                          String secondSource, byte[] secondSpirv) {
    this.aggregates = aggregates;
    this.all = all;
    this.callTypes = callTypes;
    this.reads = reads;
    this.keyColumn = keyColumn;
    this.keyType = keyType;
    this.slots = slots;
    this.source = source;
    this.spirv = spirv;
    this.id = "reduce-" + GlslCompiler.key(source, GlslCompiler.Flavor.OPTIMIZED);
    this.secondSpirv = secondSpirv;
    this.secondId = secondSource == null ? null : "reduce2-" + GlslCompiler.key(secondSource, GlslCompiler.Flavor.OPTIMIZED);
    Set<ShaderFeature> req = new java.util.HashSet<>(SpirvSeal.requirements(SpirvModule.parse("vkspark reduction", spirv)));
    if (secondSpirv != null) {
      req.addAll(SpirvSeal.requirements(SpirvModule.parse("vkspark reduction", secondSpirv)));
    }
    this.requirements = Set.copyOf(req);
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
    validate(aggs, types);
    String key = aggs + "|" + types;
    return CACHE.computeIfAbsent(key, k -> compile(aggs, types));
  }

  /**
   * The reduction of {@code aggregates} per value of an integral key: the runner's input column
   * {@code keyColumn} (of {@code keyType}: int, bigint or date), which the runner uploads whether
   * or not a call reads it. Per batch the runner finds the key's range on the host; when its
   * distinct possible values (plus one for null keys) fit {@code slots}, the device reduces each
   * workgroup's rows into per-key partials in device-only memory and a second pass folds those over
   * the workgroups, in workgroup order, into one partial per key and aggregate, the only bytes that
   * come back ({@link BatchRunner#runGrouped}); otherwise the batch is left to the caller. The
   * semantics per key are those of {@link #of}, with the same exactness and tolerance.
   *
   * @param slots key slots per batch, 1 to {@link #MAX_SLOTS} (e.g. {@link #DEFAULT_SLOTS})
   * @throws GpuException INVALID_ARGUMENT as {@link #of}, for a key type other than int, bigint or
   *     date, a negative key column, slots out of range, or more than {@link #MAX_GROUPED_AGGREGATES}
   *     aggregates
   */
  public static ColumnReduction grouped(List<Aggregate> aggregates, List<SqlType> callTypes, int keyColumn,
                                        SqlType keyType, int slots) {
    List<Aggregate> aggs = List.copyOf(aggregates);
    List<SqlType> types = List.copyOf(callTypes);
    validate(aggs, types);
    if (!groupable(keyType) || keyColumn < 0) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a grouped reduction keyed by input column " + keyColumn + " of type "
          + (keyType == null ? "null" : keyType.sqlName()) + ".", "group by an int, bigint or date input column of the runner.");
    }
    if (slots < 1 || slots > MAX_SLOTS) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a grouped reduction with " + slots + " key slots.",
          "use 1 to " + MAX_SLOTS + " slots (" + DEFAULT_SLOTS + " is the default).");
    }
    if (aggs.size() > MAX_GROUPED_AGGREGATES) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "a grouped reduction of " + aggs.size() + " aggregates; at most "
          + MAX_GROUPED_AGGREGATES + " are supported.", "fold this many aggregates on the host.");
    }
    String key = aggs + "|" + types + "|key " + keyColumn + " " + keyType + " " + slots;
    return CACHE.computeIfAbsent(key, k -> compileGrouped(aggs, types, keyColumn, keyType, slots));
  }

  /** The key types a grouped reduction groups by. */
  public static boolean groupable(SqlType t) {
    return t == SqlType.INT || t == SqlType.BIGINT || t == SqlType.DATE;
  }

  private static void validate(List<Aggregate> aggs, List<SqlType> types) {
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
  }

  /** The result types a reduction reads. */
  public static boolean reducible(SqlType t) {
    return t == SqlType.INT || t == SqlType.BIGINT || t == SqlType.FLOAT || t == SqlType.DOUBLE;
  }

  private static ColumnReduction compile(List<Aggregate> aggs, List<SqlType> types) {
    int[] reads = reads(aggs);
    String source = generate(aggs, types, reads);
    byte[] spirv = GlslCompiler.compileOrThrow("vkspark-reduce.comp", source, null);
    return new ColumnReduction(aggs, aggs, types, reads, -1, null, 0, source, spirv, null, null);
  }

  private static ColumnReduction compileGrouped(List<Aggregate> aggs, List<SqlType> types, int keyColumn, SqlType keyType,
                                                int slots) {
    List<Aggregate> all = new ArrayList<>(aggs);
    all.add(new Aggregate(Function.COUNT, -1)); // each key's rows, so a key whose values are all null still has a group
    int[] reads = reads(all);
    String first = generateGrouped(all, types, reads, keyType, slots);
    String second = generateSecondPass(all, types, slots);
    byte[] spirv = GlslCompiler.compileOrThrow("vkspark-reduce-keyed.comp", first, null);
    byte[] spirv2 = GlslCompiler.compileOrThrow("vkspark-reduce-keys.comp", second, null);
    return new ColumnReduction(aggs, List.copyOf(all), types, reads, keyColumn, keyType, slots, first, spirv,
        second, spirv2);
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

  /** Whether an aggregate accumulates a double (the shader then needs double arrays and {@link #ORDER}). */
  private static boolean anyDouble(List<Aggregate> aggs, List<SqlType> types) {
    return aggs.stream().anyMatch(a -> !integral(a, types) || a.function() == Function.AVG);
  }

  /** Whether an argument expression computes with floats or doubles (the shader then needs {@link DeviceExprGlsl#HELPERS}). */
  private static boolean exprFloating(List<Aggregate> aggs, List<SqlType> types) {
    return aggs.stream().anyMatch(a -> computed(a) && floating(a.argument(), types));
  }

  /**
   * GLSL for "{@code x} replaces {@code v}" in a MIN or MAX ({@code whole}: int64 values, else
   * doubles in Spark's order, NaN above everything); equal values keep {@code v}, the first.
   */
  private static String better(Function f, boolean whole, String x, String v) {
    boolean max = f == Function.MAX;
    return whole ? x + (max ? " > " : " < ") + v : max ? "vk_gt(" + x + ", " + v + ")" : "vk_gt(" + v + ", " + x + ")";
  }

  /** Whether an argument is more than a call's result (computed per row by {@link DeviceExprGlsl}). */
  private static boolean computed(Aggregate a) {
    return a.argument() != null && !(a.argument() instanceof DeviceExpr.Call);
  }

  /**
   * How the shaders read an aggregate's argument in row {@code vk_row} (in range when {@code vk_in}):
   * lines computing it (an expression: its value and null flag into {@code vk_xv}, {@code vk_xz}),
   * then whether the row counts and its value.
   */
  private record RowValue(List<String> prologue, String ok, String load) {}

  private static RowValue rowValue(Aggregate a, List<SqlType> types, boolean whole, String indent) {
    String t = whole ? "int64_t" : "double";
    if (a.argument() == null) {
      return new RowValue(List.of(), "vk_in", "0");
    }
    if (!computed(a)) {
      int c = a.call();
      return new RowValue(List.of(), "vk_in && (((vk_nulls >> " + c + "u) & 1u) == 0u || ((vk_n" + c
          + "[vk_row >> 5u] >> (vk_row & 31u)) & 1u) != 0u)", t + "(vk_v" + c + "[vk_row])");
    }
    List<String> prologue = new ArrayList<>();
    prologue.add(indent + "bool vk_xz = true;");
    prologue.add(indent + t + " vk_xv = " + (whole ? "int64_t(0)" : "0.0lf") + ";");
    prologue.add(indent + "if (vk_in) {");
    DeviceExprGlsl g = new DeviceExprGlsl(types, prologue, indent + "  ", 0);
    int k = g.emit(a.argument());
    prologue.add(indent + "  vk_xz = vk_z" + k + ";");
    if (a.function() != Function.COUNT) {
      prologue.add(indent + "  vk_xv = " + t + "(vk_e" + k + ");");
    }
    prologue.add(indent + "}");
    return new RowValue(prologue, "!vk_xz", "vk_xv");
  }

  /** The calls whose results the aggregates read, ascending. */
  private static int[] reads(List<Aggregate> aggs) {
    return aggs.stream().filter(a -> a.argument() != null).flatMap(a -> a.argument().calls().stream())
        .mapToInt(Integer::intValue).distinct().sorted().toArray();
  }

  static String generate(List<Aggregate> aggs, List<SqlType> types, int[] reads) {
    // the expression helpers compute in doubles: only where an expression has a float or double in it
    boolean exprFloating = exprFloating(aggs, types);
    boolean anyDouble = exprFloating || anyDouble(aggs, types);
    List<String> l = new ArrayList<>();
    l.addAll(PREAMBLE);
    l.add("// generated by vkspark: " + aggs + " over " + types);
    l.add("layout(local_size_x_id = 0) in;");
    l.add(PARAMS);
    int b = bindReads(l, reads, types, 1);
    l.add("layout(std430, set = 0, binding = " + b + ") writeonly buffer VkPartials { uint vk_p[]; };");
    l.add("shared uint vk_sc[gl_WorkGroupSize.x];");
    l.add("shared int64_t vk_si[gl_WorkGroupSize.x];");
    if (anyDouble) {
      l.add("shared double vk_sd[gl_WorkGroupSize.x];");
      l.addAll(ORDER);
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
      String zero = whole ? "int64_t(0)" : "0.0lf";
      RowValue row = rowValue(a, types, whole, "    ");
      String load = row.load();
      l.add("  { // " + a);
      l.addAll(row.prologue());
      l.add("    bool vk_ok = " + row.ok() + ";");
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
          String better = better(a.function(), whole, arr + "[o]", arr + "[vk_lid]");
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
   * The first pass of a grouped reduction: each workgroup reduces a few workgroup-sized chunks of
   * rows (key parameter word 9, {@link #chunks}) into one partial per key slot and aggregate. A chunk's slots and values go to
   * shared memory; the invocation owning a slot then scans the chunk in row order, so sums add in
   * row order within a workgroup and MIN/MAX keep the first of equals without any atomics.
   */
  static String generateGrouped(List<Aggregate> aggs, List<SqlType> types, int[] reads, SqlType keyType, int slots) {
    boolean exprFloating = exprFloating(aggs, types);
    boolean anyDouble = exprFloating || anyDouble(aggs, types);
    int n = aggs.size();
    List<String> l = new ArrayList<>();
    l.addAll(PREAMBLE);
    l.add("// generated by vkspark: " + aggs + " over " + types + " per " + keyType.sqlName() + " key, " + slots + " slots");
    l.add("layout(local_size_x_id = 0) in;");
    l.add("const uint VK_SLOTS = " + slots + "u;");
    l.add(PARAMS);
    l.add("layout(std430, set = 0, binding = 1) readonly buffer VkKeyParams { uint vk_kp[]; };");
    l.add("layout(std430, set = 0, binding = 2) readonly buffer VkKey { " + keyType.bufferElement() + " vk_key[]; };");
    l.add("layout(std430, set = 0, binding = 3) readonly buffer VkKeyN { uint vk_kn[]; };");
    int b = bindReads(l, reads, types, 4);
    l.add("layout(std430, set = 0, binding = " + b + ") writeonly buffer VkPartials { uint vk_p[]; };");
    l.add("shared uint vk_ss[gl_WorkGroupSize.x];"); // each chunk row's slot (VK_SLOTS: not counted)
    l.add("shared int64_t vk_si[gl_WorkGroupSize.x];");
    l.add("shared uint vk_ac[VK_SLOTS];");
    l.add("shared int64_t vk_ai[VK_SLOTS];");
    if (anyDouble) {
      l.add("shared double vk_sd[gl_WorkGroupSize.x];");
      l.add("shared double vk_ad[VK_SLOTS];");
      l.addAll(ORDER);
    }
    if (exprFloating) {
      l.addAll(DeviceExprGlsl.HELPERS);
    }
    l.add("void main() {");
    l.add("  uint vk_lid = gl_LocalInvocationID.x;");
    l.add("  uint vk_wg = gl_WorkGroupSize.x;");
    l.add("  uint vk_gid = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;");
    l.add("  uint vk_per = vk_kp[9]; // chunks per workgroup");
    l.add("  uint vk_first = vk_gid * vk_wg * vk_per;");
    l.add("  if (vk_first >= vk_rows) { return; } // the whole workgroup: no rows");
    l.add("  uint vk_chunks = min(vk_per, (vk_rows - vk_first + vk_wg - 1u) / vk_wg);");
    l.add("  int64_t vk_base = int64_t(uint64_t(vk_kp[0]) | (uint64_t(vk_kp[1]) << 32u));");
    l.add("  uint vk_nullslot = vk_kp[2];");
    l.add("  bool vk_knulls = vk_kp[3] != 0u;");
    l.add("  uint vk_used = vk_kp[8]; // slots of the batch's key range: the others have no rows");
    for (int i = 0; i < n; i++) {
      Aggregate a = aggs.get(i);
      boolean whole = integral(a, types) && a.function() != Function.AVG;
      String sh = whole ? "vk_si" : "vk_sd";
      String acc = whole ? "vk_ai" : "vk_ad";
      String t = whole ? "int64_t" : "double";
      String zero = whole ? "int64_t(0)" : "0.0lf";
      RowValue row = rowValue(a, types, whole, "      ");
      String load = row.load();
      l.add("  { // " + a);
      l.add("    for (uint s = vk_lid; s < vk_used; s += vk_wg) { vk_ac[s] = 0u; " + acc + "[s] = " + zero + "; }");
      l.add("    for (uint c = 0u; c < vk_chunks; c++) {");
      l.add("      uint vk_row = vk_first + c * vk_wg + vk_lid;");
      l.add("      bool vk_in = vk_row < vk_rows;");
      l.addAll(row.prologue());
      l.add("      bool vk_ok = " + row.ok() + ";");
      l.add("      uint vk_slot = VK_SLOTS;");
      l.add("      if (vk_ok) {");
      l.add("        bool vk_knull = vk_knulls && ((vk_kn[vk_row >> 5u] >> (vk_row & 31u)) & 1u) == 0u;");
      l.add("        vk_slot = vk_knull ? vk_nullslot : uint(int64_t(vk_key[vk_row]) - vk_base);");
      l.add("      }");
      l.add("      vk_ss[vk_lid] = vk_slot;");
      if (a.function() != Function.COUNT) {
        l.add("      " + sh + "[vk_lid] = vk_ok ? " + load + " : " + zero + ";");
      }
      l.add("      barrier();");
      l.add("      for (uint s = vk_lid; s < vk_used; s += vk_wg) {");
      l.add("        uint k = vk_ac[s];");
      l.add("        " + t + " v = " + acc + "[s];");
      l.add("        for (uint j = 0u; j < vk_wg; j++) {");
      l.add("          if (vk_ss[j] == s) {");
      switch (a.function()) {
        case SUM, AVG -> l.add("            v += " + sh + "[j];");
        case MIN, MAX -> {
          String x = sh + "[j]";
          String better = better(a.function(), whole, x, "v");
          l.add("            if (k == 0u || " + better + ") { v = " + x + "; }");
        }
        case COUNT -> { }
      }
      l.add("            k++;");
      l.add("          }");
      l.add("        }");
      l.add("        vk_ac[s] = k;");
      l.add("        " + acc + "[s] = v;");
      l.add("      }");
      l.add("      barrier(); // the chunk's shared rows are reused by the next chunk");
      l.add("    }");
      l.add("    for (uint s = vk_lid; s < vk_used; s += vk_wg) {");
      l.add("      uint p = ((vk_gid * VK_SLOTS + s) * " + n + "u + " + i + "u) * 4u;");
      if (a.function() == Function.COUNT) {
        l.add("      vk_p[p] = 0u; vk_p[p + 1u] = 0u;");
      } else if (whole) {
        l.add("      uint64_t v = uint64_t(" + acc + "[s]);");
        l.add("      vk_p[p] = uint(v); vk_p[p + 1u] = uint(v >> 32u);");
      } else {
        l.add("      uvec2 v = unpackDouble2x32(" + acc + "[s]);");
        l.add("      vk_p[p] = v.x; vk_p[p + 1u] = v.y;");
      }
      l.add("      vk_p[p + 2u] = vk_ac[s]; vk_p[p + 3u] = 0u;");
      l.add("    }");
      l.add("    barrier();");
      l.add("  }");
    }
    l.add("}");
    return String.join("\n", l) + "\n";
  }

  /**
   * The second pass of a grouped reduction: one invocation per key slot and aggregate folds the
   * first pass's per-workgroup partials in workgroup order (so in row order) into one partial.
   */
  static String generateSecondPass(List<Aggregate> aggs, List<SqlType> types, int slots) {
    boolean anyDouble = anyDouble(aggs, types);
    int n = aggs.size();
    List<String> l = new ArrayList<>();
    l.addAll(PREAMBLE);
    l.add("// generated by vkspark: per-key partials of " + aggs + " over " + types + ", " + slots + " slots");
    l.add("layout(local_size_x_id = 0) in;");
    l.add("const uint VK_SLOTS = " + slots + "u;");
    l.add("layout(std430, set = 0, binding = 0) readonly buffer VkKeyParams { uint vk_kp[]; };");
    l.add("layout(std430, set = 0, binding = 1) readonly buffer VkPartials { uint vk_p[]; };");
    l.add("layout(std430, set = 0, binding = 2) writeonly buffer VkOut { uint vk_o[]; };");
    if (anyDouble) {
      l.addAll(ORDER);
    }
    l.add("void main() {");
    l.add("  uint q = gl_GlobalInvocationID.x;");
    l.add("  if (q >= VK_SLOTS * " + n + "u) { return; }");
    l.add("  uint s = q / " + n + "u;");
    l.add("  uint i = q % " + n + "u;");
    l.add("  if (s >= vk_kp[8]) { return; } // a slot outside the batch's key range: never read");
    l.add("  uint groups = vk_kp[7];");
    l.add("  uint k = 0u;");
    l.add("  uvec2 bits = uvec2(0u);");
    for (int i = 0; i < n; i++) {
      Aggregate a = aggs.get(i);
      boolean whole = integral(a, types) && a.function() != Function.AVG;
      l.add("  " + (i == 0 ? "" : "else ") + "if (i == " + i + "u) { // " + a);
      if (a.function() != Function.COUNT) {
        l.add("    " + (whole ? "int64_t v = int64_t(0);" : "double v = 0.0lf;"));
      }
      l.add("    for (uint g = 0u; g < groups; g++) {");
      l.add("      uint p = ((g * VK_SLOTS + s) * " + n + "u + i) * 4u;");
      l.add("      uint c = vk_p[p + 2u];");
      l.add("      if (c == 0u) { continue; }");
      if (a.function() != Function.COUNT) {
        String x = whole ? "int64_t(uint64_t(vk_p[p]) | (uint64_t(vk_p[p + 1u]) << 32u))"
            : "packDouble2x32(uvec2(vk_p[p], vk_p[p + 1u]))";
        l.add("      " + (whole ? "int64_t" : "double") + " x = " + x + ";");
        switch (a.function()) {
          case SUM, AVG -> l.add("      v += x;");
          case MIN, MAX -> {
            String better = better(a.function(), whole, "x", "v");
            l.add("      if (k == 0u || " + better + ") { v = x; }");
          }
          default -> { }
        }
      }
      l.add("      k += c;");
      l.add("    }");
      if (a.function() != Function.COUNT) {
        l.add("    bits = " + (whole ? "uvec2(uint(uint64_t(v)), uint(uint64_t(v) >> 32u))" : "unpackDouble2x32(v)") + ";");
      }
      l.add("  }");
    }
    l.add("  uint o = q * 4u;");
    l.add("  vk_o[o] = bits.x; vk_o[o + 1u] = bits.y; vk_o[o + 2u] = k; vk_o[o + 3u] = 0u;");
    l.add("}");
    return String.join("\n", l) + "\n";
  }

  /**
   * The program: params at binding 0 (the kernels' buffer: rows, then a bit per call saying its
   * validity buffer holds nulls), each read call's result and validity, the partials; indirect.
   * Grouped: the first pass, with the key parameters (binding 1, its indirect group counts), the
   * key and its validity (2, 3) before the calls read.
   */
  Program program(int workgroupSize) {
    boolean keyed = grouped();
    Program.Builder b = Program.spirv(keyed ? "vkspark-reduce-keyed" : "vkspark-reduce", ByteBuffer.wrap(spirv))
        .workgroupSize(workgroupSize)
        .buffer(BufferDecl.params("params", 0))
        .clearOutputs(false)
        // the workgroup's running values and counts (declared in the shader, never bound)
        .buffer(new BufferDecl("shared", 0, 0, MemoryKind.SHARED, ElementType.UINT32, false, 0));
    int binding = 1;
    if (keyed) {
      b.buffer(BufferDecl.input("kparams", binding++, ElementType.UINT32))
          .indirect("kparams", KEY_GROUPS_OFFSET)
          .buffer(BufferDecl.input("key", binding++, ColumnKernel.elementType(keyType)))
          .buffer(BufferDecl.input("keyvalid", binding++, ElementType.UINT32));
    } else {
      b.indirect("params", ColumnKernel.GROUPS_OFFSET);
    }
    for (int c : reads) {
      b.buffer(new BufferDecl("v" + c, 0, binding++, MemoryKind.READ_ONLY, ColumnKernel.elementType(callTypes.get(c)), false, 0));
      b.buffer(new BufferDecl("n" + c, 0, binding++, MemoryKind.READ_ONLY, ElementType.UINT32, false, 0));
    }
    b.buffer(BufferDecl.output("partials", binding, ElementType.UINT32));
    return b.build();
  }

  /** Grouped: the second pass's program (key parameters, the first pass's partials; the per-key partials out). */
  Program secondProgram(int workgroupSize) {
    return Program.spirv("vkspark-reduce-keys", ByteBuffer.wrap(secondSpirv))
        .workgroupSize(workgroupSize)
        .clearOutputs(false)
        .buffer(BufferDecl.input("kparams", 0, ElementType.UINT32))
        .buffer(BufferDecl.input("partials", 1, ElementType.UINT32))
        .buffer(BufferDecl.output("keyed", 2, ElementType.UINT32))
        .build();
  }

  /** Whether this reduction is grouped by a key ({@link #grouped}). */
  public boolean grouped() {
    return keyColumn >= 0;
  }

  /** The runner's input column holding the key; -1 when ungrouped. */
  public int keyColumn() {
    return keyColumn;
  }

  /** The key's type; null when ungrouped. */
  public SqlType keyType() {
    return keyType;
  }

  /** Key slots per batch (distinct key values, plus one for null keys); 0 when ungrouped. */
  public int slots() {
    return slots;
  }

  /**
   * Grouped: workgroup-sized chunks of rows each first-pass workgroup reduces, for buffers of
   * {@code capacity} rows: enough for at most {@link #FIRST_PASS_GROUPS} workgroups, which bounds the
   * device-only partials ({@code groups x slots x (aggregates + 1) x 16} bytes); on a device whose
   * driver cuts loops short ({@code loopLimit > 0}, lavapipe) no more than keeps an invocation's
   * loop iterations (chunks x slots or workgroup size x aggregates) within half the limit.
   */
  int chunks(int capacity, int workgroupSize, int loopLimit) {
    long want = Math.max(1, (capacity + (long) workgroupSize * FIRST_PASS_GROUPS - 1) / ((long) workgroupSize * FIRST_PASS_GROUPS));
    if (loopLimit > 0) {
      long cap = Math.max(1, (loopLimit / 2L) / ((long) all.size() * Math.max(slots, workgroupSize)));
      want = Math.min(want, cap);
    }
    return (int) Math.min(want, 1 << 16);
  }

  /** Grouped: bytes of the first pass's partials for {@code groups} first-pass workgroups. */
  long keyedPartialBytes(long groups) {
    return io.vkspark.gpu.Sizes.multiply(io.vkspark.gpu.Sizes.multiply(groups, slots, "key slots"),
        (long) all.size() * PARTIAL_BYTES, "bytes of the keyed partials");
  }

  /** Grouped: bytes of the per-key partials of the first {@code used} slots (all slots: the output buffer's size). */
  long keyedResultBytes(int used) {
    return (long) used * all.size() * PARTIAL_BYTES;
  }

  /** Name and SHA-256 of the second pass's source; null when ungrouped. */
  String secondId() {
    return secondId;
  }

  /** Bytes of the partials of {@code groups} workgroups. */
  long partialBytes(long groups) {
    return io.vkspark.gpu.Sizes.multiply(groups, (long) all.size() * PARTIAL_BYTES, "bytes of the partials");
  }

  /**
   * Folds {@code groups} workgroups' partials at {@code address} into {@code acc} (one per
   * aggregate, updated in place), in workgroup order: sums add, MIN/MAX keep the first of equals.
   */
  void fold(long address, int groups, Value[] acc) {
    for (int g = 0; g < groups; g++) {
      for (int i = 0; i < all.size(); i++) {
        long at = address + ((long) g * all.size() + i) * PARTIAL_BYTES;
        long bits = RawMemory.memGetLong(at);
        long count = RawMemory.memGetLong(at + 8) & 0xffffffffL; // the count and 4 bytes of padding
        acc[i] = combine(i, acc[i], count, bits);
      }
    }
  }

  /** An empty accumulator per aggregate (count 0, SUM from 0 / 0.0). */
  Value[] empty() {
    Value[] v = new Value[all.size()];
    java.util.Arrays.fill(v, new Value(0, 0, 0.0));
    return v;
  }

  /** {@code acc} with one more partial ({@code count} rows; {@code bits} the int64 or double's bits). */
  private Value combine(int i, Value acc, long count, long bits) {
    if (count == 0) {
      return acc;
    }
    Aggregate a = all.get(i);
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

  /**
   * Grouped: folds the per-key partials at {@code address} (one dispatch's first {@code used}
   * slots, {@code aggregates + 1} each) into {@code acc[slot]}, in place; dispatches of a batch are
   * folded in order.
   */
  void foldKeyed(long address, int used, Value[][] acc) {
    int n = all.size();
    for (int s = 0; s < used; s++) {
      for (int i = 0; i < n; i++) {
        long at = address + ((long) s * n + i) * PARTIAL_BYTES;
        acc[s][i] = combine(i, acc[s][i], RawMemory.memGetLong(at + 8) & 0xffffffffL, RawMemory.memGetLong(at));
      }
    }
  }

  /**
   * Grouped: the batch's groups from the folded slots: slot {@code s} is key {@code base + s}, except
   * {@code nullSlot} when the batch has null keys; slots without rows give no group.
   */
  Grouped groups(long rows, Value[][] acc, long base, int nullSlot, boolean nullKeys) {
    List<Group> out = new ArrayList<>();
    Group nulls = null;
    for (int s = 0; s < slots; s++) {
      long n = acc[s][all.size() - 1].count();
      if (n == 0) {
        continue;
      }
      List<Value> values = List.of(acc[s]).subList(0, aggregates.size());
      if (nullKeys && s == nullSlot) {
        nulls = new Group(true, 0, n, values);
      } else {
        out.add(new Group(false, base + s, n, values));
      }
    }
    if (nulls != null) {
      out.add(nulls);
    }
    return new Grouped(rows, out);
  }

  @Override
  public String toString() {
    return "ColumnReduction" + aggregates + (grouped() ? " by input " + keyColumn + " (" + slots + " slots)" : "");
  }
}
