package io.vkspark.gpu.internal;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.DeviceFeatures;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.MemoryKind;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.ShaderFeature;
import io.vkspark.gpu.internal.SpirvModule.Insn;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Checks that a SPIR-V module can touch nothing but what its {@link Program} declares, before any
 * driver sees it: logical addressing, one GLCompute entry point named {@code main}, no push
 * constants, no physical-storage-buffer pointers, no inputs or outputs other than built-ins, and
 * every buffer variable at a declared {@code (set, binding)}, once, with the declared descriptor
 * type and access (and, for generated kernels, element type). Capabilities and extensions come from an allow-list.
 *
 * <p>A UDF body that escapes its generated function, a cached file that is not what it claims and
 * a hand-written program that disagrees with its declarations all end here as a message, instead
 * of as a driver crash or another kernel's memory.
 */
public final class SpirvSeal {
  // opcodes
  static final int OP_EXTENSION = 10;
  static final int OP_EXT_INST_IMPORT = 11;
  static final int OP_MEMORY_MODEL = 14;
  static final int OP_ENTRY_POINT = 15;
  static final int OP_EXECUTION_MODE = 16;
  static final int OP_CAPABILITY = 17;
  static final int OP_TYPE_INT = 21;
  static final int OP_TYPE_FLOAT = 22;
  static final int OP_TYPE_VECTOR = 23;
  static final int OP_TYPE_ARRAY = 28;
  static final int OP_TYPE_RUNTIME_ARRAY = 29;
  static final int OP_TYPE_STRUCT = 30;
  static final int OP_TYPE_POINTER = 32;
  static final int OP_FUNCTION = 54;
  static final int OP_FUNCTION_END = 56;
  static final int OP_FUNCTION_CALL = 57;
  static final int OP_VARIABLE = 59;
  static final int OP_DECORATE = 71;
  static final int OP_SPEC_CONSTANT_TRUE = 48;
  static final int OP_SPEC_CONSTANT_FALSE = 49;
  static final int OP_SPEC_CONSTANT = 50;
  static final int OP_MEMBER_DECORATE = 72;
  // storage classes
  static final int SC_UNIFORM_CONSTANT = 0;
  static final int SC_INPUT = 1;
  static final int SC_UNIFORM = 2;
  static final int SC_WORKGROUP = 4;
  static final int SC_PRIVATE = 6;
  static final int SC_FUNCTION = 7;
  static final int SC_STORAGE_BUFFER = 12;
  // decorations
  static final int DEC_BLOCK = 2;
  static final int DEC_BUFFER_BLOCK = 3;
  static final int DEC_BUILT_IN = 11;
  static final int DEC_NON_WRITABLE = 24;
  static final int DEC_SPEC_ID = 1;
  static final int DEC_BINDING = 33;
  static final int DEC_DESCRIPTOR_SET = 34;

  /** Capabilities a vkspark kernel may declare (what generated kernels and vkmath need, and subgroups). */
  private static final Map<Integer, String> CAPABILITIES = Map.ofEntries(
      Map.entry(0, "Matrix"), Map.entry(1, "Shader"), Map.entry(9, "Float16"), Map.entry(10, "Float64"),
      Map.entry(11, "Int64"), Map.entry(12, "Int64Atomics"), Map.entry(22, "Int16"), Map.entry(39, "Int8"),
      Map.entry(61, "GroupNonUniform"), Map.entry(62, "GroupNonUniformVote"),
      Map.entry(63, "GroupNonUniformArithmetic"), Map.entry(64, "GroupNonUniformBallot"),
      Map.entry(65, "GroupNonUniformShuffle"), Map.entry(66, "GroupNonUniformShuffleRelative"),
      Map.entry(67, "GroupNonUniformClustered"), Map.entry(68, "GroupNonUniformQuad"),
      Map.entry(4433, "StorageBuffer16BitAccess"), Map.entry(4434, "UniformAndStorageBuffer16BitAccess"),
      Map.entry(4448, "StorageBuffer8BitAccess"), Map.entry(4449, "UniformAndStorageBuffer8BitAccess"),
      Map.entry(4464, "DenormPreserve"));
  static final int CAP_DENORM_PRESERVE = 4464;
  static final int MODE_DENORM_PRESERVE = 4459;
  private static final Set<String> EXTENSIONS = Set.of("SPV_KHR_storage_buffer_storage_class",
      "SPV_KHR_8bit_storage", "SPV_KHR_16bit_storage", "SPV_KHR_shader_ballot",
      "SPV_KHR_non_semantic_info", "SPV_KHR_float_controls");
  private static final Set<String> EXT_INST_SETS = Set.of("GLSL.std.450");

  private SpirvSeal() {}

  /**
   * Parses {@code spirv} and checks it against {@code program}'s declarations, element types
   * aside (hand-written programs may view a buffer through another type or a struct).
   *
   * @return the parsed module, for further checks
   * @throws GpuException INVALID_ARGUMENT naming the program and what the module does
   */
  public static SpirvModule check(Program program, byte[] spirv) {
    return check(program, spirv, false);
  }

  /**
   * As {@link #check(Program, byte[])}; with {@code elementTypes}, each storage block must also be
   * one array of its declaration's element type (what vkspark generates for column kernels).
   */
  public static SpirvModule check(Program program, byte[] spirv, boolean elementTypes) {
    String what = "program '" + program.name() + "'";
    SpirvModule m = SpirvModule.parse(what, spirv);
    boolean workgroupAllowed = program.buffers().stream().anyMatch(d -> d.kind() == MemoryKind.SHARED);
    Map<Integer, Integer> set = new HashMap<>();
    Map<Integer, Integer> binding = new HashMap<>();
    Set<Integer> builtIn = new HashSet<>();
    Set<Integer> nonWritable = new HashSet<>();
    Set<Integer> blocks = new HashSet<>();
    Set<Integer> bufferBlocks = new HashSet<>();
    Map<Integer, Set<Integer>> nonWritableMembers = new HashMap<>();
    Map<Integer, Insn> defs = new HashMap<>();
    Map<Integer, Integer> specIds = new HashMap<>();
    Map<Integer, Integer> specDefs = new HashMap<>();
    int entryPoints = 0;
    int entryFunction = -1;
    boolean memoryModel = false;
    boolean inFunction = false;
    Set<Integer> functions = new HashSet<>();
    Set<Integer> called = new HashSet<>();
    for (Insn in : m.instructions()) {
      switch (in.opcode()) {
        case OP_CAPABILITY -> {
          int cap = m.operand(in, 0);
          if (!CAPABILITIES.containsKey(cap)) {
            throw refuse(what, "declares SPIR-V capability " + cap + ", which vkspark kernels may not use"
                + " (allowed: " + String.join(", ", new TreeSet<>(CAPABILITIES.values())) + ")");
          }
        }
        case OP_EXTENSION -> {
          String ext = m.string(in, 0);
          if (!EXTENSIONS.contains(ext)) {
            throw refuse(what, "uses the SPIR-V extension " + ext + ", which vkspark kernels may not use");
          }
        }
        case OP_EXT_INST_IMPORT -> {
          String ext = m.string(in, 1);
          if (!EXT_INST_SETS.contains(ext) && !ext.startsWith("NonSemantic.")) {
            throw refuse(what, "imports the instruction set " + ext + ", which vkspark kernels may not use");
          }
        }
        case OP_MEMORY_MODEL -> {
          if (memoryModel || m.operand(in, 0) != 0) {
            throw refuse(what, memoryModel ? "declares two memory models"
                : "uses addressing model " + m.operand(in, 0) + " (only Logical addressing is allowed)");
          }
          memoryModel = true;
        }
        case OP_ENTRY_POINT -> {
          entryPoints++;
          entryFunction = m.operand(in, 1);
          if (m.operand(in, 0) != 5 || !"main".equals(m.string(in, 2))) {
            throw refuse(what, "has an entry point '" + m.string(in, 2) + "' of execution model " + m.operand(in, 0)
                + " (only a GLCompute entry point named main is allowed)");
          }
        }
        case OP_DECORATE -> {
          int target = m.operand(in, 0);
          switch (m.operand(in, 1)) {
            case DEC_DESCRIPTOR_SET -> set.put(target, m.operand(in, 2));
            case DEC_BINDING -> {
              if (binding.put(target, m.operand(in, 2)) != null) {
                throw refuse(what, "decorates id " + target + " with two bindings");
              }
            }
            case DEC_BUILT_IN -> builtIn.add(target);
            case DEC_NON_WRITABLE -> nonWritable.add(target);
            case DEC_BLOCK -> blocks.add(target);
            case DEC_BUFFER_BLOCK -> bufferBlocks.add(target);
            case DEC_SPEC_ID -> specIds.put(m.operand(in, 2), target);
            default -> { }
          }
        }
        case OP_MEMBER_DECORATE -> {
          if (m.operand(in, 2) == DEC_NON_WRITABLE) {
            nonWritableMembers.computeIfAbsent(m.operand(in, 0), k -> new HashSet<>()).add(m.operand(in, 1));
          }
        }
        case 73, 74, 75, 332 -> throw refuse(what, "uses decoration groups or id decorations (opcode " + in.opcode()
            + "), which vkspark does not read");
        case OP_TYPE_POINTER -> {
          int sc = m.operand(in, 1);
          if (sc == 9 || sc == 5349 || sc == 5 || sc == 8) {
            throw refuse(what, "declares a pointer into storage class " + storageClass(sc));
          }
          defs.put(m.operand(in, 0), in);
        }
        case OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR, OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY, OP_TYPE_STRUCT ->
            defs.put(m.operand(in, 0), in);
        case 117, 120 -> throw refuse(what, "converts between pointers and integers");
        case OP_FUNCTION -> {
          if (inFunction) {
            throw refuse(what, "opens a function inside a function (truncated or corrupt)");
          }
          inFunction = true;
          functions.add(m.operand(in, 1));
        }
        case OP_FUNCTION_END -> {
          if (!inFunction) {
            throw refuse(what, "ends a function it never opened (corrupt)");
          }
          inFunction = false;
        }
        case OP_FUNCTION_CALL -> called.add(m.operand(in, 2));
        case OP_SPEC_CONSTANT_TRUE, OP_SPEC_CONSTANT_FALSE, OP_SPEC_CONSTANT -> specDefs.put(m.operand(in, 1), in.opcode());
        default -> { }
      }
    }
    checkReservedConstants(what, specIds, specDefs);
    if (!memoryModel) {
      throw refuse(what, "declares no memory model");
    }
    if (entryPoints != 1) {
      throw refuse(what, "has " + entryPoints + " entry points (exactly one, GLCompute main, is allowed)");
    }
    if (inFunction || !functions.contains(entryFunction) || !functions.containsAll(called)) {
      throw refuse(what, inFunction ? "ends inside a function (truncated)"
          : !functions.contains(entryFunction) ? "has no function for its entry point (truncated)"
          : "calls a function it does not define (truncated or corrupt)");
    }
    Map<Long, BufferDecl> declared = new HashMap<>();
    for (BufferDecl d : program.buffers()) {
      if (d.kind().isBound()) {
        declared.put(key(d.set(), d.binding()), d);
      }
    }
    Set<Long> seen = new HashSet<>();
    for (Insn in : m.instructions()) {
      int sc = in.opcode() == OP_VARIABLE ? m.operand(in, 2) : -1;
      Integer s = set.get(in.opcode() == OP_VARIABLE ? m.operand(in, 1) : -1);
      Integer b = binding.get(in.opcode() == OP_VARIABLE ? m.operand(in, 1) : -1);
      if ((sc == SC_UNIFORM || sc == SC_STORAGE_BUFFER) && s != null && b != null && !seen.add(key(s, b))) {
        BufferDecl d = declared.get(key(s, b));
        throw refuse(what, "declares set " + s + ", binding " + b + (d == null ? "" : " ('" + d.name() + "')")
            + " twice (an alias)");
      }
    }
    for (Insn in : m.instructions()) {
      if (in.opcode() != OP_VARIABLE) {
        continue;
      }
      int id = m.operand(in, 1);
      int sc = m.operand(in, 2);
      switch (sc) {
        case SC_FUNCTION, SC_PRIVATE -> { }
        case SC_WORKGROUP -> {
          if (!workgroupAllowed) {
            throw refuse(what, "declares workgroup-shared memory (id " + id + "), which its declarations do not");
          }
        }
        case SC_INPUT -> {
          if (!builtIn.contains(id)) {
            throw refuse(what, "declares an Input variable (id " + id + ") that is not a built-in");
          }
        }
        case SC_UNIFORM, SC_STORAGE_BUFFER -> {
          Integer s = set.get(id);
          Integer b = binding.get(id);
          if (s == null || b == null) {
            throw refuse(what, "declares a buffer variable (id " + id + ") without a descriptor set and binding");
          }
          BufferDecl d = declared.get(key(s, b));
          if (d == null) {
            throw refuse(what, "declares a buffer at set " + s + ", binding " + b + ", which the program does not declare"
                + " (declared: " + declaredList(program) + ")");
          }
          int block = pointee(m, defs, m.operand(in, 0), what);
          boolean uniformBlock = sc == SC_UNIFORM && blocks.contains(block);
          boolean storage = sc == SC_STORAGE_BUFFER || (sc == SC_UNIFORM && bufferBlocks.contains(block));
          if (d.kind().isParams() != uniformBlock || d.kind().isParams() == storage) {
            throw refuse(what, "declares '" + d.name() + "' (set " + s + ", binding " + b + ") as a "
                + (uniformBlock ? "uniform buffer" : storage ? "storage buffer" : "non-block resource")
                + " but the program declares it " + d.kind());
          }
          if (d.kind() == MemoryKind.READ_ONLY && !nonWritable.contains(id) && !allMembers(m, defs, block,
              nonWritableMembers.getOrDefault(block, Set.of()))) {
            throw refuse(what, "may write '" + d.name() + "' (set " + s + ", binding " + b
                + "), which the program declares READ_ONLY (declare it readonly)");
          }
          if (storage && elementTypes) {
            checkElement(m, defs, block, d, what);
          }
        }
        default -> throw refuse(what, "declares a variable (id " + id + ") in storage class " + storageClass(sc));
      }
    }
    return m;
  }

  /**
   * The module as {@code device} can run it: a request to keep subnormal floats ({@code
   * DenormPreserve}, which generated kernels make so that they compute as Java does) is dropped for
   * each float width the device cannot keep, and its capability with the last one. Such a device
   * then flushes subnormals as it does by default; {@link DeviceFeatures} says which it is.
   */
  public static byte[] forDevice(Program program, byte[] spirv, DeviceFeatures f) {
    SpirvModule m = SpirvModule.parse("program '" + program.name() + "'", spirv);
    boolean kept = false;
    boolean dropped = false;
    for (Insn in : m.instructions()) {
      if (isDenormPreserve(m, in)) {
        if (keeps(m, in, f)) {
          kept = true;
        } else {
          dropped = true;
        }
      }
    }
    if (!dropped) {
      return spirv;
    }
    boolean dropCapability = !kept;
    return m.bytesWithout(in -> (isDenormPreserve(m, in) && !keeps(m, in, f))
        || (dropCapability && in.opcode() == OP_CAPABILITY && m.operand(in, 0) == CAP_DENORM_PRESERVE));
  }

  private static boolean isDenormPreserve(SpirvModule m, Insn in) {
    return in.opcode() == OP_EXECUTION_MODE && in.operands() >= 3 && m.operand(in, 1) == MODE_DENORM_PRESERVE;
  }

  private static boolean keeps(SpirvModule m, Insn in, DeviceFeatures f) {
    return switch (m.operand(in, 2)) {
      case 32 -> f.denormPreserveFloat32();
      case 64 -> f.denormPreserveFloat64();
      default -> false;
    };
  }

  /** The optional device features {@code spirv} needs, from the capabilities it declares. */
  public static Set<ShaderFeature> requirements(SpirvModule m) {
    EnumSet<ShaderFeature> needs = EnumSet.noneOf(ShaderFeature.class);
    for (Insn in : m.instructions()) {
      if (in.opcode() != OP_CAPABILITY) {
        continue;
      }
      switch (m.operand(in, 0)) {
        case 10 -> needs.add(ShaderFeature.FLOAT64);
        case 11 -> needs.add(ShaderFeature.INT64);
        case 4448, 4449 -> needs.add(ShaderFeature.STORAGE_8BIT);
        case 4433, 4434 -> needs.add(ShaderFeature.STORAGE_16BIT);
        case 39 -> needs.add(ShaderFeature.INT8);
        case 22 -> needs.add(ShaderFeature.INT16);
        case 9 -> needs.add(ShaderFeature.FLOAT16);
        default -> { }
      }
    }
    return needs;
  }

  /** {@link #requirements(SpirvModule)} of a module not yet parsed. */
  public static Set<ShaderFeature> requirements(Program program, byte[] spirv) {
    return requirements(SpirvModule.parse("program '" + program.name() + "'", spirv));
  }

  /** Refuses SPIR-V that needs a feature the device lacks, before the driver sees it. */
  public static void requireFeatures(Program program, byte[] spirv, DeviceFeatures f) {
    requireFeatures(program, spirv, f, "this device");
  }

  /** As {@link #requireFeatures(Program, byte[], DeviceFeatures)}, naming the device ({@code device 'x'}). */
  public static void requireFeatures(Program program, byte[] spirv, DeviceFeatures f, String device) {
    Set<ShaderFeature> missing = f.missing(requirements(program, spirv));
    if (!missing.isEmpty()) {
      throw GpuException.of(Code.UNSUPPORTED, "program '" + program.name() + "' needs " + describe(missing)
          + ", which " + device + " does not support.", "run it on a device that has it, or avoid that type.");
    }
  }

  /** {@code shaderFloat64 (double), shaderInt64 (64-bit integers)}: for messages. */
  public static String describe(Set<ShaderFeature> features) {
    return String.join(", ", features.stream().map(ShaderFeature::vulkanName).toList());
  }

  /**
   * Bytes of Function and Private memory the module's variables take per invocation (saturating at
   * {@link Long#MAX_VALUE}): arrays whose length is not a known constant count as huge. Robust
   * buffer access does not cover this memory, and drivers reserve it for every invocation in flight.
   * Only arrays and structs count: a scalar or vector variable is a register to every driver's
   * compiler (vkspark's kernels keep such variables in their SPIR-V, because spirv-opt does not
   * promote variables to registers in a module with the float-controls extension, and a kernel
   * translated from Java declares thousands).
   */
  public static long localBytes(SpirvModule m) {
    Map<Integer, Long> size = new HashMap<>();
    Map<Integer, Long> constants = new HashMap<>();
    Map<Integer, Integer> intWidth = new HashMap<>();
    Set<Integer> composite = new HashSet<>(); // array and struct types, and pointers to them
    long total = 0;
    for (Insn in : m.instructions()) {
      switch (in.opcode()) {
        case OP_TYPE_INT -> {
          intWidth.put(m.operand(in, 0), m.operand(in, 1));
          size.put(m.operand(in, 0), Math.max(1, m.operand(in, 1) / 8L));
        }
        case OP_TYPE_FLOAT -> size.put(m.operand(in, 0), Math.max(1, m.operand(in, 1) / 8L));
        case 20 -> size.put(m.operand(in, 0), 4L); // OpTypeBool
        case OP_TYPE_VECTOR, 24 -> size.put(m.operand(in, 0), // OpTypeVector, OpTypeMatrix
            mul(size.getOrDefault(m.operand(in, 1), Long.MAX_VALUE), m.operand(in, 2) & 0xffffffffL));
        case 43 -> { // OpConstant
          Integer width = intWidth.get(m.operand(in, 0));
          if (width != null) {
            constants.put(m.operand(in, 1), width == 64 && m.has(in, 3)
                ? (m.operand(in, 2) & 0xffffffffL) | ((long) m.operand(in, 3) << 32) : m.operand(in, 2) & 0xffffffffL);
          }
        }
        case OP_TYPE_ARRAY -> {
          composite.add(m.operand(in, 0));
          Long n = constants.get(m.operand(in, 2));
          size.put(m.operand(in, 0), n == null || n < 0 ? Long.MAX_VALUE
              : mul(size.getOrDefault(m.operand(in, 1), Long.MAX_VALUE), n));
        }
        case OP_TYPE_STRUCT -> {
          composite.add(m.operand(in, 0));
          long sum = 0;
          for (int k = 1; m.has(in, k); k++) {
            sum = add(sum, size.getOrDefault(m.operand(in, k), Long.MAX_VALUE));
          }
          size.put(m.operand(in, 0), sum);
        }
        case OP_TYPE_POINTER -> {
          size.put(m.operand(in, 0), size.getOrDefault(m.operand(in, 2), Long.MAX_VALUE));
          if (composite.contains(m.operand(in, 2))) {
            composite.add(m.operand(in, 0));
          }
        }
        case OP_VARIABLE -> {
          int sc = m.operand(in, 2);
          if ((sc == SC_FUNCTION || sc == SC_PRIVATE) && composite.contains(m.operand(in, 0))) {
            total = add(total, size.getOrDefault(m.operand(in, 0), Long.MAX_VALUE));
          }
        }
        default -> { }
      }
    }
    return total;
  }

  private static long mul(long a, long b) {
    return b != 0 && a > Long.MAX_VALUE / b ? Long.MAX_VALUE : a * b;
  }

  private static long add(long a, long b) {
    return a > Long.MAX_VALUE - b ? Long.MAX_VALUE : a + b;
  }

  private static int pointee(SpirvModule m, Map<Integer, Insn> defs, int pointerType, String what) {
    Insn p = defs.get(pointerType);
    if (p == null || p.opcode() != OP_TYPE_POINTER) {
      throw refuse(what, "declares a variable whose type (id " + pointerType + ") is not a pointer");
    }
    return m.operand(p, 2);
  }

  private static boolean allMembers(SpirvModule m, Map<Integer, Insn> defs, int struct, Set<Integer> members) {
    Insn s = defs.get(struct);
    if (s == null || s.opcode() != OP_TYPE_STRUCT) {
      return false;
    }
    for (int i = 0; i < s.operands() - 1; i++) {
      if (!members.contains(i)) {
        return false;
      }
    }
    return true;
  }

  /** A storage block holds one array of the declared element type (signedness aside). */
  private static void checkElement(SpirvModule m, Map<Integer, Insn> defs, int struct, BufferDecl d, String what) {
    Insn s = defs.get(struct);
    String found = "no single array";
    if (s != null && s.opcode() == OP_TYPE_STRUCT && s.operands() == 2) {
      Insn arr = defs.get(m.operand(s, 1));
      if (arr != null && (arr.opcode() == OP_TYPE_RUNTIME_ARRAY || arr.opcode() == OP_TYPE_ARRAY)) {
        Insn el = defs.get(m.operand(arr, 1));
        if (el != null && (el.opcode() == OP_TYPE_INT || el.opcode() == OP_TYPE_FLOAT)) {
          boolean isFloat = el.opcode() == OP_TYPE_FLOAT;
          int bits = m.operand(el, 1);
          ElementType t = d.elementType();
          boolean wantFloat = t == ElementType.FLOAT32 || t == ElementType.FLOAT64;
          if (isFloat == wantFloat && bits == 8 * t.bytes()) {
            return;
          }
          found = "an array of " + bits + "-bit " + (isFloat ? "floats" : "integers");
        } else {
          found = "an array of a non-scalar type";
        }
      }
    }
    throw refuse(what, "declares '" + d.name() + "' as " + found + " but the program declares " + d.elementType());
  }

  private static String declaredList(Program p) {
    return String.join(", ", p.buffers().stream().filter(d -> d.kind().isBound())
        .map(d -> d.name() + "@" + d.set() + "." + d.binding()).toList());
  }

  private static long key(int set, int binding) {
    return ((long) set << 32) | (binding & 0xffffffffL);
  }

  private static String storageClass(int sc) {
    return switch (sc) {
      case SC_UNIFORM_CONSTANT -> "UniformConstant";
      case 3 -> "Output";
      case 5 -> "CrossWorkgroup";
      case 8 -> "Generic";
      case 9 -> "PushConstant";
      case 10 -> "AtomicCounter";
      case 11 -> "Image";
      case 5349 -> "PhysicalStorageBuffer";
      default -> String.valueOf(sc);
    };
  }

  /**
   * Specialization constants 0 and 1 are vkspark's: it sets 0 to the workgroup size (a number,
   * {@code local_size_x_id = 0}) and 1 to whether the device's {@code fma} is fused (a bool, vkmath's
   * {@code VKM_FUSED_FMA}). A program that declares either as the other kind would get a value it
   * does not expect, silently; it is refused instead.
   */
  private static void checkReservedConstants(String what, Map<Integer, Integer> specIds, Map<Integer, Integer> specDefs) {
    for (int id = 0; id <= 1; id++) {
      Integer target = specIds.get(id);
      Integer op = target == null ? null : specDefs.get(target);
      boolean bool = op != null && op != OP_SPEC_CONSTANT;
      if (op != null && bool != (id == 1)) {
        throw GpuException.of(Code.INVALID_ARGUMENT, what + " declares specialization constant " + id + " as a "
            + (bool ? "bool" : "number") + "; vkspark sets constant 0 to the workgroup size (a number) and constant 1 to"
            + " whether the device's fma is fused (a bool, vkmath's VKM_FUSED_FMA).",
            "number the program's own specialization constants from 2 (constant_id = 2 and up).");
      }
    }
  }

  private static GpuException refuse(String what, String why) {
    return GpuException.of(Code.INVALID_ARGUMENT, what + " " + why + ".",
        "declare every buffer in the Program at the set and binding the shader uses, and use no push constants,"
            + " buffer references or extra entry points.");
  }
}
