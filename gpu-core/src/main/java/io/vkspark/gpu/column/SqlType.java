package io.vkspark.gpu.column;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.Sizes;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * The column types a GPU UDF can take and return, with their Arrow layout and GLSL type. Values
 * keep Arrow's in-memory layout on the GPU: fixed-width little-endian, booleans bit-packed,
 * {@code tinyint} and {@code smallint} packed four and two to a 32-bit word (so they need no 8- or
 * 16-bit storage feature, which many devices lack; the body sees an {@code int}). The one exception
 * is {@code decimal(p, s)}: an {@code int64_t} of its unscaled value on the GPU, a Decimal128 in
 * Arrow; its precision and scale live beside this enum, in {@link DecimalSpec}.
 */
public enum SqlType {
  INT("int", "int", 4, new ArrowType.Int(32, true)),
  BIGINT("bigint", "int64_t", 8, new ArrowType.Int(64, true)),
  /** One byte a value, four to a word on the GPU; the body sees an {@code int}, the result keeps its low 8 bits (Java's {@code (byte)}). */
  TINYINT("tinyint", "int", 1, new ArrowType.Int(8, true)),
  /** Two bytes a value, two to a word on the GPU; the body sees an {@code int}, the result keeps its low 16 bits (Java's {@code (short)}). */
  SMALLINT("smallint", "int", 2, new ArrowType.Int(16, true)),
  /**
   * {@code decimal(p, s)} with p &le; 18 ({@link DecimalSpec}): the {@code int64_t} unscaled value on the
   * GPU, Arrow's Decimal128 on the host. The Arrow type depends on precision and scale: {@link DecimalSpec#arrowType()}.
   */
  DECIMAL("decimal", "int64_t", 8, null),
  FLOAT("float", "float", 4, new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
  DOUBLE("double", "double", 8, new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
  /** Bit-packed, least significant bit first, as Arrow stores it. */
  BOOLEAN("boolean", "bool", 0, ArrowType.Bool.INSTANCE),
  /** Days since 1970-01-01 (Arrow DateDay). */
  DATE("date", "int", 4, new ArrowType.Date(DateUnit.DAY)),
  /** Microseconds since the epoch, UTC (Arrow Timestamp(MICROSECOND, "UTC"), Spark's TimestampType). */
  TIMESTAMP("timestamp", "int64_t", 8, new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")),
  // Variable-width argument types (arguments only): Arrow's layout, int32 offsets (rows + 1) and a
  // data buffer; the body reads them through generated accessors (see VarArgs). glsl() is the type of
  // one element as the accessors return it, byteWidth() the width of one offset.
  /** UTF-8 bytes (Arrow Utf8); the body reads {@code s_length()} and {@code s_byte(i)}. */
  STRING("string", "uint", 4, ArrowType.Utf8.INSTANCE),
  /** Bytes (Arrow Binary); the body reads {@code b_length()} and {@code b_byte(i)}. */
  BINARY("binary", "uint", 4, ArrowType.Binary.INSTANCE),
  /** Arrow List of Float32; the body reads {@code v_length()}, {@code v_at(i)}, {@code v_isNull(i)}. */
  ARRAY_FLOAT("array<float>", "float", 4, ArrowType.List.INSTANCE),
  /** Arrow List of Float64. */
  ARRAY_DOUBLE("array<double>", "double", 4, ArrowType.List.INSTANCE),
  /** Arrow List of Int32. */
  ARRAY_INT("array<int>", "int", 4, ArrowType.List.INSTANCE);

  private final String sqlName;
  private final String glsl;
  private final int byteWidth;
  private final ArrowType arrowType;

  SqlType(String sqlName, String glsl, int byteWidth, ArrowType arrowType) {
    this.sqlName = sqlName;
    this.glsl = glsl;
    this.byteWidth = byteWidth;
    this.arrowType = arrowType;
  }

  /** The SQL name, e.g. {@code bigint}. */
  public String sqlName() {
    return sqlName;
  }

  /** The GLSL type a kernel body sees. */
  public String glsl() {
    return glsl;
  }

  /** Bytes per value on the GPU; 0 for bit-packed booleans. */
  public int byteWidth() {
    return byteWidth;
  }

  public boolean isBitPacked() {
    return byteWidth == 0;
  }

  /** Whether values have a length per row (string, binary, arrays): offsets plus data on the GPU. */
  public boolean isVariableWidth() {
    return ordinal() >= STRING.ordinal() && ordinal() <= ARRAY_INT.ordinal();
  }

  /** Several values to a 32-bit word on the GPU ({@code tinyint}, {@code smallint}): read with bitfieldExtract, written with atomicOr. */
  public boolean isBytePacked() {
    return byteWidth == 1 || byteWidth == 2;
  }

  /**
   * The Arrow type; for {@link #DECIMAL}, whose Arrow type depends on precision and scale, use
   * {@link DecimalSpec#arrowType()} (or {@link KernelSignature.Arg#arrowType()}).
   *
   * @throws IllegalStateException for DECIMAL
   */
  public ArrowType arrowType() {
    if (arrowType == null) {
      throw new IllegalStateException("the Arrow type of " + sqlName + " depends on its precision and scale: use DecimalSpec.arrowType()");
    }
    return arrowType;
  }

  /** Bytes per value in Arrow: {@link #byteWidth()}, but 16 for a decimal (Decimal128). */
  public int arrowByteWidth() {
    return this == DECIMAL ? 16 : byteWidth;
  }

  /** The GLSL element type of the buffer holding this column ({@code uint} words for booleans, tinyints and smallints). */
  public String bufferElement() {
    return isBitPacked() || isBytePacked() ? "uint" : isVariableWidth() ? "int" : glsl;
  }

  /**
   * GPU bytes that hold {@code rows} values: whole 64-bit words for bits, so word-at-a-time code
   * stays in bounds; whole 32-bit words for tinyints and smallints.
   */
  public long bytesFor(long rows) {
    if (isBitPacked()) {
      return ((rows + 63) >>> 6) << 3;
    }
    if (isVariableWidth()) { // the offsets: one more than rows
      return Sizes.multiply(rows + 1, 4, "bytes of the offsets of " + rows + " " + sqlName + " values");
    }
    long bytes = Sizes.multiply(rows, byteWidth, "bytes of " + rows + " " + sqlName + " values");
    return isBytePacked() ? (bytes + 3) & ~3L : bytes;
  }

  /** Arrow bytes that hold {@code rows} values (16 a decimal). */
  public long arrowBytesFor(long rows) {
    return this == DECIMAL ? Sizes.multiply(rows, 16, "bytes of " + rows + " decimal values") : bytesFor(rows);
  }

  /**
   * Parses a SQL type name (case-insensitive; synonyms such as {@code integer}, {@code long},
   * {@code byte}, {@code short}; {@code decimal(p, s)}, {@code decimal(p)}, {@code numeric(p, s)}
   * give DECIMAL, whose precision and scale {@link DecimalSpec#parse} reads).
   */
  public static SqlType parse(String name) {
    String n = name == null ? "" : name.trim().toLowerCase(Locale.ROOT).replaceAll("\\s+", "");
    if (DecimalSpec.parse(n).isPresent()) {
      return DECIMAL;
    }
    return switch (n) {
      case "int", "integer", "int32" -> INT;
      case "bigint", "long", "int64" -> BIGINT;
      case "tinyint", "byte", "int8" -> TINYINT;
      case "smallint", "short", "int16" -> SMALLINT;
      case "float", "real", "float32" -> FLOAT;
      case "double", "float64", "doubleprecision" -> DOUBLE;
      case "boolean", "bool" -> BOOLEAN;
      case "date" -> DATE;
      case "timestamp", "timestamp_ltz" -> TIMESTAMP;
      case "string", "varchar", "utf8" -> STRING;
      case "binary", "bytes" -> BINARY;
      case "array<float>", "array<real>" -> ARRAY_FLOAT;
      case "array<double>" -> ARRAY_DOUBLE;
      case "array<int>", "array<integer>" -> ARRAY_INT;
      default -> throw GpuException.of(GpuException.Code.UNSUPPORTED, "type '" + name + "' is not supported by GPU UDFs.",
          "use one of " + Arrays.stream(values()).map(t -> t == DECIMAL ? "decimal(p, s) with p <= 18" : t.sqlName()).collect(Collectors.joining(", ")) + ".");
    };
  }
}
