package io.vkspark.gpu.column.reduce;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.CompileResult;
import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.internal.GlslCompiler;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.MemoryKind;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.ShaderFeature;
import io.vkspark.gpu.Sizes;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.column.reduce.ColumnReduction.Aggregate;
import io.vkspark.gpu.internal.SealedCompiler;
import io.vkspark.gpu.internal.SpirvModule;
import io.vkspark.gpu.internal.SpirvSeal;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * A reduction's device side: its compiled, sealed passes (one, or a grouped reduction's two), the
 * programs that load them and the sizes of the buffers between them. The runtime and the buffer
 * sets of {@code io.vkspark.gpu.column} read it; users do not need it.
 *
 * <p>The passes are compiled by {@link SealedCompiler}, the path UDF kernels take: each module is
 * checked against its own program's buffers, fresh or cached.
 */
public final class ReductionPasses {
  /** First-pass workgroups of a grouped reduction per dispatch, at most, where the loop limit allows. */
  static final int FIRST_PASS_GROUPS = 1024;
  /**
   * Bytes of a grouped reduction's parameters: key base (int64), null slot, key-null flag, first-pass
   * groups (x, y, z), their total, the slots in use (the batch's key range, and null), the chunks
   * per first-pass workgroup, padding.
   */
  public static final int KEY_PARAMS_BYTES = 48;
  /** Offset of the first pass's indirect group counts in the key parameters. */
  public static final int KEY_GROUPS_OFFSET = 16;

  /** What the device computes: the aggregates, then (grouped) a hidden COUNT(*) giving each key's rows. */
  private final List<Aggregate> all;
  private final List<SqlType> callTypes;
  /** The calls read, in binding order (each: its result, then its validity). */
  private final int[] reads;
  /** The row filter's input columns and their types, in binding order (each: its values, then its validity). */
  private final RowFilterGlsl filter;
  /** The type of the key's source buffer (null when ungrouped) and the key's slots per batch. */
  private final SqlType keyType;
  private final int slots;
  private final String source;
  private final byte[] spirv;
  private final String id;
  /** Grouped: the second pass; null when ungrouped. */
  private final byte[] secondSpirv;
  private final String secondId;
  private final Set<ShaderFeature> requirements;

  private ReductionPasses(List<Aggregate> all, List<SqlType> callTypes, RowFilterGlsl filter, SqlType keyType, int slots,
                          String what, String source, String secondSource) {
    this.all = all;
    this.callTypes = callTypes;
    this.filter = filter;
    this.reads = ReductionGlsl.reads(all);
    this.keyType = keyType;
    this.slots = slots;
    this.source = source;
    boolean keyed = keyType != null;
    this.spirv = compile(keyed ? "vkspark-reduce-keyed.comp" : "vkspark-reduce.comp", source, what,
        spv -> program(spv, 64));
    this.id = "reduce-" + GlslCompiler.key(source, GlslCompiler.Flavor.OPTIMIZED);
    this.secondSpirv = keyed ? compile("vkspark-reduce-keys.comp", secondSource, what, spv -> secondProgram(spv, 64)) : null;
    this.secondId = keyed ? "reduce2-" + GlslCompiler.key(secondSource, GlslCompiler.Flavor.OPTIMIZED) : null;
    Set<ShaderFeature> req = new HashSet<>(SpirvSeal.requirements(SpirvModule.parse("vkspark reduction", spirv)));
    if (secondSpirv != null) {
      req.addAll(SpirvSeal.requirements(SpirvModule.parse("vkspark reduction", secondSpirv)));
    }
    this.requirements = Set.copyOf(req);
  }

  /** The pass of an ungrouped reduction of {@code aggs} (with a filter: and the hidden COUNT(*) of the rows kept). */
  static ReductionPasses ungrouped(List<Aggregate> aggs, List<SqlType> types, DeviceExpr filter, String what) {
    RowFilterGlsl f = RowFilterGlsl.of(filter);
    return new ReductionPasses(aggs, types, f, null, 0, what,
        UngroupedShader.source(aggs, types, ReductionGlsl.reads(aggs), f), null);
  }

  /** The two passes of a grouped reduction computing {@code all} (the aggregates and the hidden COUNT(*)). */
  static ReductionPasses grouped(List<Aggregate> all, List<SqlType> types, GroupKey key, int slots, DeviceExpr filter,
                                 String what) {
    RowFilterGlsl f = RowFilterGlsl.of(filter);
    return new ReductionPasses(all, types, f, key.sourceType(), slots, what,
        GroupedShader.firstPass(all, types, ReductionGlsl.reads(all), key, slots, f),
        GroupedShader.secondPass(all, types, slots));
  }

  /** Compiles and seals one pass; a shader vkspark generated that fails either is vkspark's bug. */
  static byte[] compile(String file, String source, String what, Function<byte[], Program> program) {
    CompileResult r = SealedCompiler.compile(file, source, null, new SealedCompiler.Seal(program, m -> { },
        e -> GpuException.of(Code.COMPILE, "the GPU reduction " + what + " compiles to a shader that is not sealed: "
            + e.what(), "fold these aggregates on the host, and report the shader (ColumnReduction.source()).")));
    if (!r.ok()) {
      throw GpuException.of(Code.COMPILE,
          "GLSL program '" + file.replaceFirst("\\.comp$", "") + "' does not compile: " + r.log().strip(),
          "correct the shader at the line shaderc names.");
    }
    return r.spirv().get();
  }

  /**
   * The program: params at binding 0 (the kernels' buffer: rows, then a bit per call saying its
   * validity buffer holds nulls), each read call's result and validity, the partials; indirect.
   * Grouped: the first pass, with the key parameters (binding 1, its indirect group counts), the
   * key and its validity (2, 3) before the calls read.
   */
  public Program program(int workgroupSize) {
    return program(spirv, workgroupSize);
  }

  /** The first (or only) pass's program over {@code module}: what its SPIR-V is sealed against. */
  Program program(byte[] module, int workgroupSize) {
    boolean keyed = keyType != null;
    Program.Builder b = Program.spirv(keyed ? "vkspark-reduce-keyed" : "vkspark-reduce", ByteBuffer.wrap(module))
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
    for (int j = 0; j < filter.inputs().length; j++) {
      b.buffer(new BufferDecl("f" + j, 0, binding++, MemoryKind.READ_ONLY, ColumnKernel.elementType(filter.types()[j]), false, 0));
      b.buffer(new BufferDecl("fn" + j, 0, binding++, MemoryKind.READ_ONLY, ElementType.UINT32, false, 0));
    }
    b.buffer(BufferDecl.output("partials", binding, ElementType.UINT32));
    return b.build();
  }

  /** Grouped: the second pass's program (key parameters, the first pass's partials; the per-key partials out). */
  public Program secondProgram(int workgroupSize) {
    return secondProgram(secondSpirv, workgroupSize);
  }

  private static Program secondProgram(byte[] module, int workgroupSize) {
    return Program.spirv("vkspark-reduce-keys", ByteBuffer.wrap(module))
        .workgroupSize(workgroupSize)
        .clearOutputs(false)
        // a block of partials and their counts (declared in the shader, never bound)
        .buffer(new BufferDecl("shared", 0, 0, MemoryKind.SHARED, ElementType.UINT32, false, 0))
        .buffer(BufferDecl.input("kparams", 0, ElementType.UINT32))
        .buffer(BufferDecl.input("partials", 1, ElementType.UINT32))
        .buffer(BufferDecl.output("keyed", 2, ElementType.UINT32))
        .build();
  }

  /** Name and SHA-256 of the first (or only) pass's source: the key of loaded programs. */
  public String id() {
    return id;
  }

  /** Name and SHA-256 of the second pass's source; null when ungrouped. */
  public String secondId() {
    return secondId;
  }

  /** The first (or only) pass's GLSL, for debugging. */
  String source() {
    return source;
  }

  /** The shader features the passes need. */
  Set<ShaderFeature> requirements() {
    return requirements;
  }

  /** Whether {@code device} lacks a feature the passes need: those it lacks. */
  Set<ShaderFeature> missingOn(DeviceInfo device) {
    return device.features().missing(requirements);
  }

  /**
   * The input columns the row filter reads, ascending (bound after the calls read, each with a
   * validity buffer the host writes when it has nulls); empty without a filter.
   */
  public int[] filterInputs() {
    return filter.inputs().clone();
  }

  /** The calls read, ascending: each gets a validity buffer the host writes when it has nulls. */
  public int[] reads() {
    return reads.clone();
  }

  /**
   * Grouped: workgroup-sized chunks of rows each first-pass workgroup reduces, for buffers of
   * {@code capacity} rows: enough for at most {@link #FIRST_PASS_GROUPS} workgroups, which bounds the
   * device-only partials ({@code groups x slots x (aggregates + 1) x 16} bytes); on a device whose
   * driver cuts loops short ({@code loopLimit > 0}, lavapipe) no more than keeps an invocation's
   * loop iterations (chunks x slots or workgroup size x aggregates) within half the limit.
   */
  public int chunks(int capacity, int workgroupSize, int loopLimit) {
    long want = Math.max(1, (capacity + (long) workgroupSize * FIRST_PASS_GROUPS - 1) / ((long) workgroupSize * FIRST_PASS_GROUPS));
    if (loopLimit > 0) {
      long cap = Math.max(1, (loopLimit / 2L) / ((long) all.size() * Math.max(slots, workgroupSize)));
      want = Math.min(want, cap);
    }
    return (int) Math.min(want, 1 << 16);
  }

  /** Grouped: bytes of the first pass's partials for {@code groups} first-pass workgroups. */
  public long keyedPartialBytes(long groups) {
    return Sizes.multiply(Sizes.multiply(groups, slots, "key slots"),
        (long) all.size() * HostFold.PARTIAL_BYTES, "bytes of the keyed partials");
  }

  /** Grouped: bytes of the per-key partials of the first {@code used} slots (all slots: the output buffer's size). */
  public long keyedResultBytes(int used) {
    return (long) used * all.size() * HostFold.PARTIAL_BYTES;
  }

  /** Grouped: workgroups of the second pass (one per key slot and aggregate computed). */
  public int secondPassWorkgroups() {
    return slots * all.size();
  }

  /** Bytes of the partials of {@code groups} workgroups. */
  public long partialBytes(long groups) {
    return Sizes.multiply(groups, (long) all.size() * HostFold.PARTIAL_BYTES, "bytes of the partials");
  }
}
