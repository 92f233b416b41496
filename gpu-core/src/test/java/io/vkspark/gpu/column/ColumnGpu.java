package io.vkspark.gpu.column;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.TestGpu;
import io.vkspark.gpu.TransferMode;
import io.vkspark.gpu.column.run.ColumnRuntime;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The device, column runtime and Arrow allocator a column test runs on, and the checks each ends
 * with, so no test class rebuilds them. Per class: one device under the validation layer
 * ({@link TestGpu#open()}) and one {@link ColumnRuntime}; after the last test nothing may be left
 * alive and the layer must have reported nothing ({@link TestGpu#closeClean}). Per test: a fresh
 * allocator that must be empty afterwards. Register it as a static field:
 *
 * <pre>{@code @RegisterExtension static final ColumnGpu GPU = new ColumnGpu();}</pre>
 *
 * <p>A test that needs its own device (one per {@link TransferMode}, say) runs in
 * {@link #onDevice}, which makes the same checks around it.
 */
public final class ColumnGpu implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
  private GpuDevice device;
  private ColumnRuntime runtime;
  private BufferAllocator allocator;

  /** What a test does on its own device, runtime and allocator. */
  @FunctionalInterface
  public interface Body {
    void run(GpuDevice device, ColumnRuntime runtime, BufferAllocator allocator) throws Exception;
  }

  /** The class's device. */
  public GpuDevice device() {
    return device;
  }

  /** The class's runtime on {@link #device()}. */
  public ColumnRuntime runtime() {
    return runtime;
  }

  /** The test's allocator: empty again when the test ends, or the test fails. */
  public BufferAllocator allocator() {
    return allocator;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    device = TestGpu.open();
    runtime = new ColumnRuntime(device);
  }

  @Override
  public void afterAll(ExtensionContext context) {
    runtime.close();
    TestGpu.closeClean(device);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    allocator = new RootAllocator();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    try {
      assertEquals(0, allocator.getAllocatedMemory(), "Arrow memory leaked");
    } finally {
      allocator.close();
    }
  }

  /**
   * Runs {@code body} on a device of its own moving data by {@code mode}, with its own runtime and
   * allocator; then the allocator must be empty, nothing alive and the validation layer silent.
   */
  public static void onDevice(TransferMode mode, Body body) throws Exception {
    GpuDevice d = TestGpu.open(mode);
    try {
      try (BufferAllocator a = new RootAllocator(); ColumnRuntime rt = new ColumnRuntime(d)) {
        body.run(d, rt, a);
        assertEquals(0, a.getAllocatedMemory(), "Arrow memory leaked");
      }
    } finally {
      TestGpu.closeClean(d);
    }
  }
}
