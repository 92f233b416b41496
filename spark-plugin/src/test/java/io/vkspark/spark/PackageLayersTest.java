package io.vkspark.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.vkspark.testing.PackageLayers;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * spark-plugin's packages import one way. Each package's {@code package-info.java} says what it may
 * import ({@code May import: a, b.}); the compiled classes, read by the JDK's {@code jdeps}, must
 * not import anything else, and no two packages may import each other, directly or through others.
 * A class moved into the wrong package, or a shortcut import, fails here naming both packages and
 * the classes that made the edge. The rule is gpu-core's too ({@link PackageLayers}).
 */
final class PackageLayersTest {
  /** The compiled classes: target/classes under Maven, the plugin's jar in scripts/kit-suite.sh. */
  private static final PackageLayers LAYERS = PackageLayers.of("io.vkspark.spark", VkSparkPlugin.class, "spark-plugin");

  @BeforeEach
  void needsJdeps() {
    assumeTrue(PackageLayers.jdeps().isPresent(), "this Java runtime has no jdeps (module jdk.jdeps)");
  }

  @Test
  void everyPackageImportsOnlyWhatItsPackageInfoAllows() {
    assertEquals(List.of(), LAYERS.disallowedImports());
  }

  @Test
  void noCycleBetweenPackages() {
    List<String> cycle = LAYERS.cycle();
    assertEquals(List.of(), cycle, () -> "packages import each other: " + String.join(" -> ", cycle));
  }
}
