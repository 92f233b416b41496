package io.vkspark.gpu.column;

import static io.vkspark.gpu.column.KernelSignature.arg;
import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.internal.GlslCompiler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A damaged or mixed-up SPIR-V cache file is recompiled and replaced; the rows stay right. */
final class KernelCacheTest {
  private static final KernelSignature SIG = KernelSignature.of("lin", SqlType.BIGINT,
      arg("a", SqlType.BIGINT), arg("b", SqlType.BIGINT));
  private static final String BODY = "a * 3l - b";
  private static GpuRows gpu;

  @BeforeAll
  static void open() {
    gpu = new GpuRows();
  }

  @AfterAll
  static void close() {
    gpu.close();
  }

  private static Path file(Path dir, ColumnKernel k) {
    return dir.resolve("spirv").resolve(k.id().substring(k.id().lastIndexOf('-') + 1) + ".vkspv");
  }

  /** Compiles from {@code dir} and checks rows against Java's a * 3 - b. */
  private static ColumnKernel compileAndCheckRows(Path dir) {
    ColumnKernel k = ColumnKernel.compile(SIG, BODY, dir);
    Random r = new Random(7);
    Object[] a = new Object[300];
    Object[] b = new Object[300];
    for (int i = 0; i < a.length; i++) {
      a[i] = r.nextLong() >> 3;
      b[i] = r.nextLong() >> 3;
    }
    List<Object> got = gpu.run(k, a, b);
    for (int i = 0; i < a.length; i++) {
      assertEquals((Long) a[i] * 3 - (Long) b[i], got.get(i), "row " + i);
    }
    return k;
  }

  @Test
  void damagedFiles_areRecompiledAndReplaced(@TempDir Path dir) throws Exception {
    ColumnKernel k = compileAndCheckRows(dir);
    Path f = file(dir, k);
    byte[] good = Files.readAllBytes(f);
    byte[] garbage = new byte[good.length];
    new Random(1).nextBytes(garbage);
    byte[] flipped = good.clone();
    flipped[good.length - 9] ^= 0x10;
    byte[] bareSpirv = Arrays.copyOfRange(good, 80, good.length); // the pre-header format
    for (byte[] damaged : List.of(Arrays.copyOf(good, good.length / 2), Arrays.copyOf(good, 50), new byte[0],
        garbage, flipped, bareSpirv)) {
      Files.write(f, damaged);
      ColumnKernel again = compileAndCheckRows(dir);
      assertEquals(k.id(), again.id());
      assertArrayEquals(good, Files.readAllBytes(f), "the damaged file was replaced by a good one");
    }
    try (var files = Files.list(dir.resolve("spirv"))) {
      assertEquals(1, files.count(), "no temp files left behind");
    }
  }

  @Test
  void anotherKernelsValidFile_underThisKey_isRecompiled(@TempDir Path dir) throws Exception {
    ColumnKernel other = ColumnKernel.compile(SIG, "a + b", dir);
    ColumnKernel k = ColumnKernel.compile(SIG, BODY, dir);
    assertNotEquals(other.id(), k.id());
    byte[] good = Files.readAllBytes(file(dir, k));
    Files.copy(file(dir, other), file(dir, k), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    compileAndCheckRows(dir);
    assertArrayEquals(good, Files.readAllBytes(file(dir, k)));
  }

  @Test
  void cachedModuleThatFailsTheSeal_isRecompiled(@TempDir Path dir) throws Exception {
    // a well-formed entry (right key, right digest) holding a module that writes an input
    ColumnKernel k = ColumnKernel.compile(SIG, BODY, dir);
    String src = ColumnKernel.generate(SIG, BODY).source().replace("readonly buffer VkIn0", "buffer VkIn0")
        .replace("vk_out[vk_row] = vk_result;", "vk_out[vk_row] = vk_result; vk_in0[vk_row] = 0l;");
    Path scratch = Files.createDirectories(dir.resolve("scratch"));
    GlslCompiler.compile("x.comp", src, scratch);
    Path forged;
    try (var files = Files.list(scratch.resolve("spirv"))) {
      forged = files.findFirst().orElseThrow();
    }
    byte[] bytes = Files.readAllBytes(forged);
    byte[] key = java.util.HexFormat.of().parseHex(k.id().substring(k.id().lastIndexOf('-') + 1));
    System.arraycopy(key, 0, bytes, 12, 32); // re-key the header: only the seal can tell now
    Files.write(file(dir, k), bytes);
    compileAndCheckRows(dir);
    assertFalse(Arrays.equals(bytes, Files.readAllBytes(file(dir, k))), "the forged entry was replaced");
  }

  @Test
  void id_isTheFullIdentity() {
    ColumnKernel a = ColumnKernel.compile(SIG, BODY);
    ColumnKernel b = ColumnKernel.compile(SIG, "a * 3l - b + 0l");
    ColumnKernel c = ColumnKernel.compile(KernelSignature.of("lin", SqlType.BIGINT, arg("a", SqlType.BIGINT),
        arg("c", SqlType.BIGINT)), "a * 3l - c");
    assertTrue(a.id().matches("lin-[0-9a-f]{64}"), a.id());
    assertEquals(a.id(), ColumnKernel.compile(SIG, BODY).id());
    assertEquals(a.id(), ColumnKernel.compile(SIG, BODY + "  ").id(), "the same generated code is the same kernel");
    assertNotEquals(a.id(), b.id());
    assertNotEquals(a.id(), c.id());
  }
}
