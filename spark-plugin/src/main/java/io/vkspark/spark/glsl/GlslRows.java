package io.vkspark.spark.glsl;

import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.spark.kernel.CompiledKernels;
import io.vkspark.spark.conf.VkConf;
import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.KernelSpec;
import io.vkspark.gpu.column.SqlType;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.sql.Date;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.SparkEnv;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.util.ArrowUtils$;
import io.vkspark.spark.executor.CpuVulkan;
import io.vkspark.spark.executor.ExecutorDevice;
import io.vkspark.spark.executor.GpuLease;

/**
 * {@code call()} of GLSL-only UDFs ({@link GlslUdf}), one row at a time, for the rows Spark
 * evaluates itself (calls it keeps in its own operators, driver-side evaluation of local relations,
 * verify mode): on the JVM's own device when it has one and it runs the kernel, else on the CPU
 * Vulkan device ({@link CpuVulkan}). One reused runner per kernel, closed with its device.
 */
final class GlslRows {
  private static final Map<KernelSpec, Scalar> SCALARS = new HashMap<>();
  /** {@link #conf()} and the SparkEnv it was read from. */
  private static VkConf appConf;
  private static SparkEnv appConfEnv;

  static {
    CpuVulkan.register(new CpuVulkan.RowRunners() {
      @Override
      public void closeOn(ExecutorDevice dev) {
        scalars(false).forEach(s -> s.closeRunnerOn(dev));
      }

      @Override
      public void closeAll() {
        scalars(true).forEach(Scalar::close);
      }
    });
  }

  private GlslRows() {}

  private static List<Scalar> scalars(boolean clear) {
    synchronized (SCALARS) {
      List<Scalar> out = new ArrayList<>(SCALARS.values());
      if (clear) {
        SCALARS.clear();
      }
      return out;
    }
  }

  /** The device for one row of {@code udf}'s {@code call()} ({@link #rowDevice}, or the CPU device in verify mode). */
  private static ExecutorDevice rowDevice(VkConf conf, GlslUdf udf) {
    if (!CpuVulkan.cpuOnly()) {
      Optional<ExecutorDevice> own = ExecutorDevice.get(conf, CpuVulkan.executorId()).filter(g -> !g.isClosed());
      ColumnKernel kernel = CompiledKernels.compile(udf.kernel().spec(udf.name()), conf);
      Optional<DeviceInfo> ownInfo = own.map(g -> g.device().info());
      // The device list is read only when the own device cannot run the row (rowDevice then picks the CPU one).
      if (ownInfo.isPresent() && CpuVulkan.rowDevice(ownInfo, List.of(), d -> kernel.unsupportedOn(d).isEmpty()).isPresent()) {
        return own.get();
      }
    }
    return CpuVulkan.device(conf, udf.name());
  }

  /**
   * The application's settings (its static ones: device, shader cache, compile budget), read once
   * per SparkEnv: a row that Spark evaluates has no GPU node, and so no planned settings, with it.
   */
  private static synchronized VkConf conf() {
    SparkEnv env = SparkEnv.get();
    if (appConf == null || appConfEnv != env) {
      appConf = env == null ? VkConf.from(k -> null) : VkConf.from(env.conf());
      appConfEnv = env;
    }
    return appConf;
  }

  /**
   * One row of {@code udf} on the CPU Vulkan device: {@code call()} of a GLSL-only UDF. Arguments are
   * Spark's external values (Integer, Long, Float, Double, Boolean, java.sql.Date or LocalDate,
   * java.sql.Timestamp or Instant); a null argument gives null, as on the GPU.
   */
  static Object evalRow(GlslUdf udf, Object[] args) {
    for (Object a : args) {
      if (a == null) {
        return null;
      }
    }
    VkConf conf = conf();
    KernelSpec spec = udf.kernel().spec(udf.name());
    Scalar s;
    synchronized (SCALARS) {
      s = SCALARS.computeIfAbsent(spec, k -> new Scalar(udf, conf));
    }
    return s.eval(args);
  }

  /** A one-row runner of one kernel, reused for every row (calls are serialized on it). */
  private static final class Scalar {
    private final GlslUdf udf;
    private final VkConf conf;
    private final BufferAllocator allocator =
        ArrowUtils$.MODULE$.rootAllocator().newChildAllocator("vkspark-cpu-vulkan-row", 0, Long.MAX_VALUE);
    private final List<FieldVector> inputs = new ArrayList<>();
    private BatchRunner runner;
    private ExecutorDevice runnerDevice;

    Scalar(GlslUdf udf, VkConf conf) {
      this.udf = udf;
      this.conf = conf;
      var args = udf.kernel().signature().args();
      for (int i = 0; i < args.size(); i++) {
        FieldVector v = new Field("a" + i, FieldType.nullable(args.get(i).arrowType()), null).createVector(allocator);
        v.allocateNew();
        inputs.add(v);
      }
    }

    /** Device and permit first, then this runner's lock: a device closing holds every permit and then takes it. */
    Object eval(Object[] args) {
      ExecutorDevice dev = rowDevice(conf, udf);
      boolean cpu = CpuVulkan.current().orElse(null) == dev;
      try (GpuLease lease = dev.lease()) {
        synchronized (this) {
          Object result = evalLeased(dev, args);
          CpuVulkan.count(cpu, 1);
          return result;
        }
      }
    }

    private Object evalLeased(ExecutorDevice dev, Object[] args) {
      List<SqlType> types = udf.kernel().argTypes();
      List<InputColumn> in = new ArrayList<>();
      for (int i = 0; i < args.length; i++) {
        set(inputs.get(i), types.get(i), args[i], udf.name());
        in.add(ArrowInputs.of(inputs.get(i), types.get(i)));
      }
      BatchRunner r = runner(dev);
      try {
        FieldVector out = r.run(in, 1).get(0);
        return out.isNull(0) ? null : get(out, udf.kernel().result());
      } finally {
        r.releaseBuffers();
      }
    }

    synchronized void closeRunnerOn(ExecutorDevice dev) {
      if (runner != null && runnerDevice == dev) {
        runner.close();
        runner = null;
        runnerDevice = null;
      }
    }

    private BatchRunner runner(ExecutorDevice dev) {
      if (runner == null || runnerDevice != dev) {
        if (runner != null) {
          runner.close();
        }
        int[] cols = IntStream.range(0, inputs.size()).toArray();
        runner = dev.runtime().runner(List.of(new KernelCall(CompiledKernels.compile(udf.kernel().spec(udf.name()), conf), cols)),
            udf.kernel().argTypes(), 64, allocator);
        runner.bound(conf.kernelTimeout(), () -> false);
        runnerDevice = dev;
      }
      return runner;
    }

    synchronized void close() {
      if (runner != null) {
        runner.close();
      }
      inputs.forEach(FieldVector::close);
      allocator.close();
    }
  }

  /** Spark's external value {@code value} into row 0 of {@code v}. */
  private static void set(FieldVector v, SqlType t, Object value, String udf) {
    switch (t) {
      case TINYINT -> ((TinyIntVector) v).setSafe(0, ((Number) value).byteValue());
      case SMALLINT -> ((SmallIntVector) v).setSafe(0, ((Number) value).shortValue());
      case DECIMAL -> {
        DecimalVector d = (DecimalVector) v;
        d.setSafe(0, ((BigDecimal) value).setScale(d.getScale(), RoundingMode.UNNECESSARY));
      }
      case INT -> ((IntVector) v).setSafe(0, ((Number) value).intValue());
      case BIGINT -> ((BigIntVector) v).setSafe(0, ((Number) value).longValue());
      case FLOAT -> ((Float4Vector) v).setSafe(0, ((Number) value).floatValue());
      case DOUBLE -> ((Float8Vector) v).setSafe(0, ((Number) value).doubleValue());
      case BOOLEAN -> ((BitVector) v).setSafe(0, (Boolean) value ? 1 : 0);
      case DATE -> ((DateDayVector) v).setSafe(0, days(value));
      case TIMESTAMP -> ((TimeStampVector) v).setSafe(0, micros(value));
      case STRING -> ((VarCharVector) v).setSafe(0,
          ((String) value).getBytes(StandardCharsets.UTF_8));
      case BINARY -> ((VarBinaryVector) v).setSafe(0, (byte[]) value);
      case ARRAY_FLOAT, ARRAY_DOUBLE, ARRAY_INT -> throw GpuException.of(GpuException.Code.UNSUPPORTED,
          "GLSL-only GPU UDF '" + udf + "' was called row by row (Spark evaluated it outside its GPU node, e.g. on the "
              + "driver or in verify mode) with an array argument, which that path does not take yet.",
          "call it over a table column (its GPU node runs it batch by batch, on the GPU or on lavapipe), "
              + "or define it with a Java call() through GpuFunction.");
    }
    v.setValueCount(1);
  }

  /** Days since the epoch of a Spark external date (as Spark itself converts it). */
  private static int days(Object value) {
    return value instanceof LocalDate d ? Math.toIntExact(d.toEpochDay())
        : DateTimeUtils.fromJavaDate((Date) value);
  }

  /** Microseconds since the epoch of a Spark external timestamp. */
  private static long micros(Object value) {
    return value instanceof Instant i ? DateTimeUtils.instantToMicros(i)
        : DateTimeUtils.fromJavaTimestamp((Timestamp) value);
  }

  /** Row 0 of {@code v} as the external value Spark converts back (LocalDate, Instant: no time zone involved). */
  private static Object get(FieldVector v, SqlType t) {
    return switch (t) {
      case TINYINT -> ((TinyIntVector) v).get(0);
      case SMALLINT -> ((SmallIntVector) v).get(0);
      case DECIMAL -> ((DecimalVector) v).getObject(0);
      case INT -> ((IntVector) v).get(0);
      case BIGINT -> ((BigIntVector) v).get(0);
      case FLOAT -> ((Float4Vector) v).get(0);
      case DOUBLE -> ((Float8Vector) v).get(0);
      case BOOLEAN -> ((BitVector) v).get(0) != 0;
      case DATE -> LocalDate.ofEpochDay(((DateDayVector) v).get(0));
      case TIMESTAMP -> DateTimeUtils.microsToInstant(((TimeStampVector) v).get(0));
      case STRING -> new String(((VarCharVector) v).get(0), StandardCharsets.UTF_8);
      case BINARY -> ((VarBinaryVector) v).get(0);
      case ARRAY_FLOAT, ARRAY_DOUBLE, ARRAY_INT -> throw new IllegalStateException(t + " is not a result type");
    };
  }
}
