package io.vkspark.gpu.bench;

import io.vkspark.gpu.BufferDecl;
import io.vkspark.gpu.BufferRole;
import io.vkspark.gpu.DeviceOptions;
import io.vkspark.gpu.ElementType;
import io.vkspark.gpu.GpuBuffer;
import io.vkspark.gpu.GpuDevice;
import io.vkspark.gpu.Groups;
import io.vkspark.gpu.Kernel;
import io.vkspark.gpu.PrerecordedDispatch;
import io.vkspark.gpu.Program;
import io.vkspark.gpu.TimedDispatch;
import io.vkspark.gpu.TransferMode;
import io.vkspark.gpu.column.input.ArrowInputs;
import io.vkspark.gpu.column.run.BatchRunner;
import io.vkspark.gpu.column.BatchStats;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.run.ColumnRuntime;
import io.vkspark.gpu.column.input.InputColumn;
import io.vkspark.gpu.column.KernelCall;
import io.vkspark.gpu.column.KernelSignature;
import io.vkspark.gpu.column.SqlType;
import io.vkspark.gpu.vulkan.GpuDevices;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.lwjgl.system.MemoryUtil;

/**
 * gpu-core benchmarks (`make bench`): one JSON line per case. Cases: replay+wait of an empty
 * dispatch, host upload and readback bandwidth, saxpy over 16 M floats through a pre-recorded
 * dispatch, and Arrow-in to Arrow-out batches (saxpy on floats, Black-Scholes on doubles) through
 * the BatchRunner. Absolute times count only from the H200 machine (see docs/BENCHMARKS.md).
 *
 * <p>Args: {@code [quick]} runs fewer iterations and smaller sizes (for a smoke run).
 */
public final class CoreBench {
  static final String EMPTY = """
      #version 450
      layout(local_size_x_id = 0) in;
      layout(std430, set = 0, binding = 0) writeonly buffer Y { uint y[]; };
      void main() { if (gl_GlobalInvocationID.x == 0xffffffffu) { y[0] = 1u; } }
      """;

  static final String BLACK_SCHOLES = """
      double sq = v * sqrt(t);
      double d1 = (log(s / k) + (r + 0.5 * v * v) * t) / sq;
      double d2 = d1 - sq;
      return s * vk_norm_cdf(d1) - k * exp(-r * t) * vk_norm_cdf(d2);
      """;

  private CoreBench() {}

  public static void main(String[] args) {
    boolean quick = args.length > 0 && args[0].equals("quick");
    String only = System.getProperty("vkspark.bench.only", "");
    for (TransferMode mode : TransferMode.values()) {
      try (GpuDevice d = GpuDevices.open(DeviceOptions.defaults().withDevice(System.getProperty("vkspark.device", ""))
          .withTransfers(mode))) {
        String dev = d.info().name();
        System.out.println(Json.of("core", "device").put("device", dev).put("transfers", mode.name())
            .put("type", d.info().type().name()).put("driver", d.info().driver()).put("api", d.info().apiVersion())
            .put("subgroup", d.info().subgroupSize()).put("device_local_mib", d.info().deviceLocalBytes() >> 20)
            .put("direct_host_writes", d.info().directHostWrites()).put("features", d.info().features().toString())
            .put("java", System.getProperty("java.version")).put("cores", Runtime.getRuntime().availableProcessors()));
        if (only.isEmpty() || only.contains("latency")) {
          emptyDispatch(d, dev, mode, quick ? 200 : 2000);
        }
        if (only.isEmpty() || only.contains("bandwidth")) {
          bandwidth(d, dev, mode, quick ? 64 << 20 : 256 << 20, quick ? 3 : 10);
        }
        if (only.isEmpty() || only.contains("saxpy")) {
          saxpy(d, dev, mode, quick ? 1 << 22 : 16 << 20, quick ? 3 : 20);
        }
        if (only.isEmpty() || only.contains("arrow")) {
          try (ColumnRuntime rt = new ColumnRuntime(d); BufferAllocator alloc = new RootAllocator()) {
            for (int rows : quick ? new int[] {1 << 20} : new int[] {1 << 20, 16 << 20}) {
              arrowSaxpy(rt, alloc, dev, mode, rows, quick ? 3 : 10);
              arrowBlackScholes(rt, alloc, dev, mode, rows, quick ? 3 : 10);
            }
          }
        }
      }
    }
  }

  static void emptyDispatch(GpuDevice d, String dev, TransferMode mode, int n) {
    Program p = Program.glsl("empty", EMPTY).workgroupSize(64)
        .buffer(BufferDecl.output("y", 0, ElementType.UINT32)).clearOutputs(false).build();
    try (Kernel k = d.load(p); GpuBuffer y = d.createBuffer(64, BufferRole.OUTPUT);
         PrerecordedDispatch rec = k.prerecord(List.of(), List.of(y), null, Groups.of(1))) {
      for (int i = 0; i < 100; i++) {
        rec.run();
      }
      long[] wall = new long[n];
      long[] gpu = new long[n];
      for (int i = 0; i < n; i++) {
        long t0 = System.nanoTime();
        TimedDispatch t = rec.run();
        wall[i] = System.nanoTime() - t0;
        gpu[i] = t.deviceNs() == null ? 0 : t.deviceNs();
      }
      Stats s = Stats.of(wall);
      System.out.println(Json.of("core", "replay_wait_empty").put("device", dev).put("transfers", mode.name())
          .put("iterations", n).put("median_us", s.median() / 1e3).put("p99_us", s.p99() / 1e3)
          .put("min_us", s.min() / 1e3).put("device_median_us", Stats.of(gpu).median() / 1e3));
    }
  }

  static void bandwidth(GpuDevice d, String dev, TransferMode mode, int bytes, int n) {
    ByteBuffer host = MemoryUtil.memAlloc(bytes);
    try (GpuBuffer in = d.createBuffer(bytes, BufferRole.INPUT); GpuBuffer out = d.createBuffer(bytes, BufferRole.OUTPUT)) {
      for (int i = 0; i < bytes; i += 8) {
        host.putLong(i, i);
      }
      long[] up = new long[n];
      long[] down = new long[n];
      for (int i = 0; i < n + 1; i++) {
        long t0 = System.nanoTime();
        in.write(0, host);
        long t1 = System.nanoTime();
        out.read(0, host);
        long t2 = System.nanoTime();
        if (i > 0) {
          up[i - 1] = t1 - t0;
          down[i - 1] = t2 - t1;
        }
      }
      System.out.println(Json.of("core", "host_write_input").put("device", dev).put("transfers", mode.name())
          .put("staged", in.isStaged()).put("bytes", bytes).put("gb_per_s", bytes / (double) Stats.of(up).median()));
      System.out.println(Json.of("core", "host_read_output").put("device", dev).put("transfers", mode.name())
          .put("staged", out.isStaged()).put("bytes", bytes).put("gb_per_s", bytes / (double) Stats.of(down).median()));
    } finally {
      MemoryUtil.memFree(host);
    }
  }

  static void saxpy(GpuDevice d, String dev, TransferMode mode, int n, int iterations) {
    String src = """
        #version 450
        layout(local_size_x_id = 0) in;
        layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
        layout(std430, set = 0, binding = 1) readonly buffer Yin { float yin[]; };
        layout(std430, set = 0, binding = 2) writeonly buffer Y { float y[]; };
        void main() {
          uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
          if (i < x.length()) { y[i] = 2.5 * x[i] + yin[i]; }
        }
        """;
    int wg = 256;
    Program p = Program.glsl("saxpy", src).workgroupSize(wg)
        .buffer(BufferDecl.input("x", 0, ElementType.FLOAT32)).buffer(BufferDecl.input("yin", 1, ElementType.FLOAT32))
        .buffer(BufferDecl.output("y", 2, ElementType.FLOAT32)).clearOutputs(false).build();
    long bytes = 4L * n;
    try (Kernel k = d.load(p); GpuBuffer x = d.createBuffer(bytes, BufferRole.INPUT);
         GpuBuffer yin = d.createBuffer(bytes, BufferRole.INPUT); GpuBuffer y = d.createBuffer(bytes, BufferRole.OUTPUT);
         PrerecordedDispatch rec = k.prerecord(List.of(x, yin), List.of(y), null,
             Groups.covering(n, wg, d.info().maxWorkgroupCountX()))) {
      ByteBuffer host = MemoryUtil.memAlloc((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
      try {
        for (int i = 0; i < n; i++) {
          host.putFloat(4 * i, i % 1000);
        }
        x.write(0, host);
        yin.write(0, host);
        rec.run();
        long[] wall = new long[iterations];
        long[] gpu = new long[iterations];
        for (int i = 0; i < iterations; i++) {
          long t0 = System.nanoTime();
          TimedDispatch t = rec.run();
          wall[i] = System.nanoTime() - t0;
          gpu[i] = t.deviceNs() == null ? 0 : t.deviceNs();
        }
        y.read(0, host);
        for (int i = 0; i < n; i += 9973) {
          if (host.getFloat(4 * i) != 3.5f * (i % 1000)) {
            throw new IllegalStateException("saxpy wrong at " + i);
          }
        }
        long devMedian = Stats.of(gpu).median();
        System.out.println(Json.of("core", "saxpy_prerecorded").put("device", dev).put("transfers", mode.name())
            .put("elements", n).put("wall_median_ms", Stats.of(wall).median() / 1e6)
            .put("device_median_ms", devMedian / 1e6)
            .put("device_gb_per_s", devMedian == 0 ? null : 3.0 * bytes / devMedian));
      } finally {
        MemoryUtil.memFree(host);
      }
    }
  }

  static void arrowSaxpy(ColumnRuntime rt, BufferAllocator alloc, String dev, TransferMode mode, int rows, int iterations) {
    ColumnKernel k = ColumnKernel.compile(KernelSignature.of("saxpy", SqlType.FLOAT,
        KernelSignature.arg("x", SqlType.FLOAT), KernelSignature.arg("y", SqlType.FLOAT)), "2.5 * x + y");
    Random r = new Random(1);
    try (Float4Vector x = new Float4Vector("x", alloc); Float4Vector y = new Float4Vector("y", alloc)) {
      x.allocateNew(rows);
      y.allocateNew(rows);
      for (int i = 0; i < rows; i++) {
        x.set(i, r.nextFloat());
        y.set(i, r.nextFloat());
      }
      x.setValueCount(rows);
      y.setValueCount(rows);
      List<InputColumn> in = List.of(ArrowInputs.of(x, SqlType.FLOAT), ArrowInputs.of(y, SqlType.FLOAT));
      runArrow("arrow_saxpy_float", rt, alloc, k, List.of(SqlType.FLOAT, SqlType.FLOAT), in, rows, 8L, dev, mode,
          iterations, out -> {
            Float4Vector o = (Float4Vector) out;
            for (int i = 0; i < rows; i += 7919) {
              if (Math.abs(o.get(i) - (2.5f * x.get(i) + y.get(i))) > 1e-5f) {
                throw new IllegalStateException("saxpy wrong at " + i);
              }
            }
          });
    }
  }

  static void arrowBlackScholes(ColumnRuntime rt, BufferAllocator alloc, String dev, TransferMode mode, int rows,
                                int iterations) {
    List<KernelSignature.Arg> args = new ArrayList<>();
    for (String a : new String[] {"s", "k", "t", "r", "v"}) {
      args.add(KernelSignature.arg(a, SqlType.DOUBLE));
    }
    ColumnKernel k = ColumnKernel.compile(new KernelSignature("black_scholes", args, SqlType.DOUBLE), BLACK_SCHOLES);
    Random rnd = new Random(2);
    List<Float8Vector> cols = new ArrayList<>();
    try {
      double[][] ranges = {{50, 150}, {50, 150}, {0.1, 2}, {0.0, 0.08}, {0.1, 0.6}};
      for (int c = 0; c < 5; c++) {
        Float8Vector v = new Float8Vector("c" + c, alloc);
        v.allocateNew(rows);
        for (int i = 0; i < rows; i++) {
          v.set(i, ranges[c][0] + rnd.nextDouble() * (ranges[c][1] - ranges[c][0]));
        }
        v.setValueCount(rows);
        cols.add(v);
      }
      List<InputColumn> in = cols.stream().map(v -> ArrowInputs.of(v, SqlType.DOUBLE)).toList();
      runArrow("arrow_black_scholes_double", rt, alloc, k, List.of(SqlType.DOUBLE, SqlType.DOUBLE, SqlType.DOUBLE,
          SqlType.DOUBLE, SqlType.DOUBLE), in, rows, 40L, dev, mode, iterations, out -> {
            Float8Vector o = (Float8Vector) out;
            for (int i = 0; i < rows; i += 7919) {
              double expected = blackScholes(cols.get(0).get(i), cols.get(1).get(i), cols.get(2).get(i),
                  cols.get(3).get(i), cols.get(4).get(i));
              if (Math.abs(o.get(i) - expected) > 1e-9 * Math.max(1, Math.abs(expected))) {
                throw new IllegalStateException("black-scholes wrong at " + i + ": " + o.get(i) + " vs " + expected);
              }
            }
          });
    } finally {
      cols.forEach(Float8Vector::close);
    }
  }

  interface Check {
    void accept(FieldVector out);
  }

  static void runArrow(String name, ColumnRuntime rt, BufferAllocator alloc, ColumnKernel k, List<SqlType> types,
                       List<InputColumn> in, int rows, long bytesPerRow, String dev, TransferMode mode, int iterations,
                       Check check) {
    int[] cols = new int[types.size()];
    for (int i = 0; i < cols.length; i++) {
      cols[i] = i;
    }
    try (BatchRunner runner = rt.runner(List.of(new KernelCall(k, cols)), types, rows, alloc)) {
      check.accept(runner.run(in, rows).get(0));
      BatchStats before = runner.stats();
      long[] wall = new long[iterations];
      for (int i = 0; i < iterations; i++) {
        long t0 = System.nanoTime();
        runner.run(in, rows);
        wall[i] = System.nanoTime() - t0;
      }
      BatchStats s = runner.stats();
      long median = Stats.of(wall).median();
      long n = s.batches() - before.batches();
      System.out.println(Json.of("core", name).put("device", dev).put("transfers", mode.name()).put("rows", rows)
          .put("iterations", iterations).put("wall_median_ms", median / 1e6)
          .put("input_gb_per_s", bytesPerRow * rows / (double) median).put("rows_per_s", rows * 1e9 / median)
          .put("device_ms_per_batch", (s.deviceNs() - before.deviceNs()) / 1e6 / n)
          .put("wait_ms_per_batch", (s.waitNs() - before.waitNs()) / 1e6 / n)
          .put("host_ms_per_batch", (s.hostNs() - before.hostNs()) / 1e6 / n)
          .put("dispatches_per_batch", (double) (s.dispatches() - before.dispatches()) / n)
          .put("slots_reused", s.slots().slots().reusedSlots()).put("slots_moved", s.slots().slots().movedSlots())
          .put("slots_appended", s.slots().slots().appendedSlots()));
    }
  }

  static double blackScholes(double s, double k, double t, double r, double v) {
    double sq = v * Math.sqrt(t);
    double d1 = (Math.log(s / k) + (r + 0.5 * v * v) * t) / sq;
    double d2 = d1 - sq;
    return s * cnd(d1) - k * Math.exp(-r * t) * cnd(d2);
  }

  /** Standard normal CDF via erfc (W. J. Cody's rational approximations would do; this is 1e-15 accurate enough). */
  static double cnd(double x) {
    return 0.5 * erfc(-x / Math.sqrt(2));
  }

  /** erfc with relative error ~1e-15 (Numerical Recipes' erfc via Chebyshev would be 1.2e-7; use a series/continued fraction). */
  static double erfc(double x) {
    if (x < 0) {
      return 2 - erfc(-x);
    }
    if (x < 2.5) {
      // erf series: erf(x) = 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))
      double sum = 0;
      double term = x;
      for (int n = 0; n < 80; n++) {
        double add = term / (2 * n + 1);
        sum += add;
        if (Math.abs(add) < 1e-17 * Math.abs(sum)) {
          break;
        }
        term *= -x * x / (n + 1);
      }
      return 1 - 2 / Math.sqrt(Math.PI) * sum;
    }
    // continued fraction (Lentz) for erfc, x >= 2.5
    double tiny = 1e-300;
    double f = x;
    double c = x;
    double d = 0;
    for (int n = 1; n < 300; n++) {
      double an = n / 2.0;
      d = x + an * d;
      d = Math.abs(d) < tiny ? tiny : d;
      c = x + an / c;
      c = Math.abs(c) < tiny ? tiny : c;
      d = 1 / d;
      double delta = c * d;
      f *= delta;
      if (Math.abs(delta - 1) < 1e-16) {
        break;
      }
    }
    return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
  }
}
