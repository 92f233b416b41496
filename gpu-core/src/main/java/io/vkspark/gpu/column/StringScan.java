package io.vkspark.gpu.column;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.CompileResult;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.MemoryKind;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.internal.SealedCompiler;
import java.nio.ByteBuffer;
import java.util.function.Function;

/**
 * The prefix sum between the two passes of a string or binary result ({@link StringGlsl}): phase 0
 * writes each row's length, {@link #BLOCKS} sums them within each workgroup of rows (an inclusive
 * scan in shared memory, one total per workgroup) and {@link #TOPS}, one workgroup, turns the
 * totals into each workgroup's first offset, looping over them; phase 1 adds the two to place its
 * row. Sums saturate at {@link StringGlsl#SATURATED} (the runner then fails with SIZE rather than
 * wrap). The shaders are vkspark's own, compiled and sealed once per JVM like the reductions.
 */
final class StringScan {
  private static final String PARAMS = "layout(std140, set = 0, binding = 0) uniform VkParams { uint vk_rows; uint vk_pad0;"
      + " uint vk_pad1; uint vk_pad2; uvec4 vk_groups; };\n";
  private static final String SCAN = """
        for (uint d = 1u; d < gl_WorkGroupSize.x; d <<= 1u) {
          uint v = l >= d ? s[l - d] : 0u;
          barrier();
          s[l] = min(s[l] + v, SAT);
          barrier();
        }
      """;

  /** Per workgroup of rows: the inclusive sums of the lengths within it, and its total. */
  static final String BLOCKS = "#version 450\nlayout(local_size_x_id = 0) in;\n" + PARAMS + """
      layout(std430, set = 0, binding = 1) readonly buffer VkLens { uint lens[]; };
      layout(std430, set = 0, binding = 2) writeonly buffer VkLocal { uint local_sums[]; };
      layout(std430, set = 0, binding = 3) writeonly buffer VkBlocks { uint blocks[]; };
      shared uint s[gl_WorkGroupSize.x];
      const uint SAT = 2147483647u;
      void main() {
        uint g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
        uint l = gl_LocalInvocationID.x;
        uint row = g * gl_WorkGroupSize.x + l;
        s[l] = row < vk_rows ? lens[row] & SAT : 0u; // the top bit flags a row without bytes
        barrier();
      """ + SCAN + """
        if (row < vk_rows) { local_sums[row] = s[l]; }
        if (l == gl_WorkGroupSize.x - 1u && g * gl_WorkGroupSize.x < vk_rows) { blocks[g] = s[l]; }
      }
      """;

  /** One workgroup: each block's total becomes the sum of the blocks before it. */
  static final String TOPS = "#version 450\nlayout(local_size_x_id = 0) in;\n" + PARAMS + """
      layout(std430, set = 0, binding = 1) buffer VkBlocks { uint blocks[]; };
      shared uint s[gl_WorkGroupSize.x];
      const uint SAT = 2147483647u;
      void main() {
        uint l = gl_LocalInvocationID.x;
        uint n = (vk_rows + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
        uint carry = 0u;
        for (uint base = 0u; base < n; base += gl_WorkGroupSize.x) {
          uint i = base + l;
          uint v = i < n ? min(blocks[i], SAT) : 0u;
          s[l] = v;
          barrier();
      """ + SCAN.indent(2) + """
          if (i < n) { blocks[i] = min(carry + (s[l] - min(v, s[l])), SAT); }
          uint total = s[gl_WorkGroupSize.x - 1u];
          barrier();
          carry = min(carry + total, SAT);
        }
      }
      """;

  private static volatile byte[] blocks;
  private static volatile byte[] tops;

  private StringScan() {}

  /** The block pass: params, lengths (read), in-block sums and block totals (written); indirect, as the kernels. */
  static Program blocksProgram(int workgroupSize) {
    byte[] b = blocks;
    if (b == null) {
      b = compile("vkspark-string-blocks.comp", BLOCKS, spv -> blocksProgram(spv, 64));
      blocks = b;
    }
    return blocksProgram(b, workgroupSize);
  }

  /** The top pass: params and the block totals (read and written); one workgroup. */
  static Program topsProgram(int workgroupSize) {
    byte[] t = tops;
    if (t == null) {
      t = compile("vkspark-string-tops.comp", TOPS, spv -> topsProgram(spv, 64));
      tops = t;
    }
    return topsProgram(t, workgroupSize);
  }

  /** The identity of the loaded passes in a runtime's kernel cache. */
  static String id(boolean top) {
    return top ? "vkspark-string-tops" : "vkspark-string-blocks";
  }

  private static Program blocksProgram(byte[] spirv, int wg) {
    return Program.spirv("vkspark-string-blocks", ByteBuffer.wrap(spirv)).workgroupSize(wg)
        .buffer(BufferDecl.params("params", 0)).indirect("params", ColumnKernel.GROUPS_OFFSET)
        .buffer(new BufferDecl("lens", 0, 1, MemoryKind.READ_ONLY, ElementType.UINT32, false, 0))
        .buffer(BufferDecl.output("local", 2, ElementType.UINT32))
        .buffer(BufferDecl.output("blocks", 3, ElementType.UINT32))
        .buffer(new BufferDecl("shared", 0, 0, MemoryKind.SHARED, ElementType.UINT32, false, 0))
        .build();
  }

  private static Program topsProgram(byte[] spirv, int wg) {
    return Program.spirv("vkspark-string-tops", ByteBuffer.wrap(spirv)).workgroupSize(wg)
        .buffer(BufferDecl.params("params", 0))
        .buffer(BufferDecl.output("blocks", 1, ElementType.UINT32))
        .buffer(new BufferDecl("shared", 0, 0, MemoryKind.SHARED, ElementType.UINT32, false, 0))
        .build();
  }

  private static byte[] compile(String file, String source, Function<byte[], Program> program) {
    CompileResult r = SealedCompiler.compile(file, source, null, new SealedCompiler.Seal(program, m -> { },
        e -> GpuException.of(Code.COMPILE, "vkspark's string scan compiles to a shader that is not sealed: " + e.what(),
            "report this: the scan is vkspark's own shader.")));
    if (!r.ok()) {
      throw GpuException.of(Code.COMPILE, "vkspark's string scan '" + file + "' does not compile: " + r.log().strip(),
          "report this: the scan is vkspark's own shader.");
    }
    return r.spirv().get();
  }
}
