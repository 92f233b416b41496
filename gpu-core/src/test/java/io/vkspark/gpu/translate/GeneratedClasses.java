package io.vkspark.gpu.translate;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/**
 * Java sources compiled at test time with the system compiler ({@code -g}: line numbers) into a
 * temporary directory, loaded by a {@link URLClassLoader} over it whose parent is the test's class
 * loader: its {@code getResourceAsStream("pkg/Name.class")} serves the class bytes, which is how
 * {@link JavaTranslator} reads them.
 */
final class GeneratedClasses implements AutoCloseable {
  private final Path dir;
  private final URLClassLoader loader;

  /** Compiles {@code sources} (fully qualified class name to source); fails with javac's messages. */
  GeneratedClasses(Map<String, String> sources) {
    try {
      dir = Files.createTempDirectory("vkspark-generated");
      Path src = dir.resolve("src");
      Path classes = Files.createDirectories(dir.resolve("classes"));
      List<String> args = new ArrayList<>(List.of("-g", "-nowarn", "-proc:none", "-d", classes.toString()));
      for (Map.Entry<String, String> e : sources.entrySet()) {
        Path f = src.resolve(e.getKey().replace('.', '/') + ".java");
        Files.createDirectories(f.getParent());
        Files.writeString(f, e.getValue());
        args.add(f.toString());
      }
      // the tests run as module io.vkspark.gpu, which does not read java.compiler by itself
      Module compiler = ModuleLayer.boot().findModule("java.compiler").orElseThrow(() -> new IllegalStateException(
          "module java.compiler is not in the boot layer: add --add-modules=java.compiler to the test JVM"));
      GeneratedClasses.class.getModule().addReads(compiler);
      JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
      if (javac == null) {
        throw new IllegalStateException("no system Java compiler: run the tests on a JDK");
      }
      java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
      int rc = javac.run(null, err, err, args.toArray(String[]::new));
      if (rc != 0) {
        String msg = err.toString(java.nio.charset.StandardCharsets.UTF_8);
        throw new IllegalStateException("javac failed (" + rc + ") on the generated sources in " + src + ":\n"
            + (msg.length() > 6000 ? msg.substring(0, 6000) + " ..." : msg));
      }
      loader = new URLClassLoader(new URL[] {classes.toUri().toURL()}, GeneratedClasses.class.getClassLoader());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Class<?> load(String name) {
    try {
      return Class.forName(name, true, loader);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() throws IOException {
    loader.close();
    if (System.getProperty("vkspark.translate.keepSources") != null) {
      System.out.println("[generated] sources kept in " + dir);
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
