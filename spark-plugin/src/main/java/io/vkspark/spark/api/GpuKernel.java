package io.vkspark.spark.api;

import io.vkspark.gpu.column.DecimalSpec;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.KernelSpec;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The GPU half of a GPU UDF: argument names and types, the result type and a GLSL body, held as
 * one gpu-core {@link KernelSpec} built when the body is given (argument names are checked then).
 * Plain data (serializable, no compiled state), so it travels with the UDF to executors. The
 * SQL name is the one the UDF is registered or called under: {@link #spec(String)}.
 *
 * <pre>{@code
 * GpuKernel.returns("double")
 *     .arg("s", "double").arg("k", "double")
 *     .body("return s > k ? s - k : 0.0;");
 * }</pre>
 *
 * <p>The body is GLSL 4.50: a single expression, or statements ending in {@code return}. It sees
 * each argument under its name with the GLSL type of its SQL type ({@code int}, {@code int64_t},
 * {@code float}, {@code double}, {@code bool}; dates are {@code int} days since 1970-01-01,
 * timestamps {@code int64_t} microseconds since the epoch; {@code tinyint} and {@code smallint} are
 * {@code int}, a result narrowed as Java's {@code (byte)}/{@code (short)}; a {@code decimal(p, s)}
 * with p &le; 18 is the {@code int64_t} unscaled value, with constants {@code x_scale} and
 * {@code result_scale}; a {@code string} or {@code binary} argument is a {@code vk_string} with the
 * {@code vk_str_*} helpers, and such a result is written with {@code vk_out_*}) and, for double kernels, vkspark's
 * double-precision {@code exp}, {@code log}, {@code pow}, trigonometric functions, {@code erf} and
 * {@code vk_norm_cdf}.
 */
public final class GpuKernel implements Serializable {
  private static final long serialVersionUID = 2L;

  /** The spec under the name given when it was built (the GpuFunction's, or "udf"). */
  private final KernelSpec spec;

  private GpuKernel(KernelSpec spec) {
    this.spec = spec;
  }

  /**
   * Starts a kernel returning {@code sqlType} (int, bigint, tinyint, smallint, float, double,
   * boolean, date, timestamp, decimal(p, s) with p &le; 18, string, binary: a string or binary body
   * returns a {@code vk_string}, see docs/GLSL-SEMANTICS.md "Strings").
   */
  public static Builder returns(String sqlType) {
    return new Builder(SqlType.parse(sqlType), DecimalSpec.parse(sqlType).orElse(null));
  }

  public static Builder returns(SqlType type) {
    return new Builder(Objects.requireNonNull(type, "type"), null);
  }

  /**
   * A kernel made elsewhere as a gpu-core {@link KernelSpec} (with its helper functions), e.g. one
   * translated from a Java UDF's bytecode.
   */
  public static GpuKernel of(KernelSpec spec) {
    return new GpuKernel(Objects.requireNonNull(spec, "spec"));
  }

  /** The kernel under the SQL name {@code name}: the key of the compiled-kernel caches. */
  public KernelSpec spec(String name) {
    return spec.named(name);
  }

  public SqlType result() {
    return spec.result();
  }

  public List<String> argNames() {
    return spec.args().stream().map(KernelSignature.Arg::name).toList();
  }

  public List<SqlType> argTypes() {
    return spec.signature().argTypes();
  }

  /** The arguments: names, types and, for decimals, precision and scale. */
  public List<KernelSignature.Arg> args() {
    return spec.args();
  }

  /** The signature under the name this kernel was built with. */
  public KernelSignature signature() {
    return spec.signature();
  }

  public String body() {
    return spec.body();
  }

  /** Equal kernels: the same arguments, result and body, whatever name they were built under. */
  @Override
  public boolean equals(Object o) {
    return o instanceof GpuKernel k && k.spec.args().equals(spec.args()) && k.spec.result() == spec.result()
        && Objects.equals(k.spec.signature().resultDecimal(), spec.signature().resultDecimal())
        && k.spec.body().equals(spec.body()) && Objects.equals(k.spec.functions(), spec.functions());
  }

  @Override
  public int hashCode() {
    return Objects.hash(spec.args(), spec.result(), spec.signature().resultDecimal(), spec.body(), spec.functions());
  }

  @Override
  public String toString() {
    return "(" + spec.args().stream().map(a -> a.name() + " " + a.sqlName()).collect(Collectors.joining(", "))
        + ") -> " + spec.signature().resultSqlName();
  }

  /** Builds a {@link GpuKernel}; {@link #body(String)} finishes it. */
  public static final class Builder {
    private final SqlType result;
    private final DecimalSpec resultDecimal;
    private final List<KernelSignature.Arg> args = new ArrayList<>();

    private Builder(SqlType result, DecimalSpec resultDecimal) {
      this.result = result;
      this.resultDecimal = resultDecimal;
    }

    /** An argument of SQL type {@code sqlType}: {@code "int"}, {@code "smallint"}, {@code "decimal(12, 2)"}, ... */
    public Builder arg(String name, String sqlType) {
      args.add(KernelSignature.arg(name, sqlType));
      return this;
    }

    public Builder arg(String name, SqlType type) {
      args.add(new KernelSignature.Arg(name, Objects.requireNonNull(type, "type")));
      return this;
    }

    /** The GLSL body: an expression, or statements with {@code return}. */
    public GpuKernel body(String glsl) {
      return body(glsl, "udf");
    }

    /** {@link #body(String)}, naming GPU UDF {@code udfName} if an argument name or the body is refused. */
    public GpuKernel body(String glsl, String udfName) {
      // the signature is built (and its argument names checked) once, now, not at the first query
      return new GpuKernel(new KernelSpec(new KernelSignature(udfName, args, result, resultDecimal), Objects.requireNonNull(glsl, "body")));
    }
  }
}
