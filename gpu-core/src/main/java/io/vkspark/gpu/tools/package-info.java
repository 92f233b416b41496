/**
 * Command-line tools users run: {@link io.vkspark.gpu.tools.Devices}, the Vulkan devices vkspark can
 * use (or Spark's GPU discovery JSON).
 *
 * <p>May import: root, vulkan.
 */
package io.vkspark.gpu.tools;
