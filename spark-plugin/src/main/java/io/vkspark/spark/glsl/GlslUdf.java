package io.vkspark.spark.glsl;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;

import java.util.stream.IntStream;
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
 * A GPU UDF defined in GLSL only, with no Java: a signature and a body, from
 * {@code spark.vkspark.glsl} or {@code SELECT vkspark_define(...)} ({@link GlslDefinitions}). It has no
 * CPU implementation of its own, so wherever vkspark would run {@code call()} (an executor without a
 * usable GPU, verify mode), the same SPIR-V runs on a CPU Vulkan device, Mesa's lavapipe
 * ({@code CpuVulkan}). It is a Spark {@code UDF1} .. {@code UDF10} so that it registers like any Java
 * UDF; {@code call()} evaluates one row that way, on the JVM's own GPU when it has one (a call Spark
 * keeps in its own operator: a join condition, a window, a grouping), else on lavapipe.
 */
@SuppressWarnings("rawtypes")
public final class GlslUdf implements GpuUdf, UDF1, UDF2, UDF3, UDF4, UDF5, UDF6, UDF7, UDF8, UDF9, UDF10 {
  private static final long serialVersionUID = 1L;

  private final String name;
  private final GpuKernel kernel;
  /** Where it was defined, for messages: a file and line, or "vkspark_define". */
  private final String origin;

  GlslUdf(String name, GpuKernel kernel, String origin) {
    this.name = name;
    this.kernel = kernel;
    this.origin = origin;
  }

  @Override
  public GpuKernel kernel() {
    return kernel;
  }

  @Override
  public String name() {
    return name;
  }

  /** Where it was defined: {@code /etc/spark/udfs.glsl line 3} or {@code vkspark_define}. */
  public String origin() {
    return origin;
  }

  /** {@code double poly(double x)}: its signature as it is written in GLSL files. */
  public String signature() {
    return kernel.result().sqlName() + " " + name + "(" + String.join(", ",
        IntStream.range(0, kernel.argNames().size())
            .mapToObj(i -> kernel.argTypes().get(i).sqlName() + " " + kernel.argNames().get(i)).toList()) + ")";
  }

  private Object eval(Object... args) {
    return GlslRows.evalRow(this, args);
  }

  @Override
  public Object call(Object a) {
    return eval(a);
  }

  @Override
  public Object call(Object a, Object b) {
    return eval(a, b);
  }

  @Override
  public Object call(Object a, Object b, Object c) {
    return eval(a, b, c);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d) {
    return eval(a, b, c, d);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e) {
    return eval(a, b, c, d, e);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e, Object f) {
    return eval(a, b, c, d, e, f);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e, Object f, Object g) {
    return eval(a, b, c, d, e, f, g);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h) {
    return eval(a, b, c, d, e, f, g, h);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h, Object i) {
    return eval(a, b, c, d, e, f, g, h, i);
  }

  @Override
  public Object call(Object a, Object b, Object c, Object d, Object e, Object f, Object g, Object h, Object i,
                     Object j) {
    return eval(a, b, c, d, e, f, g, h, i, j);
  }

  /** Equal definitions: same name and kernel (a redefinition with the same text changes nothing). */
  @Override
  public boolean equals(Object o) {
    return o instanceof GlslUdf g && g.name.equals(name) && g.kernel.equals(kernel);
  }

  @Override
  public int hashCode() {
    return name.hashCode() * 31 + kernel.hashCode();
  }

  @Override
  public String toString() {
    return signature() + " (GLSL, " + origin + ")";
  }
}
