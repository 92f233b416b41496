/**
 * vkspark's Vulkan compute runtime and Arrow column kernels. Exports the device API
 * ({@code io.vkspark.gpu}), column kernels ({@code io.vkspark.gpu.column}), their reductions on the
 * device ({@code io.vkspark.gpu.column.reduce}) and the command-line tools;
 * {@code io.vkspark.gpu.internal} (Vulkan handles, the SPIR-V seal) stays inside.
 */
module io.vkspark.gpu {
  requires org.lwjgl;
  requires org.lwjgl.vulkan;
  requires org.lwjgl.shaderc;
  requires org.lwjgl.vma;
  requires transitive org.apache.arrow.vector;
  requires transitive org.apache.arrow.memory.core;
  requires org.slf4j;

  exports io.vkspark.gpu;
  exports io.vkspark.gpu.column;
  exports io.vkspark.gpu.column.reduce;
  exports io.vkspark.gpu.tools;
}
