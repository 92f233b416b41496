package io.vkspark.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.vkspark.testing.PackageLayers;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * gpu-core's packages import one way, lowest first: the API ({@code io.vkspark.gpu}), its Vulkan
 * implementation ({@code internal}), where devices are opened ({@code vulkan}); what a kernel is
 * ({@code column}), argument columns ({@code column.input}), the device cache ({@code column.cache}),
 * reductions ({@code column.reduce}), running kernels over batches ({@code column.run}); the
 * translator ({@code translate}) and the tools. Each package's {@code package-info.java} says what it
 * may import; the compiled classes, read by {@code jdeps}, must import nothing else and no two
 * packages may import each other. The rule is spark-plugin's too ({@link PackageLayers}).
 */
final class PackageLayersTest {
  /** The compiled classes: target/classes under Maven, gpu-core's jar in scripts/kit-suite.sh. */
  private static final PackageLayers LAYERS = PackageLayers.of("io.vkspark.gpu", GpuDevice.class, "gpu-core");

  @Test
  void everyPackageImportsOnlyWhatItsPackageInfoAllows() {
    assumeTrue(PackageLayers.jdeps().isPresent(), "this Java runtime has no jdeps (module jdk.jdeps)");
    assertEquals(List.of(), LAYERS.disallowedImports());
  }

  @Test
  void noCycleBetweenPackages() {
    assumeTrue(PackageLayers.jdeps().isPresent(), "this Java runtime has no jdeps (module jdk.jdeps)");
    List<String> cycle = LAYERS.cycle();
    assertEquals(List.of(), cycle, () -> "packages import each other: " + String.join(" -> ", cycle));
  }

  @Test
  void cycle_isFoundThroughOtherPackages() {
    // the check itself: a -> b -> c -> a is reported from its first package, a chain without one is not
    Map<String, Map<String, String>> edges = Map.of("a", Map.of("b", "A->B"), "b", Map.of("c", "B->C"),
        "c", Map.of("a", "C->A"), "d", Map.of("a", "D->A"));
    assertEquals(List.of("a", "b", "c", "a"), PackageLayers.cycle(edges));
    assertEquals(List.of(), PackageLayers.cycle(Map.of("a", Map.of("b", "A->B"), "b", Map.of("c", "B->C"))));
  }
}
