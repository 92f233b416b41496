package io.vkspark.spark.executor;

import io.vkspark.spark.glsl.GlslUdf;
import io.vkspark.spark.plan.GpuPlanner;
import io.vkspark.spark.exec.GpuUdfCall;
import io.vkspark.spark.exec.SparkInputs;
import io.vkspark.spark.conf.VkConf;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.DeviceType;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.ArrowInputs;
import io.vkspark.gpu.column.BatchRunner;
import io.vkspark.gpu.column.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.KernelSpec;
import io.vkspark.gpu.column.SqlType;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.util.ArrowUtils$;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CPU fallback of GLSL-only UDFs ({@link GlslUdf}): they have no Java {@code call()}, so where a
 * Java GPU UDF would run {@code call()}, their own SPIR-V runs on a CPU Vulkan device (Mesa's
 * lavapipe). Vulkan being vendor-neutral, the same compiled kernel runs there unchanged. The device
 * is this JVM's first Vulkan device of type CPU, opened on first use (whatever
 * {@code spark.vkspark.device} says: that setting picks the GPU) and closed with the executor.
 * Without one, the UDF fails with an error naming it, whose Fix is to install lavapipe.
 *
 * <p>Two ways in: {@link Task} evaluates a whole batch for the GPU node when it places a GLSL-only
 * call on the CPU, and {@link #evalRow} evaluates one row for {@code call()} (calls Spark keeps in
 * its own operators, driver-side evaluation of local relations, verify mode). A row Spark evaluates
 * itself (in a join condition, a window, a grouping) runs on the JVM's own device when it has one
 * ({@link #rowDevice}): a GPU host needs no lavapipe for those. Verify mode's rows stay on the CPU
 * device ({@link #onCpuDevice}): checking the GPU against itself would prove nothing.
 */
public final class CpuVulkan {
  private static final Logger LOG = LoggerFactory.getLogger(CpuVulkan.class);
  private static ExecutorGpu device;
  private static GpuException unavailable;
  /** Rows this JVM computed on the CPU Vulkan device (batches and single rows). */
  private static final AtomicLong ROWS = new AtomicLong();
  /** Rows of {@code call()} this JVM computed on its own device ({@link ExecutorGpu}). */
  private static final AtomicLong OWN_DEVICE_ROWS = new AtomicLong();
  /** Set while verify mode runs {@code call()}: its rows must run on the CPU device. */
  private static final ThreadLocal<Boolean> CPU_ONLY = ThreadLocal.withInitial(() -> false);
  private static final Map<KernelSpec, Scalar> SCALARS = new HashMap<>();

  private CpuVulkan() {}

  static final String FIX = "install Mesa's lavapipe (mesa-vulkan-drivers, libvulkan1) on every executor and on the "
      + "driver: it is the CPU Vulkan device that runs GLSL-only GPU UDFs where there is no usable GPU";

  /**
   * This JVM's CPU Vulkan device, opened on first use.
   *
   * @throws GpuException NO_DEVICE naming {@code udf} when there is no CPU Vulkan device
   */
  static synchronized ExecutorGpu device(VkConf conf, String udf) {
    if (device != null && !device.isClosed()) {
      return device;
    }
    if (unavailable == null) {
      try {
        DeviceInfo cpu = rowDevice(java.util.Optional.empty(), devices(), d -> true).orElseThrow(() ->
            GpuException.of(Code.NO_DEVICE, "Vulkan has no CPU device (only " + devices().stream()
                .map(DeviceInfo::name).toList() + ")", FIX));
        device = ExecutorGpu.open(conf, String.valueOf(cpu.index()), executorId() + " (CPU Vulkan)");
        LOG.info("vkspark: GLSL-only GPU UDFs fall back to the CPU Vulkan device {}", cpu.summary());
        return device;
      } catch (GpuException | LinkageError e) {
        unavailable = e instanceof GpuException g ? g : GpuException.of(Code.NO_VULKAN, String.valueOf(e), FIX);
        LOG.warn("vkspark: no CPU Vulkan device for GLSL-only GPU UDFs: {}", e.getMessage());
      }
    }
    throw new GpuException(Code.NO_DEVICE, "vkspark: GPU UDF '" + udf + "' is defined in GLSL only (no Java call()), so "
        + "without a usable GPU it runs its SPIR-V on a CPU Vulkan device, and this JVM has none: "
        + unavailable.what() + " Fix: " + FIX + ".", unavailable);
  }

  private static List<DeviceInfo> devices() {
    return io.vkspark.gpu.GpuDevice.list();
  }

  private static String executorId() {
    return org.apache.spark.SparkEnv.get() == null ? "driver" : org.apache.spark.SparkEnv.get().executorId();
  }

  /** The CPU Vulkan device, if it is open. */
  public static synchronized java.util.Optional<ExecutorGpu> current() {
    return java.util.Optional.ofNullable(device);
  }

  /** Rows computed on the CPU Vulkan device in this JVM so far (for tests and logs). */
  public static long rows() {
    return ROWS.get();
  }

  /** Rows of {@code call()} computed on this JVM's own device so far (for tests and logs). */
  public static long ownDeviceRows() {
    return OWN_DEVICE_ROWS.get();
  }

  /** {@code body}, with any GLSL-only {@code call()} in it on the CPU Vulkan device (verify mode's reference). */
  public static <T> T onCpuDevice(java.util.function.Supplier<T> body) {
    boolean was = CPU_ONLY.get();
    CPU_ONLY.set(true);
    try {
      return body.get();
    } finally {
      CPU_ONLY.set(was);
    }
  }

  /**
   * Which device runs a row of {@code call()}: {@code own}, the JVM's own device (its GPU, or
   * lavapipe where that is the best it has), when it is open and has the kernel's features; else the
   * first CPU device of {@code devices}; empty when neither (the caller's error says to install lavapipe).
   */
  static java.util.Optional<DeviceInfo> rowDevice(java.util.Optional<DeviceInfo> own, List<DeviceInfo> devices,
                                                   java.util.function.Predicate<DeviceInfo> runs) {
    if (own.isPresent() && runs.test(own.get())) {
      return own;
    }
    return devices.stream().filter(d -> d.type() == DeviceType.CPU && runs.test(d)).findFirst();
  }

  /** The device for one row of {@code udf}'s {@code call()} ({@link #rowDevice}, or the CPU device in verify mode). */
  private static ExecutorGpu rowDevice(VkConf conf, GlslUdf udf) {
    if (!CPU_ONLY.get()) {
      java.util.Optional<ExecutorGpu> own = ExecutorGpu.get(conf, executorId()).filter(g -> !g.isClosed());
      io.vkspark.gpu.column.ColumnKernel kernel = GpuPlanner.compile(udf.name(), udf.kernel(), conf);
      java.util.Optional<DeviceInfo> ownInfo = own.map(g -> g.device().info());
      // The device list is read only when the own device cannot run the row (rowDevice then picks the CPU one).
      if (ownInfo.isPresent() && rowDevice(ownInfo, List.of(), d -> kernel.unsupportedOn(d).isEmpty()).isPresent()) {
        return own.get();
      }
    }
    return device(conf, udf.name());
  }

  /** Closes the row runners on {@code dev} before it closes (its owner holds every permit, so none is running). */
  static void beforeClose(ExecutorGpu dev) {
    List<Scalar> scalars;
    synchronized (SCALARS) {
      scalars = new ArrayList<>(SCALARS.values());
    }
    scalars.forEach(s -> s.closeRunnerOn(dev));
  }

  /** Closes the CPU Vulkan device (executor shutdown); the next use opens it again. */
  public static void shutdown() {
    // Scalars first, without the class lock: their runners go before the device they run on.
    List<Scalar> scalars;
    synchronized (SCALARS) {
      scalars = new ArrayList<>(SCALARS.values());
      SCALARS.clear();
    }
    scalars.forEach(Scalar::close);
    synchronized (CpuVulkan.class) {
      if (device != null) {
        device.close();
        device = null;
      }
      unavailable = null;
    }
  }

  private static VkConf conf() {
    org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
    return env == null ? VkConf.from(k -> null) : VkConf.from(env.conf());
  }

  /**
   * One row of {@code udf} on the CPU Vulkan device: {@code call()} of a GLSL-only UDF. Arguments are
   * Spark's external values (Integer, Long, Float, Double, Boolean, java.sql.Date or LocalDate,
   * java.sql.Timestamp or Instant); a null argument gives null, as on the GPU.
   */
  public static Object evalRow(GlslUdf udf, Object[] args) {
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
    private ExecutorGpu runnerDevice;

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
      ExecutorGpu dev = rowDevice(conf, udf);
      AtomicLong counted = current().orElse(null) == dev ? ROWS : OWN_DEVICE_ROWS;
      try (GpuLease lease = dev.lease()) {
        synchronized (this) {
          Object result = evalLeased(dev, args);
          counted.incrementAndGet();
          return result;
        }
      }
    }

    private Object evalLeased(ExecutorGpu dev, Object[] args) {
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

    synchronized void closeRunnerOn(ExecutorGpu dev) {
      if (runner != null && runnerDevice == dev) {
        runner.close();
        runner = null;
        runnerDevice = null;
      }
    }

    private BatchRunner runner(ExecutorGpu dev) {
      if (runner == null || runnerDevice != dev) {
        if (runner != null) {
          runner.close();
        }
        int[] cols = java.util.stream.IntStream.range(0, inputs.size()).toArray();
        runner = dev.runtime().runner(List.of(new KernelCall(GpuPlanner.compile(udf.name(), udf.kernel(), conf), cols)),
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
      case TINYINT -> ((org.apache.arrow.vector.TinyIntVector) v).setSafe(0, ((Number) value).byteValue());
      case SMALLINT -> ((org.apache.arrow.vector.SmallIntVector) v).setSafe(0, ((Number) value).shortValue());
      case DECIMAL -> {
        org.apache.arrow.vector.DecimalVector d = (org.apache.arrow.vector.DecimalVector) v;
        d.setSafe(0, ((java.math.BigDecimal) value).setScale(d.getScale(), java.math.RoundingMode.UNNECESSARY));
      }
      case INT -> ((IntVector) v).setSafe(0, ((Number) value).intValue());
      case BIGINT -> ((BigIntVector) v).setSafe(0, ((Number) value).longValue());
      case FLOAT -> ((Float4Vector) v).setSafe(0, ((Number) value).floatValue());
      case DOUBLE -> ((Float8Vector) v).setSafe(0, ((Number) value).doubleValue());
      case BOOLEAN -> ((BitVector) v).setSafe(0, (Boolean) value ? 1 : 0);
      case DATE -> ((DateDayVector) v).setSafe(0, days(value));
      case TIMESTAMP -> ((TimeStampVector) v).setSafe(0, micros(value));
      case STRING -> ((org.apache.arrow.vector.VarCharVector) v).setSafe(0,
          ((String) value).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      case BINARY -> ((org.apache.arrow.vector.VarBinaryVector) v).setSafe(0, (byte[]) value);
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
        : org.apache.spark.sql.catalyst.util.DateTimeUtils.fromJavaDate((java.sql.Date) value);
  }

  /** Microseconds since the epoch of a Spark external timestamp. */
  private static long micros(Object value) {
    return value instanceof Instant i ? org.apache.spark.sql.catalyst.util.DateTimeUtils.instantToMicros(i)
        : org.apache.spark.sql.catalyst.util.DateTimeUtils.fromJavaTimestamp((java.sql.Timestamp) value);
  }

  /** Row 0 of {@code v} as the external value Spark converts back (LocalDate, Instant: no time zone involved). */
  private static Object get(FieldVector v, SqlType t) {
    return switch (t) {
      case TINYINT -> ((org.apache.arrow.vector.TinyIntVector) v).get(0);
      case SMALLINT -> ((org.apache.arrow.vector.SmallIntVector) v).get(0);
      case DECIMAL -> ((org.apache.arrow.vector.DecimalVector) v).getObject(0);
      case INT -> ((IntVector) v).get(0);
      case BIGINT -> ((BigIntVector) v).get(0);
      case FLOAT -> ((Float4Vector) v).get(0);
      case DOUBLE -> ((Float8Vector) v).get(0);
      case BOOLEAN -> ((BitVector) v).get(0) != 0;
      case DATE -> LocalDate.ofEpochDay(((DateDayVector) v).get(0));
      case TIMESTAMP -> org.apache.spark.sql.catalyst.util.DateTimeUtils.microsToInstant(((TimeStampVector) v).get(0));
      case STRING, BINARY, ARRAY_FLOAT, ARRAY_DOUBLE, ARRAY_INT -> throw new IllegalStateException(t + " is not a result type");
    };
  }

  /**
   * The GLSL-only calls of one task that its GPU node runs on the CPU: each batch through the CPU
   * Vulkan device, one runner per call, made on its first batch.
   */
  public static final class Task implements AutoCloseable {
    private final VkConf conf;
    private final BufferAllocator allocator;
    private final Map<Integer, BatchRunner> runners = new HashMap<>();
    private final Map<Integer, ColumnVector> columns = new HashMap<>();

    public Task(VkConf conf, BufferAllocator allocator) {
      this.conf = conf;
      this.allocator = allocator;
    }

    /** Call {@code i} ({@code c}) over {@code rows} rows of {@code in}; the column is valid until the next batch. */
    public ColumnVector run(int i, GpuUdfCall c, ColumnarBatch in, int rows) {
      ExecutorGpu dev = device(conf, c.name());
      List<Integer> ordinals = new ArrayList<>();
      int[] cols = new int[c.argOrdinals().length];
      for (int a = 0; a < cols.length; a++) {
        int o = c.argOrdinals()[a];
        if (!ordinals.contains(o)) {
          ordinals.add(o);
        }
        cols[a] = ordinals.indexOf(o);
      }
      List<SqlType> argTypes = c.kernel().signature().argTypes();
      List<SqlType> types = new ArrayList<>();
      List<InputColumn> inputs = new ArrayList<>();
      for (int o : ordinals) {
        int a = java.util.stream.IntStream.range(0, cols.length).filter(x -> c.argOrdinals()[x] == o).findFirst().orElseThrow();
        types.add(argTypes.get(a));
        inputs.add(SparkInputs.of(in.column(o), argTypes.get(a), rows));
      }
      try (GpuLease lease = dev.lease()) {
        BatchRunner r = runners.get(i);
        if (r == null) {
          r = dev.runtime().runner(List.of(new KernelCall(c.kernel(), cols)), types, conf.batchRows(), allocator);
          TaskContext task = TaskContext.get();
          r.bound(conf.kernelTimeout(), task == null ? () -> false : task::isInterrupted);
          runners.put(i, r);
        }
        try {
          FieldVector out = r.run(inputs, rows).get(0);
          ROWS.addAndGet(rows);
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
}
