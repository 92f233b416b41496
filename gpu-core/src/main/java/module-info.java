/**
 * vkspark's Vulkan compute runtime and Arrow column kernels. Exports the device API
 * ({@code io.vkspark.gpu}), where devices are opened ({@code io.vkspark.gpu.vulkan}), column kernels
 * ({@code io.vkspark.gpu.column}) with their inputs, device cache, reductions on the device and
 * runtime ({@code .column.input}, {@code .column.cache}, {@code .column.reduce}, {@code .column.run}),
 * the Java UDF translator ({@code io.vkspark.gpu.translate}) and the command-line tools;
 * {@code io.vkspark.gpu.internal} (Vulkan handles, the shader compiler, the SPIR-V seal) stays inside.
 */
module io.vkspark.gpu {
  requires org.lwjgl;
  requires org.lwjgl.vulkan;
  requires org.lwjgl.shaderc;
  requires org.lwjgl.vma;
  requires transitive org.apache.arrow.vector;
  requires transitive org.apache.arrow.memory.core;
  requires org.slf4j;
  requires org.objectweb.asm;
  requires org.objectweb.asm.tree;
  requires org.objectweb.asm.tree.analysis;

  exports io.vkspark.gpu;
  exports io.vkspark.gpu.column;
  exports io.vkspark.gpu.column.cache;
  exports io.vkspark.gpu.column.input;
  exports io.vkspark.gpu.column.reduce;
  exports io.vkspark.gpu.column.run;
  exports io.vkspark.gpu.translate;
  exports io.vkspark.gpu.tools;
  exports io.vkspark.gpu.vulkan;
}
