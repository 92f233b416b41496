package io.vkspark.spark;

import io.vkspark.gpu.DeviceInfo;
import io.vkspark.gpu.GpuException;
import io.vkspark.gpu.GpuException.Code;
import io.vkspark.gpu.column.ColumnKernel;
import io.vkspark.gpu.column.SqlType;
import java.util.List;
import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ScalaUDF;
import org.apache.spark.sql.types.DataType;

/**
 * Decides, on the driver, where each GPU UDF call runs: on the GPU; on the CPU inside the GPU node
 * (no device, a missing device feature), with the reason shown in EXPLAIN; or left to Spark
 * (types that do not match the kernel). A body that does not compile fails the query here, naming
 * the UDF and the line of its body. With {@code spark.vkspark.fallback=false} any CPU decision is
 * an error instead.
 */
final class GpuPlanner {
  /** Where a call runs. */
  sealed interface Decision permits OnGpu, OnCpu, LeaveToSpark {}

  /** On the executor's GPU. */
  record OnGpu(ColumnKernel kernel) implements Decision {}

  /** On the CPU inside the GPU node, for {@code reason}. */
  record OnCpu(ColumnKernel kernel, String reason) implements Decision {}

  /** Not extracted: Spark evaluates it as a plain UDF, for {@code reason}. */
  record LeaveToSpark(String reason) implements Decision {}

  private final VkConf conf;
  private final boolean local;

  GpuPlanner(SparkSession session) {
    this.conf = conf(session);
    this.local = session.sparkContext().isLocal();
  }

  static VkConf conf(SparkSession session) {
    return VkConf.from(k -> session.conf().contains(k) ? session.conf().get(k) : null);
  }

  VkConf conf() {
    return conf;
  }

  static String name(ScalaUDF u) {
    return u.udfName().isDefined() ? u.udfName().get() : "udf";
  }

  Decision decide(ScalaUDF u, GpuUdf udf) {
    String name = name(u);
    GpuKernel k = udf.kernel();
    DataType declared = SparkTypes.of(k.result());
    if (!u.dataType().equals(declared)) {
      return strict(name, new LeaveToSpark("it is registered as returning " + u.dataType().simpleString()
          + " but its kernel returns " + k.result().sqlName()));
    }
    List<Expression> args = Scala.list(u.children());
    for (int i = 0; i < args.size(); i++) {
      Optional<SqlType> t = SparkTypes.of(args.get(i).dataType());
      if (t.isEmpty() || t.get() != k.argTypes().get(i)) {
        return strict(name, new LeaveToSpark("argument " + (i + 1) + " (" + k.argNames().get(i) + ") is "
            + args.get(i).dataType().simpleString() + ", not " + k.argTypes().get(i).sqlName()));
      }
    }
    ColumnKernel kernel = compile(name, k, conf);
    if (local) {
      Optional<ExecutorGpu> gpu = ExecutorGpu.current();
      if (gpu.isEmpty()) {
        return strict(name, new OnCpu(kernel, ExecutorGpu.unavailableReason()
            .map(r -> "no Vulkan device could be opened (" + r.replaceFirst(" Fix: .*", "") + ")")
            .orElse("no Vulkan device is open in this JVM (is spark.plugins=io.vkspark.spark.VkSparkPlugin set?)")));
      }
      DeviceInfo info = gpu.get().device().info();
      Optional<String> missing = kernel.unsupportedOn(info);
      if (missing.isPresent()) {
        return strict(name, new OnCpu(kernel, missing.get()));
      }
    }
    return new OnGpu(kernel);
  }

  /** The compiled kernel of a UDF, compiled once per JVM (shaderc takes ~0.3 s): {@link CompiledKernels}. */
  static ColumnKernel compile(String name, GpuKernel k, VkConf conf) {
    return CompiledKernels.JVM.get(k.spec(name), conf.shaderCachePath());
  }

  private Decision strict(String name, Decision d) {
    if (!conf.fallback()) {
      String reason = d instanceof OnCpu c ? c.reason() : ((LeaveToSpark) d).reason();
      throw GpuException.of(Code.UNSUPPORTED, "vkspark: GPU UDF '" + name + "' cannot run on the GPU because " + reason + ".",
          "fix the cause, or set spark.vkspark.fallback=true to run it on the CPU.");
    }
    return d;
  }

  /** The error for a GPU UDF vkspark leaves where it is ({@code why}), when fallback is off. */
  void leftInOperator(String name, String why) {
    if (!conf.fallback()) {
      throw GpuException.of(Code.UNSUPPORTED, "vkspark: GPU UDF '" + name + "' cannot run on the GPU here: " + why + ".",
          "compute it in a SELECT or WHERE first (a subquery), or set spark.vkspark.fallback=true to run it on the CPU there.");
    }
  }
}
