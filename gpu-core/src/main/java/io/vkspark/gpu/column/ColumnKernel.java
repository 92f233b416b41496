package io.vkspark.gpu.column;

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
import io.vkspark.gpu.internal.SealedCompiler;
import io.vkspark.gpu.internal.SpirvModule;
import io.vkspark.gpu.internal.SpirvSeal;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A GPU UDF compiled to a whole compute shader: from its {@link KernelSpec} (a {@link KernelSignature} and a GLSL body),
 * vkspark generates the row index, the bound check against the batch's row count, the loads of
 * each argument, the call and the store. One invocation computes one row.
 *
 * <p>The body is either a function body with {@code return}, or a single expression:
 *
 * <pre>{@code
 * ColumnKernel k = ColumnKernel.compile(
 *     KernelSignature.of("saxpy", SqlType.FLOAT, arg("x", SqlType.FLOAT), arg("y", SqlType.FLOAT)),
 *     "2.5 * x + y");
 * }</pre>
 *
 * <p>Compilation happens here, without a device, so a body that does not compile fails when the
 * UDF is defined, naming the UDF and the line <em>of the body</em>. The SPIR-V is device
 * independent: the workgroup size is a specialization constant chosen per device. Immutable and
 * thread-safe.
 */
public final class ColumnKernel implements Serializable {
  private static final long serialVersionUID = 4L;
  private static final Logger LOG = LoggerFactory.getLogger(ColumnKernel.class);
  /** Kernels whose semantics warnings were logged in this JVM: each is logged once. */
  private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();
  /** Binding of the parameter buffer: {@code uint rows} at byte 0, the group counts at byte 16. */
  public static final int PARAMS_BINDING = 0;
  /** Byte offset of the {@code VkDispatchIndirectCommand} in the parameter buffer. */
  public static final int GROUPS_OFFSET = 16;
  /** Size of the parameter buffer in bytes. */
  public static final int PARAMS_BYTES = 32;

  private static final Pattern RETURN = Pattern.compile("\\breturn\\b");
  private static final Pattern JTHROW = Pattern.compile("\\bjthrow\\s*\\(");
  /**
   * {@code jthrow()}: the row is one whose {@code call()} throws (or returns null) on the JVM. The
   * kernel counts such rows in the control block and the host recomputes the batch with
   * {@code call()} (GpuException RECOMPUTE), so the query fails, or not, exactly as on the CPU.
   */
  private static final String JTHROW_FUNCTION = "bool vkj_thrown = false;\nvoid jthrow() { vkj_thrown = true; }";
  private static final Pattern PRECISE = Pattern.compile("\\bprecise\\b");
  private static final Pattern USES_DOUBLE = Pattern.compile("\\bdouble\\b|\\bdvec[234]\\b|[0-9.]lf\\b|[0-9.]LF\\b");
  private static final String MATH_RESOURCE = "/io/vkspark/gpu/glsl/vkmath.glsl";
  private static volatile String mathLibrary;


  private final KernelSpec spec;
  /**
   * Not serialized: a kernel travels to the executors in every task of a query that calls it (in
   * the plan, and in the lineage of a cache it built), and its generated GLSL was ~40% of a
   * Black-Scholes kernel's bytes; {@link #source()} generates it again from {@link #spec} where
   * asked, on the driver for EXPLAIN and debugging.
   */
  private transient volatile String source;
  private final byte[] spirv;
  private final String id;
  private final List<String> warnings;
  private final Set<ShaderFeature> requirements;
  private final boolean fastMath;

  private ColumnKernel(KernelSpec spec, String source, byte[] spirv, List<String> warnings, boolean fastMath) {
    this.spec = spec;
    this.source = source;
    this.spirv = spirv;
    this.fastMath = fastMath;
    this.id = spec.name() + "-" + GlslCompiler.key(source, GlslCompiler.Flavor.OPTIMIZED) + (fastMath ? "-fastmath" : "");
    this.warnings = List.copyOf(warnings);
    this.requirements = Set.copyOf(SpirvSeal.requirements(SpirvModule.parse("GPU UDF '" + spec.name() + "'", spirv)));
  }

  /**
   * This kernel with the device's own floating-point arithmetic allowed ({@code on}: contraction
   * into fused multiply-adds, a device's flushing of 32-bit subnormals; {@link Program#fastMath()})
   * or not (the default: Java's bits). The same SPIR-V; the passes at load differ, and so does
   * {@link #id()}.
   */
  public ColumnKernel withFastMath(boolean on) {
    return on == fastMath ? this : new ColumnKernel(spec, source(), spirv, warnings, on);
  }

  /** See {@link #withFastMath(boolean)}. */
  public boolean fastMath() {
    return fastMath;
  }

  /** Generates and compiles without a SPIR-V disk cache. */
  public static ColumnKernel compile(KernelSignature signature, String body) {
    return compile(signature, body, null);
  }

  /** Generates and compiles without a SPIR-V disk cache. */
  public static ColumnKernel compile(KernelSpec spec) {
    return compile(spec, null);
  }

  /** {@link #compile(KernelSpec, Path)} of {@code body} under {@code signature}. */
  public static ColumnKernel compile(KernelSignature signature, String body, Path cacheDir) {
    return compile(new KernelSpec(signature, body), cacheDir);
  }

  /**
   * Generates the shader and compiles it.
   *
   * <p>In order: the lexical body check ({@link BodyCheck}), generation, compilation, the seal of
   * the SPIR-V against {@link #program(int)}'s buffers ({@link SpirvSeal}, also on every cache
   * read), and the Java-semantics analysis ({@link JavaSemantics}), whose warnings are logged
   * once per JVM and kept in {@link #warnings()}.
   *
   * @param cacheDir SPIR-V cache directory (keyed by the SHA-256 of the compiler, its settings and
   *     the whole generated source), or null
   * @throws GpuException COMPILE naming the UDF and the line of its body
   */
  public static ColumnKernel compile(KernelSpec spec, Path cacheDir) {
    KernelSignature signature = spec.signature();
    String body = spec.body();
    BodyCheck.check(signature, body); // lexical: before any rewrite of the body or generation
    Generated g = generate(signature, body, spec.functions(), spec.argOps(), spec.nulls());
    if (GlslSource.code(BodyCheck.lines(body)).indexOf('[') >= 0) {
      // arrays: measured in the fast unoptimized module first (the optimizer is linear in an array's length)
      CompileResult d = GlslCompiler.compile(signature.shaderFileName(), g.source(), cacheDir, GlslCompiler.Flavor.DEBUG,
          spv -> SpirvModule.parse("debug SPIR-V of GPU UDF '" + signature.name() + "'", spv));
      if (!d.ok()) {
        throw compileError(signature, body, g, d);
      }
      checkLocals(signature, SpirvModule.parse("GPU UDF '" + signature.name() + "'", d.spirv().get()));
    }
    CompileResult r = SealedCompiler.compile(signature.shaderFileName(), g.source(), cacheDir,
        seal(signature, spec.argOps(), spec.nulls(), all(body, spec.functions())));
    if (!r.ok()) {
      throw compileError(signature, body, g, r);
    }
    List<String> warnings = JavaSemantics.analyze(signature, body, g, cacheDir);
    ColumnKernel k = new ColumnKernel(spec, g.source(), r.spirv().get(), warnings, false);
    if (!warnings.isEmpty() && WARNED.add(k.id())) {
      warnings.forEach(w -> LOG.warn("{}", w));
    }
    return k;
  }

  /**
   * {@link #compile(KernelSpec, Path)} within {@code budget} (zero: none): every compile the kernel
   * needs (its debug module, the kernel, the Java-semantics analysis) shares it, and past it the
   * compile fails with TIMEOUT. A nested budget cannot extend an outer one.
   */
  public static ColumnKernel compile(KernelSpec spec, Path cacheDir, java.time.Duration budget) {
    return GlslCompiler.withBudget(budget, () -> compile(spec, cacheDir));
  }

  /**
   * Shader compiles running or queued in this JVM now, abandoned ones included: shaderc cannot be
   * stopped, so a compile whose budget ran out still holds one of the few places until it ends.
   */
  public static int compilesInFlight() {
    return GlslCompiler.compilesInFlight();
  }

  /** The SPIR-V may touch only the buffers {@link #program(int)} declares; a COMPILE error otherwise. */
  static void seal(KernelSignature sig, byte[] spirv) {
    seal(sig, List.of(), null, "").check(spirv);
  }

  /** The seal of {@code sig}'s kernels: its program's buffers and the local-memory bound ({@link SealedCompiler}). */
  private static SealedCompiler.Seal seal(KernelSignature sig, List<ArgOps> argOps, NullFlags nulls, String all) {
    return new SealedCompiler.Seal(spirv -> program(sig, argOps, nulls, all, spirv, 64).build(), m -> checkLocals(sig, m),
        e -> GpuException.of(Code.COMPILE, "GPU UDF '" + sig.name() + "' compiles to a shader that is not sealed: "
                + e.what(),
            "keep the body to expressions and local variables of '" + sig.name() + "'."));
  }

  /**
   * Local memory (Function and Private variables) per row, at most: drivers reserve it for every
   * invocation in flight, and robust buffer access does not cover it.
   */
  public static final long MAX_LOCAL_BYTES = 16 * 1024;

  private static void checkLocals(KernelSignature sig, SpirvModule m) {
    long bytes = SpirvSeal.localBytes(m);
    if (bytes > MAX_LOCAL_BYTES) {
      throw GpuException.of(Code.COMPILE, "GPU UDF '" + sig.name() + "' declares "
              + (bytes == Long.MAX_VALUE ? "more than 2^63" : String.valueOf(bytes))
              + " bytes of local variables per row, more than vkspark allows (" + MAX_LOCAL_BYTES + ").",
          "use smaller local arrays in the body of '" + sig.name() + "' (each row runs it with its own copy).");
    }
  }

  /** A generated shader and where the user's body sits in it (1-based lines). */
  record Generated(String source, int bodyFirstLine, int bodyLines, boolean expression) {}

  static Generated generate(KernelSignature sig, String body) {
    return generate(sig, body, "");
  }

  static Generated generate(KernelSignature sig, String body, String functions) {
    return generate(sig, body, functions, List.of(), null);
  }

  /**
   * The shader of {@code body} under {@code sig}, with {@code functions} (see {@link KernelSpec})
   * placed before {@code vk_udf}, the arguments computed on the device as {@code argOps} say, and
   * the null rows computed by the body as {@code nulls} says (null: the strict rule).
   */
  static Generated generate(KernelSignature sig, String body, String functions, List<ArgOps> argOps, NullFlags nulls) {
    String all = functions.isEmpty() ? body : body + "\n" + functions; // what the helpers and libraries are chosen by
    List<String> lines = new ArrayList<>();
    lines.add("#version 450");
    lines.add("#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require");
    // keep subnormal 32-bit floats, as Java does (NVIDIA flushes them by default; 64-bit ones it keeps,
    // and glslang keeps one DenormPreserve per module); dropped at load for a device that cannot keep
    // them (SpirvSeal.forDevice)
    lines.add("#extension GL_EXT_spirv_intrinsics : require");
    lines.add("spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4464], 4459, 32);");
    // the name in printable ASCII: a newline would end this comment, a trailing '\\' continue it onto the code
    lines.add("// generated by vkspark for GPU UDF " + KernelSignature.printable(sig.toString()));
    lines.add("layout(local_size_x_id = 0) in;");
    lines.add("layout(std140, set = 0, binding = " + PARAMS_BINDING + ") uniform VkParams { uint vk_rows; uint vk_pad0;"
        + " uint vk_pad1; uint vk_pad2; uvec4 vk_groups; };");
    for (int i = 0; i < sig.args().size(); i++) {
      SqlType t = sig.args().get(i).type();
      if (!ArgOps.isConstant(argOps, i)) { // a constant reads its literal slot, no column
        lines.add("layout(std430, set = 0, binding = " + (i + 1) + ") readonly buffer VkIn" + i + " { "
            + t.bufferElement() + " vk_in" + i + "[]; };");
      }
    }
    SqlType result = sig.result();
    lines.add("layout(std430, set = 0, binding = " + (sig.args().size() + 1) + ") "
        + (packed(result) ? "" : "writeonly ") + "buffer VkOut { " + result.bufferElement() + " vk_out[]; };");
    // --- bounded time: control block and loop guard (see LoopGuard) ---
    lines.add(LoopGuard.controlBlock(controlBinding(sig)));
    lines.addAll(StringGlsl.struct(sig)); // vk_string: string and binary arguments and results
    lines.addAll(VarArgs.declarations(sig, controlBinding(sig) + 1)); // string, binary, array arguments
    lines.addAll(ArgOps.declarations(sig, argOps, literalBinding(sig))); // r + 0.01, constants: the literals
    lines.addAll(nulls == null ? List.of() : nulls.declarations(argOps, literalBinding(sig) + 1)); // validity bits
    lines.addAll(StringGlsl.declarations(sig, all, stringBinding(sig))); // vk_str_*, vk_out_*, row status
    String text = BodyCheck.lines(body); // bare CRs are line ends, as glslang reads them
    LoopGuard.Guarded guarded = LoopGuard.rewrite(text);
    LoopGuard.Guarded guardedFunctions = LoopGuard.rewrite(functions);
    int loops = guarded.loops() + guardedFunctions.loops();
    if (loops > 0) {
      lines.addAll(List.of(LoopGuard.tickFunction().split("\n", -1)));
    }
    boolean canary = loops > 0 || StringGlsl.helpers(sig, all); // the string helpers loop over a row's bytes
    // --- end bounded time ---
    if (needsMath(sig, all)) {
      lines.addAll(List.of(mathLibrary().split("\n", -1)));
    }
    lines.addAll(JavaSemantics.prelude(sig, all)); // jrem, jdiv, ...: only when the body calls one
    lines.addAll(sig.decimalConstants()); // price_scale, result_scale, ...
    boolean throwing = JTHROW.matcher(all).find();
    if (throwing) {
      lines.add(JTHROW_FUNCTION);
    }
    if (!functions.isEmpty()) {
      lines.add("// functions of the spec (translated helper methods)");
      lines.addAll(List.of(guardedFunctions.body().split("\n", -1)));
    }
    String params = nulls != null ? nulls.params(sig) : sig.args().stream() // arrays: accessors only (VarArgs)
        .filter(a -> !a.type().isVariableWidth() || StringGlsl.isString(a.type())) // strings: vk_string values
        .map(a -> (StringGlsl.isString(a.type()) ? "vk_string" : a.type().glsl()) + " " + a.name())
        .collect(Collectors.joining(", "));
    lines.add(StringGlsl.resultGlsl(sig) + " vk_udf(" + params + ") {");
    String code = GlslSource.code(text); // comments blanked: a "return" or ";" in a comment is not code
    boolean expression = !RETURN.matcher(code).find();
    String[] bodyLines = text.split("\n", -1);
    int first = lines.size() + 1;
    if (expression) {
      int start = 0;
      int end = text.length();
      while (start < end && Character.isWhitespace(text.charAt(start))) {
        start++;
      }
      while (end > start && Character.isWhitespace(text.charAt(end - 1))) {
        end--;
      }
      int last = end; // the last character of code (not comment) decides whether a ';' ends the expression
      while (last > start && Character.isWhitespace(code.charAt(last - 1))) {
        last--;
      }
      String expr = last > start && code.charAt(last - 1) == ';'
          ? text.substring(start, last - 1) + " " + text.substring(last, end) : text.substring(start, end);
      String[] exprLines = expr.split("\n", -1);
      // a comment on the last line (a // one would swallow the closing ");") puts ");" on a line of its own
      int lastLine = Math.max(start, text.lastIndexOf('\n', end - 1) + 1);
      boolean commentAtEnd = !code.regionMatches(lastLine, text, lastLine, end - lastLine);
      for (int i = 0; i < exprLines.length; i++) {
        lines.add((i == 0 ? "return (" : "") + exprLines[i]
            + (i == exprLines.length - 1 ? (commentAtEnd ? "\n);" : ");") : ""));
      }
      bodyLines = exprLines;
    } else {
      lines.addAll(List.of(guarded.body().split("\n", -1)));
    }
    lines.add("}");
    lines.add("void main() {");
    lines.add("  uint vk_row = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x"
        + " + gl_LocalInvocationID.x;");
    lines.add("  if (vk_row >= vk_rows) { return; }");
    List<String> loads = new ArrayList<>();
    for (int i = 0; i < sig.args().size(); i++) {
      SqlType t = sig.args().get(i).type();
      if (StringGlsl.isString(t)) {
        loads.add(StringGlsl.load(i));
        continue;
      }
      if (t.isVariableWidth()) {
        continue;
      }
      loads.add(ArgOps.isConstant(argOps, i) ? ArgOps.load(argOps, i, null)
          : t.isBitPacked() ? "((vk_in" + i + "[vk_row >> 5u] >> (vk_row & 31u)) & 1u) != 0u"
          : t.isBytePacked() ? packedLoad("vk_in" + i, t) // sign-extended, as Java widens a byte or short
          : ArgOps.load(argOps, i, "vk_in" + i + "[vk_row]"));
    }
    lines.addAll(VarArgs.rowSetup(sig));
    lines.addAll(StringGlsl.beforeCall(sig));
    lines.addAll(nulls == null ? List.of() : nulls.beforeCall());
    lines.add("  " + StringGlsl.resultGlsl(sig) + " vk_result = vk_udf("
        + (nulls == null ? String.join(", ", loads) : nulls.callArgs(loads, argOps)) + ");");
    lines.addAll(StringGlsl.afterCall(sig, all)); // a string result's bytes are written here: before the canary
    if (canary) {
      lines.addAll(List.of(LoopGuard.countTruncatedRow().split("\n", -1)));
    }
    if (throwing) {
      lines.add("  if (vkj_thrown) { atomicAdd(vk_control[" + (LoopGuard.THROWN_OFFSET / 4) + "], 1u); }");
    }
    if (StringGlsl.varResult(sig)) {
      // written by the two passes (StringGlsl): offsets and data
    } else if (result.isBitPacked()) {
      lines.add("  if (vk_result) { atomicOr(vk_out[vk_row >> 5u], 1u << (vk_row & 31u)); }");
    } else if (result.isBytePacked()) {
      // the low 8 or 16 bits, as Java's (byte) or (short); the word is shared with other rows (cleared before the dispatch)
      int bits = 8 * result.byteWidth();
      int perWord = 4 / result.byteWidth();
      lines.add("  uint vk_bits = (uint(vk_result) & " + ((1 << bits) - 1) + "u) << ((vk_row & " + (perWord - 1) + "u) * "
          + bits + "u);");
      lines.add("  if (vk_bits != 0u) { atomicOr(vk_out[vk_row >> " + Integer.numberOfTrailingZeros(perWord) + "u], vk_bits); }");
    } else {
      lines.add("  vk_out[vk_row] = vk_result;");
    }
    lines.addAll(nulls == null ? List.of() : nulls.afterStore());
    lines.add("}");
    return new Generated(String.join("\n", lines) + "\n", first, bodyLines.length, expression);
  }

  /** Booleans, tinyints and smallints: several rows share a 32-bit word. */
  private static boolean packed(SqlType t) {
    return t.isBitPacked() || t.isBytePacked();
  }

  /** The sign-extended value of row {@code vk_row} of a tinyint or smallint buffer of 32-bit words. */
  private static String packedLoad(String buffer, SqlType t) {
    int bits = 8 * t.byteWidth();
    int perWord = 4 / t.byteWidth();
    return "bitfieldExtract(int(" + buffer + "[vk_row >> " + Integer.numberOfTrailingZeros(perWord) + "u]), int((vk_row & "
        + (perWord - 1) + "u) * " + bits + "u), " + bits + ")";
  }

  private static boolean needsMath(KernelSignature sig, String body) {
    return sig.result() == SqlType.DOUBLE || sig.argTypes().contains(SqlType.DOUBLE)
        || sig.argTypes().contains(SqlType.ARRAY_DOUBLE) || USES_DOUBLE.matcher(body).find();
  }

  static String mathLibrary() {
    String m = mathLibrary;
    if (m == null) {
      try (InputStream in = ColumnKernel.class.getResourceAsStream(MATH_RESOURCE)) {
        m = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("\r\n", "\n");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      mathLibrary = m;
    }
    return m;
  }

  private static GpuException compileError(KernelSignature sig, String body, Generated g, CompileResult r) {
    String[] bodyLines = BodyCheck.lines(body).strip().split("\n", -1);
    String[] rawLines = BodyCheck.lines(body).split("\n", -1);
    String[] shown = g.expression() ? bodyLines : rawLines;
    List<String> parts = new ArrayList<>();
    int firstBodyLine = -1;
    for (CompileResult.Diagnostic d : r.errors()) {
      int line = d.line() - g.bodyFirstLine() + 1;
      if (d.line() > 0 && line >= 1 && line <= g.bodyLines()) {
        parts.add("line " + line + " of its body: " + d.message() + " [" + shown[line - 1].strip() + "]");
        if (firstBodyLine < 0) {
          firstBodyLine = line;
        }
      } else if (d.line() == g.bodyFirstLine() + g.bodyLines()) {
        parts.add("after the last line of its body: " + d.message()
            + (g.expression() ? "" : " (does every path return a " + sig.result().glsl() + "?)"));
      } else {
        parts.add("in the code vkspark generates around the body: " + d.message());
      }
    }
    String where = firstBodyLine > 0 ? "line " + firstBodyLine + " of the body" : "the body";
    return GpuException.of(Code.COMPILE, "GPU UDF '" + sig.name() + "' does not compile: " + String.join("; ", parts)
            + ". The body sees the arguments " + sig.args().stream().map(VarArgs::describe)
            .collect(Collectors.joining(", ")) + " and must produce a " + StringGlsl.resultGlsl(sig)
            + (sig.resultDecimal() != null ? " (the unscaled value of a " + sig.resultSqlName() + ")" : ""),
        "correct " + where + " of '" + sig.name() + "'.");
  }

  /** What this kernel was compiled from: the key of the caches of compiled kernels. */
  public KernelSpec spec() {
    return spec;
  }

  public KernelSignature signature() {
    return spec.signature();
  }

  public String body() {
    return spec.body();
  }

  /** The whole generated GLSL, for debugging and EXPLAIN (generated again in a deserialized copy). */
  public String source() {
    String s = source;
    if (s == null) {
      s = generate(spec.signature(), spec.body(), spec.functions(), spec.argOps(), spec.nulls()).source();
      source = s;
    }
    return s;
  }

  /**
   * The full identity of this kernel: its name and the SHA-256 of the compiler, its settings and
   * the whole generated source (signature and body), as used for the SPIR-V cache.
   */
  public String id() {
    return id;
  }

  /**
   * Where the body relies on GLSL behaviour that differs from Java (division, float min/max,
   * float-to-integer conversion, shifts), each naming the line and the Java-semantics helper in a
   * {@code Fix:}. Logged once when the kernel is compiled. See docs/GLSL-SEMANTICS.md.
   */
  public List<String> warnings() {
    return warnings;
  }

  /**
   * The optional device features this kernel's SPIR-V needs (from its capabilities: a
   * {@code double} argument needs {@link ShaderFeature#FLOAT64}), computed once when compiled.
   */
  public Set<ShaderFeature> requirements() {
    return requirements;
  }

  /** The features this kernel needs that {@code device} lacks: empty when it can run there. */
  public Set<ShaderFeature> missingOn(DeviceInfo device) {
    return device.features().missing(requirements);
  }

  /** Why this kernel cannot run on {@code device}, if it cannot: the features it lacks, named. */
  public Optional<String> unsupportedOn(DeviceInfo device) {
    Set<ShaderFeature> missing = missingOn(device);
    return missing.isEmpty() ? Optional.empty() : Optional.of("GPU UDF '" + spec.name() + "' needs "
        + SpirvSeal.describe(missing) + ", which device '" + device.name() + "' does not support");
  }

  /** The workgroup size for a device: 256 invocations rounded to its subgroup size, within its limit. */
  public static int workgroupSize(DeviceInfo device) {
    int sg = Math.max(1, device.subgroupSize());
    int wg = Math.max(sg, (256 / sg) * sg);
    return Math.min(wg, device.maxWorkgroupSizeX());
  }

  /**
   * The program: params at binding 0, one input per argument (offsets for variable-width ones), the
   * output, the control buffer, then the data (and element validity) of each variable-width
   * argument ({@link VarArgs}); indirect dispatch.
   */
  public Program program(int workgroupSize) {
    // vkmath's divisions are precise; the body's are refined where the device's are not exact
    boolean bodyPrecise = PRECISE.matcher(GlslSource.code(BodyCheck.lines(spec.body()))).find();
    return program(spec.signature(), spec.argOps(), spec.nulls(), all(spec.body(), spec.functions()), spirv, workgroupSize)
        .nativePreciseDivisions(!bodyPrecise).fastMath(fastMath).build();
  }

  /** The body and the spec's functions: what the helpers and the row status are chosen by. */
  private static String all(String body, String functions) {
    return functions.isEmpty() ? body : body + "\n" + functions;
  }

  private static Program.Builder program(KernelSignature signature, List<ArgOps> argOps, NullFlags nulls, String all,
                                         byte[] spirv, int workgroupSize) {
    Program.Builder b = Program.spirv(signature.name(), ByteBuffer.wrap(spirv))
        .workgroupSize(workgroupSize)
        .buffer(BufferDecl.params("params", PARAMS_BINDING))
        .indirect("params", GROUPS_OFFSET)
        .clearOutputs(packed(signature.result()) || (nulls != null && nulls.result())); // bits set by atomicOr
    for (int i = 0; i < signature.args().size(); i++) {
      if (!ArgOps.isConstant(argOps, i)) { // a constant has no input buffer (BufferSet binds none)
        b.buffer(new BufferDecl("in" + i, 0, i + 1, MemoryKind.READ_ONLY, elementType(signature.args().get(i).type()), false, 0));
      }
    }
    b.buffer(BufferDecl.output("out", signature.args().size() + 1, elementType(signature.result())));
    b.buffer(new BufferDecl("control", 0, controlBinding(signature), MemoryKind.STORAGE, ElementType.UINT32, false, 0));
    VarArgs.addBuffers(b, signature, controlBinding(signature) + 1);
    if (ArgOps.literals(argOps) > 0) {
      b.buffer(new BufferDecl("literals", 0, literalBinding(signature), MemoryKind.READ_ONLY, ElementType.UINT32, false, 0));
    }
    if (nulls != null) { // after the literals; a kernel with nulls has no string buffers (NullFlags)
      nulls.addBuffers(b, argOps, literalBinding(signature) + 1);
    }
    StringGlsl.addBuffers(b, signature, all, stringBinding(signature));
    return b;
  }

  /**
   * Binding of the literals of the arguments computed on the device ({@link ArgOps}): last, after
   * the variable-width arguments' buffers. Bound last by {@code BufferSet}.
   */
  static int literalBinding(KernelSignature sig) {
    int binding = controlBinding(sig) + 1;
    for (KernelSignature.Arg a : sig.args()) {
      binding += a.type().isVariableWidth() ? (VarArgs.isArray(a.type()) ? 2 : 1) : 0;
    }
    return binding;
  }

  /**
   * Binding of the control buffer (abort word, loop limit, cut-short row count; see
   * {@link LoopGuard}): after the output. Bound last, after the inputs, in {@link #program}.
   */
  static int controlBinding(KernelSignature sig) {
    return sig.args().size() + 2;
  }

  /** First binding of the row status and a string or binary result's buffers ({@link StringGlsl}): after the literals'. */
  static int stringBinding(KernelSignature sig) {
    return literalBinding(sig) + 1;
  }

  /** Whether rows report a status (null, or computed by {@code call()}): a string or binary result, or {@code vk_to_cpu}. */
  public boolean rowStatus() {
    return StringGlsl.status(spec.signature(), all(spec.body(), spec.functions()));
  }

  /**
   * Whether a dispatch of this kernel can end in RECOMPUTE: its body (or a helper function) calls
   * {@code jthrow()}, so a batch may have to be recomputed with {@code call()} on the host.
   */
  public boolean mayRecompute() {
    return JTHROW.matcher(spec.body()).find() || JTHROW.matcher(spec.functions()).find();
  }

  /** Whether the body has loops (guarded against driver loop limits and aborts). */
  public boolean hasLoops() {
    return LoopGuard.rewrite(spec.body()).loops() + LoopGuard.rewrite(spec.functions()).loops() > 0
        || StringGlsl.helpers(spec.signature(), all(spec.body(), spec.functions()));
  }

  /** The element type a program declares for a buffer of {@code t}'s values (shared by the generated reductions). */
  public static ElementType elementType(SqlType t) {
    return switch (t) {
      case INT, DATE -> ElementType.INT32;
      case BIGINT, TIMESTAMP, DECIMAL -> ElementType.INT64;
      case TINYINT, SMALLINT -> ElementType.UINT32;
      case FLOAT -> ElementType.FLOAT32;
      case DOUBLE -> ElementType.FLOAT64;
      case BOOLEAN -> ElementType.UINT32;
      case STRING, BINARY, ARRAY_FLOAT, ARRAY_DOUBLE, ARRAY_INT -> ElementType.INT32; // the offsets
    };
  }

  @Override
  public String toString() {
    return "ColumnKernel[" + spec.signature() + "]";
  }
}
