package io.vkspark.gpu;

import java.util.List;
import java.util.Optional;

/**
 * The outcome of compiling GLSL: SPIR-V, or shaderc's diagnostics with their line numbers.
 *
 * @param spirv the module, when compilation succeeded
 * @param errors each error with the line shaderc reported (1-based, 0 when it gave none)
 * @param log shaderc's whole message text
 * @param fromCache whether the SPIR-V came from the disk cache
 */
public record CompileResult(Optional<byte[]> spirv, List<Diagnostic> errors, String log, boolean fromCache) {
  /** One error: its line in the compiled source and shaderc's text. */
  public record Diagnostic(int line, String message) {}

  public CompileResult {
    errors = List.copyOf(errors);
  }

  public boolean ok() {
    return spirv.isPresent();
  }
}
