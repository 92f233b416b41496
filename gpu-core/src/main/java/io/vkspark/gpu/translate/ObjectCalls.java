package io.vkspark.gpu.translate;

import org.objectweb.asm.tree.MethodInsnNode;

/**
 * Calls whose receiver or arguments are modelled values ({@link Val.Obj}), or that make one: each
 * family ({@link Boxes}, {@link ScalaCalls}, ...) answers the calls it knows and returns null for the others. A new
 * value type adds its family here.
 */
final class ObjectCalls {
  private ObjectCalls() {}

  /** The call's value ({@link Val.Void} for a void call), or null when no family knows it. */
  static Val translate(MethodInsnNode call, Val receiver, Val[] args, MethodTranslator t) {
    Val v = Boxes.translate(call, receiver, args, t);
    v = v != null ? v : DateCalls.translate(call, receiver, args, t);
    return v != null ? v : ScalaCalls.translate(call, receiver, args, t);
  }
}
