package io.vkspark.gpu;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One buffer binding of a {@link Program}: what the shader expects at {@code (set, binding)}.
 *
 * <p>Dispatch calls take their buffers in declaration order: inputs are the non-output
 * declarations (parameters excluded), outputs the {@code isOutput} ones, as in the seed's
 * {@code bind_handles}.
 *
 * @param name the name used in messages
 * @param set descriptor set index
 * @param binding binding index in the set
 * @param kind how the shader uses the buffer
 * @param elementType element type; byte lengths must be a multiple of its size
 * @param isOutput whether the dispatch writes it and the caller reads it back
 * @param count element count for buffers a dispatch allocates itself (outputs of one-call
 *     dispatches); 0 means the caller supplies the buffer
 */
public record BufferDecl(
    String name, int set, int binding, MemoryKind kind, ElementType elementType, boolean isOutput,
    long count) {

  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  public BufferDecl {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(elementType, "elementType");
    if (name == null || !NAME.matcher(name).matches()) {
      throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
          "buffer name '" + name + "' is not an identifier.",
          "name buffers with letters, digits and '_', starting with a letter.");
    }
    if (set < 0 || binding < 0) {
      throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
          "buffer '" + name + "' has set " + set + " and binding " + binding + ".",
          "use non-negative set and binding indices.");
    }
    if (count < 0) {
      throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
          "buffer '" + name + "' declares " + count + " elements.", "declare 0 (sized by the caller) or more elements.");
    }
    if (isOutput && (kind == MemoryKind.READ_ONLY || kind.isParams() || kind == MemoryKind.SHARED)) {
      throw GpuException.of(GpuException.Code.INVALID_ARGUMENT,
          "output buffer '" + name + "' is declared " + kind + ".", "declare outputs as STORAGE.");
    }
  }

  /** A read-only input at set 0. */
  public static BufferDecl input(String name, int binding, ElementType type) {
    return new BufferDecl(name, 0, binding, MemoryKind.READ_ONLY, type, false, 0);
  }

  /** An output at set 0, sized by the caller. */
  public static BufferDecl output(String name, int binding, ElementType type) {
    return new BufferDecl(name, 0, binding, MemoryKind.STORAGE, type, true, 0);
  }

  /** An output at set 0 that one-call dispatches allocate with {@code count} elements. */
  public static BufferDecl output(String name, int binding, ElementType type, long count) {
    return new BufferDecl(name, 0, binding, MemoryKind.STORAGE, type, true, count);
  }

  /** The per-dispatch parameter buffer at set 0. */
  public static BufferDecl params(String name, int binding) {
    return new BufferDecl(name, 0, binding, MemoryKind.UNIFORM, ElementType.UINT32, false, 0);
  }

  /** Declared size in bytes ({@code count * elementType.bytes()}), checked. */
  public long declaredBytes() {
    return Sizes.multiply(count, elementType.bytes(), "declared size of buffer '" + name + "'");
  }
}
