package io.vkspark.gpu.internal;

import io.vkspark.gpu.CompileResult;
import io.vkspark.gpu.GlslCompiler;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.Program;
import java.nio.file.Path;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The one path from generated GLSL to sealed SPIR-V, shared by UDF kernels
 * ({@code ColumnKernel.compile}) and reductions ({@code column.reduce.ReductionPasses}): optimized
 * compilation, cached on disk when a directory is given, and {@link SpirvSeal} on every module,
 * fresh or read from the cache. One path means a shader vkspark generates cannot reach a driver
 * without the seal, whoever generated it.
 *
 * <p>Every module declares {@code SPV_KHR_float_controls} (keep 32-bit subnormals, as generated UDF
 * kernels ask anyway): under it shaderc's optimizer (spirv-opt) does no floating-point folding, so
 * {@code x / c} never becomes {@code x * (1 / c)}, {@code (x * 3.0) * 5.0} never {@code x * 15.0} and
 * {@code x / 3.0 + x / 10.0} never {@code x * 0.43333} before the load-time passes
 * ({@link NoContraction}, {@link ConstantDivisors}) see the module. Without it, spirv-opt merges
 * constants across operations (measured with shaderc's performance passes, LWJGL 3.4).
 */
public final class SealedCompiler {
  private SealedCompiler() {
  }

  /**
   * What a generated shader is sealed against.
   *
   * @param program the program its module must fit (declared buffers, element types), built from the module
   * @param more further checks of the parsed module (e.g. local memory per invocation)
   * @param broken the error thrown for a module that breaks the seal, from the seal's own error
   */
  public record Seal(Function<byte[], Program> program, Consumer<SpirvModule> more,
                     Function<GpuException, GpuException> broken) {
    /** Checks {@code spirv}; throws {@link #broken}'s error when it does not fit. */
    public void check(byte[] spirv) {
      try {
        more.accept(SpirvSeal.check(program.apply(spirv), spirv, true));
      } catch (GpuException e) {
        throw broken.apply(e);
      }
    }
  }

  /**
   * Compiles {@code source} (optimized) or reads it from {@code cacheDir}, sealing every module
   * before it is returned or stored.
   *
   * @param fileName the shader's file name in messages, e.g. {@code vkspark-reduce.comp}
   * @param cacheDir SPIR-V cache directory, or null
   */
  public static CompileResult compile(String fileName, String source, Path cacheDir, Seal seal) {
    return GlslCompiler.compile(fileName, withFloatControls(source), cacheDir, GlslCompiler.Flavor.OPTIMIZED, seal::check);
  }

  /** Declares {@code SPV_KHR_float_controls}, with 32-bit subnormals kept. */
  public static final String FLOAT_CONTROLS =
      "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4464], 4459, 32);";

  /**
   * {@code source} declaring {@link #FLOAT_CONTROLS} right after its {@code #version} line, line
   * numbers kept ({@code #line}); itself when it declares it already or has no {@code #version}.
   */
  static String withFloatControls(String source) {
    if (source.contains("SPV_KHR_float_controls") || !source.startsWith("#version")) {
      return source;
    }
    int eol = source.indexOf('\n');
    if (eol < 0) {
      return source;
    }
    return source.substring(0, eol + 1) + "#extension GL_EXT_spirv_intrinsics : require\n" + FLOAT_CONTROLS + "\n#line 2\n"
        + source.substring(eol + 1);
  }
}
