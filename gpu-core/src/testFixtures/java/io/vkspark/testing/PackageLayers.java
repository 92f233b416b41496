package io.vkspark.testing;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

/**
 * The packages of one module and what they import, for that module's {@code PackageLayersTest}.
 * Each package's {@code package-info.java} says what it may import ({@code May import: a, b.c.},
 * names relative to the module's root package, {@code root} for the root package itself,
 * {@code nothing ...} or {@code every ...}); the compiled classes, read by the JDK's {@code jdeps},
 * give what each package does import. Shared by gpu-core's and spark-plugin's tests as a test source
 * folder of both (gpu-core/src/testFixtures), so one copy of the rule serves both modules without a
 * test-jar dependency.
 */
public final class PackageLayers {
  private static final Pattern MAY_IMPORT = Pattern.compile("May import: (.*?)\\.(?=\\s|$)");
  /** How the root package is named in a "May import" line and in messages. */
  public static final String ROOT_NAME = "root";

  private final String root;
  private final Path classes;
  private final Path sources;

  private PackageLayers(String root, Path classes, Path sources) {
    this.root = root;
    this.classes = classes;
    this.sources = sources;
  }

  /**
   * The packages under {@code root}, compiled where {@code compiledClass} was loaded from (a folder or
   * a jar), whose sources are in {@code module}'s src/main/java: under the working directory (Maven
   * runs a module's tests there), or under the system property vkspark.source.root (the kit).
   */
  public static PackageLayers of(String root, Class<?> compiledClass, String module) {
    String sourceRoot = System.getProperty("vkspark.source.root");
    Path moduleDir = sourceRoot == null ? Path.of("") : Path.of(sourceRoot, module);
    return new PackageLayers(root, location(compiledClass),
        moduleDir.resolve("src/main/java").resolve(root.replace('.', '/')));
  }

  /**
   * The JDK's jdeps, or empty on a runtime without the module jdk.jdeps (a jlinked one, as
   * scripts/kit-suite.sh uses on a GPU machine): what the packages import is a property of the
   * compiled classes, which Maven (a JDK) always checks.
   */
  public static Optional<ToolProvider> jdeps() {
    return ToolProvider.findFirst("jdeps");
  }

  /** Every import that the importing package's package-info does not allow, one message each; empty when all are. */
  public List<String> disallowedImports() {
    Map<String, Set<String>> allowed = allowed();
    List<String> wrong = new ArrayList<>();
    edges().forEach((from, tos) -> tos.forEach((to, uses) -> {
      Set<String> may = allowed.get(from);
      if (may == null) {
        wrong.add(name(from) + " has no package-info.java saying what it may import");
      } else if (!may.contains("*") && !may.contains(to)) {
        wrong.add(name(from) + " imports " + name(to) + " (" + uses + "), which its package-info does not allow");
      }
    }));
    return wrong;
  }

  /** A path {@code a -> b -> ... -> a} of packages that import each other, or empty when there is none. */
  public List<String> cycle() {
    return cycle(edges()).stream().map(this::name).toList();
  }

  /** A cycle in {@code edges} (package to the packages it imports, to the classes that do), or empty. */
  public static List<String> cycle(Map<String, ? extends Map<String, ?>> edges) {
    for (String start : new TreeSet<>(edges.keySet())) {
      List<String> found = cycleFrom(start, start, edges, new ArrayList<>(List.of(start)), new TreeSet<>());
      if (!found.isEmpty()) {
        return found;
      }
    }
    return List.of();
  }

  private static List<String> cycleFrom(String start, String at, Map<String, ? extends Map<String, ?>> edges,
                                        List<String> path, Set<String> seen) {
    Map<String, ?> imports = edges.get(at);
    for (String next : imports == null ? Set.<String>of() : new TreeSet<>(imports.keySet())) {
      if (next.equals(start)) {
        List<String> out = new ArrayList<>(path);
        out.add(start);
        return out;
      }
      if (seen.add(next)) {
        path.add(next);
        List<String> found = cycleFrom(start, next, edges, path, seen);
        if (!found.isEmpty()) {
          return found;
        }
        path.remove(path.size() - 1);
      }
    }
    return List.of();
  }

  /** Package (relative to the root, "" for the root) to the packages its package-info allows, "*" for all. */
  public Map<String, Set<String>> allowed() {
    Map<String, Set<String>> out = new TreeMap<>();
    try (Stream<Path> files = Files.walk(sources)) {
      for (Path info : files.filter(p -> p.getFileName().toString().equals("package-info.java")).toList()) {
        String pkg = sources.relativize(info.getParent()).toString().replace(info.getFileSystem().getSeparator(), ".");
        Matcher m = MAY_IMPORT.matcher(Files.readString(info).replaceAll("\\s*\\n\\s*\\*\\s*", " "));
        if (!m.find()) {
          throw new AssertionError(info + " says nothing like 'May import: root, internal.'");
        }
        Set<String> may = new TreeSet<>();
        String list = m.group(1).trim();
        if (list.startsWith("every")) {
          may.add("*");
        } else if (!list.startsWith("nothing")) {
          for (String p : list.split(",")) {
            may.add(p.trim().equals(ROOT_NAME) ? "" : p.trim());
          }
        }
        out.put(pkg, may);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("reading the package-info files under " + sources.toAbsolutePath(), e);
    }
    return out;
  }

  /**
   * Package to package to the classes of the first that use the second ({@code A->B}), from the
   * compiled classes; packages relative to the root, "" for the root. Needs {@link #jdeps()}.
   */
  public Map<String, Map<String, Set<String>>> edges() {
    ToolProvider jdeps = jdeps().orElseThrow(() -> new IllegalStateException("this Java runtime has no jdeps"));
    Path dir = plainClasses();
    try {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      String pattern = Pattern.quote(root) + "(\\..*)?";
      int rc = jdeps.run(new PrintWriter(out), new PrintWriter(err), "-verbose:class", "-e", pattern, dir.toString());
      if (rc != 0) {
        throw new AssertionError("jdeps failed (" + rc + "): " + err);
      }
      Map<String, Map<String, Set<String>>> edges = new TreeMap<>();
      String cls = Pattern.quote(root) + "(?:\\.[\\w$]+)+";
      Pattern line = Pattern.compile("^\\s+(" + cls + ")\\s+->\\s+(" + cls + ")\\s");
      for (String l : out.toString().split("\n")) {
        Matcher m = line.matcher(l);
        if (m.find()) {
          String from = pkg(m.group(1));
          String to = pkg(m.group(2));
          if (!from.equals(to)) {
            edges.computeIfAbsent(from, k -> new TreeMap<>()).computeIfAbsent(to, k -> new TreeSet<>())
                .add(simple(m.group(1)) + "->" + simple(m.group(2)));
          }
        }
      }
      if (edges.isEmpty()) {
        throw new AssertionError("jdeps found no import between packages of " + root + " under " + classes.toAbsolutePath());
      }
      return edges;
    } finally {
      delete(dir);
    }
  }

  /**
   * The module's classes in a temporary folder, without module-info.class: jdeps reads a named
   * module's classes only with every module it requires on a module path, and the imports between
   * the packages are what this is about.
   */
  private Path plainClasses() {
    try {
      Path dir = Files.createTempDirectory("package-layers");
      FileSystem jar = Files.isDirectory(classes) ? null : FileSystems.newFileSystem(classes);
      Path from = jar == null ? classes : jar.getPath("/");
      try (Stream<Path> files = Files.walk(from)) {
        for (Path f : files.filter(p -> p.toString().endsWith(".class")).toList()) {
          String rel = from.relativize(f).toString();
          if (rel.equals("module-info.class") || rel.startsWith("META-INF")) {
            continue;
          }
          Path to = dir.resolve(rel.replace(f.getFileSystem().getSeparator(), "/"));
          Files.createDirectories(to.getParent());
          Files.copy(f, to);
        }
      } finally {
        if (jar != null) {
          jar.close();
        }
      }
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("copying the classes of " + classes, e);
    }
  }

  private static void delete(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path location(Class<?> c) {
    try {
      return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private String pkg(String className) {
    String p = className.substring(0, className.lastIndexOf('.'));
    return p.equals(root) ? "" : p.substring(root.length() + 1);
  }

  private String name(String pkg) {
    return pkg.isEmpty() ? ROOT_NAME : pkg;
  }

  private static String simple(String className) {
    return className.substring(className.lastIndexOf('.') + 1);
  }
}
