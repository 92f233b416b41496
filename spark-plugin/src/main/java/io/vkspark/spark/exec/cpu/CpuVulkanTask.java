package io.vkspark.spark.exec.cpu;

import io.vkspark.spark.conf.VkConf;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.SqlType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import io.vkspark.spark.executor.CpuVulkan;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.executor.GpuLease;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.input.SparkInputs;

/**
 * The GLSL-only calls of one task that its GPU node runs on the CPU: each batch through the CPU
 * Vulkan device, one runner per call, made on its first batch.
 */
public final class CpuVulkanTask implements AutoCloseable {
  private final VkConf conf;
  private final BufferAllocator allocator;
  private final Map<Integer, BatchRunner> runners = new HashMap<>();
  private final Map<Integer, ColumnVector> columns = new HashMap<>();

  public CpuVulkanTask(VkConf conf, BufferAllocator allocator) {
    this.conf = conf;
    this.allocator = allocator;
  }

  /** Call {@code i} ({@code c}) over {@code rows} rows of {@code in}; the column is valid until the next batch. */
  public ColumnVector run(int i, GpuUdfCall c, ColumnarBatch in, int rows) {
    ExecutorDevice dev = CpuVulkan.device(conf, c.name());
    List<Integer> ordinals = new ArrayList<>();
    int[] cols = new int[c.argOrdinals().size()];
    for (int a = 0; a < cols.length; a++) {
      int o = c.argOrdinals().get(a);
      if (o < 0) {
        cols[a] = -1; // a constant argument: its literal slot, no column
        continue;
      }
      if (!ordinals.contains(o)) {
        ordinals.add(o);
      }
      cols[a] = ordinals.indexOf(o);
    }
    List<SqlType> argTypes = c.kernel().signature().argTypes();
    List<SqlType> types = new ArrayList<>();
    List<InputColumn> inputs = new ArrayList<>();
    for (int o : ordinals) {
      int a = IntStream.range(0, cols.length).filter(x -> c.argOrdinals().get(x) == o).findFirst().orElseThrow();
      types.add(argTypes.get(a));
      inputs.add(SparkInputs.of(in.column(o), argTypes.get(a), rows));
    }
    try (GpuLease lease = dev.lease()) {
      BatchRunner r = runners.get(i);
      if (r == null) {
        r = dev.runtime().runner(List.of(new KernelCall(c.kernel(), cols, c.literals())), types, conf.batchRows(), allocator);
        TaskContext task = TaskContext.get();
        r.bound(conf.kernelTimeout(), task == null ? () -> false : task::isInterrupted);
        runners.put(i, r);
      }
      try {
        FieldVector out = r.run(inputs, rows).get(0);
        CpuVulkan.count(true, rows);
        return columns.computeIfAbsent(i, k -> new ArrowColumnVector(out));
      } finally {
        r.releaseBuffers();
      }
    }
  }

  @Override
  public void close() {
    runners.values().forEach(BatchRunner::close);
    runners.clear();
  }
}
