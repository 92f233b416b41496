/**
 * GLSL turned into sealed SPIR-V once per JVM: {@link io.vkspark.spark.kernel.CompiledKernels}
 * caches gpu-core's {@code ColumnKernel.compile} by kernel spec, within the compile timeout.
 *
 * <p>May import: shim, conf.
 */
package io.vkspark.spark.kernel;
