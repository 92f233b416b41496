package io.vkspark.spark.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.vkspark.spark.VkSparkPlugin;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The public API (the {@code api} package and the plugin class) changes only with a CHANGELOG entry.
 * The public types found in the compiled classes must equal the checked-in list
 * {@code public-api.txt}: a type removed or renamed fails here, and so does a new one until the list
 * (and CHANGELOG.md) say so.
 */
final class PublicApiTest {
  private static final String PACKAGE = "io/vkspark/spark/api/";

  @Test
  void publicTypes_equalTheCheckedInList() throws IOException, ClassNotFoundException {
    Set<String> found = new TreeSet<>();
    found.add(VkSparkPlugin.class.getName());
    for (String entry : classEntries()) {
      Class<?> c = Class.forName(entry.substring(0, entry.length() - ".class".length()).replace('/', '.'), false,
          getClass().getClassLoader());
      if (isPublic(c)) {
        found.add(c.getName());
      }
    }
    assertFalse(found.size() < 2, "no class of the api package found next to " + location());
    Set<String> listed = listed();
    List<String> problems = new ArrayList<>();
    for (String name : listed) {
      if (!found.contains(name)) {
        problems.add("removed or renamed: " + name);
      }
    }
    for (String name : found) {
      if (!listed.contains(name)) {
        problems.add("new public type: " + name);
      }
    }
    assertEquals(List.of(), problems, "the public API changed. Fix: restore the type, or record the change in "
        + "CHANGELOG.md (with the migration for users) and in spark-plugin/src/test/resources/io/vkspark/spark/api/public-api.txt");
  }

  /** Public, and every enclosing class public too (a public nested type of a public class). */
  private static boolean isPublic(Class<?> c) {
    for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
      if (!Modifier.isPublic(k.getModifiers()) || k.isAnonymousClass() || k.isLocalClass() || k.isSynthetic()) {
        return false;
      }
    }
    return true;
  }

  private static Set<String> listed() throws IOException {
    try (InputStream in = PublicApiTest.class.getResourceAsStream("public-api.txt")) {
      Set<String> out = new TreeSet<>();
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        if (!line.isBlank() && !line.startsWith("#")) {
          out.add(line.trim());
        }
      }
      return out;
    }
  }

  /** The api package's class files: target/classes under Maven, the plugin's jar in scripts/kit-suite.sh. */
  private static List<String> classEntries() throws IOException {
    Path root = location();
    List<String> out = new ArrayList<>();
    if (Files.isDirectory(root)) {
      try (Stream<Path> files = Files.list(root.resolve(PACKAGE))) {
        files.map(p -> PACKAGE + p.getFileName()).filter(PublicApiTest::isTypeFile).forEach(out::add);
      }
    } else {
      try (JarFile jar = new JarFile(root.toFile())) {
        jar.stream().map(e -> e.getName())
            .filter(n -> n.startsWith(PACKAGE) && n.indexOf('/', PACKAGE.length()) < 0 && isTypeFile(n))
            .forEach(out::add);
      }
    }
    return out;
  }

  private static boolean isTypeFile(String name) {
    return name.endsWith(".class") && !name.endsWith("package-info.class");
  }

  private static Path location() {
    try {
      return Path.of(GpuUdf.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new AssertionError(e);
    }
  }
}
