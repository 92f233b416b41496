package io.vkspark.spark.kernel;

import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.KernelSpec;
import io.vkspark.spark.conf.VkConf;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The compiled kernels of this JVM, keyed by {@link KernelSpec} (name, signature and body, by
 * value): shaderc takes ~0.3 s a kernel, and a query plans each UDF call several times. Bounded to
 * {@link #MAX_KERNELS}, least recently used first out, so a long-lived session that defines UDFs
 * in a loop does not keep every kernel it ever compiled. An evicted kernel is recompiled on its
 * next use, from the SPIR-V disk cache when {@code spark.vkspark.shaderCache} is set.
 *
 * <p>A plain access-ordered {@link LinkedHashMap}: Spark 4.2 brings neither Caffeine nor its
 * own Guava to the plugin's classpath (Guava comes only through Curator, transitively). Compiling
 * happens outside the lock; two threads that miss the same spec at once may both compile it, and
 * the first stored wins.
 */
public final class CompiledKernels {
  /** Most kernels kept: a kernel holds its generated source and SPIR-V, tens to a few hundred KiB. */
  static final int MAX_KERNELS = 256;

  /** This JVM's cache, used by the planner and at registration. */
  public static final CompiledKernels JVM = new CompiledKernels(MAX_KERNELS);

  private final int max;
  private final Map<KernelSpec, ColumnKernel> kernels;

  CompiledKernels(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("max " + max);
    }
    this.max = max;
    this.kernels = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<KernelSpec, ColumnKernel> eldest) {
        return size() > CompiledKernels.this.max;
      }
    };
  }

  /**
   * The compiled kernel of {@code spec}, compiled once per JVM (shaderc takes ~0.3 s) with the
   * settings' shader cache, within {@code spark.vkspark.compileTimeout}, interruptibly.
   */
  public static ColumnKernel compile(KernelSpec spec, VkConf conf) {
    // fastMath: the same SPIR-V, loaded without NoContraction (ColumnKernel.withFastMath)
    return JVM.get(spec, conf.shaderCachePath(), conf.compileTimeout()).withFastMath(conf.fastMath());
  }

  /** The kernel of {@code spec}, compiled once while it stays among the last {@code max} used. */
  public ColumnKernel get(KernelSpec spec, Path shaderCache) {
    return get(spec, shaderCache, Duration.ZERO);
  }

  /**
   * {@link #get(KernelSpec, Path)}, compiling within {@code budget} (zero: none), all of the
   * kernel's compiles together ({@link ColumnKernel#compile(KernelSpec, Path, Duration)}).
   */
  public ColumnKernel get(KernelSpec spec, Path shaderCache, Duration budget) {
    synchronized (kernels) {
      ColumnKernel k = kernels.get(spec);
      if (k != null) {
        return k;
      }
    }
    ColumnKernel compiled = ColumnKernel.compile(spec, shaderCache, budget);
    synchronized (kernels) {
      ColumnKernel raced = kernels.putIfAbsent(spec, compiled);
      return raced != null ? raced : compiled;
    }
  }

  /** Whether {@code spec} is cached now. */
  boolean contains(KernelSpec spec) {
    synchronized (kernels) {
      return kernels.containsKey(spec);
    }
  }

  /** How many kernels are cached now. */
  int size() {
    synchronized (kernels) {
      return kernels.size();
    }
  }
}
