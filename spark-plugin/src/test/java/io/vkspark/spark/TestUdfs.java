package io.vkspark.spark;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import io.vkspark.spark.api.Tolerance;

import java.sql.Date;
import java.sql.Timestamp;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;

/** GPU UDFs over every supported type, each with its CPU reference. Strict: null in, null out. */
public final class TestUdfs {
  private TestUdfs() {}

  /** int: a * 3 + b (wrapping like Java). */
  public static final class IntPoly implements UDF2<Integer, Integer, Integer>, GpuUdf {
    @Override
    public Integer call(Integer a, Integer b) {
      return a == null || b == null ? null : a * 3 + b;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("int").arg("a", "int").arg("b", "int").body("a * 3 + b");
    }
  }

  /** bigint: a * 3 - b. */
  public static final class LongMix implements UDF2<Long, Long, Long>, GpuUdf {
    @Override
    public Long call(Long a, Long b) {
      return a == null || b == null ? null : a * 3 - b;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("bigint").arg("a", "bigint").arg("b", "bigint").body("a * 3l - b");
    }
  }

  /** float: 2.5 x + y. */
  public static final class FloatSaxpy implements UDF2<Float, Float, Float>, GpuUdf {
    @Override
    public Float call(Float x, Float y) {
      return x == null || y == null ? null : 2.5f * x + y;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("float").arg("x", "float").arg("y", "float").body("2.5 * x + y");
    }

    /** Exact: every float operation is NoContraction (no fused multiply-add) and keeps subnormals, on every device. */
    @Override
    public Tolerance tolerance() {
      return Tolerance.EXACT;
    }
  }

  /** double: the hypotenuse, as statements. */
  public static final class GpuHypot implements UDF2<Double, Double, Double>, GpuUdf {
    @Override
    public Double call(Double a, Double b) {
      return a == null || b == null ? null : Math.sqrt(a * a + b * b);
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("double").arg("a", "double").arg("b", "double").body("""
          double s = a * a + b * b;
          return sqrt(s);
          """);
    }
  }

  /** boolean: exclusive or. */
  public static final class Xor implements UDF2<Boolean, Boolean, Boolean>, GpuUdf {
    @Override
    public Boolean call(Boolean a, Boolean b) {
      return a == null || b == null ? null : a ^ b;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("boolean").arg("a", "boolean").arg("b", "boolean").body("a != b");
    }
  }

  /** double predicate, for WHERE. */
  public static final class IsPositive implements UDF1<Double, Boolean>, GpuUdf {
    @Override
    public Boolean call(Double x) {
      return x == null ? null : x > 0;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("boolean").arg("x", "double").body("x > 0.0");
    }
  }

  /** date + n days. */
  public static final class AddDays implements UDF2<Date, Integer, Date>, GpuUdf {
    @Override
    public Date call(Date d, Integer n) {
      return d == null || n == null ? null : Date.valueOf(d.toLocalDate().plusDays(n));
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("date").arg("d", "date").arg("n", "int").body("d + n");
    }
  }

  /** timestamp + h hours. */
  public static final class AddHours implements UDF2<Timestamp, Integer, Timestamp>, GpuUdf {
    @Override
    public Timestamp call(Timestamp t, Integer h) {
      if (t == null || h == null) {
        return null;
      }
      Timestamp out = new Timestamp(t.getTime() + h * 3_600_000L);
      out.setNanos(t.getNanos());
      return out;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("timestamp").arg("t", "timestamp").arg("h", "int").body("t + int64_t(h) * 3600000000l");
    }
  }
}
