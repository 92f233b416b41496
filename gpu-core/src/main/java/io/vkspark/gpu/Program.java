package io.vkspark.gpu;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A compute program: its shader (GLSL compiled at load time, or SPIR-V), workgroup size and the
 * ordered buffer declarations that every dispatch is validated against.
 *
 * <p>Immutable; build one with {@link #glsl(String, String)} or {@link #spirv(String, ByteBuffer)}
 * and {@link Builder}. {@link GpuDevice#load(Program)} turns it into a {@link Kernel}.
 *
 * <p>Specialization constants 0 and 1 are set by vkspark: 0 is the workgroup size (declare
 * {@code layout(local_size_x_id = 0) in;}), 1 a bool saying whether the device's {@code fma} is
 * fused (vkmath's {@code VKM_FUSED_FMA}). A shader declaring either as the other kind is refused at
 * load; its own constants take ids from 2.
 *
 * <pre>{@code
 * Program saxpy = Program.glsl("saxpy", source)
 *     .workgroupSize(64)
 *     .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32))
 *     .buffer(BufferDecl.output("y", 1, ElementType.FLOAT32))
 *     .build();
 * }</pre>
 */
public final class Program {
  private final String name;
  private final String glsl;
  private final byte[] spirv;
  private final int workgroupSize;
  private final List<BufferDecl> buffers;
  private final Optional<Indirect> indirect;
  private final boolean clearOutputs;
  private final boolean nativePreciseDivisions;
  private final boolean fastMath;

  /**
   * Indirect dispatch: the group counts are read at run time from {@code countBuffer} (a declared
   * buffer) at byte {@code offset}, as a {@code VkDispatchIndirectCommand {x, y, z}}.
   */
  public record Indirect(String countBuffer, long offset) {
    public Indirect {
      Objects.requireNonNull(countBuffer, "countBuffer");
      if (offset < 0 || offset % 4 != 0) {
        throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
            "indirect offset " + offset + " is not a non-negative multiple of 4.",
            "place the VkDispatchIndirectCommand at a 4-byte aligned offset.");
      }
    }
  }

  private Program(Builder b) {
    this.name = b.name;
    this.glsl = b.glsl;
    this.spirv = b.spirv;
    this.workgroupSize = b.workgroupSize;
    this.buffers = List.copyOf(b.buffers);
    this.indirect = Optional.ofNullable(b.indirect);
    this.clearOutputs = b.clearOutputs;
    this.nativePreciseDivisions = b.nativePreciseDivisions;
    this.fastMath = b.fastMath;
  }

  /** A program from GLSL compute shader source, compiled by shaderc when loaded. */
  public static Builder glsl(String name, String source) {
    Builder b = new Builder(name);
    b.glsl = Objects.requireNonNull(source, "source");
    return b;
  }

  /** A program from SPIR-V words. */
  public static Builder spirv(String name, ByteBuffer code) {
    Builder b = new Builder(name);
    byte[] bytes = new byte[code.remaining()];
    code.duplicate().get(bytes);
    if (bytes.length == 0 || bytes.length % 4 != 0) {
      throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
          "SPIR-V for '" + name + "' is " + bytes.length + " bytes, not a whole number of 32-bit words.",
          "pass the complete SPIR-V module.");
    }
    b.spirv = bytes;
    return b;
  }

  public String name() {
    return name;
  }

  /** GLSL source, if this program was built from GLSL. */
  public Optional<String> glslSource() {
    return Optional.ofNullable(glsl);
  }

  /** SPIR-V bytes (a copy), if this program was built from SPIR-V. */
  public Optional<byte[]> spirvCode() {
    return Optional.ofNullable(spirv).map(byte[]::clone);
  }

  public int workgroupSize() {
    return workgroupSize;
  }

  public List<BufferDecl> buffers() {
    return buffers;
  }

  public Optional<Indirect> indirect() {
    return indirect;
  }

  /**
   * Whether recorded dispatches zero the output buffers before the shader runs (the seed's
   * behaviour, and the default). Kernels that write every element they own can turn it off and
   * save a full pass over the outputs.
   */
  public boolean clearOutputs() {
    return clearOutputs;
  }

  /**
   * Whether double divisions the source marks {@code precise} keep the device's own rounding where
   * vkspark would make them correctly rounded: vkmath's functions are within 1-2 ulp whatever the
   * division, and most of a UDF's divisions are theirs. Set for a UDF whose body says no
   * {@code precise} itself.
   */
  public boolean nativePreciseDivisions() {
    return nativePreciseDivisions;
  }

  /**
   * Whether the device's own floating-point arithmetic may be used as it likes: contracting
   * {@code a * b + c} into one fused multiply-add, and, on a device that flushes 32-bit subnormal
   * floats, flushing them. Off by default: every float operation is then decorated
   * {@code NoContraction} when the program loads, and 32-bit float arithmetic keeps subnormals
   * where the device does not (docs/GLSL-SEMANTICS.md); a session opts in with
   * {@code spark.vkspark.fastMath}.
   */
  public boolean fastMath() {
    return fastMath;
  }

  public List<BufferDecl> outputs() {
    return buffers.stream().filter(BufferDecl::isOutput).toList();
  }

  /** Non-output, non-parameter, bound declarations: what a dispatch takes as inputs. */
  public List<BufferDecl> inputs() {
    return buffers.stream()
        .filter(d -> !d.isOutput() && d.kind().isBound() && !d.kind().isParams())
        .toList();
  }

  @Override
  public String toString() {
    return "Program[" + name + ", workgroupSize=" + workgroupSize + ", buffers=" + buffers + "]";
  }

  /** Builds a {@link Program}; each setter may be called once, checks run in {@link #build()}. */
  public static final class Builder {
    private final String name;
    private String glsl;
    private byte[] spirv;
    private int workgroupSize = 64;
    private final List<BufferDecl> buffers = new ArrayList<>();
    private Indirect indirect;
    private boolean clearOutputs = true;
    private boolean nativePreciseDivisions;
    private boolean fastMath;

    private Builder(String name) {
      if (name == null || name.isBlank()) {
        throw GpuException.of(GpuException.Code.INVALID_ARGUMENT, "a program has no name.",
            "give every program a name; it appears in every message about it.");
      }
      this.name = name;
    }

    /** Invocations per workgroup ({@code local_size_x}); the shader must declare the same. */
    public Builder workgroupSize(int size) {
      if (size <= 0) {
        throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
            "workgroup size " + size + " for '" + name + "' is not positive.",
            "use a multiple of the device's subgroup size, e.g. 64 or 256.");
      }
      this.workgroupSize = size;
      return this;
    }

    public Builder buffer(BufferDecl decl) {
      buffers.add(Objects.requireNonNull(decl, "decl"));
      return this;
    }

    public Builder buffers(List<BufferDecl> decls) {
      decls.forEach(this::buffer);
      return this;
    }

    /** Dispatch indirectly with group counts read from a declared buffer. */
    public Builder indirect(String countBuffer, long offset) {
      if (indirect != null) {
        throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
            "indirect dispatch of '" + name + "' was already set to " + indirect + ".", "set it once.");
      }
      indirect = new Indirect(countBuffer, offset);
      return this;
    }

    public Builder clearOutputs(boolean clear) {
      this.clearOutputs = clear;
      return this;
    }

    /** See {@link Program#nativePreciseDivisions()}. */
    public Builder nativePreciseDivisions(boolean on) {
      this.nativePreciseDivisions = on;
      return this;
    }

    /** See {@link Program#fastMath()}. */
    public Builder fastMath(boolean on) {
      this.fastMath = on;
      return this;
    }

    public Program build() {
      Set<String> names = new HashSet<>();
      Set<Long> slots = new HashSet<>();
      for (BufferDecl d : buffers) {
        if (!names.add(d.name())) {
          throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
              "program '" + name + "' declares buffer '" + d.name() + "' twice.", "give each buffer a unique name.");
        }
        if (d.kind().isBound() && !slots.add(((long) d.set() << 32) | d.binding())) {
          throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
              "program '" + name + "' binds two buffers at set " + d.set() + ", binding " + d.binding() + ".",
              "give each buffer its own (set, binding).");
        }
      }
      long params = buffers.stream().filter(d -> d.kind().isParams()).count();
      if (params > 1) {
        throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
            "program '" + name + "' declares " + params + " parameter (UNIFORM/PUSH) buffers.",
            "declare at most one parameter buffer; put all per-dispatch values in it.");
      }
      if (indirect != null && buffers.stream().noneMatch(d -> d.name().equals(indirect.countBuffer()))) {
        throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
            "indirect count buffer '" + indirect.countBuffer() + "' of '" + name + "' is not declared.",
            "declare it with buffer(...), usually as the parameter buffer.");
      }
      return new Program(this);
    }
  }
}
