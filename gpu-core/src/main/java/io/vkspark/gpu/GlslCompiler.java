package io.vkspark.gpu;

import static org.lwjgl.util.shaderc.Shaderc.*;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GLSL compute shaders to SPIR-V with shaderc (Vulkan 1.2 target, optimized), cached on disk by a
 * hash of the source and the compiler settings, so an executor compiles each kernel once per
 * machine rather than once per process (shaderc takes ~0.3 s per small shader).
 *
 * <p>Needs no device: user kernels are checked when they are registered, before any executor
 * runs them. Thread-safe.
 */
public final class GlslCompiler {
  private static final Logger LOG = LoggerFactory.getLogger(GlslCompiler.class);
  private static final Pattern LINE = Pattern.compile("^[^:\\n]*:(\\d+): error: (.*)$", Pattern.MULTILINE);
  private static final Pattern ANY_ERROR = Pattern.compile("^(?:[^:\\n]*: )?error: (.*)$", Pattern.MULTILINE);
  private static final String SETTINGS = "vulkan1.2/spv1.5/O/v1";
  private static final Object LOCK = new Object();
  private static long compiler;
  private static long options;

  private GlslCompiler() {}

  /**
   * Compiles {@code source}; looks in and fills {@code cacheDir}/spirv when it is not null.
   *
   * @param name file name for messages, e.g. {@code saxpy.comp}
   */
  public static CompileResult compile(String name, String source, Path cacheDir) {
    String key = hash(SETTINGS + "\n" + source);
    Path cached = cacheDir == null ? null : cacheDir.resolve("spirv").resolve(key + ".spv");
    if (cached != null && Files.isRegularFile(cached)) {
      try {
        byte[] bytes = Files.readAllBytes(cached);
        if (bytes.length > 0 && bytes.length % 4 == 0) {
          return new CompileResult(Optional.of(bytes), List.of(), "", true);
        }
      } catch (IOException e) {
        LOG.warn("ignoring unreadable SPIR-V cache entry {}: {}", cached, e.toString());
      }
    }
    CompileResult result = compileNow(name, source);
    if (cached != null && result.ok()) {
      store(cached, result.spirv().get());
    }
    return result;
  }

  /** Compiles or throws a COMPILE {@link GpuException} carrying shaderc's messages. */
  public static byte[] compileOrThrow(String name, String source, Path cacheDir) {
    CompileResult r = compile(name, source, cacheDir);
    if (!r.ok()) {
      throw GpuException.of(GpuException.Code.COMPILE,
          "GLSL program '" + name.replaceFirst("\\.comp$", "") + "' does not compile: " + r.log().strip(),
          "correct the shader at the line shaderc names.");
    }
    return r.spirv().get();
  }

  private static CompileResult compileNow(String name, String source) {
    synchronized (LOCK) {
      if (compiler == 0) {
        compiler = shaderc_compiler_initialize();
        options = shaderc_compile_options_initialize();
        if (compiler == 0 || options == 0) {
          throw GpuException.of(GpuException.Code.COMPILE, "shaderc could not be initialized.",
              "check that lwjgl-shaderc's natives for this platform are on the classpath.");
        }
        shaderc_compile_options_set_target_env(options, shaderc_target_env_vulkan, shaderc_env_version_vulkan_1_2);
        shaderc_compile_options_set_target_spirv(options, shaderc_spirv_version_1_5);
        shaderc_compile_options_set_optimization_level(options, shaderc_optimization_level_performance);
      }
      long t0 = System.nanoTime();
      long result = shaderc_compile_into_spv(compiler, source, shaderc_glsl_compute_shader, name, "main", options);
      if (result == 0) {
        throw GpuException.of(GpuException.Code.COMPILE, "shaderc returned no result for '" + name + "'.",
            "retry; if it persists, report it with the shader source.");
      }
      try {
        int status = shaderc_result_get_compilation_status(result);
        String log = String.valueOf(shaderc_result_get_error_message(result));
        if (status != shaderc_compilation_status_success) {
          return new CompileResult(Optional.empty(), diagnostics(log), log, false);
        }
        ByteBuffer bytes = shaderc_result_get_bytes(result);
        byte[] spirv = new byte[bytes.remaining()];
        bytes.get(spirv);
        LOG.debug("compiled {} in {} ms", name, (System.nanoTime() - t0) / 1_000_000);
        return new CompileResult(Optional.of(spirv), List.of(), log, false);
      } finally {
        shaderc_result_release(result);
      }
    }
  }

  static List<CompileResult.Diagnostic> diagnostics(String log) {
    List<CompileResult.Diagnostic> out = new ArrayList<>();
    Matcher m = LINE.matcher(log);
    while (m.find()) {
      out.add(new CompileResult.Diagnostic(Integer.parseInt(m.group(1)), m.group(2).strip()));
    }
    if (out.isEmpty()) {
      Matcher any = ANY_ERROR.matcher(log);
      while (any.find()) {
        out.add(new CompileResult.Diagnostic(0, any.group(1).strip()));
      }
    }
    if (out.isEmpty() && !log.isBlank()) {
      out.add(new CompileResult.Diagnostic(0, log.strip()));
    }
    return out;
  }

  private static void store(Path file, byte[] spirv) {
    try {
      Files.createDirectories(file.getParent());
      Path tmp = Files.createTempFile(file.getParent(), "spv", ".tmp");
      Files.write(tmp, spirv);
      try {
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      LOG.warn("could not write the SPIR-V cache entry {}: {}", file, e.toString());
    }
  }

  static String hash(String text) {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(md.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
