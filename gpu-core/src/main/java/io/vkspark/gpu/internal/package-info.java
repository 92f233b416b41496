/**
 * The Vulkan implementation of the API (not exported): the instance, devices, buffers, kernels and
 * dispatches over LWJGL, the shader compiler and its disk cache ({@code GlslCompiler}), and the
 * SPIR-V reader, seal and passes. No Vulkan handle leaves this package.
 *
 * <p>May import: root.
 */
package io.vkspark.gpu.internal;
