package io.vkspark.gpu.translate;

/** Thrown inside the translator when a method cannot be translated; becomes a {@link Translation.Refused}. */
final class Untranslatable extends RuntimeException {
  private static final long serialVersionUID = 1L;

  Untranslatable(String reason) {
    super(reason, null, false, false);
  }
}
