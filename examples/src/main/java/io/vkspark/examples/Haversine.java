package io.vkspark.examples;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import org.apache.spark.sql.api.java.UDF4;

/**
 * Great-circle distance in kilometres between two points given in degrees:
 * {@code haversine(lat1, lon1, lat2, lon2)}, on a sphere of the Earth's mean radius
 * ({@value #EARTH_RADIUS_KM} km).
 *
 * <p>Why the GPU: three sines, three cosines, two square roots and an arctangent per row over
 * four input columns: trigonometry-bound work on independent rows, typical of geo joins and
 * filters.
 *
 * <p>The central angle is {@code 2 atan2(sqrt(a), sqrt(b))} with the haversine
 * {@code a = sin^2(dlat/2) + cos(lat1) cos(lat2) sin^2(dlon/2)} and its complement
 * {@code b = 1 - a} computed as {@code sin^2((lat1+lat2)/2) + cos(lat1) cos(lat2) cos^2(dlon/2)}:
 * the textbook {@code sqrt(1 - a)} loses all accuracy near antipodal points (there GPU and CPU
 * differed by 0.1 m); this form is accurate everywhere. Both halves use the same formula in the
 * same order ({@link StrictMath} on the CPU, vkspark's double-precision sin/cos/atan on the GPU,
 * each within 1 ulp); the tests allow {@code 1e-12 d + 1e-9 km}. Inputs need not be normalized;
 * NaN in, NaN out. Null in, null out.
 */
public final class Haversine implements UDF4<Double, Double, Double, Double, Double>, GpuUdf {
  private static final long serialVersionUID = 1L;
  /** Mean Earth radius (IUGG). */
  public static final double EARTH_RADIUS_KM = 6371.0088;
  private static final double DEG = 0.017453292519943295;   // pi / 180

  @Override
  public Double call(Double lat1, Double lon1, Double lat2, Double lon2) {
    return lat1 == null || lon1 == null || lat2 == null || lon2 == null ? null : km(lat1, lon1, lat2, lon2);
  }

  /** The CPU reference, the same arithmetic as the kernel. */
  public static double km(double lat1, double lon1, double lat2, double lon2) {
    double cc = StrictMath.cos(lat1 * DEG) * StrictMath.cos(lat2 * DEG);
    double sd = StrictMath.sin(0.5 * (lat2 - lat1) * DEG);
    double ss = StrictMath.sin(0.5 * (lat2 + lat1) * DEG);
    double sl = StrictMath.sin(0.5 * (lon2 - lon1) * DEG);
    double cl = StrictMath.cos(0.5 * (lon2 - lon1) * DEG);
    double a = sd * sd + cc * (sl * sl);
    double b = ss * ss + cc * (cl * cl);
    return 2.0 * EARTH_RADIUS_KM * StrictMath.atan2(StrictMath.sqrt(a), StrictMath.sqrt(b));
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("double")
        .arg("lat1", "double").arg("lon1", "double").arg("lat2", "double").arg("lon2", "double")
        .body("""
            const double DEG = 0.017453292519943295lf;
            double cc = cos(lat1 * DEG) * cos(lat2 * DEG);
            double sd = sin(0.5lf * (lat2 - lat1) * DEG);
            double ss = sin(0.5lf * (lat2 + lat1) * DEG);
            double sl = sin(0.5lf * (lon2 - lon1) * DEG);
            double cl = cos(0.5lf * (lon2 - lon1) * DEG);
            double a = sd * sd + cc * (sl * sl);   // haversine of the central angle
            double b = ss * ss + cc * (cl * cl);   // 1 - a, without cancellation
            return 2.0lf * %slf * atan(sqrt(a), sqrt(b));
            """.formatted(EARTH_RADIUS_KM));
  }
}
