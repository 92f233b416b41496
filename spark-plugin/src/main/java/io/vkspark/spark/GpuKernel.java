package io.vkspark.spark;

import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The GPU half of a GPU UDF: argument names and types, the result type and a GLSL body. Plain data
 * (serializable, no compiled state), so it travels with the UDF to executors.
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
 * timestamps {@code int64_t} microseconds since the epoch) and, for double kernels, vkspark's
 * double-precision {@code exp}, {@code log}, {@code pow}, trigonometric functions, {@code erf} and
 * {@code vk_norm_cdf}.
 */
public final class GpuKernel implements Serializable {
  private static final long serialVersionUID = 1L;

  private final SqlType result;
  private final List<String> argNames;
  private final List<SqlType> argTypes;
  private final String body;

  private GpuKernel(SqlType result, List<String> argNames, List<SqlType> argTypes, String body) {
    this.result = result;
    this.argNames = List.copyOf(argNames);
    this.argTypes = List.copyOf(argTypes);
    this.body = body;
  }

  /** Starts a kernel returning {@code sqlType} (int, bigint, float, double, boolean, date, timestamp). */
  public static Builder returns(String sqlType) {
    return new Builder(SqlType.parse(sqlType));
  }

  public static Builder returns(SqlType type) {
    return new Builder(Objects.requireNonNull(type, "type"));
  }

  public SqlType result() {
    return result;
  }

  public List<String> argNames() {
    return argNames;
  }

  public List<SqlType> argTypes() {
    return argTypes;
  }

  public String body() {
    return body;
  }

  /** The typed signature under the SQL name {@code name}. */
  public KernelSignature signature(String name) {
    List<KernelSignature.Arg> args = new ArrayList<>();
    for (int i = 0; i < argNames.size(); i++) {
      args.add(new KernelSignature.Arg(argNames.get(i), argTypes.get(i)));
    }
    return new KernelSignature(name, args, result);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof GpuKernel k && k.result == result && k.argNames.equals(argNames)
        && k.argTypes.equals(argTypes) && k.body.equals(body);
  }

  @Override
  public int hashCode() {
    return Objects.hash(result, argNames, argTypes, body);
  }

  @Override
  public String toString() {
    return "(" + java.util.stream.IntStream.range(0, argNames.size())
        .mapToObj(i -> argNames.get(i) + " " + argTypes.get(i).sqlName()).collect(Collectors.joining(", "))
        + ") -> " + result.sqlName();
  }

  /** Builds a {@link GpuKernel}; {@link #body(String)} finishes it. */
  public static final class Builder {
    private final SqlType result;
    private final List<String> names = new ArrayList<>();
    private final List<SqlType> types = new ArrayList<>();

    private Builder(SqlType result) {
      this.result = result;
    }

    public Builder arg(String name, String sqlType) {
      return arg(name, SqlType.parse(sqlType));
    }

    public Builder arg(String name, SqlType type) {
      names.add(name);
      types.add(Objects.requireNonNull(type, "type"));
      return this;
    }

    /** The GLSL body: an expression, or statements with {@code return}. */
    public GpuKernel body(String glsl) {
      return body(glsl, "udf");
    }

    /** {@link #body(String)}, naming GPU UDF {@code udfName} if an argument name is refused. */
    GpuKernel body(String glsl, String udfName) {
      GpuKernel k = new GpuKernel(result, names, types, Objects.requireNonNull(glsl, "body"));
      k.signature(udfName); // argument names are checked now, not at the first query
      return k;
    }
  }
}
