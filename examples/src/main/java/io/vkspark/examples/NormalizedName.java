package io.vkspark.examples;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import org.apache.spark.sql.api.java.UDF1;

/**
 * A name normalized for matching: {@code name.trim().toLowerCase()}, a string result.
 *
 * <p>Why the GPU: a pass over every byte of a string column, the work a GPU does in bulk while the
 * CPU decodes each row into a {@code java.lang.String} and encodes the result again. The body maps
 * ASCII rows exactly as Java does; a name with any other character is handed back to this
 * {@code call()} ({@code vk_str_require_ascii}), whose {@code toLowerCase()} knows Unicode (and the
 * JVM's locale). Null in, null out.
 */
public final class NormalizedName implements UDF1<String, String>, GpuUdf {
  private static final long serialVersionUID = 1L;

  @Override
  public String call(String name) {
    return name == null ? null : normalize(name);
  }

  /** The CPU reference. */
  public static String normalize(String name) {
    return name.trim().toLowerCase();
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("string").arg("name", "string")
        .body("vk_str_require_ascii(name); return vk_str_lower(vk_str_trim(name));");
  }
}
