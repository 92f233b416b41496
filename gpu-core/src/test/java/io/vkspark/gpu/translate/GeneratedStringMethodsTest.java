package io.vkspark.gpu.translate;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.column.ColumnGpu;
import io.vkspark.gpu.column.CpuCause;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The generated-method suite's strings: random methods of {@link StringMethodGenerator}, compiled at
 * test time, through {@link JavaTranslator} and lavapipe, every row against the method itself
 * ({@link StringRows}: random ASCII and non-ASCII text, surrogate pairs, empty strings, nulls,
 * ill-formed UTF-8, and long rows), byte for byte. Rows go back to {@code call()} only as not ASCII
 * or for the scratch. Properties: {@code vkspark.translate.stringMethods} (how many, default 12),
 * {@code vkspark.translate.seed} (shared with {@link GeneratedMethodsTest}), {@code vkspark.translate.stringRows}
 * (default 160). Cost: about 1.5 s a method on the 2-core box, paid for by 50 fewer numeric methods
 * in {@link GeneratedMethodsTest} (200 to 150). Run more on a real GPU
 * ({@code -Dvkspark.translate.stringMethods=500}).
 */
final class GeneratedStringMethodsTest {
  @RegisterExtension
  static final ColumnGpu GPU = new ColumnGpu();

  @Test
  void generatedStringMethodsGiveJavasBytesOnTheGpu() {
    long seed = GeneratedMethodsTest.seed();
    int n = Integer.getInteger("vkspark.translate.stringMethods", 12);
    int rows = Integer.getInteger("vkspark.translate.stringRows", 160);
    String source = new StringMethodGenerator(seed).classSource("vkgen", "GS", n);
    List<String> refused = new ArrayList<>();
    long handedBack = 0;
    long gpu = 0;
    try (GeneratedClasses classes = new GeneratedClasses(Map.of("vkgen.GS", source))) {
      Class<?> c = classes.load("vkgen.GS");
      for (String name : StringMethodGenerator.names(n)) {
        Method m = java.util.Arrays.stream(c.getDeclaredMethods()).filter(x -> x.getName().equals(name)).findFirst()
            .orElseThrow();
        Translation t = JavaTranslator.translate(m);
        if (t instanceof Translation.Refused ref) {
          refused.add(ref.reason());
          continue;
        }
        StringRows check = new StringRows(GPU.runtime(), GPU.allocator());
        try {
          Random r = new Random(seed * 31 + name.hashCode());
          List<byte[]> text = StringRows.text(rows, r);
          List<Object[]> in = new ArrayList<>();
          for (int i = 0; i < rows; i++) {
            in.add(new Object[] {text.get(i), text.get((i * 5 + 1) % rows), r.nextInt(9) - 2});
          }
          in.add(new Object[] {("Ab,".repeat(700) + "é").getBytes(StandardCharsets.UTF_8), "x".repeat(900).getBytes(
              StandardCharsets.UTF_8), 3}); // long rows
          StringRows.Seen seen = check.check(m, (Translation.Translated) t, in);
          assertEquals(seen.handedBack(), seen.cause(CpuCause.NON_ASCII) + seen.cause(CpuCause.BODY),
              name + ": " + java.util.Arrays.toString(seen.causes()) + "\n" + source);
          handedBack += seen.handedBack();
          gpu += seen.gpuRows();
        } catch (AssertionError e) {
          throw new AssertionError("generated string method " + name + " (seed " + seed + ") differs from Java:\n"
              + e.getMessage() + "\n--- source:\n" + source, e);
        } finally {
          check.close();
        }
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    System.out.printf("[generated strings] seed %d: %d methods, %d refused, %d rows on the GPU, %d handed back%n", seed, n,
        refused.size(), gpu, handedBack);
    assertTrue(refused.isEmpty(), "refused: " + refused + "\n" + source);
  }
}
