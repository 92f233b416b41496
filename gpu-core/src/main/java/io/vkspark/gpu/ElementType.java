package io.vkspark.gpu;

/** Element types of GPU buffers, with their size in bytes. */
public enum ElementType {
  BYTE(1, "uint8_t"),
  INT32(4, "int"),
  UINT32(4, "uint"),
  INT64(8, "int64_t"),
  FLOAT32(4, "float"),
  FLOAT64(8, "double");

  private final int bytes;
  private final String glsl;

  ElementType(int bytes, String glsl) {
    this.bytes = bytes;
    this.glsl = glsl;
  }

  /** Size of one element in bytes. */
  public int bytes() {
    return bytes;
  }

  /** The GLSL type name. */
  public String glsl() {
    return glsl;
  }
}
