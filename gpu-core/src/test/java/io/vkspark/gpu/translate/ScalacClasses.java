package io.vkspark.gpu.translate;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Scala fixtures compiled at test time (scalac in-process, on the test's class path), loaded
 * from a temporary folder that {@link #close()} deletes: the Scala twin of {@link GeneratedClasses}.
 */
final class ScalacClasses implements AutoCloseable {
  private final Path dir;
  private final URLClassLoader loader;

  ScalacClasses(String source) {
    try {
      dir = Files.createTempDirectory("vkspark-scalac");
      Path src = Files.writeString(dir.resolve("Fixtures.scala"), source);
      Path out = Files.createDirectories(dir.resolve("classes"));
      String cp = System.getProperty("java.class.path") + File.pathSeparator + System.getProperty("jdk.module.path", "");
      if (!scala.tools.nsc.Main.process(new String[] {"-classpath", cp, "-d", out.toString(), src.toString()})) {
        throw new IllegalStateException("scalac failed on the fixtures (its messages are above)");
      }
      loader = new URLClassLoader(new URL[] {out.toUri().toURL()}, ScalacClasses.class.getClassLoader());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The compiled class {@code name}, initialized. */
  Class<?> load(String name) throws ClassNotFoundException {
    return Class.forName(name, true, loader);
  }

  /** The instance of Scala object {@code name} (its {@code MODULE$}). */
  Object module(String name) throws ReflectiveOperationException {
    return load(name + "$").getField("MODULE$").get(null);
  }

  @Override
  public void close() throws IOException {
    loader.close();
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
