package io.vkspark.spark.api;

import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.SqlType;
import java.util.Objects;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF10;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.api.java.UDF3;
import org.apache.spark.sql.api.java.UDF4;
import org.apache.spark.sql.api.java.UDF5;
import org.apache.spark.sql.api.java.UDF6;
import org.apache.spark.sql.api.java.UDF7;
import org.apache.spark.sql.api.java.UDF8;
import org.apache.spark.sql.api.java.UDF9;

/**
 * An inline GPU UDF: a GLSL kernel plus a Java lambda as its CPU reference. It is a Spark
 * {@code UDF1} .. {@code UDF10} of the kernel's arity, so it registers like any Java UDF.
 *
 * <pre>{@code
 * GpuFunction.define("saxpy")
 *     .returns("float").arg("x", "float").arg("y", "float")
 *     .body("2.5 * x + y")
 *     .cpu((UDF2<Float, Float, Float>) (x, y) -> x == null || y == null ? null : 2.5f * x + y)
 *     .register(spark);
 * spark.sql("SELECT saxpy(x, y) FROM points");
 * }</pre>
 */
@SuppressWarnings({"rawtypes", "unchecked"})
public final class GpuFunction implements GpuUdf, UDF1, UDF2, UDF3, UDF4, UDF5, UDF6, UDF7, UDF8, UDF9, UDF10 {
  private static final long serialVersionUID = 1L;

  private final String name;
  private final GpuKernel kernel;
  private final Object cpu;
  private final Tolerance tolerance;

  private GpuFunction(String name, GpuKernel kernel, Object cpu, Tolerance tolerance) {
    this.name = name;
    this.kernel = kernel;
    this.cpu = cpu;
    this.tolerance = tolerance == null ? Tolerance.defaultFor(kernel.result()) : tolerance;
    int arity = arity(cpu);
    if (arity != kernel.argNames().size()) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + name + "' declares " + kernel.argNames().size()
          + " kernel arguments but its CPU function is a UDF" + arity + ".",
          "give the CPU function one parameter per kernel argument.");
    }
  }

  /** Starts an inline GPU UDF named {@code name} (its SQL name). */
  public static Builder define(String name) {
    return new Builder(name);
  }

  @Override
  public GpuKernel kernel() {
    return kernel;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Tolerance tolerance() {
    return tolerance;
  }

  /** Registers this function in {@code spark} under its name. */
  public GpuFunction register(SparkSession spark) {
    GpuUdfs.register(spark, name, this);
    return this;
  }

  static int arity(Object f) {
    return f instanceof UDF10 ? 10 : f instanceof UDF9 ? 9 : f instanceof UDF8 ? 8 : f instanceof UDF7 ? 7
        : f instanceof UDF6 ? 6 : f instanceof UDF5 ? 5 : f instanceof UDF4 ? 4 : f instanceof UDF3 ? 3
        : f instanceof UDF2 ? 2 : f instanceof UDF1 ? 1 : 0;
  }

  @Override
  public Object call(Object a) throws Exception {
    return ((UDF1) cpu).call(a);
  }

  @Override
  public Object call(Object a, Object b) throws Exception {
    return ((UDF2) cpu).call(a, b);
  }

  @Override
  public Object call(Object a, Object b, Object c) throws Exception {
    return ((UDF3) cpu).call(a, b, c);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d) throws Exception {
    return ((UDF4) cpu).call(a, b, c, d);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e) throws Exception {
    return ((UDF5) cpu).call(a, b, c, d, e);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e, Object f) throws Exception {
    return ((UDF6) cpu).call(a, b, c, d, e, f);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e, Object f, Object g) throws Exception {
    return ((UDF7) cpu).call(a, b, c, d, e, f, g);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h) throws Exception {
    return ((UDF8) cpu).call(a, b, c, d, e, f, g, h);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h, Object i)
      throws Exception {
    return ((UDF9) cpu).call(a, b, c, d, e, f, g, h, i);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h, Object i,
                     Object j) throws Exception {
    return ((UDF10) cpu).call(a, b, c, d, e, f, g, h, i, j);
  }

  @Override
  public String toString() {
    return name + kernel;
  }

  /** Builds a {@link GpuFunction}. */
  public static final class Builder {
    private final String name;
    private GpuKernel.Builder kernel;
    private GpuKernel built;
    private Tolerance tolerance;

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "name");
    }

    public Builder returns(String sqlType) {
      kernel = GpuKernel.returns(sqlType);
      return this;
    }

    public Builder returns(SqlType type) {
      kernel = GpuKernel.returns(type);
      return this;
    }

    public Builder arg(String argName, String sqlType) {
      requireReturns().arg(argName, sqlType);
      return this;
    }

    public Builder body(String glsl) {
      built = requireReturns().body(glsl, name);
      return this;
    }

    /** How far the GPU result may be from the CPU reference's ({@code spark.vkspark.verify}); before cpu(...). */
    public Builder tolerance(Tolerance t) {
      tolerance = Objects.requireNonNull(t, "tolerance");
      return this;
    }

    /** The CPU reference, a Spark {@code UDF1} .. {@code UDF10}; finishes the definition. */
    public GpuFunction cpu(Object udf) {
      if (built == null) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + name + "' has no body.",
            "call body(\"...\") before cpu(...).");
      }
      if (arity(udf) == 0) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "the CPU function of GPU UDF '" + name + "' is not a Spark UDF1..UDF10.",
            "pass a lambda cast to UDFn, e.g. (UDF2<Double, Double, Double>) (a, b) -> a + b.");
      }
      return new GpuFunction(name, built, udf, tolerance);
    }

    private GpuKernel.Builder requireReturns() {
      if (kernel == null) {
        throw GpuException.of(Code.INVALID_ARGUMENT, "GPU UDF '" + name + "' has no result type.",
            "call returns(\"double\") (or another type) first.");
      }
      return kernel;
    }
  }
}
