package io.vkspark.spark.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code exec} never depends on {@code agg}: a fused aggregate reaches the GPU node only through
 * {@link DeviceReduction}, so the eval path reads (and changes) without the aggregation's.
 */
class ExecImportsTest {
  @Test
  void execSourcesNeverNameTheAggPackage() throws IOException {
    Path dir = Path.of("src", "main", "java", "io", "vkspark", "spark", "exec");
    if (!Files.isDirectory(dir)) {
      dir = Path.of("spark-plugin").resolve(dir);
    }
    assertTrue(Files.isDirectory(dir), dir.toAbsolutePath().toString());
    List<String> offenders;
    try (Stream<Path> files = Files.list(dir)) {
      offenders = files.filter(f -> f.toString().endsWith(".java")).filter(f -> {
        try {
          return Files.readString(f).contains("io.vkspark.spark.agg");
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }).map(f -> f.getFileName().toString()).toList();
    }
    assertEquals(List.of(), offenders, "exec names io.vkspark.spark.agg; go through DeviceReduction instead");
  }
}
