package io.vkspark.gpu.internal;

import io.vkspark.gpu.DeviceFeatures;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.Program;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Reads a SPIR-V module's OpCapability list, so a missing device feature is a message, not a driver crash. */
public final class SpirvCapabilities {
  private SpirvCapabilities() {}

  /** Refuses SPIR-V that needs a capability the device lacks, before the driver sees it. */
  public static void check(Program program, byte[] spirv, DeviceFeatures f) {
    ByteBuffer words = ByteBuffer.wrap(spirv).order(ByteOrder.LITTLE_ENDIAN);
    if (words.getInt(0) != 0x07230203) {
      throw GpuException.of(Code.INVALID_ARGUMENT, "program '" + program.name() + "' is not SPIR-V (bad magic number).",
          "pass a SPIR-V module or GLSL source.");
    }
    for (int i = 5 * 4; i + 4 <= spirv.length; ) {
      int word = words.getInt(i);
      int count = word >>> 16;
      int opcode = word & 0xffff;
      if (count == 0) {
        break;
      }
      if (opcode == 17 && i + 8 <= spirv.length) { // OpCapability
        int cap = words.getInt(i + 4);
        String missing = switch (cap) {
          case 10 -> f.shaderFloat64() ? null : "shaderFloat64 (double)";
          case 11 -> f.shaderInt64() ? null : "shaderInt64 (64-bit integers)";
          case 4448 -> f.storage8Bit() ? null : "storageBuffer8BitAccess";
          case 4433 -> f.storage16Bit() ? null : "storageBuffer16BitAccess";
          case 39 -> "shaderInt8 (8-bit arithmetic)";
          default -> null;
        };
        if (missing != null) {
          throw GpuException.of(Code.UNSUPPORTED, "program '" + program.name() + "' needs " + missing
              + ", which this device does not support.", "run it on a device that has it, or avoid that type.");
        }
      } else if (opcode == 54) { // OpFunction: capabilities come before any function
        break;
      }
      i += count * 4;
    }
  }

}
