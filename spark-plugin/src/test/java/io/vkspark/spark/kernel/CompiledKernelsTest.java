package io.vkspark.spark.kernel;

import io.vkspark.spark.kernel.CompiledKernels;
import io.vkspark.spark.api.GpuKernel;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.KernelSpec;
import org.junit.jupiter.api.Test;

/** The plan-side cache of compiled kernels: keyed by KernelSpec by value, bounded, least recently used out. */
final class CompiledKernelsTest {
  private static GpuKernel kernel(String body) {
    return GpuKernel.returns("int").arg("a", "int").arg("b", "int").body(body);
  }

  @Test
  void equalSpecs_shareOneCompiledKernel_andTheNameIsPartOfTheKey() {
    CompiledKernels cache = new CompiledKernels(8);
    GpuKernel k1 = kernel("a * 3 - b");
    GpuKernel k2 = kernel("a * 3 - b"); // built apart, as a GpuUdf's kernel() does on every call
    assertNotSame(k1, k2);
    assertEquals(k1, k2);
    ColumnKernel c = cache.get(k1.spec("lin"), null);
    assertSame(c, cache.get(k2.spec("lin"), null));
    assertEquals("lin", c.signature().name());
    assertEquals(1, cache.size());
    ColumnKernel other = cache.get(k1.spec("geo.lin"), null);
    assertNotSame(c, other);
    assertEquals("geo.lin", other.signature().name());
    assertEquals(2, cache.size());
  }

  @Test
  void theCacheIsBounded_andEvictsTheLeastRecentlyUsed() {
    CompiledKernels cache = new CompiledKernels(2);
    KernelSpec a = kernel("a + b").spec("f");
    KernelSpec b = kernel("a - b").spec("f");
    KernelSpec c = kernel("a * b").spec("f");
    ColumnKernel ka = cache.get(a, null);
    cache.get(b, null);
    assertSame(ka, cache.get(a, null)); // a is now the most recently used
    cache.get(c, null);
    assertEquals(2, cache.size());
    assertTrue(cache.contains(a));
    assertFalse(cache.contains(b), "b was the least recently used");
    assertTrue(cache.contains(c));
    ColumnKernel again = cache.get(b, null);
    assertEquals(b, again.spec(), "an evicted spec is compiled again on its next use");
    assertFalse(cache.contains(a));
    assertTrue(CompiledKernels.MAX_KERNELS >= 64, "the JVM-wide bound keeps a real application's UDFs");
  }
}
