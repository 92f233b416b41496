package io.vkspark.gpu.column;

import static org.junit.jupiter.api.Assertions.*;

import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/** Runs column kernels on lavapipe (validation on) over plain Java values; closes clean or fails. */
final class GpuRows implements AutoCloseable {
  private final GpuDevice device;
  private final ColumnRuntime runtime;
  private final BufferAllocator allocator = new RootAllocator();

  GpuRows() {
    device = GpuDevices.open(DeviceOptions.defaults().withValidation(true));
    runtime = new ColumnRuntime(device);
  }

  GpuDevice device() {
    return device;
  }

  /** The kernel's result for each row; {@code columns[i]} holds argument i (Integer, Long, Float or Double). */
  List<Object> run(ColumnKernel k, Object[]... columns) {
    int rows = columns[0].length;
    List<SqlType> types = k.signature().argTypes();
    List<FieldVector> vectors = new ArrayList<>();
    try {
      List<InputColumn> inputs = new ArrayList<>();
      for (int c = 0; c < columns.length; c++) {
        FieldVector v = vector(types.get(c), columns[c]);
        vectors.add(v);
        inputs.add(ArrowInputs.of(v, types.get(c)));
      }
      int[] ordinals = java.util.stream.IntStream.range(0, columns.length).toArray();
      try (BatchRunner runner = runtime.runner(List.of(new KernelCall(k, ordinals)), types, rows, allocator)) {
        FieldVector out = runner.run(inputs, rows).get(0);
        List<Object> result = new ArrayList<>();
        for (int i = 0; i < rows; i++) {
          result.add(out.getObject(i));
        }
        return result;
      }
    } finally {
      vectors.forEach(FieldVector::close);
    }
  }

  private FieldVector vector(SqlType t, Object[] values) {
    FieldVector v = new Field("c", FieldType.nullable(t.arrowType()), null).createVector(allocator);
    v.setInitialCapacity(values.length);
    v.allocateNew();
    for (int i = 0; i < values.length; i++) {
      switch (t) {
        case INT -> ((IntVector) v).set(i, (Integer) values[i]);
        case BIGINT -> ((BigIntVector) v).set(i, (Long) values[i]);
        case FLOAT -> ((Float4Vector) v).set(i, (Float) values[i]);
        case DOUBLE -> ((Float8Vector) v).set(i, (Double) values[i]);
        default -> throw new IllegalArgumentException(t.toString());
      }
    }
    v.setValueCount(values.length);
    return v;
  }

  @Override
  public void close() {
    runtime.close();
    var c = device.counters();
    device.close();
    assertEquals(0, allocator.getAllocatedMemory(), "Arrow memory leaked");
    allocator.close();
    assertTrue(c.nothingLive(), c.toString());
    assertEquals(0, device.validationErrors(), device.validationMessages().toString());
  }
}
