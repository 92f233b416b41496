package io.vkspark.spark.exec.cpu;

import io.vkspark.spark.conf.VkConf;
import io.vkspark.spark.exec.call.GpuUdfCall;
import io.vkspark.spark.exec.call.NodeMetrics;
import io.vkspark.spark.exec.call.Placement;
import io.vkspark.spark.exec.call.ResultColumn;
import io.vkspark.spark.exec.call.VkMetric;

import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The CPU path of one task of a GPU node: a call's results computed with the UDF's own
 * {@code call()}, row by row in Spark's generated code ({@link CpuCallProjection}), or for a
 * GLSL-only UDF (it has no {@code call()}) its SPIR-V over the whole batch on the CPU Vulkan device. Apart from the iterator so that the GPU and CPU paths each
 * read on their own; the vectors are reused from batch to batch.
 */
public final class CpuBatchStep implements AutoCloseable {
  private final List<GpuUdfCall> calls;
  private final VkConf conf;
  private final BufferAllocator allocator;
  private final NodeMetrics metrics;
  private final FieldVector[] vectors;
  /** Per call: a null argument gives a null result without call() (false: a non-strict translated Java UDF). */
  private final boolean[] strict;
  /** Per call: its code-generated evaluation (null until the call's first batch on the CPU). */
  private final CpuCallProjection[] projections;
  /** GLSL-only calls on the CPU: their SPIR-V on the CPU Vulkan device (null until the first such batch). */
  private CpuVulkanTask cpuVulkan;
  /** Per call: its GPU results with the rows its kernel handed back (null until the first such batch). */
  private final HandedBackRows[] handedBack;

  public CpuBatchStep(List<GpuUdfCall> calls, VkConf conf, BufferAllocator allocator, NodeMetrics metrics) {
    this.calls = calls;
    this.conf = conf;
    this.allocator = allocator;
    this.metrics = metrics;
    this.vectors = new FieldVector[calls.size()];
    this.strict = new boolean[calls.size()];
    this.projections = new CpuCallProjection[calls.size()];
    this.handedBack = new HandedBackRows[calls.size()];
    for (int i = 0; i < calls.size(); i++) {
      strict[i] = calls.get(i).nullStrict();
    }
  }

  /**
   * Call {@code i} over {@code rows} rows of {@code in}, strictly: a null argument gives a null
   * result (a non-strict translated Java UDF's {@code call()} sees it, as in Spark). The column is
   * valid until the next batch.
   */
  public ColumnVector run(int i, ColumnarBatch in, int rows) {
    GpuUdfCall c = calls.get(i);
    if (c.glslOnly()) {
      if (cpuVulkan == null) {
        cpuVulkan = new CpuVulkanTask(conf, allocator);
      }
      ColumnVector out = cpuVulkan.run(i, c, in, rows);
      metrics.add(VkMetric.CPU_ROWS, rows);
      metrics.add(VkMetric.CPU_VULKAN_ROWS, rows);
      return out;
    }
    if (vectors[i] == null) {
      vectors[i] = new Field(c.name(), FieldType.nullable(c.kernel().signature().resultArrowType()), null)
          .createVector(allocator);
      projections[i] = CpuCallProjection.of(c, strict[i]);
    }
    FieldVector v = vectors[i];
    v.setInitialCapacity(rows);
    v.allocateNew();
    projections[i].run(in, rows, v);
    v.setValueCount(rows);
    metrics.add(VkMetric.CPU_ROWS, rows);
    return ResultColumn.of(v);
  }

  /**
   * Call {@code i}'s GPU results {@code gpu} with {@code rows} (ascending; null in {@code gpu}), which
   * its kernel handed back, computed by {@code call()} over {@code in}. A GLSL-only call has no
   * {@code call()}: those rows stay null (docs/GLSL-SEMANTICS.md, "Strings"). Valid until the next batch.
   */
  public ColumnVector withHandedBack(int i, FieldVector gpu, int[] rows, ColumnarBatch in) {
    GpuUdfCall c = calls.get(i);
    metrics.add(VkMetric.HANDED_BACK_ROWS, rows.length);
    if (c.glslOnly()) {
      return ResultColumn.of(gpu); // no call(): the rows stay null (docs/GLSL-SEMANTICS.md, "Strings")
    }
    metrics.add(VkMetric.CPU_ROWS, rows.length);
    metrics.add(VkMetric.cpuRows(Placement.Cause.HANDED_BACK), rows.length);
    if (projections[i] == null) {
      projections[i] = CpuCallProjection.of(c, strict[i]);
    }
    if (handedBack[i] == null) {
      handedBack[i] = new HandedBackRows(allocator);
    }
    return ResultColumn.of(handedBack[i].merge(gpu, c.resultType(), rows, projections[i], in));
  }

  @Override
  public void close() {
    for (HandedBackRows h : handedBack) {
      if (h != null) {
        h.close();
      }
    }
    try {
      if (cpuVulkan != null) {
        cpuVulkan.close();
      }
    } finally {
      for (FieldVector v : vectors) {
        if (v != null) {
          v.close();
        }
      }
    }
  }
}
