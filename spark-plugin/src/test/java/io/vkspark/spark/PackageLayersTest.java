package io.vkspark.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * spark-plugin's packages import one way. Each package's {@code package-info.java} says what it may
 * import ({@code May import: a, b.}); the compiled classes, read by the JDK's {@code jdeps}, must
 * not import anything else, and no two packages may import each other, directly or through others.
 * A class moved into the wrong package, or a shortcut import, fails here naming both packages and
 * the classes that made the edge.
 */
final class PackageLayersTest {
  private static final String ROOT = "io.vkspark.spark";
  /** The compiled classes: target/classes under Maven, the plugin's jar in scripts/kit-suite.sh. */
  private static final Path CLASSES = classes();
  /** The module's sources: the working directory under Maven, vkspark.source.root's in the kit. */
  private static final Path SOURCES = (System.getProperty("vkspark.source.root") == null ? Path.of("")
      : Path.of(System.getProperty("vkspark.source.root"), "spark-plugin")).resolve("src/main/java/io/vkspark/spark");
  private static final Pattern MAY_IMPORT = Pattern.compile("May import: ([^.]*)\\.");

  @Test
  void everyPackageImportsOnlyWhatItsPackageInfoAllows() throws IOException {
    Map<String, Set<String>> allowed = allowed();
    Map<String, Map<String, Set<String>>> edges = edges();
    assertFalse(edges.isEmpty(), "jdeps found no class of " + ROOT + " under " + CLASSES.toAbsolutePath());
    List<String> wrong = new ArrayList<>();
    edges.forEach((from, tos) -> tos.forEach((to, classes) -> {
      Set<String> may = allowed.get(from);
      if (may == null) {
        wrong.add(from + " has no package-info.java saying what it may import");
      } else if (!may.contains("*") && !may.contains(to)) {
        wrong.add(from + " imports " + to + " (" + classes + "), which its package-info does not allow");
      }
    }));
    assertEquals(List.of(), wrong);
  }

  @Test
  void noCycleBetweenPackages() throws IOException {
    Map<String, Map<String, Set<String>>> edges = edges();
    for (String start : edges.keySet()) {
      List<String> cycle = cycleFrom(start, start, edges, new ArrayList<>(List.of(start)), new TreeSet<>());
      assertTrue(cycle.isEmpty(), "packages import each other: " + String.join(" -> ", cycle));
    }
  }

  /** A path start -> ... -> start, or empty. */
  private static List<String> cycleFrom(String start, String at, Map<String, Map<String, Set<String>>> edges,
                                        List<String> path, Set<String> seen) {
    for (String next : edges.getOrDefault(at, Map.of()).keySet()) {
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

  /** Package (relative to {@link #ROOT}, "" for the root) to the packages its package-info allows, "*" for all. */
  private static Map<String, Set<String>> allowed() throws IOException {
    Map<String, Set<String>> out = new TreeMap<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path info : files.filter(p -> p.getFileName().toString().equals("package-info.java")).toList()) {
        String pkg = SOURCES.relativize(info.getParent()).toString().replace('/', '.');
        Matcher m = MAY_IMPORT.matcher(Files.readString(info).replaceAll("\\s*\\n\\s*\\*\\s*", " "));
        assertTrue(m.find(), info + " says nothing like 'May import: conf, shim.'");
        Set<String> may = new TreeSet<>();
        String list = m.group(1).trim();
        if (list.startsWith("every")) {
          may.add("*");
        } else if (!list.startsWith("nothing")) {
          for (String p : list.split(",")) {
            may.add(p.trim());
          }
        }
        out.put(pkg, may);
      }
    }
    return out;
  }

  /** Package to package to the classes of the first that use the second, from the compiled classes. */
  private static Map<String, Map<String, Set<String>>> edges() {
    // A property of the compiled classes, not of the device: Maven (a JDK) always runs it; a jlinked
    // runtime without jdk.jdeps (scripts/kit-suite.sh on a GPU machine) skips it.
    Optional<ToolProvider> tool = ToolProvider.findFirst("jdeps");
    Assumptions.assumeTrue(tool.isPresent(), "this Java runtime has no jdeps (module jdk.jdeps)");
    ToolProvider jdeps = tool.get();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int rc = jdeps.run(new PrintWriter(out), new PrintWriter(err), "-verbose:class", "-e", "io\\.vkspark\\.spark(\\..*)?",
        CLASSES.toString());
    assertEquals(0, rc, "jdeps failed: " + err);
    Map<String, Map<String, Set<String>>> edges = new TreeMap<>();
    Pattern line = Pattern.compile("^\\s+(io\\.vkspark\\.spark[\\w.$]*)\\s+->\\s+(io\\.vkspark\\.spark[\\w.$]*)\\s");
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
    return edges;
  }

  private static Path classes() {
    try {
      return Path.of(VkSparkPlugin.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new AssertionError(e);
    }
  }

  private static String pkg(String className) {
    String p = className.substring(0, className.lastIndexOf('.'));
    return p.equals(ROOT) ? "" : p.substring(ROOT.length() + 1);
  }

  private static String simple(String className) {
    return className.substring(className.lastIndexOf('.') + 1);
  }
}
