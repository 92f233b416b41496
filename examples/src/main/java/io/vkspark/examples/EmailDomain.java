package io.vkspark.examples;

import io.vkspark.spark.api.GpuKernel;
import io.vkspark.spark.api.GpuUdf;
import org.apache.spark.sql.api.java.UDF1;

/**
 * An email address's domain, lower-cased: {@code email.substring(email.indexOf('@') + 1).toLowerCase()}
 * (the whole address when it has no {@code @}), a string result.
 *
 * <p>Why the GPU: a search and a copy over every byte of a string column. ASCII rows are computed on
 * the device with Java's exact result; a row with any other character is handed back to this
 * {@code call()} ({@code vk_str_require_ascii}): Java's indices count UTF-16 units and its case
 * mapping knows Unicode. Null in, null out.
 */
public final class EmailDomain implements UDF1<String, String>, GpuUdf {
  private static final long serialVersionUID = 1L;

  @Override
  public String call(String email) {
    return email == null ? null : domain(email);
  }

  /** The CPU reference. */
  public static String domain(String email) {
    return email.substring(email.indexOf('@') + 1).toLowerCase();
  }

  @Override
  public GpuKernel kernel() {
    return GpuKernel.returns("string").arg("email", "string").body("""
        vk_str_require_ascii(email);
        return vk_str_lower(vk_str_sub(email, vk_str_find(email, 64u, 0) + 1, vk_str_len(email)));""");
  }
}
