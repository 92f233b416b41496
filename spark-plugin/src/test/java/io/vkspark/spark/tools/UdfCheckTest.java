package io.vkspark.spark.tools;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link UdfCheck} over a jar built here from fixture classes, Java ({@link CheckedUdfs}) and Scala
 * ({@code CheckedClosures}): every UDF class and lambda listed with its verdict and reason, exact
 * lines, and the count.
 */
final class UdfCheckTest {
  private static Path jar;

  /** The fixture classes the jar holds (read from the test class path: a folder under Maven, a jar in the kit). */
  private static final List<String> CLASSES = List.of("io/vkspark/spark/scalaudfs/CheckedClosures$.class",
      "io/vkspark/spark/scalaudfs/CheckedClosures.class", "io/vkspark/spark/tools/CheckedUdfs.class",
      "io/vkspark/spark/tools/CheckedUdfs$Affine.class", "io/vkspark/spark/tools/CheckedUdfs$Scaled.class",
      "io/vkspark/spark/tools/CheckedUdfs$Seeded.class", "io/vkspark/spark/tools/CheckedUdfs$Tripled.class");

  @BeforeAll
  static void buildJar() throws IOException {
    jar = Files.createTempDirectory("vkspark-udfcheck").resolve("app.jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
      for (String name : CLASSES) {
        out.putNextEntry(new JarEntry(name));
        try (InputStream in = UdfCheckTest.class.getClassLoader().getResourceAsStream(name)) {
          assertNotNull(in, name);
          in.transferTo(out);
        }
        out.closeEntry();
      }
    }
  }

  private static final String S = "io.vkspark.spark.scalaudfs.CheckedClosures$.";
  private static final String J = "io.vkspark.spark.tools.CheckedUdfs";
  private static final String KNOWN_WHEN_RUN = ", known only when the job runs (the translator reads its fields when the query is planned)";
  private static final List<String> EXPECTED = List.of(
      "translates: " + S + "$anonfun$affine$1 (CheckedClosures.scala:5, Scala Function1 closure)",
      "translates: " + S + "$anonfun$chargedPrice$1$adapted (CheckedClosures.scala:7, Scala Function3 closure)",
      "does not translate: " + S + "$anonfun$seeded$1 (CheckedClosures.scala:8, Scala Function1 closure): " + S
          + "$anonfun$seeded$1 line 8: allocates an object (new java.util.Random) [new java/util/Random]",
      "not checked: " + S + "$anonfun$feeOf$1 (CheckedClosures.scala:9, Scala Function1 closure): captures a "
          + "io.vkspark.spark.scalaudfs.Fee" + KNOWN_WHEN_RUN,
      "translates: " + S + "$anonfun$retail$1 (CheckedClosures.scala:10, Scala Function1 closure)",
      "does not translate: " + S + "$anonfun$tuned$1 (CheckedClosures.scala:11, Scala Function1 closure): "
          + "io.vkspark.spark.scalaudfs.Tuning$.factor line 16: " + (scala.util.Properties.versionNumberString().startsWith("2.12")
              // Scala 2.12 keeps an object's var in its instance, 2.13 in a static field
              ? "reads field factor of io.vkspark.spark.scalaudfs.Tuning$, which is not final (a var: it may change after "
                  + "the kernel is made, which would keep the value read when planning)"
              : "reads a static field that is not final (mutable state) [getstatic io/vkspark/spark/scalaudfs/Tuning$.factor D]"),
      "translates: " + J + ".lambda$poly$2d303860$1 (CheckedUdfs.java:57, UDF1 lambda)",
      "translates: " + J + ".lambda$scaled$d42d619d$1 (CheckedUdfs.java:62, UDF1 lambda)",
      "does not translate: " + J + ".lambda$seeded$d52635ce$1 (CheckedUdfs.java:67, UDF1 lambda): " + J
          + ".lambda$seeded$d52635ce$1 line 67: allocates an object (new java.util.Random) [new java/util/Random]",
      "not checked: " + J + ".lambda$plusBase$ca051e94$1 (CheckedUdfs.java:72, UDF1 lambda): is a method of the " + J
          + " it captures" + KNOWN_WHEN_RUN,
      "translates: " + J + "$Affine (CheckedUdfs.java:16, UDF1 class)",
      "not checked: " + J + "$Scaled (CheckedUdfs.java:38, UDF1 class): it has no constructor without arguments "
          + "(the translator reads the fields of the object the job makes)",
      "does not translate: " + J + "$Seeded (CheckedUdfs.java:24, UDF1 class): " + J
          + "$Seeded.call line 24: allocates an object (new java.util.Random) [new java/util/Random]",
      "GPU UDF: " + J + "$Tripled (CheckedUdfs.java:46, UDF1 class): has its own GPU kernel",
      "6 of 13 UDFs translate; 3 not checked; 1 GPU UDF with its own kernel");

  @Test
  void report_listsEveryUdfClassAndLambda_withItsVerdict_andTheCount() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    UdfCheck.report(UdfCheck.check(List.of(jar), UdfCheckTest.class.getClassLoader()),
        new PrintStream(bytes, true, StandardCharsets.UTF_8));
    assertEquals(EXPECTED, bytes.toString(StandardCharsets.UTF_8).lines().toList());
  }

  @Test
  void commandLine_printsTheReport_andAMissingJarIsAClearError() throws Exception {
    Run ok = java(jar.toString());
    assertEquals(0, ok.code(), ok.output());
    assertEquals(EXPECTED, ok.lines());
    Run missing = java(jar.resolveSibling("no-such.jar").toString());
    assertEquals(2, missing.code(), missing.output());
    assertEquals(jar.resolveSibling("no-such.jar") + ": no such readable file. Fix: pass the path of the application's jar.",
        String.join("\n", missing.lines()));
  }

  private record Run(int code, String output) {
    /** What UdfCheck printed: without the JVM's own lines ({@code WARNING}, {@code NOTE: Picked up JDK_JAVA_OPTIONS}). */
    List<String> lines() {
      return output.strip().lines().filter(l -> !l.startsWith("WARNING") && !l.startsWith("NOTE: Picked up ")).toList();
    }
  }

  /** {@code java -cp <this test's class path> UdfCheck args}, as a user runs it (Spark's jars on the class path). */
  private static Run java(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), UdfCheck.class.getName()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return new Run(p.waitFor(), out);
  }
}
