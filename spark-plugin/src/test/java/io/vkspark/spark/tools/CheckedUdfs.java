package io.vkspark.spark.tools;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import java.util.Random;
import org.apache.spark.sql.api.java.UDF1;

/** Java UDFs for {@link UdfCheckTest}'s jar: classes and lambdas that translate, do not, or cannot be checked. */
public final class CheckedUdfs {
  private final double base = 2.5;

  /** Translates. */
  public static final class Affine implements UDF1<Double, Double> {
    @Override
    public Double call(Double x) {
      return x == null ? null : x * 2 + 1;
    }
  }

  /** Does not translate: it allocates. */
  public static final class Seeded implements UDF1<Long, Integer> {
    @Override
    public Integer call(Long x) {
      return new Random(x).nextInt();
    }
  }

  /** Not checked: no constructor without arguments. */
  public static final class Scaled implements UDF1<Double, Double> {
    private final double k;

    public Scaled(double k) {
      this.k = k;
    }

    @Override
    public Double call(Double x) {
      return x * k;
    }
  }

  /** A GPU UDF: it has its own kernel. */
  public static final class Tripled implements UDF1<Integer, Integer>, GpuUdf {
    @Override
    public Integer call(Integer x) {
      return x == null ? null : x * 3;
    }

    @Override
    public GpuKernel kernel() {
      return GpuKernel.returns("int").arg("x", "int").body("x * 3");
    }
  }

  /** Translates. */
  public static UDF1<Integer, Integer> poly() {
    return x -> x * 3 + (x >> 2) - 7;
  }

  /** Translates: a captured double is a constant. */
  public static UDF1<Double, Double> scaled(double k) {
    return x -> x * k;
  }

  /** Does not translate: it allocates. */
  public static UDF1<Long, Integer> seeded() {
    return x -> new Random(x).nextInt();
  }

  /** Not checked: it reads a field of the object it captures. */
  public UDF1<Double, Double> plusBase() {
    return x -> x + base;
  }
}
